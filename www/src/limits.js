// The limits a config and a request must keep (docs/contract/config.md and docs/contract/preview.md), as the engine states them:
// `NudgeEngine.limits()`, which the worker posts with its first answer (store.js keeps them, and
// `setLimits` puts them here). Until that answer, the values of docs/contract/config.md, so that the controls drawn
// before the engine loads have their ends; a browser test checks them against the engine's.

/** @typedef {import('../../pkg/index.js').Limits} Limits */

/** @type {Readonly<Limits>} docs/contract/config.md and docs/contract/preview.md, until the engine's arrive */
export const SPEC_LIMITS = Object.freeze({
  config_bytes: 1_048_576,
  rules: 1000,
  quiet_zones: 1000,
  patterns_per_list: 100,
  pattern_bytes: 512,
  rule_id_chars: 64,
  message_chars: 500,
  cta_chars: 80,
  intent_score: 100,
  idle_ms: 86_400_000,
  page_url_bytes: 8192,
  request_bytes: 65_536,
  scenario_name_chars: 200,
});

/**
 * docs/contract/caps.md's limits (caps, cooldown, holdout, CTA link, a visitor's history). `NudgeEngine.limits()`
 * does not give them yet, so they are docs/contract/caps.md's numbers (src/limits.rs holds the same).
 */
export const SPEC15_LIMITS = Object.freeze({
  nudges_per_session: 100,
  cap_per_session: 100,
  cooldown_ms: 31_536_000_000,
  holdout_percent: 50,
  cta_url_bytes: 2048,
  history_entries: 200,
  ms_ago: 31_536_000_000,
  visitor_id_chars: 64,
});

/** The limits in force: the engine's once it has answered. @type {Limits} */
export const LIMITS = { ...SPEC_LIMITS };

/** @param {Limits} limits the engine's */
export function setLimits(limits) {
  Object.assign(LIMITS, limits);
}
