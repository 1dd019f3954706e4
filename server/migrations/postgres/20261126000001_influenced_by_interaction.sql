-- docs/contract/read-api.md "Derived fields", amended 2026-11-26: a nudge's influenced_conversion is true only when
-- a PURCHASE of its session occurred at or after the visitor acted on the nudge (its latest
-- `clicked` outcome event, or `chat_opened` of a chat bubble) and at most 30 minutes (1,800,000
-- ms) later; a nudge only shown or dismissed is never influenced. Nudges stored before were
-- derived from the latest outcome of any kind, or from shown_at without one: each is recomputed
-- here from its session's events, as server/src/model/derive.rs derives it, and only the rows
-- whose value changes are written. Forward only; sessions are not touched.
UPDATE nudges
SET influenced_conversion = 1 - influenced_conversion
WHERE influenced_conversion <> (
    CASE WHEN EXISTS (
        SELECT 1 FROM events p
        WHERE p.site = nudges.site AND p.mode = nudges.mode AND p.session_id = nudges.session_id
          AND p.type = 'PURCHASE'
          AND p.occurred_at - (
              SELECT MAX(o.occurred_at) FROM events o
              WHERE o.site = nudges.site AND o.mode = nudges.mode
                AND o.session_id = nudges.session_id
                AND o.type = 'NUDGE_OUTCOME' AND o.nudge_id = nudges.id
                AND (o.outcome = 'clicked' OR (o.outcome = 'chat_opened' AND nudges.type = 'chat_bubble'))
          ) BETWEEN 0 AND 1800000
    ) THEN 1 ELSE 0 END
);
