//! Appends that can be retried (issue 34 item 4): [`Engine::record_batch_keyed`] stores a batch
//! under an idempotency key, so a caller that lost the acknowledgement of an append (the
//! connection dropped between the commit and its answer) retries with the same key and gets
//! the first result back ([`RecordOutcome::repeated`]) instead of a second copy of the batch.
//!
//! The key is the caller's ([`AppendKey::Given`]: any text up to 200 characters, unique per
//! batch within the session; a lost race to another writer is renumbered and retried under the
//! same key), or derived from the batch and the seq it must follow ([`AppendKey::After`]: the
//! caller's last known seq; the batch is stored right after it or, when another writer got
//! there first, refused with [`crate::Error::SeqConflict`], never renumbered, so the same batch
//! at the same place is one key). A key stored with a batch answers every later append under
//! it with that batch's seqs, whatever the later batch holds.

use ctxkit_core::model::Entry;
use ctxkit_core::Message;

use super::{Engine, RecordOutcome, RecordedMessage};
use crate::error::Result;
use crate::store::{check_key, derived_key};

/// The idempotency key of an append.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AppendKey {
    /// The caller's key.
    Given(String),
    /// The key derived from the batch and the seq it must follow (0: an empty log).
    After(u64),
}

/// A batch's key as the append stores it, and the seq it must follow when it names one.
#[derive(Debug)]
pub(super) struct Keyed {
    pub(super) key: String,
    pub(super) after: Option<u64>,
}

impl Engine {
    /// [`Engine::record_batch`] under the idempotency key `key` (see the module doc): when the
    /// session holds a batch stored under it, nothing is stored (no offload file stays either)
    /// and the outcome, marked [`RecordOutcome::repeated`], holds that batch's seqs.
    pub fn record_batch_keyed(
        &mut self,
        session: &str,
        messages: Vec<Message>,
        create_missing: bool,
        key: AppendKey,
    ) -> Result<RecordOutcome> {
        let keyed = match key {
            AppendKey::Given(key) => {
                check_key(&key)?;
                Keyed { key, after: None }
            }
            AppendKey::After(after) => Keyed {
                key: derived_key(after, &messages)?,
                after: Some(after),
            },
        };
        self.record_batch_with(session, &messages, create_missing, Some(&keyed))
    }

    /// The outcome of a batch whose key was stored already with seqs `first_seq..=last_seq`:
    /// those seqs, with the estimates of this batch's `entries` (the same messages estimate the
    /// same) and the offload records stored then.
    pub(super) fn repeated(
        &mut self,
        session: &str,
        entries: &[Entry],
        first_seq: u64,
        last_seq: u64,
    ) -> Result<RecordOutcome> {
        let records = self.store.offloads(session)?;
        let recorded = (first_seq..=last_seq)
            .zip(entries)
            .map(|(seq, entry)| RecordedMessage {
                seq,
                tokens: entry.tokens,
                offload: records.iter().find(|record| record.seq == seq).cloned(),
            })
            .collect();
        Ok(RecordOutcome {
            recorded,
            events: Vec::new(),
            repeated: true,
        })
    }
}
