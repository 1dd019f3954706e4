-- The store of docs/contract/store.md (SQLite). Times are Unix milliseconds (UTC); every record has its site
-- and mode ('live' or 'test'). server/src/store/ explains each table; the PostgreSQL twin is
-- ../postgres/ with the same names and meanings.

-- Every event as received (relay, import), in arrival order (seq). message_id is unique per
-- site and mode: a resent event is a duplicate (docs/contract/relay.md "Exactly once").
CREATE TABLE events (
    seq          INTEGER PRIMARY KEY,
    site         TEXT    NOT NULL,
    mode         TEXT    NOT NULL,
    message_id   TEXT    NOT NULL,
    session_id   TEXT    NOT NULL,
    type         TEXT    NOT NULL,
    occurred_at  INTEGER NOT NULL,
    url          TEXT,
    -- the canonical path (docs/contract/urls.md) of url, or its exact text when docs/contract/urls.md rejects it
    path_key     TEXT,
    intent_score INTEGER,
    nudge_id     TEXT,
    nudge_type   TEXT,
    rule_id      TEXT,
    outcome      TEXT,
    received_at  INTEGER NOT NULL,
    UNIQUE (site, mode, message_id)
);
CREATE INDEX events_by_session ON events (site, mode, session_id, occurred_at, seq);

-- One row per session: the derived fields of docs/contract/read-api.md, recomputed from its events whenever one
-- arrives.
CREATE TABLE sessions (
    site         TEXT    NOT NULL,
    mode         TEXT    NOT NULL,
    id           TEXT    NOT NULL,
    started_at   INTEGER NOT NULL,
    ended_at     INTEGER NOT NULL,
    page_count   INTEGER NOT NULL,
    intent_score INTEGER NOT NULL,
    converted    INTEGER NOT NULL,
    nudge_count  INTEGER NOT NULL,
    PRIMARY KEY (site, mode, id)
) WITHOUT ROWID;
-- Covering: a page of the list is read from the index alone.
CREATE INDEX sessions_by_start ON sessions (site, mode, started_at, id, ended_at, page_count, intent_score, converted, nudge_count);

-- One row per shown nudge (a NUDGE_SHOWN event), with its derived outcome and influence;
-- session_started_at decides its visibility (a nudge is visible exactly when its session is).
CREATE TABLE nudges (
    site                  TEXT    NOT NULL,
    mode                  TEXT    NOT NULL,
    id                    TEXT    NOT NULL,
    session_id            TEXT    NOT NULL,
    type                  TEXT    NOT NULL,
    shown_at              INTEGER NOT NULL,
    outcome               TEXT    NOT NULL,
    influenced_conversion INTEGER NOT NULL,
    session_started_at    INTEGER NOT NULL,
    PRIMARY KEY (site, mode, id)
) WITHOUT ROWID;
-- Covering, like sessions_by_start.
CREATE INDEX nudges_by_shown ON nudges (site, mode, shown_at, id, session_started_at, session_id, type, outcome, influenced_conversion);
CREATE INDEX nudges_by_type ON nudges (site, mode, type, shown_at, id);
CREATE INDEX nudges_by_session ON nudges (site, mode, session_id, shown_at, id);
