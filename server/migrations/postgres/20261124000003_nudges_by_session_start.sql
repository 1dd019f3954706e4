-- The nudges of a backtest page (docs/contract/backtest.md): the page's sessions are a range of (started_at, id),
-- and a nudge row carries its session's start, so their nudges are one range of this index,
-- read in the order replay wants, instead of one lookup per session (a hash join over every
-- nudge of the site, 15 ms per page of 1,000 sessions at 100,000). Covering, like
-- nudges_by_shown.
CREATE INDEX nudges_by_session_start ON nudges (site, mode, session_started_at, session_id, shown_at, id) INCLUDE (type, outcome, influenced_conversion);
