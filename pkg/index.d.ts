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

/** `InvalidConfig`: the site config breaks SPEC 2 or 3. `InvalidRequest`: a bad session state or URL. */
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

/** The stable codes of a rejected page URL (SPEC 4). */
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
  | "ambiguous_dot_segment";

/** What `normalizePageUrl` throws for a rejected URL. */
export interface PageUrlError extends NudgeRulesError {
  kind: "InvalidRequest";
  code: UrlErrorCode;
}

// ---------------------------------------------------------------------------------------------
// Config (SPEC 2)
// ---------------------------------------------------------------------------------------------

export type NudgeType = "chat_bubble" | "toast" | "exit_modal" | "sticky_bar";

/** A site config as written (SPEC 2): absent fields take their defaults. */
export interface SiteConfigInput {
  version: 1;
  case_sensitive?: boolean;
  quiet_zones?: string[];
  rules?: RuleInput[];
}

export interface RuleInput {
  id: string;
  enabled?: boolean;
  nudge: ConfigNudge;
  when?: Partial<Conditions>;
}

/** A nudge as configured. */
export interface ConfigNudge {
  type: NudgeType;
  message: string;
  cta: string;
}

export interface Conditions {
  min_intent_score: number;
  max_intent_score: number;
  min_idle_ms: number;
  /** Absent: every page. */
  pages?: string[];
  exclude_pages: string[];
}

/** The validated config with every default filled in (`engine.config()`). */
export interface Config {
  version: 1;
  case_sensitive: boolean;
  quiet_zones: string[];
  rules: Rule[];
}

export interface Rule {
  id: string;
  enabled: boolean;
  nudge: ConfigNudge;
  when: Conditions;
}

/**
 * A config argument: JSON text (diagnostics carry line and column) or an already parsed object
 * (they do not). Any object is accepted; what is wrong with it is reported, not assumed.
 */
export type ConfigSource = string | SiteConfigInput | object;

// ---------------------------------------------------------------------------------------------
// Preview (SPEC 5)
// ---------------------------------------------------------------------------------------------

/** A hypothetical visitor's state. */
export interface SessionState {
  /** Integer 0 to 100. */
  intent_score: number;
  /** A path or an absolute http(s) URL (SPEC 4). */
  page_url: string;
  /** Integer 0 to 86,400,000; default 0. */
  idle_ms?: number;
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
// Analysis (SPEC 6)
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

export type Verdict = "fired" | "shadowed" | "failed" | "disabled" | "quiet";

export interface ConditionCheck {
  /** `min_intent_score`, `max_intent_score`, `min_idle_ms`, `pages` or `exclude_pages`. */
  condition: string;
  holds: boolean;
  /** What was compared, e.g. `intent_score 42 < min 60`. */
  detail: string;
}

export interface RuleExplanation {
  index: number;
  id: string;
  nudge_type: NudgeType;
  /** `shadowed`: all conditions hold but an earlier rule fired; `quiet`: the page is in a quiet zone. */
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
  /** A page URL tested against every pattern of the config. Never throws for a rejected URL. */
  pageReport(pageUrl: string): PageReport;
  /** The validated config with defaults filled in. */
  config(): Config;
}

/** The canonical path of a page URL (SPEC 4). Throws a {@link PageUrlError} when rejected. */
export function normalizePageUrl(url: string, options?: NormalizeOptions): string;

/** The whole endpoint in one call (mirrors Rust `preview_response`): 500 and the engine's InvalidConfig body for an invalid config, 400 and the InvalidRequest body for an invalid request, else 200 and the result. Never throws. */
export function previewResponse(config: ConfigSource, requestBodyText: string): HttpResponse;

/** Errors and lint warnings of a config. Never throws. */
export function validateConfig(config: ConfigSource): Validation;
