//! The outbox of a group commit (SPEC 16): the webhook messages its batches make, gathered and
//! written at the end of its transaction by `writes!` and `webhooks!`.

use crate::domain::event::Scope;
use crate::domain::webhook::endpoint::{Endpoint, Message};

/// The webhook messages of a group of batches (SPEC 16), written to the outbox once, at the
/// end of the group's transaction: each scope's enabled endpoints read once per group (in the
/// transaction), and every message of the group inserted by one statement per table, not
/// three statements per batch (on SQLite's one writer those were a tenth of the relay's time
/// with an endpoint; docs/PERFORMANCE.md, "Webhook figures").
#[derive(Debug, Default)]
pub(super) struct Outbox<'s> {
    /// Each scope of the group with its enabled endpoints, as read in the transaction.
    pub(super) subscribers: Vec<(&'s Scope, Vec<Endpoint>)>,
    /// Each scope's messages, each with the endpoints it goes to, in the batches' order.
    pub(super) messages: Vec<(&'s Scope, Vec<Addressed>)>,
}

/// A message with the ids of the endpoints it goes to.
pub(super) type Addressed = (Message, Vec<String>);

impl<'s> Outbox<'s> {
    /// The endpoints of `scope` read so far (`None`: not read yet in this group).
    pub(super) fn subscribers_of(&self, scope: &Scope) -> Option<&[Endpoint]> {
        self.subscribers
            .iter()
            .find(|(s, _)| *s == scope)
            .map(|(_, endpoints)| endpoints.as_slice())
    }

    /// Adds `messages` of `scope`, after those of the group's earlier batches.
    pub(super) fn add(&mut self, scope: &'s Scope, messages: Vec<Addressed>) {
        match self.messages.iter_mut().find(|(s, _)| *s == scope) {
            Some((_, earlier)) => earlier.extend(messages),
            None => self.messages.push((scope, messages)),
        }
    }
}
