// A typed usage of the package, checked (never run) by `tsc --noEmit -p pkg`: the declarations in
// index.d.ts must accept every documented call and give precise result types.
import init, {
  initConfigAsCode,
  initConfigAsCodeSync,
  initSync,
  RecordedSessions,
  NudgeEngine,
  normalizePageUrl,
  previewResponse,
  validateConfig,
  type Config,
  type Decision,
  type Coverage,
  type Diff,
  type DiffConfigError,
  type Expectation,
  type InputError,
  type Limits,
  type PageOutcome,
  type PatternFinding,
  type ConditionSentences,
  type Replay,
  type ReplaySummary,
  type Scenario,
  type TestReport,
  type HttpResponse,
  type DecisionMap,
  type Diagnostic,
  type Explanation,
  type NudgeRulesError,
  type NudgeType,
  type PageReport,
  type PageUrlError,
  type PreviewResult,
  type RuleSummary,
  type SessionState,
  type SiteConfigInput,
  type Validation,
} from 'nudge-rules';

// What Node's fs.readFileSync returns (a Buffer is a Uint8Array<ArrayBufferLike>).
declare const wasmBytes: Uint8Array;
declare const compiled: WebAssembly.Module;

export async function browser(): Promise<void> {
  await init();
  await init({ module_or_path: new URL('https://cdn.example/nudge_rules_bg.wasm') });
}

export function node(): void {
  initSync({ module: wasmBytes });
  initSync(compiled);
  initSync(wasmBytes);
}

const config: SiteConfigInput = {
  version: 1,
  quiet_zones: ['/checkout/**'],
  rules: [
    {
      id: 'sizing-help',
      nudge: { type: 'chat_bubble', message: 'Not sure about the fit?', cta: 'Start chat' },
      when: { min_intent_score: 60, min_idle_ms: 8000, pages: ['/products/**'] },
    },
  ],
};

export function usage(): string[] {
  const engine = new NudgeEngine(config);
  const fromText = new NudgeEngine('{"version": 1}');
  const fromParsed = new NudgeEngine(JSON.parse('{"version": 1}') as object);
  fromText.free();
  fromParsed.free();

  const state: SessionState = { intent_score: 82, page_url: '/products/linen-shirt' };
  const result: PreviewResult = engine.preview({ ...state, idle_ms: 9000 });
  const out: string[] = [];
  if (result.would_fire) {
    const type: NudgeType = result.nudge.type;
    out.push(type, result.nudge.message, result.nudge.cta, result.nudge.reason);
  } else {
    const none: null = result.nudge;
    out.push(result.reason, String(none));
  }
  const maybeReason: string | undefined = result.reason;
  out.push(maybeReason ?? '');

  // docs/contract/caps.md: the new state fields and the structured decision.
  const visit: SessionState = {
    ...state,
    exit_intent: true,
    visitor_id: 'vis_abc',
    history: [{ rule_id: 'sizing-help', ms_ago: 1000, this_session: true, outcome: 'dismissed' }, { rule_id: 'x', ms_ago: 5, this_session: false, held_out: true }],
  };
  const decision: Decision = engine.decide(visit);
  const next: number | null = decision.next_idle_ms;
  const held: string | null = decision.held_out_rule_id;
  const link: string | undefined = decision.nudge?.cta_url;
  out.push(String(next), String(held), String(link), decision.path);

  const body: string = engine.previewBody('{"session_state":{"intent_score":1,"page_url":"/"}}');
  const code: number = engine.previewFields(82, '/products/linen-shirt', 9000);
  out.push(body, String(code));

  const x: Explanation = engine.explain(state);
  for (const rule of x.rules) {
    const verdict: 'fired' | 'shadowed' | 'failed' | 'disabled' | 'quiet' | 'held_out' = rule.verdict;
    out.push(rule.id, verdict, ...rule.conditions.map((c) => `${c.condition} ${c.holds} ${c.detail}`));
  }
  out.push(x.path ?? x.url_error?.code ?? '', String(x.earliest_idle_ms ?? -1), x.result?.would_fire ? 'y' : 'n');

  const map: DecisionMap = engine.decisionMap('/products/x');
  out.push(map.page_url, map.path ?? map.url_error?.code ?? '');
  const answer: HttpResponse = engine.previewResponse('{}');
  const whole: HttpResponse = previewResponse('{"version": 1}', '{}');
  out.push(String(answer.status + whole.status), answer.body, whole.body);
  for (const r of map.regions) out.push(`${r.min_intent_score}-${r.max_intent_score} ${r.rule_id ?? '-'} ${r.rule_index ?? -1}`);

  const lint: Diagnostic[] = engine.lint();
  const summary: RuleSummary[] = engine.summary();
  const report: PageReport = engine.pageReport('/checkout');
  const cfg: Config = engine.config();
  out.push(
    ...lint.map((d) => `${d.severity} ${d.code} ${d.path} ${d.line ?? '-'}:${d.column ?? '-'} ${d.message}`),
    ...summary.map((s) => `${s.rule_id}: ${s.text}`),
    ...report.matches.map((m) => `${m.json_path} ${m.pattern}`),
    String(cfg.case_sensitive),
    ...cfg.rules.map((r) => `${r.id} ${r.enabled} ${r.when.min_intent_score} ${r.when.pages?.join() ?? 'every page'}`),
  );

  out.push(normalizePageUrl('/Checkout//Pay'), normalizePageUrl('/A', { caseSensitive: true }));
  try {
    normalizePageUrl('//x');
  } catch (e) {
    const err = e as PageUrlError;
    out.push(err.code, err.kind, err.message);
  }
  try {
    engine.preview({ intent_score: 101, page_url: '/' });
  } catch (e) {
    const err = e as NudgeRulesError;
    const kind: 'InvalidConfig' | 'InvalidRequest' = err.kind;
    out.push(kind, ...err.diagnostics.map((d) => d.path));
  }

  const v: Validation = validateConfig('{"version": 1}');
  const w: Validation = validateConfig(config);
  out.push(String(v.valid), ...w.errors.map((d) => d.message), ...w.warnings.map((d) => d.code));
  return out;
}

