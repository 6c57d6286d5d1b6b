//! A log entry's estimate, computed once where it is made: [`Entry::new`] and
//! [`Entry::number`] estimate each message for the session's family with the estimator of
//! this module, so the log's type (in [`crate::model`], below the estimator) stays free of it.

use crate::model::{Entry, Message};
use crate::tokens::{estimate_message, ModelFamily};

impl Entry {
    /// An entry with its estimate computed for `family`.
    pub fn new(seq: u64, message: Message, family: ModelFamily) -> Self {
        let tokens = estimate_message(&message, family);
        Entry {
            seq,
            message,
            tokens,
        }
    }

    /// Entries for `messages`, numbered from `first_seq`.
    pub fn number(
        messages: impl IntoIterator<Item = Message>,
        first_seq: u64,
        family: ModelFamily,
    ) -> Vec<Entry> {
        messages
            .into_iter()
            .zip(first_seq..)
            .map(|(message, seq)| Entry::new(seq, message, family))
            .collect()
    }
}
