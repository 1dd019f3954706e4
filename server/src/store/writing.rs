//! How many event batches are being written now, for the webhook worker, which gives way to
//! them (`app/delivery.rs`, docs/contract/webhooks.md's relay target).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The count of event batches being written (in [`crate::store::Store::insert_events_within`],
/// from the call to its answer): cheap to clone, shared by the store's clones.
#[derive(Clone, Debug, Default)]
pub(super) struct Batches(Arc<AtomicUsize>);

impl Batches {
    /// Counts one batch until the guard is dropped (its answer, or its future dropped).
    pub(super) fn begin(&self) -> Writing<'_> {
        self.0.fetch_add(1, Ordering::Relaxed);
        Writing(&self.0)
    }

    /// How many batches are being written (0 or more).
    pub(super) fn now(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }
}

/// One batch counted by [`Batches::begin`].
pub(super) struct Writing<'a>(&'a AtomicUsize);

impl Drop for Writing<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::Batches;

    #[test]
    fn a_batch_counts_until_its_guard_is_dropped() {
        let batches = Batches::default();
        let shared = batches.clone();
        let one = batches.begin();
        let two = shared.begin();
        assert_eq!(batches.now(), 2);
        drop(one);
        assert_eq!(shared.now(), 1);
        drop(two);
        assert_eq!(batches.now(), 0);
    }
}
