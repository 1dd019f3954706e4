// Type declarations of the nudge-rules npm package (hand-written; the contract is
// docs/JS-API.md in the repository). Method names are camelCase; data fields are snake_case, as
// in the "Visitor Sessions and Nudges API" document.

// ---------------------------------------------------------------------------------------------
// Loading the WebAssembly module
// ---------------------------------------------------------------------------------------------

/**
 * The `.wasm` bytes: an `ArrayBuffer` or any view of one, such as the `Buffer` of Node's
 * `fs.readFileSync` (wider than the DOM's `BufferSource`, which rejects `Uint8Array<ArrayBufferLike>`).
 */
export type WasmBytes = ArrayBuffer | ArrayBufferView;

/** What `init` accepts: a URL or request of the `.wasm` file, its bytes, or a compiled module. */
export type InitInput = RequestInfo | URL | Response | WasmBytes | WebAssembly.Module;

/** What `initSync` accepts: the `.wasm` bytes or a compiled module. */
export type SyncInitInput = WasmBytes | WebAssembly.Module;

/** The instantiated module's exports (only the memory is of interest outside the glue). */
export interface InitOutput {
  readonly memory: WebAssembly.Memory;
}

/**
 * Loads the module asynchronously (browsers). Without an argument, fetches
 * `wasm/nudge_rules_bg.wasm` next to the glue. Call once before anything else.
 */
export default function init(
  moduleOrPath?:
    | { module_or_path: InitInput | Promise<InitInput> }
    | InitInput
    | Promise<InitInput>,
): Promise<InitOutput>;

/**
 * Loads the module synchronously (Node, workers):
 * `initSync({ module: fs.readFileSync(new URL('./wasm/nudge_rules_bg.wasm', import.meta.resolve('nudge-rules'))) })`.
 */
export function initSync(module: { module: SyncInitInput } | SyncInitInput): InitOutput;

// ---------------------------------------------------------------------------------------------
// Errors and diagnostics
// ---------------------------------------------------------------------------------------------

/** `InvalidConfig`: the site config breaks docs/contract/config.md or docs/contract/patterns.md. `InvalidRequest`: a bad session state or URL. */
export type ErrorKind = "InvalidConfig" | "InvalidRequest";

export type Severity = "error" | "warning";

/** One finding about a config or a request: an error, or a lint warning. */
export interface Diagnostic {
  severity: Severity;
  /** Stable, machine-readable: `"unknown_field"`, `"pattern_trailing_slash"`, `"shadowed_rule"`, ... */
  code: string;
  /** JSON path such as `"rules[2].when.pages[0]"`; `""` is the whole document. */
  path: string;
  message: string;
  /** 1-based line in the config text; `null` when unknown or when the config was given as an object. */
  line: number | null;
  /** 1-based column, in characters; `null` as `line`. */
  column: number | null;
}

/** Every error the package throws: a real `Error` with the native message, `kind` and `diagnostics`. */
export interface NudgeRulesError extends Error {
  kind: ErrorKind;
  diagnostics: Diagnostic[];
}

/** The stable codes of a rejected page URL (docs/contract/urls.md). */
export type UrlErrorCode =
  | "empty"
  | "too_long"
  | "control_character"
  | "space"
  | "backslash"
  | "double_slash"
  | "unsupported_scheme"
  | "relative"
  | "malformed_url"
  | "malformed_escape"
  | "forbidden_escape"
  | "invalid_utf8"
  | "ambiguous_unicode"
  | "ambiguous_dot_segment"
  | "parameter_only_segment";

/** What `normalizePageUrl` throws for a rejected URL. */
export interface PageUrlError extends NudgeRulesError {
  kind: "InvalidRequest";
  code: UrlErrorCode;
}

// ---------------------------------------------------------------------------------------------
// Config (docs/contract/config.md)
// ---------------------------------------------------------------------------------------------

export type NudgeType = "chat_bubble" | "toast" | "exit_modal" | "sticky_bar";

