-- docs/contract/caps.md (issue 32): holdouts and measured uplift. Forward only.
--
-- Every event may carry the visitor's id (docs/contract/relay.md, docs/contract/caps.md), stored as sent; NULL for events
-- stored before and for events sent without one.
ALTER TABLE events ADD COLUMN visitor_id TEXT;

-- One row per session and rule the session was exposed to (docs/contract/caps.md "Measured uplift"): its
-- first NUDGE_SHOWN with that rule_id (treated = 1) or NUDGE_HELD_OUT of that rule
-- (treated = 0), whichever came first (a tie: treated), at exposed_at; converted = 1 when a
-- PURCHASE of the session occurred at or after exposed_at. session_started_at is the session's
-- earliest event time (held-out events too): the report counts the sessions that started in
-- its window. Recomputed with the session's other derived fields whenever an event arrives
-- (server/src/model/derive.rs, exposures). A session of held-out events alone has exposure
-- rows and no sessions row (it is not a session of the read API).
CREATE TABLE exposures (
    site               TEXT    NOT NULL,
    mode               TEXT    NOT NULL,
    session_id         TEXT    NOT NULL,
    rule_id            TEXT    NOT NULL,
    treated            BIGINT NOT NULL,
    exposed_at         BIGINT NOT NULL,
    converted          BIGINT NOT NULL,
    session_started_at BIGINT NOT NULL,
    PRIMARY KEY (site, mode, session_id, rule_id)
);
-- The report: one range of sessions by start, counted by rule and arm (covering).
CREATE INDEX exposures_by_start ON exposures (site, mode, session_started_at) INCLUDE (rule_id, treated, converted);

-- Sessions stored before had no NUDGE_HELD_OUT events: their exposures are the first
-- NUDGE_SHOWN of each rule_id, all treated.
INSERT INTO exposures (site, mode, session_id, rule_id, treated, exposed_at, converted, session_started_at)
SELECT x.site, x.mode, x.session_id, x.rule_id, 1, x.exposed_at,
    CASE WHEN EXISTS (
        SELECT 1 FROM events p
        WHERE p.site = x.site AND p.mode = x.mode AND p.session_id = x.session_id
          AND p.type = 'PURCHASE' AND p.occurred_at >= x.exposed_at
    ) THEN 1 ELSE 0 END,
    s.started_at
FROM (
    SELECT site, mode, session_id, rule_id, MIN(occurred_at) AS exposed_at
    FROM events
    WHERE type = 'NUDGE_SHOWN' AND rule_id IS NOT NULL
    GROUP BY site, mode, session_id, rule_id
) x
JOIN sessions s ON s.site = x.site AND s.mode = x.mode AND s.id = x.session_id;
