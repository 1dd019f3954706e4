-- Webhooks (docs/contract/webhooks.md): endpoints, the outbox of messages, each message's delivery to each
-- endpoint, and the attempts log. Times are Unix milliseconds. Forward only.
--
-- The outbox: a message and its deliveries are written in the transaction of the change that
-- causes them (events, outcomes, versions; server/src/store/queries/webhooks.rs), so a
-- crash after the commit still delivers it. The delivery worker (server/src/app/webhooks/)
-- claims due deliveries for WEBHOOK_LEASE (claimed_until): a claim that outlives its instance
-- is due again when the lease ends.

-- One row per endpoint, per site and mode. event_types: the subscribed names, space-separated.
-- previous_secret signs too until previous_secret_until (a rotation's 24 hours). failing_since:
-- the first failed attempt since the last success (the 5-day disable rule).
CREATE TABLE webhook_endpoints (
    id                    TEXT    NOT NULL PRIMARY KEY,
    site                  TEXT    NOT NULL,
    mode                  TEXT    NOT NULL,
    url                   TEXT    NOT NULL,
    event_types           TEXT    NOT NULL,
    description           TEXT,
    status                TEXT    NOT NULL,
    secret                TEXT    NOT NULL,
    previous_secret       TEXT,
    previous_secret_until BIGINT,
    failing_since         BIGINT,
    created_at            BIGINT NOT NULL,
    updated_at            BIGINT NOT NULL
);
CREATE INDEX webhook_endpoints_by_scope ON webhook_endpoints (site, mode, created_at, id);

-- The outbox: each message's whole body (the JSON text every attempt sends, signed as is).
CREATE TABLE webhook_messages (
    id         TEXT    NOT NULL PRIMARY KEY,
    site       TEXT    NOT NULL,
    mode       TEXT    NOT NULL,
    type       TEXT    NOT NULL,
    created_at BIGINT NOT NULL,
    body       TEXT    NOT NULL
);
CREATE INDEX webhook_messages_by_time ON webhook_messages (created_at);

-- A message's delivery to one endpoint: pending (next_attempt_at set), succeeded or failed.
-- attempts: how many were made. claim: the worker's token while claimed_until is ahead.
CREATE TABLE webhook_deliveries (
    message_id      TEXT    NOT NULL,
    endpoint_id     TEXT    NOT NULL,
    state           TEXT    NOT NULL,
    attempts        BIGINT NOT NULL,
    next_attempt_at BIGINT,
    claimed_until   BIGINT NOT NULL,
    claim           TEXT,
    created_at      BIGINT NOT NULL,
    PRIMARY KEY (message_id, endpoint_id)
);
-- An endpoint's deliveries by state and due time: the worker's claims (the due ones, oldest
-- first), recover (the failed ones), delete.
CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (endpoint_id, state, next_attempt_at);
-- An endpoint's claims in flight (at most 8), counted without reading its backlog.
CREATE INDEX webhook_deliveries_in_flight ON webhook_deliveries (endpoint_id, claimed_until) WHERE state = 'pending';

-- Every attempt, newest last: the first 4 KiB of the response body, or the error.
CREATE TABLE webhook_attempts (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    endpoint_id     TEXT    NOT NULL,
    message_id      TEXT    NOT NULL,
    event_type      TEXT    NOT NULL,
    attempt         BIGINT NOT NULL,
    attempted_at    BIGINT NOT NULL,
    status          BIGINT,
    error           TEXT,
    duration_ms     BIGINT NOT NULL,
    body            TEXT    NOT NULL,
    next_attempt_at BIGINT
);
CREATE INDEX webhook_attempts_by_endpoint ON webhook_attempts (endpoint_id, seq);