/** A site config as written (docs/contract/config.md): absent fields take their defaults. */
export interface SiteConfigInput {
  version: 1;
  case_sensitive?: boolean;
  quiet_zones?: string[];
  rules?: RuleInput[];
  /** docs/contract/caps.md: after this many nudges shown or held out in a session (1 to 100), no rule fires. Absent: no limit. */
  max_nudges_per_session?: number;
}

export interface RuleInput {
  id: string;
  enabled?: boolean;
  nudge: ConfigNudge;
  when?: Partial<Conditions>;
  /** docs/contract/caps.md: how often the rule may fire for one visitor. */
  cap?: Partial<Cap>;
  /** docs/contract/caps.md: 0 to 50; this share of visitors (by `visitor_id`) is the rule's control group. Default 0. */
  holdout_percent?: number;
}

/** A rule's cap (docs/contract/caps.md). */
export interface Cap {
  /** 1 to 100, default 1: the rule fires at most this many times in one session (shown or held out). */
  per_session: number;
  /** 0 to 31,536,000,000 ms, default 0: after a dismissal, the rule does not fire for the visitor for this long. */
  cooldown_ms: number;
}

/** A nudge as configured. */
export interface ConfigNudge {
  type: NudgeType;
  message: string;
  cta: string;
  /** docs/contract/caps.md: where the CTA takes the visitor: a path starting with one `/` or an absolute `https:` URL, at most 2,048 bytes. */
  cta_url?: string;
}

export interface Conditions {
  min_intent_score: number;
  max_intent_score: number;
  min_idle_ms: number;
  /** Absent: every page. */
  pages?: string[];
  exclude_pages: string[];
  /** docs/contract/caps.md: true only on exit intent, false never on exit intent; absent: either. */
  exit_intent?: boolean;
}

/** The validated config with every default filled in (`engine.config()`). */
export interface Config {
  version: 1;
  case_sensitive: boolean;
  quiet_zones: string[];
  rules: Rule[];
  /** Present only when set (docs/contract/caps.md). */
  max_nudges_per_session?: number;
}

export interface Rule {
  id: string;
  enabled: boolean;
  nudge: ConfigNudge;
  when: Conditions;
  /** Present only when not the default `{per_session: 1, cooldown_ms: 0}` (docs/contract/caps.md). */
  cap?: Cap;
  /** Present only when not 0 (docs/contract/caps.md). */
  holdout_percent?: number;
}

/**
 * A config argument: JSON text (diagnostics carry line and column) or an already parsed object
 * (they do not). Any object is accepted; what is wrong with it is reported, not assumed.
 */
export type ConfigSource = string | SiteConfigInput | object;

// ---------------------------------------------------------------------------------------------
// Preview (docs/contract/preview.md)
// ---------------------------------------------------------------------------------------------

/** A hypothetical visitor's state. */
export interface SessionState {
  /** Integer 0 to 100. */
  intent_score: number;
  /** A path or an absolute http(s) URL (docs/contract/urls.md). */
  page_url: string;
  /** Integer 0 to 86,400,000; default 0. */
  idle_ms?: number;
  /** docs/contract/caps.md: the visitor is about to leave; default false. */
  exit_intent?: boolean;
  /** docs/contract/caps.md: `vis_` then 1 to 64 of `A-Za-z0-9_-`; without it no one is held out. */
  visitor_id?: string;
  /** docs/contract/caps.md: the nudges this visitor was shown or held out from, newest first, at most 200. */
  history?: HistoryEntry[];
}

/** One earlier nudge of the visitor (docs/contract/caps.md `session_state.history[]`). */
export interface HistoryEntry {
  /** 1 to 64 of `A-Za-z0-9_-`. */
  rule_id: string;
  /** 0 to 31,536,000,000 ms ago. */
  ms_ago: number;
  /** True when it happened in the current session. */
  this_session: boolean;
  outcome?: NudgeOutcome;
  /** The visitor was held out (nothing shown); such an entry has no `outcome`. */
  held_out?: boolean;
}

