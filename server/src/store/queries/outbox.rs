//! The outbox (docs/contract/webhooks.md): the webhook messages a group commit's batches make, gathered and
//! written at the end of its transaction by `writes!` and `webhooks!`, and `enqueue`, which
//! writes messages with their deliveries, one per backend (`sqlite`, `postgres`).

use crate::domain::event::Scope;
use crate::domain::webhook::endpoint::Endpoint;
use crate::domain::webhook::outbox::Message;

/// The webhook messages of a group of batches (docs/contract/webhooks.md), written to the outbox once, at the
/// end of the group's transaction: each scope's enabled endpoints read once per group (in the
/// transaction), and every message of the group inserted by one statement per table, not
/// three statements per batch (on SQLite's one writer those were a tenth of the relay's time
/// with an endpoint; docs/PERFORMANCE.md, "Webhook figures").
#[derive(Debug, Default)]
pub(super) struct Outbox<'s> {
    /// Each scope of the group with its enabled endpoints, as read in the transaction.
    pub(super) subscribers: Vec<(&'s Scope, Vec<Endpoint>)>,
    /// Each scope's messages, each addressed to its endpoints, in the batches' order.
    pub(super) messages: Vec<(&'s Scope, Vec<Message>)>,
}

impl<'s> Outbox<'s> {
    /// The endpoints of `scope` read so far (`None`: not read yet in this group).
    pub(super) fn subscribers_of(&self, scope: &Scope) -> Option<&[Endpoint]> {
        self.subscribers
            .iter()
            .find(|(s, _)| *s == scope)
            .map(|(_, endpoints)| endpoints.as_slice())
    }

    /// Adds `messages` of `scope`, after those of the group's earlier batches.
    pub(super) fn add(&mut self, scope: &'s Scope, messages: Vec<Message>) {
        match self.messages.iter_mut().find(|(s, _)| *s == scope) {
            Some((_, earlier)) => earlier.extend(messages),
            None => self.messages.push((scope, messages)),
        }
    }
}

/// Each delivery of `messages`: a message and one endpoint of its list, in order.
fn deliveries(messages: &[Message]) -> impl Iterator<Item = (&Message, &str)> {
    messages
        .iter()
        .flat_map(|m| m.to.iter().map(move |e| (m, e.as_str())))
}

/// Writing the outbox on SQLite.
pub(super) mod sqlite {
    use sqlx::QueryBuilder;

    use super::super::MESSAGES_PER_STATEMENT;
    use super::{Message, Scope};
    use crate::store::StoreError;

    /// Writes `messages` to the outbox, each with a pending delivery to each endpoint of its
    /// list, due at the message's creation (in the caller's transaction): one `INSERT` per
    /// table and [`MESSAGES_PER_STATEMENT`] rows.
    pub(crate) async fn enqueue(
        conn: &mut sqlx::SqliteConnection,
        scope: &Scope,
        messages: &[Message],
    ) -> Result<(), StoreError> {
        for chunk in messages.chunks(MESSAGES_PER_STATEMENT) {
            let mut insert = QueryBuilder::<sqlx::Sqlite>::new(
                "INSERT INTO webhook_messages (id, site, mode, type, created_at, body) ",
            );
            insert.push_values(chunk, |mut row, m| {
                row.push_bind(m.id.as_str())
                    .push_bind(scope.site.as_str())
                    .push_bind(scope.mode.as_str())
                    .push_bind(m.event_type.as_str())
                    .push_bind(m.created_at_ms)
                    .push_bind(m.body.as_str());
            });
            insert.build().execute(&mut *conn).await?;
        }
        let deliveries: Vec<(&Message, &str)> = super::deliveries(messages).collect();
        for chunk in deliveries.chunks(MESSAGES_PER_STATEMENT) {
            let mut insert = QueryBuilder::<sqlx::Sqlite>::new(
                "INSERT INTO webhook_deliveries (message_id, endpoint_id, state, attempts, next_attempt_at, claimed_until, created_at) ",
            );
            insert.push_values(chunk, |mut row, (message, endpoint)| {
                row.push_bind(message.id.as_str())
                    .push_bind(*endpoint)
                    .push_bind("pending")
                    .push_bind(0i64)
                    .push_bind(message.created_at_ms)
                    .push_bind(0i64)
                    .push_bind(message.created_at_ms);
            });
            insert.build().execute(&mut *conn).await?;
        }
        Ok(())
    }
}

/// Writing the outbox on PostgreSQL.
pub(super) mod postgres {
    use super::{Message, Scope};
    use crate::store::StoreError;

    /// Writes `messages` to the outbox, each with a pending delivery to each endpoint of its
    /// list, due at the message's creation (in the caller's transaction): one statement for
    /// both tables, its rows passed as arrays. PostgreSQL has no group commit, so each batch
    /// of the relay pays for its outbox; as two `INSERT ... VALUES` with a bind per column
    /// (a statement per row count, too) the outbox was most of the relay's cost of an
    /// endpoint (docs/PERFORMANCE.md "Webhook figures").
    pub(crate) async fn enqueue(
        conn: &mut sqlx::PgConnection,
        scope: &Scope,
        messages: &[Message],
    ) -> Result<(), StoreError> {
        if messages.is_empty() {
            return Ok(());
        }
        let ids: Vec<&str> = messages.iter().map(|m| m.id.as_str()).collect();
        let types: Vec<&str> = messages.iter().map(|m| m.event_type.as_str()).collect();
        let times: Vec<i64> = messages.iter().map(|m| m.created_at_ms).collect();
        let bodies: Vec<&str> = messages.iter().map(|m| m.body.as_str()).collect();
        let (mut to_message, mut to_endpoint, mut to_time) = (Vec::new(), Vec::new(), Vec::new());
        for (m, endpoint) in super::deliveries(messages) {
            to_message.push(m.id.as_str());
            to_endpoint.push(endpoint);
            to_time.push(m.created_at_ms);
        }
        sqlx::query(
            "WITH messages AS (INSERT INTO webhook_messages (id, site, mode, type, created_at, body) \
             SELECT id, $1, $2, type, created_at, body FROM unnest($3::text[], $4::text[], $5::int8[], $6::text[]) \
             AS m(id, type, created_at, body)) \
             INSERT INTO webhook_deliveries (message_id, endpoint_id, state, attempts, next_attempt_at, claimed_until, created_at) \
             SELECT message_id, endpoint_id, 'pending', 0, created_at, 0, created_at \
             FROM unnest($7::text[], $8::text[], $9::int8[]) AS d(message_id, endpoint_id, created_at)",
        )
        .bind(&scope.site)
        .bind(scope.mode.as_str())
        .bind(ids)
        .bind(types)
        .bind(times)
        .bind(bodies)
        .bind(to_message)
        .bind(to_endpoint)
        .bind(to_time)
        .execute(&mut *conn)
        .await?;
        Ok(())
    }
}
