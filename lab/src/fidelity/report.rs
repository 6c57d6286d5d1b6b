//! The fidelity report of a session (`ctxkit fidelity`, Python's `ctxkit.fidelity`): its
//! figures and its `--json` rows.
//!
//! For every checkpoint: what its summary kept of the pinned facts (paths, error lines, user
//! requests, identifiers, tasks, the next step), what it dropped, and how many of the dropped
//! ones a history search finds again in the complete log; and the needed-next figure: of the
//! facts the agent's later tool calls used that only the summary could have given it, the
//! share the summary holds. The transcript's own compactions (Claude Code's continuation
//! summaries) are measured the same way, as the anchor. Pure: the history search is the
//! caller's (the native engine's `search_history`), passed in as a function, and the rows are
//! data the shells print.

use ctxkit_core::compaction::{Checkpoint, FactKind, PinnedFact};
use ctxkit_core::model::Entry;
use serde_json::{json, Value};

use super::checkpoint::{checkpoint_fidelity, CheckpointFidelity};
use crate::needed_next::{checkpoint_summaries, needed_next, transcript_summaries, NeededNext};

/// The figures of one session: per checkpoint, and for the transcript's own compactions.
#[derive(Debug, Clone)]
pub struct FidelityReport {
    /// What each checkpoint kept of the pinned facts, oldest first.
    pub checkpoints: Vec<CheckpointFidelity>,
    /// The needed-next figure of each checkpoint, in the same order.
    pub needed_next: Vec<NeededNext>,
    /// The needed-next figure of each compaction the transcript itself recorded.
    pub transcript: Vec<NeededNext>,
}

impl FidelityReport {
    /// Measures a session's log and checkpoints: what each checkpoint kept of the pinned
    /// facts (a dropped fact counts as found again when `found_again` says so: the caller's
    /// history search, whose failure stops the measure and is returned), and the needed-next
    /// figure of each checkpoint and of each compaction the transcript itself recorded.
    pub fn measure<E>(
        entries: &[Entry],
        checkpoints: &[Checkpoint],
        mut found_again: impl FnMut(&PinnedFact) -> Result<bool, E>,
    ) -> Result<FidelityReport, E> {
        let mut failure = None;
        let measured = checkpoint_fidelity(entries, checkpoints, |fact| {
            if failure.is_some() {
                return false;
            }
            found_again(fact).unwrap_or_else(|error| {
                failure = Some(error);
                false
            })
        });
        if let Some(error) = failure {
            return Err(error);
        }
        Ok(FidelityReport {
            checkpoints: measured,
            needed_next: needed_next(entries, &checkpoint_summaries(checkpoints)),
            transcript: needed_next(entries, &transcript_summaries(entries)),
        })
    }

    /// The `--json` rows: one object per checkpoint, one per transcript compaction
    /// (`"method": "transcript"`), then the totals of `session` at `window` tokens.
    pub fn json_rows(&self, session: &str, window: u64) -> Vec<Value> {
        let mut rows: Vec<Value> = self
            .checkpoints
            .iter()
            .zip(&self.needed_next)
            .map(|(checkpoint, next)| checkpoint_json(checkpoint, next))
            .collect();
        rows.extend(self.transcript.iter().map(|next| {
            json!({"through_seq": next.through_seq, "method": "transcript", "needed_next": next_json(next)})
        }));
        rows.push(self.totals_json(session, window));
        rows
    }

    /// The sums over every checkpoint of one kind of fact: expected, kept, dropped, found again.
    pub fn sum(&self, kind: FactKind) -> (usize, usize, usize, usize) {
        self.checkpoints
            .iter()
            .map(|c| c.of(kind))
            .fold((0, 0, 0, 0), |t, c| {
                (
                    t.0 + c.expected,
                    t.1 + c.kept,
                    t.2 + c.dropped,
                    t.3 + c.found_again,
                )
            })
    }

    fn totals_json(&self, session: &str, window: u64) -> Value {
        let mut kinds = serde_json::Map::new();
        for kind in FactKind::ALL {
            let (expected, kept, dropped, found) = self.sum(kind);
            kinds.insert(
                kind.as_str().to_owned(),
                json!({"expected": expected, "kept": kept, "dropped": dropped, "found_again": found}),
            );
        }
        json!({
            "session": session,
            "window": window,
            "checkpoints": self.checkpoints.len(),
            "max_summary_bytes": self.checkpoints.iter().map(|c| c.summary_bytes).max().unwrap_or(0),
            "kinds": kinds,
            "needed_next": next_totals(&self.needed_next),
            "transcript_needed_next": next_totals(&self.transcript),
            "transcript_compactions": self.transcript.len(),
        })
    }
}

/// `needed`, `held`, and the facts not held.
fn next_json(next: &NeededNext) -> Value {
    json!({"needed": next.needed, "held": next.held, "missed": next.missed})
}

/// `needed` and `held` summed.
pub fn next_totals(figures: &[NeededNext]) -> Value {
    let needed: usize = figures.iter().map(|n| n.needed).sum();
    let held: usize = figures.iter().map(|n| n.held).sum();
    json!({"needed": needed, "held": held})
}

/// `kept/expected` for each kind, the dropped facts found again, and the needed-next figure.
fn checkpoint_json(checkpoint: &CheckpointFidelity, next: &NeededNext) -> Value {
    let kinds: serde_json::Map<String, Value> = checkpoint
        .kinds
        .iter()
        .map(|(kind, counts)| (kind.as_str().to_owned(), json!(counts)))
        .collect();
    json!({
        "through_seq": checkpoint.through_seq,
        "method": checkpoint.method,
        "summary_bytes": checkpoint.summary_bytes,
        "kinds": kinds,
        "needed_next": next_json(next),
    })
}
