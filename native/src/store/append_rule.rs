//! The rules every store checks before a write, kept once for both backends. An append: the
//! batch starts right after the log's last `seq` (else another writer got there first: a
//! retryable [`Error::SeqConflict`]), its `seq`s have no gaps, and every offload record belongs
//! to one of the appended messages. A checkpoint: it moves forward and covers only logged
//! messages.

use ctxkit_core::model::Entry;

use super::OffloadRecord;
use crate::error::{Error, Result};

/// Checks `entries` (with `offloads`) as an append to session `name`, whose log ends at
/// `last_seq` (0 for an empty log); returns where the log ends after it.
pub(super) fn check_append(
    name: &str,
    last_seq: u64,
    entries: &[Entry],
    offloads: &[OffloadRecord],
) -> Result<u64> {
    if let Some(first) = entries.first().filter(|first| first.seq <= last_seq) {
        return Err(Error::SeqConflict {
            session: name.to_owned(),
            first_seq: first.seq,
            log_ends_at: last_seq,
        });
    }
    let mut expected = last_seq.saturating_add(1);
    for entry in entries {
        if entry.seq != expected {
            return Err(Error::invalid(
                format!("entries[seq {}]", entry.seq),
                format!("session {name:?}: expected seq {expected} (seqs have no gaps)"),
            ));
        }
        expected = expected.saturating_add(1);
    }
    for offload in offloads {
        if !entries.iter().any(|entry| entry.seq == offload.seq) {
            return Err(Error::invalid(
                format!("offloads[seq {}]", offload.seq),
                format!("session {name:?}: not one of the appended messages"),
            ));
        }
    }
    Ok(expected.saturating_sub(1))
}

/// Checks a checkpoint through `through` for session `name`, whose latest checkpoint is
/// through `latest` and whose log ends at `last_seq`: it must move forward and cover only
/// logged messages.
pub(super) fn check_checkpoint(
    name: &str,
    latest: Option<u64>,
    last_seq: u64,
    through: u64,
) -> Result<()> {
    if latest.is_some_and(|latest| through <= latest) || through > last_seq || through == 0 {
        return Err(Error::invalid(
            "checkpoint.through_seq",
            format!(
                "session {name:?}: {through} must be after the latest checkpoint ({}) and at \
                 most the last logged seq ({last_seq})",
                latest.map_or_else(|| "none".to_owned(), |l| l.to_string())
            ),
        ));
    }
    Ok(())
}