/** The structured decision of one state (`engine.decide`; docs/contract/storefront.md, docs/contract/caps.md). Absent values are `null`. */
export interface Decision {
  would_fire: boolean;
  rule_id: string | null;
  rule_index: number | null;
  /** The nudge as configured, with `cta_url` when the rule has one. */
  nudge: ConfigNudge | null;
  /** The rule the visitor is held out from (its control group): no nudge is shown; record NUDGE_HELD_OUT. */
  held_out_rule_id: string | null;
  /** The quiet zone the page is in, as written. */
  quiet_zone: string | null;
  /** The normalized path (docs/contract/urls.md). */
  path: string;
  /** When nothing fires: the idle time in ms at which a rule would fire (or hold the visitor out), all else equal. */
  next_idle_ms: number | null;
}

/** The nudge that fires (API document 2.4 `data.nudge`). */
export interface Nudge {
  type: NudgeType;
  message: string;
  cta: string;
  /** Why it fires (informational). */
  reason: string;
}

/** A preview where a nudge fires. */
export interface FiredPreviewResult {
  would_fire: true;
  nudge: Nudge;
  reason?: undefined;
}

/** A preview where no nudge fires; `reason` says why (informational). */
export interface SilentPreviewResult {
  would_fire: false;
  nudge: null;
  reason: string;
}

/** The preview result (API document 2.4 `data`): `{ would_fire, nudge, reason? }`. */
export type PreviewResult = FiredPreviewResult | SilentPreviewResult;

// ---------------------------------------------------------------------------------------------
// Analysis (docs/contract/analysis.md)
// ---------------------------------------------------------------------------------------------

export interface QuietZoneRef {
  /** Index in `quiet_zones`. */
  index: number;
  /** The pattern as written. */
  pattern: string;
}

export interface UrlRejection {
  code: UrlErrorCode;
  message: string;
}

export type Verdict = "fired" | "shadowed" | "failed" | "disabled" | "quiet" | "held_out";

export interface ConditionCheck {
  /** `min_intent_score`, `max_intent_score`, `min_idle_ms`, `pages`, `exclude_pages`, `exit_intent`; a reached cap (docs/contract/caps.md, never holding): `cap` or `max_nudges_per_session`. */
  condition: string;
  holds: boolean;
  /** What was compared, e.g. `intent_score 42 < min 60`. */
  detail: string;
}

export interface RuleExplanation {
  index: number;
  id: string;
  nudge_type: NudgeType;
  /** `shadowed`: all conditions hold but an earlier rule fired (or held the visitor out); `quiet`: the page is in a quiet zone; `held_out`: the visitor is in this rule's control group (docs/contract/caps.md). */
  verdict: Verdict;
  conditions: ConditionCheck[];
}

export interface Explanation {
  page_url: string;
  /** The normalized path; `null` when the URL is rejected. */
  path: string | null;
  url_error: UrlRejection | null;
  intent_score: number;
  idle_ms: number;
  quiet_zone: QuietZoneRef | null;
  /** Every rule, in config order. */
  rules: RuleExplanation[];
  fired_rule_id: string | null;
  /** The rule the visitor is held out from (docs/contract/caps.md); present only then, and then nothing fires. */
  held_out_rule_id?: string;
  /** At or after `idle_ms`; `null`: never for this intent score and page. */
  earliest_idle_ms: number | null;
  /** The rule that fires at `earliest_idle_ms`. */
  earliest_rule_id: string | null;
  /** Exactly what `preview` returns; `null` when the URL is rejected. */
  result: PreviewResult | null;
}

/** A rectangle of the decision map, bounds inclusive. */
export interface Region {
  min_intent_score: number;
  max_intent_score: number;
  min_idle_ms: number;
  /** The last region of a band ends at 86,400,000. */
  max_idle_ms: number;
  rule_id: string | null;
  rule_index: number | null;
  nudge_type: NudgeType | null;
}

