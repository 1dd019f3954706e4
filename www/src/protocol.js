// The protocol between the page and the engine's Web Worker (worker.js), in one place: the jobs
// the page sends (engine-client.js keeps one in flight and merges the rest) and the answers the
// worker posts. The typedefs are checked by tsc (`tsc -p www`, in `make test-browser`) in the
// worker, the client and the page's reducer (store.js); the engine's own types are the npm
// package's (pkg/index.d.ts).

/** @typedef {import('../../pkg/index.js').Diagnostic} Diagnostic */
/** @typedef {import('../../pkg/index.js').SessionState} SessionState */
/** @typedef {import('../../pkg/index.js').Explanation} Explanation */
/** @typedef {import('../../pkg/index.js').RuleExplanation} RuleExplanation */
/** @typedef {import('../../pkg/index.js').PreviewResult} PreviewResult */
/** @typedef {import('../../pkg/index.js').PageReport} PageReport */
/** @typedef {import('../../pkg/index.js').Region} Region */
/** @typedef {import('../../pkg/index.js').Config} Config */
/** @typedef {import('../../pkg/index.js').Rule} Rule */
/** @typedef {import('../../pkg/index.js').RuleSummary} RuleSummary */
/** @typedef {import('../../pkg/index.js').HttpResponse} HttpResponse */
/** @typedef {import('../../pkg/index.js').TestReport} TestReport */
/** @typedef {import('../../pkg/index.js').Coverage} Coverage */
/** @typedef {import('../../pkg/index.js').Scenario} Scenario */
/** @typedef {import('../../pkg/index.js').Limits} Limits */

/**
 * A job of the page. Every field is optional: a job carries what changed (jobs merged while one is
 * in flight keep the newest of each).
 * @typedef {object} Job
 * @property {number} [seq] numbered by engine-client.js
 * @property {string} [text] the config text (compiled when it differs from the last one)
 * @property {SessionState} [state] the visitor: previewed, explained, mapped
 * @property {string[]} [bench] the URL bench's lines
 * @property {string[]} [pages] the sample pages whose report the rule cards show
 * @property {PatternQuery[]} [patterns] patterns to check: typed into a chip, or in the config
 *   with an error (jobs merged keep all of them)
 * @property {string} [scenarios] the scenario file's text (checked on every new engine)
 * @property {{ name: string, state: SessionState }} [saveScenario]
 * @property {{ text: string, label: string } | null} [sessions] recorded sessions to replay
 * @property {string} [replayBase] the config replay compares against
 * @property {boolean} [diff] the page views whose outcome changes, once
 * @property {boolean} [force] answer everything, changed or not
 * @property {boolean} [asCode] the follow-up for coverage and replay once typing pauses
 * @property {number} [sentAt] page only: when the keystroke was sent (timings)
 */

/**
 * @typedef {object} PatternQuery
 * @property {string} text
 * @property {boolean} caseSensitive
 */

/**
 * A list sent as what changed since the last answer (worker.js `delta`); engine-client.js puts
 * it back together.
 * @template T
 * @typedef {object} Delta
 * @property {true} delta
 * @property {number} n the list's length
 * @property {[number, T][]} changed index and new item of each item that changed
 */

/**
 * @typedef {object} Compile
 * @property {boolean} valid
 * @property {Diagnostic[]} errors
 * @property {number} gen bumped on every successful compile
 * @property {boolean} hasEngine a config compiled once (the last valid one stays in use)
 * @property {number} compileMs
 * @property {boolean} [fresh] this text compiled
 */

/**
 * The storefront's preview of a new compile, ahead of the explanation.
 * @typedef {object} QuickPreview
 * @property {SessionState} state
 * @property {string | null} path
 * @property {PreviewResult} result
 */

/**
 * A rule's verdict as the editor gets it: explain's, with each of its conditions as a sentence
 * for a merchant (the engine's `conditionSentences`, in the order of `conditions`).
 * @typedef {RuleExplanation & { sentences: string[] }} Verdict
 */

/**
 * The visitor's explanation as the editor gets it: explain's, its verdicts with their sentences,
 * and the page's quiet zone in words (`conditionSentences`' `quiet_zone`).
 * @typedef {Omit<Explanation, 'rules'> & { rules: Verdict[], quiet_words: string | null }} EditorExplanation
 */

/**
 * @typedef {object} Evaluation
 * @property {SessionState} state
 * @property {(Omit<EditorExplanation, 'rules'> & { rules: Verdict[] | Delta<Verdict> }) | null} explanation
 *   null when the engine refuses the visitor (`requestError`)
 * @property {{ message: string, code: string | null } | null} requestError
 * @property {string} requestBody
 * @property {HttpResponse} response what a server holding this config answers
 * @property {PageReport | null} report
 */

/**
 * @typedef {object} Analysis
 * @property {number} gen
 * @property {Diagnostic[]} warnings
 * @property {RuleSummary[] | Delta<RuleSummary>} summary
 * @property {Omit<Config, 'rules'> & { rules: Rule[] | Delta<Rule> }} config
 */

