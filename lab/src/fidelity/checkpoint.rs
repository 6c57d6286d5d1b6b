//! Measuring what checkpoints kept: for each checkpoint of a session, the pinned facts of
//! what it covers (and of the checkpoint before), how many its summary holds verbatim, how
//! many it dropped, and how many of those a history search finds again in the log.
//!
//! The measure reads the summary text, not the checkpoint's own list of facts: it checks what
//! the model will see. `ctxkit fidelity` prints it; the corpus tests assert on it.

use serde::{Deserialize, Serialize};

use ctxkit_core::compaction::pinned::pinned_from_summary;
use ctxkit_core::compaction::pinned::{gather_pinned, summary_holds, FactKind, PinnedFact};
use ctxkit_core::compaction::{Checkpoint, SummaryMethod};
use ctxkit_core::model::Entry;

/// The counts of one kind of fact at one checkpoint.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KindFidelity {
    /// Facts of this kind in what the checkpoint covers and in the checkpoint before.
    pub expected: usize,
    /// Of those, the ones the summary (with its active tasks) holds verbatim.
    pub kept: usize,
    /// The ones it does not hold.
    pub dropped: usize,
    /// Of the dropped ones, those a history search finds in the log.
    pub found_again: usize,
}

/// What one checkpoint kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckpointFidelity {
    /// The last `seq` it covers.
    pub through_seq: u64,
    /// Who wrote its summary.
    pub method: SummaryMethod,
    /// The summary's size in bytes.
    pub summary_bytes: usize,
    /// Per kind, in [`FactKind::ALL`] order.
    pub kinds: Vec<(FactKind, KindFidelity)>,
}

impl CheckpointFidelity {
    /// The counts for `kind`.
    pub fn of(&self, kind: FactKind) -> KindFidelity {
        self.kinds
            .iter()
            .find(|(k, _)| *k == kind)
            .map(|(_, counts)| *counts)
            .unwrap_or_default()
    }
}

/// What each of `checkpoints` (oldest first) kept of the facts of `entries` (the whole log).
/// `found_again` says whether a history search finds a dropped fact in the log.
pub fn checkpoint_fidelity(
    entries: &[Entry],
    checkpoints: &[Checkpoint],
    mut found_again: impl FnMut(&PinnedFact) -> bool,
) -> Vec<CheckpointFidelity> {
    let mut out = Vec::with_capacity(checkpoints.len());
    let mut previous: Option<&Checkpoint> = None;
    for checkpoint in checkpoints {
        let after = previous.map_or(0, |p| p.through_seq);
        let covered = entries
            .iter()
            .filter(|entry| entry.seq > after && entry.seq <= checkpoint.through_seq)
            .map(|entry| &entry.message);
        let carried = match previous {
            Some(p) if p.pinned.is_empty() => pinned_from_summary(&p.summary),
            Some(p) => p.pinned.clone(),
            None => Vec::new(),
        };
        let expected = gather_pinned(covered, &carried, &[]);
        let shown = match &checkpoint.active_tasks {
            Some(tasks) => format!("{}\n{tasks}", checkpoint.summary),
            None => checkpoint.summary.clone(),
        };
        let mut kinds = Vec::new();
        for kind in FactKind::ALL {
            let mut counts = KindFidelity::default();
            for fact in expected.iter().filter(|fact| fact.kind == kind) {
                counts.expected += 1;
                if summary_holds(&shown, &fact.text) {
                    counts.kept += 1;
                } else {
                    counts.dropped += 1;
                    counts.found_again += usize::from(found_again(fact));
                }
            }
            kinds.push((kind, counts));
        }
        out.push(CheckpointFidelity {
            through_seq: checkpoint.through_seq,
            method: checkpoint.method,
            summary_bytes: checkpoint.summary.len(),
            kinds,
        });
        previous = Some(checkpoint);
    }
    out
}