export interface DecisionMap {
  /** The page URL as given. */
  page_url: string;
  /** The normalized path; null when the URL is rejected. */
  path: string | null;
  /** Why the URL is rejected (then `regions` is empty); null when accepted. */
  url_error: UrlRejection | null;
  quiet_zone: QuietZoneRef | null;
  /** Exact partition of intent 0..=100 x idle 0..=86,400,000, no overlaps. */
  regions: Region[];
}

/** The HTTP status and body a server answers a preview request with. */
export interface HttpResponse {
  /** 200, 400 (InvalidRequest) or 500 (InvalidConfig). */
  status: number;
  /** The response body text: the preview result, or `{"error", "message"}`. */
  body: string;
}

export interface PatternMatch {
  /** `quiet_zones[0]`, `rules[2].when.pages[1]`, `rules[2].when.exclude_pages[0]`. */
  json_path: string;
  /** The pattern as written. */
  pattern: string;
}

export interface PageReport {
  page_url: string;
  path: string | null;
  url_error: UrlRejection | null;
  /** Every quiet zone, `pages` and `exclude_pages` pattern that matches, in config order. */
  matches: PatternMatch[];
}

export interface RuleSummary {
  rule_id: string;
  /** One plain sentence. */
  text: string;
}

export interface Validation {
  /** True when there is no error (warnings do not count). */
  valid: boolean;
  errors: Diagnostic[];
  /** Lint warnings; empty when the config has errors. */
  warnings: Diagnostic[];
}

export interface NormalizeOptions {
  /** Keep letter case, as a config with `"case_sensitive": true` does. Default false. */
  caseSensitive?: boolean;
}

// ---------------------------------------------------------------------------------------------
// Config as code (docs/contract/as-code.md): scenarios, coverage, replay, diff
// ---------------------------------------------------------------------------------------------

/** Loads the config-as-code module (browsers): fetches `wasm/config-as-code/nudge_rules_bg.wasm` next to its glue. Call once before `test`, `coverage`, `scenario`, `replay`, `replaySummary`, `RecordedSessions` or `NudgeEngine.diff`. */
export function initConfigAsCode(
  moduleOrPath?:
    | { module_or_path: InitInput | Promise<InitInput> }
    | InitInput
    | Promise<InitInput>,
): Promise<InitOutput>;

/** Loads the config-as-code module synchronously (Node, workers) from its `.wasm` bytes. */
export function initConfigAsCodeSync(module: { module: SyncInitInput } | SyncInitInput): InitOutput;

/** What a scenario expects, and what it got: exactly one key. */
export type Expectation =
  | { rule: string }
  | { quiet_zone: true }
  | { no_nudge: true }
  | { error: "InvalidRequest" }
  | { held_out: string };

/** One scenario of a scenario file. `session_state` is kept as given (it may be invalid when `expect` is the error). */
export interface Scenario {
  /** 1 to 200 characters, unique in its file. */
  name: string;
  session_state: SessionState | unknown;
  expect: Expectation;
}

/** A scenario file: `{ scenarios: Scenario[] }` (at most 10,000 scenarios, 16 MiB of text). */
export interface ScenarioFile {
  scenarios: Scenario[];
}

/** A scenario file as JSON text (diagnostics with line and column) or as an object. */
export type ScenariosSource = string | ScenarioFile | object;

/** The errors thrown for a bad scenario file or bad sessions. */
export interface InputError extends Error {
  kind: "InvalidScenarios" | "InvalidSessions";
  diagnostics: Diagnostic[];
}

export interface ScenarioResult {
  name: string;
  passed: boolean;
  expected: Expectation;
  /** What the engine gave, in the shape of `expect`: saved as `expect`, it passes. */
  got: Expectation;
  /** The preview's reason text, or the InvalidRequest message (informational). */
  reason: string;
}

