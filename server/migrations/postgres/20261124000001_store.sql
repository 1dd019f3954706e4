-- The store of docs/contract/store.md (PostgreSQL). Times are Unix milliseconds (UTC); every record has its site
-- and mode ('live' or 'test'). server/src/store/ explains each table; the SQLite twin is
-- ../sqlite/ with the same names and meanings.

-- Every event as received (relay, import), in arrival order (seq). message_id is unique per
-- site and mode: a resent event is a duplicate (docs/contract/relay.md "Exactly once").
CREATE TABLE events (
    seq          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    site         TEXT    NOT NULL,
    mode         TEXT    NOT NULL,
    message_id   TEXT    NOT NULL,
    session_id   TEXT    NOT NULL,
    type         TEXT    NOT NULL,
    occurred_at  BIGINT NOT NULL,
    url          TEXT,
    -- the canonical path (docs/contract/urls.md) of url, or its exact text when docs/contract/urls.md rejects it
    path_key     TEXT,
    intent_score BIGINT,
    nudge_id     TEXT,
    nudge_type   TEXT,
    rule_id      TEXT,
    outcome      TEXT,
    received_at  BIGINT NOT NULL,
    UNIQUE (site, mode, message_id)
);
CREATE INDEX events_by_session ON events (site, mode, session_id, occurred_at, seq);

-- One row per session: the derived fields of docs/contract/read-api.md, recomputed from its events whenever one
-- arrives.
CREATE TABLE sessions (
    site         TEXT    NOT NULL,
    mode         TEXT    NOT NULL,
    id           TEXT    NOT NULL,
    started_at   BIGINT NOT NULL,
    ended_at     BIGINT NOT NULL,
    page_count   BIGINT NOT NULL,
    intent_score BIGINT NOT NULL,
    converted    BIGINT NOT NULL,
    nudge_count  BIGINT NOT NULL,
    PRIMARY KEY (site, mode, id)
);
-- Covering: a page of the list is read from the index alone.
CREATE INDEX sessions_by_start ON sessions (site, mode, started_at, id) INCLUDE (ended_at, page_count, intent_score, converted, nudge_count);

-- One row per shown nudge (a NUDGE_SHOWN event), with its derived outcome and influence;
-- session_started_at decides its visibility (a nudge is visible exactly when its session is).
CREATE TABLE nudges (
    site                  TEXT    NOT NULL,
    mode                  TEXT    NOT NULL,
    id                    TEXT    NOT NULL,
    session_id            TEXT    NOT NULL,
    type                  TEXT    NOT NULL,
    shown_at              BIGINT NOT NULL,
    outcome               TEXT    NOT NULL,
    influenced_conversion BIGINT NOT NULL,
    session_started_at    BIGINT NOT NULL,
    PRIMARY KEY (site, mode, id)
);
-- Covering, like sessions_by_start.
CREATE INDEX nudges_by_shown ON nudges (site, mode, shown_at, id) INCLUDE (session_started_at, session_id, type, outcome, influenced_conversion);
CREATE INDEX nudges_by_type ON nudges (site, mode, type, shown_at, id);
CREATE INDEX nudges_by_session ON nudges (site, mode, session_id, shown_at, id);
