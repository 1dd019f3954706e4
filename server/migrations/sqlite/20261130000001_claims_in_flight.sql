-- The in-flight index holds only deliveries with a claim (claimed_until > 0), not every pending
-- one: a delivery enters it when claimed and leaves it when its claim ends (its result, a
-- disable, a resend or a recover set claimed_until = 0). Before, each delivery written to the
-- outbox made an entry with the same key (endpoint, 0) in the relay's transaction, and each
-- result another; the count of claims in flight (server/src/store/queries/deliveries.rs) names
-- the predicate so the planner proves it. Forward only.
DROP INDEX webhook_deliveries_in_flight;
CREATE INDEX webhook_deliveries_in_flight ON webhook_deliveries (endpoint_id, claimed_until)
    WHERE state = 'pending' AND claimed_until > 0;