export interface TestReport {
  passed: number;
  failed: number;
  /** One per scenario, in file order. */
  results: ScenarioResult[];
}

export interface ConditionCoverage {
  condition: "min_intent_score" | "max_intent_score" | "min_idle_ms" | "pages" | "exclude_pages";
  /** Scenarios in which it held. */
  seen_true: number;
  /** Scenarios in which it failed. */
  seen_false: number;
}

export interface RuleCoverage {
  index: number;
  id: string;
  nudge_type: NudgeType;
  /** False: disabled; it never fires and its conditions are not counted. */
  enabled: boolean;
  /** Scenarios in which it fired. */
  fired: number;
  /** Scenarios in which the visitor was held out from it (docs/contract/caps.md). */
  held_out: number;
  /** Scenarios in which it was capped (docs/contract/caps.md), whether or not its conditions held. */
  capped: number;
  /** The conditions the rule sets, in field order. */
  conditions: ConditionCoverage[];
}

export interface PatternCoverage {
  /** `quiet_zones[0]`, `rules[2].when.pages[1]`, `rules[2].when.exclude_pages[0]`. */
  json_path: string;
  pattern: string;
  /** Scenarios whose page it matched. */
  matched: number;
}

export interface Coverage {
  scenarios: number;
  /** Scenarios whose state was rejected (InvalidRequest): they exercise nothing. */
  rejected: number;
  /** Every rule, config order. */
  rules: RuleCoverage[];
  quiet_zones: PatternCoverage[];
  /** Every `pages` and `exclude_pages` pattern, config order. */
  patterns: PatternCoverage[];
  totals: {
    rules_fired: number;
    rules: number;
    condition_outcomes_seen: number;
    condition_outcomes: number;
    patterns_matched: number;
    patterns: number;
  };
  /** One line per gap: `rule "x" never fired`, `rule "x": min_idle_ms never seen false`, `pattern rules[1].when.pages[0] "/a/**" never matched`. */
  unexercised: string[];
}

/** A recorded session as `GET /v1/sessions/{id}` returns its `data` (API document 2.1, 2.2). */
export interface RecordedSession {
  id: string;
  started_at?: string;
  /** RFC 3339 in UTC, e.g. `2026-03-01T12:00:05.250Z`. */
  ended_at: string;
  page_count?: number;
  intent_score: number;
  converted?: boolean;
  nudge_count?: number;
  /** docs/contract/caps.md: the visitor (`vis_` then 1 to 64 of `A-Za-z0-9_-`); the replay holds them out of the rules whose control group they are in. Absent: no one is held out. */
  visitor_id?: string;
  /** A `NUDGE_HELD_OUT` event (docs/contract/caps.md) needs `rule_id`; it is no page view and counts for the rule's caps. */
  events: { type: string; url: string; occurred_at: string; intent_score?: number; rule_id?: string }[];
  nudges?: {
    nudge_id?: string;
    type: NudgeType;
    shown_at: string;
    outcome: NudgeOutcome;
    influenced_conversion: boolean;
  }[];
}

/** Sessions: JSONL or JSON text, an array of sessions (or `{ data: session }` responses), one session, or sessions read once. */
export type SessionsSource = string | RecordedSession[] | RecordedSession | object | RecordedSessions;

export type NudgeOutcome = "shown" | "clicked" | "dismissed" | "chat_opened";

/** What fires on a page view. */
export type PageOutcome =
  | { kind: "fired"; rule_id: string; rule_index: number; nudge_type: NudgeType; at_ms: number }
  /** docs/contract/caps.md: the rule would fire but the session's `visitor_id` is in its control group: nothing shown; counts for caps. */
  | { kind: "held_out"; rule_id: string; rule_index: number; nudge_type: NudgeType; at_ms: number }
  | { kind: "quiet_zone"; quiet_zone: QuietZoneRef }
  | { kind: "no_nudge" }
  | { kind: "rejected"; url_error: UrlRejection };

