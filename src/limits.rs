//! Every limit of the specification, in one place (docs/contract/config.md, docs/contract/urls.md, docs/contract/preview.md, docs/contract/as-code.md and docs/contract/caps.md).
//!
//! Each is enforced where its input is read, and every message that states a limit is built
//! from the constant here, so a limit and its message cannot drift apart. Each limit, one past
//! its edge, has a test (`tests/integration/limits.rs`).

/// Largest config text, in bytes: 1 MiB (docs/contract/config.md). A config given as a JSON value is measured by
/// its compact JSON text.
pub const MAX_CONFIG_BYTES: usize = 1 << 20;

/// Most rules in one config: 1,000 (docs/contract/config.md).
pub const MAX_RULES: usize = 1000;

/// Most quiet zones in one config: 1,000 (docs/contract/config.md).
pub const MAX_QUIET_ZONES: usize = 1000;

/// Most patterns in one `pages` or `exclude_pages` list: 100 (docs/contract/config.md).
pub const MAX_PATTERNS_PER_LIST: usize = 100;

/// Longest pattern, in bytes (UTF-8), as written: 512 (docs/contract/config.md).
pub const MAX_PATTERN_BYTES: usize = 512;

/// Most characters (Unicode scalar values) in a rule id: 64; the fewest is 1 (docs/contract/config.md).
pub const MAX_RULE_ID_CHARS: usize = 64;

/// Most characters (Unicode scalar values) in a nudge message: 500; the fewest is 1 (docs/contract/config.md).
pub const MAX_MESSAGE_CHARS: usize = 500;

/// Most characters (Unicode scalar values) in a nudge call-to-action label: 80; the fewest is 1
/// (docs/contract/config.md).
pub const MAX_CTA_CHARS: usize = 80;

/// Largest intent score: 100; the smallest is 0 (docs/contract/config.md `min_intent_score`/`max_intent_score`,
/// docs/contract/preview.md `intent_score`).
pub const MAX_INTENT_SCORE: u8 = 100;

/// Largest idle time, in milliseconds: 86,400,000 (one day); the smallest is 0 (docs/contract/config.md
/// `min_idle_ms`, docs/contract/preview.md `idle_ms`).
pub const MAX_IDLE_MS: u32 = 86_400_000;

/// Longest accepted `page_url`, in bytes: 8,192 (docs/contract/urls.md step 2). The canonical path it
/// normalizes to is held to the same limit.
pub const MAX_PAGE_URL_BYTES: usize = 8192;

/// Largest preview request body, in bytes: 64 KiB (docs/contract/preview.md).
pub const MAX_REQUEST_BYTES: usize = 64 * 1024;

/// Most nudges shown (or held out) in one session that `max_nudges_per_session` may allow: 100;
/// the fewest is 1 (docs/contract/caps.md).
pub const MAX_NUDGES_PER_SESSION: u8 = 100;

/// Largest `rule.cap.per_session`, the times one rule may fire in one session: 100; the fewest
/// is 1, the default 1 (docs/contract/caps.md).
pub const MAX_CAP_PER_SESSION: u8 = 100;

/// Longest `rule.cap.cooldown_ms`, in milliseconds: 31,536,000,000 (365 days); the shortest is
/// 0, the default (docs/contract/caps.md).
pub const MAX_COOLDOWN_MS: u64 = 31_536_000_000;

/// Largest `rule.holdout_percent`, the share of visitors held out as a rule's control group: 50;
/// the smallest is 0, the default (docs/contract/caps.md).
pub const MAX_HOLDOUT_PERCENT: u8 = 50;

/// Longest `rule.nudge.cta_url`, in bytes (UTF-8): 2,048 (docs/contract/caps.md).
pub const MAX_CTA_URL_BYTES: usize = 2048;

/// Most entries in a session state's `history`: 200 (docs/contract/caps.md).
pub const MAX_HISTORY_ENTRIES: usize = 200;

/// Largest `history[].ms_ago`, in milliseconds: 31,536,000,000 (365 days); the smallest is 0
/// (docs/contract/caps.md).
pub const MAX_MS_AGO: u64 = 31_536_000_000;

/// Most characters after `vis_` in a `visitor_id`: 64 of `A-Za-z0-9_-`; the fewest is 1
/// (docs/contract/caps.md).
pub const MAX_VISITOR_ID_CHARS: usize = 64;

/// Largest scenario file, in bytes: 16 MiB (docs/contract/as-code.md). A file given as a JSON value is measured by
/// its compact JSON text.
pub const MAX_SCENARIO_FILE_BYTES: usize = 16 << 20;

/// Most scenarios in one scenario file: 10,000 (docs/contract/as-code.md).
pub const MAX_SCENARIOS: usize = 10_000;

/// Most characters (Unicode scalar values) in a scenario name: 200; the fewest is 1 (docs/contract/as-code.md).
pub const MAX_SCENARIO_NAME_CHARS: usize = 200;

/// Largest recorded-sessions input (JSONL or a JSON array), in bytes: 64 MiB (docs/contract/as-code.md replay).
pub const MAX_SESSIONS_BYTES: usize = 64 << 20;

/// Most sessions in one input: 100,000 (docs/contract/as-code.md replay).
pub const MAX_SESSIONS: usize = 100_000;

/// Most events in one recorded session: 10,000 (docs/contract/as-code.md replay; API document 2.2 `events`).
pub const MAX_EVENTS_PER_SESSION: usize = 10_000;

/// Most recorded nudges in one session: 1,000 (docs/contract/as-code.md replay; API document 2.2 `nudges`).
pub const MAX_RECORDED_NUDGES_PER_SESSION: usize = 1_000;

/// Most example page views a backtest keeps (docs/contract/backtest.md `changes.examples`): 100.
pub const MAX_BACKTEST_EXAMPLES: usize = 100;

/// Most pages whose decision maps `diff` compares when no inputs are given: 10,000 (docs/contract/as-code.md
/// diff; the pages the two configs mention, in sorted order).
pub const MAX_DIFF_PAGES: usize = 10_000;