/**
 * @typedef {object} MapAnswer
 * @property {string} url
 * @property {string | null} path
 * @property {Region[]} regions
 * @property {{ index: number, pattern: string } | null} quietZone
 * @property {string | null} error
 */

/**
 * What fires on a page of the URL bench: a rule, a quiet zone, nothing, or the URL is rejected.
 * @typedef {{ kind: 'fired', rule: number } | { kind: 'quiet_zone' } | { kind: 'no_nudge' } | { kind: 'rejected' }} BenchOutcome
 */

/**
 * @typedef {object} BenchRow
 * @property {string} url
 * @property {PageReport} report
 * @property {BenchOutcome} outcome
 */

/**
 * The engine's check of a typed pattern.
 * @typedef {object} PatternCheck
 * @property {string} text
 * @property {{ code: string, message: string } | null} error
 * @property {string[]} fixes the "did you mean" patterns the engine finds valid
 * @property {string[]} matches the sample pages it matches
 */

/**
 * Why a failing scenario's visitor misses the rule it expects (as-code.js `whyFailing`); each
 * condition with its sentence (the engine's `conditionSentences`).
 * @typedef {{ missing: true } | { verdict: string, index: number, conditions: { condition: string, holds: boolean, sentence: string }[],
 *   intent_score: number, idle_ms: number, path: string | null, page_url: string,
 *   fired_rule_id: string | null, quiet_zone: string | null }} FailureWhy
 */

/**
 * @typedef {object} ScenariosAnswer
 * @property {string} text the scenario file checked
 * @property {TestReport} [report]
 * @property {Record<number, FailureWhy>} [why] by result index
 * @property {Coverage} [coverage] once typing pauses
 * @property {boolean} [valid] checked against a config without errors
 * @property {string} [error] the file is not a scenario file
 */

/**
 * How the worker's WASM module arrived (the page cannot see the worker's fetches): bytes on the
 * wire and decoded, and when the download ended.
 * @typedef {{ encoded: number, decoded: number, responseEnd: number }} LoadReport
 */

/**
 * One answer of the worker: one part of the engine's work, named by its `kind`. The page's store
 * (store.js `reduce`) has one case per kind and tsc checks that none is left out; each view of
 * the page (views.js) redraws when the slice of state it reads changes, not when a kind arrives.
 * @typedef {{ kind: 'fatal', message: string }
 *   | { kind: 'failed', message: string }
 *   | { kind: 'wasm', load: LoadReport }
 *   | { kind: 'limits', limits: Limits }
 *   | { kind: 'compile', compile: Compile }
 *   | { kind: 'noEngine', url: string }
 *   | { kind: 'preview', preview: QuickPreview | null }
 *   | { kind: 'eval', evaluation: Evaluation }
 *   | { kind: 'analysis', analysis: Analysis }
 *   | { kind: 'map', map: MapAnswer }
 *   | { kind: 'bench', rows: BenchRow[] }
 *   | { kind: 'pages', reports: PageReport[] }
 *   | { kind: 'patterns', checks: PatternCheck[] }
 *   | { kind: 'scenarios', scenarios: ScenariosAnswer }
 *   | { kind: 'savedScenario', scenario: Scenario | { error: string } }
 *   | { kind: 'replay', replay: object }
 *   | { kind: 'diff', diff: object }} Answer
 *   `fatal`: the engine did not load; `failed`: the worker failed (a bug); `wasm`: how the module
 *   arrived; `limits`: the limits of a config (in the first reply); `noEngine`: no config has
 *   compiled yet, the visitor is on `url`; `preview`: the storefront's preview of a new compile,
 *   ahead of the explanation; `patterns`: one check per pattern of the job; `replay`: reach per
 *   rule before and after, `diff`: the page views that change (replay-panel.js)
 */

/**
 * What the worker posts: the answers to one job (or, with `aside`, to none: a load report that
 * came late). A new compile is replied to twice: a partial reply with the compile and the
 * storefront's preview, then the rest.
 * @typedef {object} Reply
 * @property {number} [seq] the job's
 * @property {boolean} [partial] the preview of a new compile; the rest of the reply follows
 * @property {boolean} [aside] answers of no job
 * @property {boolean} [later] coverage or replay of this engine still to come
 * @property {number} [workerMs]
 * @property {Answer[]} answers
 */

/**
 * The answer of kind `K` (an answer narrowed by its kind).
 * @template {Answer['kind']} K
 * @typedef {Extract<Answer, { kind: K }>} AnswerOf
 */

/**
 * `engine.previewFields`' answer (docs/JS-API.md: a rule index, -1 no rule, -2 quiet zone, -3
 * invalid input) as a named outcome, so that no other code reads the numbers.
 * @param {number} code
 * @returns {BenchOutcome}
 */
export function fieldsOutcome(code) {
  if (code >= 0) return { kind: 'fired', rule: code };
  if (code === -1) return { kind: 'no_nudge' };
  if (code === -2) return { kind: 'quiet_zone' };
  return { kind: 'rejected' };
}