export interface RecordedNudgeView {
  nudge_id: string | null;
  nudge_type: NudgeType;
  shown_at: string;
  /** Ms after the event of the page it was shown on; null when shown outside every page view. */
  at_ms: number | null;
  outcome: NudgeOutcome;
  influenced_conversion: boolean;
}

export interface PageReplay {
  event_type: string;
  page_url: string;
  occurred_at: string;
  /** Ms from the session's first event. */
  offset_ms: number;
  /** Ms until the next event (the last: until `ended_at`). */
  dwell_ms: number;
  /** The event's own intent score, else the session's. */
  intent_score: number;
  path: string | null;
  outcome: PageOutcome;
  /** docs/contract/caps.md: the rule that would have fired but was capped; present only then. */
  capped_rule_id?: string;
  /** Nudges really shown on this page view. */
  recorded: RecordedNudgeView[];
}

export interface SessionReplay {
  id: string;
  intent_score: number;
  converted: boolean | null;
  /** By `occurred_at`. */
  pages: PageReplay[];
  unplaced_nudges: RecordedNudgeView[];
}

export interface OutcomeCounts {
  nudges: number;
  shown: number;
  clicked: number;
  dismissed: number;
  chat_opened: number;
  influenced_conversion: number;
}

export interface RuleReach {
  rule_id: string;
  nudge_type: NudgeType;
  enabled: boolean;
  /** Predicted treated reach: sessions in which it would show its nudge, caps and holdouts applied (docs/contract/caps.md). */
  sessions: number;
  /** docs/contract/caps.md: sessions in which it would fire but the session's `visitor_id` is in its control group (0 without visitor ids). */
  held_out_sessions: number;
  converted_sessions: number;
  page_views: number;
  /** The nudges of the rule's type really shown on the page views it reaches. */
  recorded_same_type: OutcomeCounts;
  /** docs/contract/caps.md: page views on which it would have fired but had reached its cap in the session. */
  capped_page_views: number;
  /** docs/contract/caps.md: recorded `NUDGE_HELD_OUT` events of the rule (its control group). */
  held_out_events: number;
}

export interface TypeReach {
  nudge_type: NudgeType;
  predicted_sessions: number;
  predicted_page_views: number;
  recorded_sessions: number;
  recorded: OutcomeCounts;
  /** Recorded nudges of this type shown on page views where this type is predicted. */
  recorded_where_predicted: OutcomeCounts;
}

export interface ReplaySummary {
  sessions: number;
  converted_sessions: number;
  page_views: number;
  page_views_with_nudge: number;
  page_views_quiet: number;
  page_views_rejected: number;
  recorded_nudges: number;
  unplaced_nudges: number;
  /** Every rule, config order. */
  rules: RuleReach[];
  /** chat_bubble, toast, exit_modal, sticky_bar. */
  nudge_types: TypeReach[];
}

export interface Replay {
  sessions: SessionReplay[];
  summary: ReplaySummary;
}

/** Sessions read once, to replay against many configs (an editor replays on every edit). */
export class RecordedSessions {
  /** Reads sessions. Throws an {@link InputError} (kind `InvalidSessions`) listing every problem. */
  constructor(sessions: string | object);
  /** How many sessions. */
  readonly length: number;
  /** Releases the sessions' WebAssembly memory. */
  free(): void;
}

export type ChangeKind =
  | "nudge_added"
  | "nudge_removed"
  | "rule_changed"
  | "nudge_changed"
  | "timing_changed"
  | "quiet_zone_added"
  | "quiet_zone_removed"
  | "error_changed"
  | "holdout_changed";

/** One side of a change. */
export interface Side {
  outcome: Expectation;
  /** The nudge shown, when a rule fires. */
  nudge: ConfigNudge | null;
  /** Recorded page views: idle ms at which the rule fires. */
  at_ms: number | null;
  /** Scenarios: the reason text or InvalidRequest message. */
  reason: string | null;
}

