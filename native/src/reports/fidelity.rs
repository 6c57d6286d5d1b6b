//! The fidelity report of a replayed session (`ctxkit fidelity`, Python's `ctxkit.fidelity`).
//!
//! For every checkpoint: what its summary kept of the pinned facts (paths, error lines, user
//! requests, identifiers, tasks, the next step), what it dropped, and how many of the dropped
//! ones the agent's own `search_history` finds again in the complete log; and the needed-next
//! figure: of the facts the agent's later tool calls used that only the summary could have
//! given it, the share the summary holds. The transcript's own compactions (Claude Code's
//! continuation summaries) are measured the same way, as the anchor. The measures are the
//! lab's (`checkpoint_fidelity`, `needed_next`); this file gathers them and writes the rows.

use ctxkit_core::compaction::FactKind;
use ctxkit_core::recall::{fact_query, search_found};
use ctxkit_lab::fidelity::{checkpoint_fidelity, CheckpointFidelity};
use ctxkit_lab::needed_next::{
    checkpoint_summaries, needed_next, transcript_summaries, NeededNext,
};
use serde_json::{json, Value};

use crate::{Engine, Result};

/// The working directory a report's replay shows in its system prompt. Fixed, so a report does
/// not depend on where it runs: the prompt's estimate, and with it where the compactions fall,
/// changed with the folder's length and characters, so the CLI (run in the caller's folder) and
/// Python (in a temporary one) could give different rows for the same transcript.
pub const REPORT_WORKING_DIRECTORY: &str = "/project";

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

/// Measures the session `session` of `engine` as it is stored (replay it first). "Found again"
/// means found by the agent's own tool: `search_history` over the store, with the query the
/// core makes of the fact; a failed search is an error, not a miss.
pub fn measure_fidelity(engine: &Engine, session: &str) -> Result<FidelityReport> {
    let whole = engine.export_session(session)?;
    let mut search_failure = None;
    let checkpoints = checkpoint_fidelity(&whole.entries, &whole.checkpoints, |fact| {
        let Some(request) = fact_query(fact) else {
            return false;
        };
        match engine.search_history(session, &request) {
            Ok(outcome) => search_found(&outcome),
            Err(error) => {
                search_failure.get_or_insert(error);
                false
            }
        }
    });
    if let Some(error) = search_failure {
        return Err(error);
    }
    Ok(FidelityReport {
        checkpoints,
        needed_next: needed_next(&whole.entries, &checkpoint_summaries(&whole.checkpoints)),
        transcript: needed_next(&whole.entries, &transcript_summaries(&whole.entries)),
    })
}

impl FidelityReport {
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
