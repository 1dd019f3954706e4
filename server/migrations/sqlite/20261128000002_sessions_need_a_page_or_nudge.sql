-- docs/contract/read-api.md "Derived fields" (amended 2026-11-26, issue 35): a session exists for the read API once
-- it holds a PAGE_VIEW, ADD_TO_CART, PURCHASE or NUDGE_SHOWN event; an outcome whose NUDGE_SHOWN
-- has not come made a listed session before. Those rows go (their events stay: the session
-- appears when its NUDGE_SHOWN comes). Forward only.
DELETE FROM sessions WHERE NOT EXISTS (
    SELECT 1 FROM events e
    WHERE e.site = sessions.site AND e.mode = sessions.mode AND e.session_id = sessions.id
      AND e.type IN ('PAGE_VIEW', 'ADD_TO_CART', 'PURCHASE', 'NUDGE_SHOWN')
);