export interface Change {
  kind: ChangeKind;
  /** Index of the input it comes from. */
  input: number;
  scenario: string | null;
  session_id: string | null;
  page_index: number | null;
  page_url: string | null;
  old: Side;
  new: Side;
}

export interface RegionChange {
  min_intent_score: number;
  max_intent_score: number;
  min_idle_ms: number;
  max_idle_ms: number;
  kind: "nudge_added" | "nudge_removed" | "rule_changed";
  old_rule_id: string | null;
  new_rule_id: string | null;
}

export interface PageMapChange {
  page_url: string;
  path: string | null;
  old_quiet_zone: string | null;
  new_quiet_zone: string | null;
  regions: RegionChange[];
}

export interface Reach {
  sessions: number;
  page_views: number;
}

export interface Diff {
  scenarios: number;
  page_views: number;
  /** Inputs whose outcome changes, input order. */
  changes: Change[];
  /** Without inputs: the pages compared. */
  pages: string[];
  /** Without inputs: pages whose decision map changes. */
  map_changes: PageMapChange[];
  /** Kinds with at least one change, in the order of ChangeKind. */
  counts: { kind: ChangeKind; count: number }[];
  /** With recorded sessions: each rule's reach before and after (null: no such rule). */
  reach: { rule_id: string; old: Reach | null; new: Reach | null }[];
}

/** An input to `NudgeEngine.diff`: a scenario file or sessions, as text or as an object. */
export type DiffInput = string | ScenarioFile | RecordedSession[] | RecordedSession | object;

/** What `NudgeEngine.diff` throws for a bad config (`config` says which). */
export interface DiffConfigError extends NudgeRulesError {
  kind: "InvalidConfig";
  config: "old" | "new";
}

// ---------------------------------------------------------------------------------------------
// Functions
// ---------------------------------------------------------------------------------------------

/** A compiled site config: compile once, then preview per visitor. Immutable. */
export class NudgeEngine {
  /** Compiles a config. Throws a {@link NudgeRulesError} (kind `InvalidConfig`) listing every problem. */
  constructor(config: ConfigSource);
  /** Releases the engine's WebAssembly memory; the object is unusable afterwards. */
  free(): void;
  /** Which nudge fires. Throws a {@link NudgeRulesError} (kind `InvalidRequest`) for a bad state. */
  preview(sessionState: SessionState): PreviewResult;
  /** The structured decision (docs/contract/storefront.md, docs/contract/caps.md): the rule and its whole nudge, the held-out rule, the quiet zone, when a rule would fire if the visitor keeps idling. Throws like `preview`. */
  decide(sessionState: SessionState): Decision;
  /** The response body text exactly as the server sends it (200 body or InvalidRequest body). Never throws for a bad request. */
  previewBody(requestBodyText: string): string;
  /** The status and body a server answers with (mirrors Rust `Engine::preview_body`): 200 and the result, or 400 and the InvalidRequest body. Never throws for a bad request. */
  previewResponse(requestBodyText: string): HttpResponse;
  /** Hot-loop entry: `>= 0` rule index; `-1` no rule fires; `-2` quiet zone; `-3` invalid input. */
  previewFields(intentScore: number, pageUrl: string, idleMs: number): number;
  /** Every rule's verdict for one state. Throws like `preview` for a bad state; a rejected URL is reported inside. */
  explain(sessionState: SessionState): Explanation;
  /** Which rule wins over the whole intent x idle plane for one page. A rejected URL is reported inside (`url_error`), as `explain` does. */
  decisionMap(pageUrl: string): DecisionMap;
  /** Lint warnings. */
  lint(): Diagnostic[];
  /** One plain sentence per rule, in config order. */
  summary(): RuleSummary[];
  /** Every rule's conditions for one visitor as sentences for a merchant, in the order of `explain`'s rules and conditions. Throws like `explain` for a bad state; a rejected URL gives no rules. */
  conditionSentences(sessionState: SessionState): ConditionSentences;
  /** A page URL tested against every pattern of the config. Never throws for a rejected URL. */
  pageReport(pageUrl: string): PageReport;
  /** The validated config with defaults filled in. */
  config(): Config;