// Config as code (docs/contract/as-code.md).
export async function configAsCode(engine: NudgeEngine, sessionsText: string): Promise<string[]> {
  await initConfigAsCode();
  await initConfigAsCode({ module_or_path: new URL('https://cdn.example/nudge_rules_bg.wasm') });
  initConfigAsCodeSync({ module: wasmBytes });
  const out: string[] = [];
  const report: TestReport = engine.test('{"scenarios": []}');
  const fromObject: TestReport = engine.test({
    scenarios: [{ name: 'a', session_state: { intent_score: 1, page_url: '/' }, expect: { no_nudge: true } }],
  });
  for (const r of [...report.results, ...fromObject.results]) {
    const got: Expectation = r.got;
    if ('rule' in got) out.push(got.rule);
    out.push(r.name, String(r.passed), r.reason);
  }
  const coverage: Coverage = engine.coverage({ scenarios: [] });
  out.push(...coverage.unexercised, String(coverage.totals.rules_fired));
  for (const rule of coverage.rules) out.push(...rule.conditions.map((c) => `${c.condition} ${c.seen_true}/${c.seen_false}`));
  const saved: Scenario = engine.scenario('home', { intent_score: 10, page_url: '/' });
  out.push(saved.name);

  const replay: Replay = engine.replay(sessionsText);
  for (const s of replay.sessions) {
    for (const p of s.pages) {
      const o: PageOutcome = p.outcome;
      if (o.kind === 'fired') out.push(`${o.rule_id} ${o.nudge_type} ${o.at_ms}`);
      if (o.kind === 'rejected') out.push(o.url_error.code);
      out.push(...p.recorded.map((n) => `${n.nudge_type} ${n.outcome} ${n.at_ms ?? '-'}`));
    }
  }
  const recorded = new RecordedSessions(sessionsText);
  const summary: ReplaySummary = engine.replaySummary(recorded);
  out.push(String(recorded.length), ...summary.rules.map((r) => `${r.rule_id} ${r.page_views} ${r.recorded_same_type.clicked}`));
  recorded.free();

  const finding: PatternFinding | null = NudgeEngine.checkPattern('/products/', false);
  if (finding) out.push(finding.code, ...finding.fixes);
  const limits: Limits = NudgeEngine.limits();
  const idle: string = NudgeEngine.idleWords(limits.idle_ms);
  const words: ConditionSentences = engine.conditionSentences({ intent_score: 82, page_url: '/products/linen-shirt' });
  out.push(idle, ...words.rules.flat(), words.quiet_zone ?? '');
  out.push(String(limits.idle_ms + limits.cta_chars));

  const d: Diff = NudgeEngine.diff('{"version": 1}', { version: 1, rules: [] }, [sessionsText, { scenarios: [] }]);
  out.push(...d.counts.map((c) => `${c.kind} ${c.count}`), ...d.changes.map((c) => `${JSON.stringify(c.old.outcome)} ${c.new.at_ms}`));
  out.push(...NudgeEngine.diff('{"version": 1}', '{"version": 1}').map_changes.map((m) => m.page_url));
  try {
    engine.test('{');
  } catch (e) {
    const err = e as InputError;
    out.push(err.kind, ...err.diagnostics.map((x) => `${x.path} ${x.line}`));
  }
  try {
    NudgeEngine.diff('{}', '{}');
  } catch (e) {
    const err = e as DiffConfigError;
    out.push(err.config);
  }
  return out;
}

// Mistakes the declarations must reject.
export function rejected(engine: NudgeEngine): void {
  // @ts-expect-error intent_score is required
  engine.preview({ page_url: '/' });
  // @ts-expect-error page_url must be a string
  engine.previewFields(1, 2, 3);
  // @ts-expect-error no such nudge type
  const t: NudgeType = 'popup';
  // @ts-expect-error a config is a string or an object
  new NudgeEngine(42);
  // @ts-expect-error options.caseSensitive is a boolean
  normalizePageUrl('/x', { caseSensitive: 'yes' });
  const r = engine.preview({ intent_score: 1, page_url: '/' });
  // @ts-expect-error nudge may be null until narrowed
  r.nudge.message;
  // @ts-expect-error diff's inputs are a list
  NudgeEngine.diff('{}', '{}', '{"scenarios": []}');
  // @ts-expect-error an expectation's error is InvalidRequest
  const e: Expectation = { error: 'InvalidConfig' };
  void e;
  void t;
}