  // Config as code (docs/contract/as-code.md): these need `initConfigAsCode()` first (else they throw an Error).
  /** Checks every scenario. Throws an {@link InputError} (kind `InvalidScenarios`) for a bad file; a scenario's own outcome, InvalidRequest included, is in its result. */
  test(scenarios: ScenariosSource): TestReport;
  /** What the scenarios exercise: rules fired, conditions seen true and false, patterns matched. Throws like `test`. */
  coverage(scenarios: ScenariosSource): Coverage;
  /** A scenario whose `expect` is what this config gives now ("save this visitor"). Throws only for a state with no JSON form (code `not_json`). */
  scenario(name: string, sessionState: SessionState | object): Scenario;
  /** Replays recorded sessions. Throws an {@link InputError} (kind `InvalidSessions`) for bad sessions. */
  replay(sessions: SessionsSource): Replay;
  /** The summary of `replay` alone (what an editor recomputes per edit). Throws like `replay`. */
  replaySummary(sessions: SessionsSource): ReplaySummary;
  /** The inputs whose outcome changes between two configs; without inputs, the decision maps of the pages the configs mention. Throws {@link DiffConfigError} for a bad config, {@link InputError} (with `input`: its index) for a bad input, `TypeError` when `inputs` is not an array. */
  static diff(oldConfig: ConfigSource, newConfig: ConfigSource, inputs?: DiffInput[]): Diff;
  /** One pattern checked as every pattern of a config is (docs/contract/patterns.md): `null` when valid, else why, with the valid patterns the message suggests instead. */
  static checkPattern(pattern: string, caseSensitive: boolean): PatternFinding | null;
  /** The limits a config and a request must keep (Rust `nudge_rules::limits`). */
  static limits(): Limits;
  /** A rule's idle wait as an editor's card says it: "at once", "8 s", "7.9 s" (cut, never rounded up). */
  static idleWords(ms: number): string;
}

/** A visitor's conditions in words (`engine.conditionSentences`). */
export interface ConditionSentences {
  /** Per rule in config order, one sentence per condition of `explain`'s `conditions`. */
  rules: string[][];
  /** The page's quiet zone in words, when it is in one. */
  quiet_zone: string | null;
}

/** Why a pattern is invalid (`NudgeEngine.checkPattern`). */
export interface PatternFinding {
  /** `pattern_not_absolute`, `pattern_trailing_slash`, `pattern_syntax` or `pattern_too_long`. */
  code: string;
  message: string;
  /** The patterns the message suggests instead ("did you mean"), each valid itself; often none. */
  fixes: string[];
}

/** The limits of docs/contract/config.md and docs/contract/preview.md (`NudgeEngine.limits()`): bytes of UTF-8, characters as Unicode scalar values. */
export interface Limits {
  config_bytes: number;
  rules: number;
  quiet_zones: number;
  patterns_per_list: number;
  pattern_bytes: number;
  rule_id_chars: number;
  message_chars: number;
  cta_chars: number;
  intent_score: number;
  idle_ms: number;
  page_url_bytes: number;
  request_bytes: number;
  scenario_name_chars: number;
}

/** The canonical path of a page URL (docs/contract/urls.md). Throws a {@link PageUrlError} when rejected. */
export function normalizePageUrl(url: string, options?: NormalizeOptions): string;

/** The whole endpoint in one call (mirrors Rust `preview_response`): 500 and the engine's InvalidConfig body for an invalid config, 400 and the InvalidRequest body for an invalid request, else 200 and the result. Never throws. */
export function previewResponse(config: ConfigSource, requestBodyText: string): HttpResponse;

/** Errors and lint warnings of a config. Never throws. */
export function validateConfig(config: ConfigSource): Validation;
