//! Pinned facts: what every checkpoint must carry verbatim, whoever wrote its summary.
//!
//! A summary may rephrase anything, but some facts must survive word for word, or the agent
//! at turn 200 no longer knows what it did at turn 3:
//!
//! - every file path read, written or edited (from tool-call arguments and offload references);
//! - for each failed tool result, its error line (the line that names the error, bounded);
//! - every real user request (not tool results, injected notifications or reminders), on one
//!   line, long ones head and tail;
//! - the identifiers the user wrote in backticks;
//! - the active tasks and the last stated next step.
//!
//! [`gather_pinned`] finds them in the messages a checkpoint covers and adds them to the
//! previous checkpoint's (the checkpoint keeps its facts as data, so they are never read back
//! out of summary text that a message could have shaped); [`cap_pinned`] fits them into a byte
//! budget, dropping the oldest of the least important kinds first and counting what it
//! dropped; [`missing_pinned`] lists the facts a summary does not hold verbatim and
//! [`pinned_section`] writes them into a `## Pinned facts` section, so an LLM can rephrase but
//! never lose. How much of them a session's checkpoints kept is measured in `ctxkit-lab`
//! (`fidelity::checkpoint_fidelity`).
//!
//! Guarantees: every fact is one line (no text can add a heading or a section to a summary);
//! facts are deduplicated by kind and text; the order is oldest first, and deterministic.

mod gather;
mod section;

use serde::{Deserialize, Serialize};

pub use crate::compaction::extractive::pinned_from_summary;
pub(crate) use gather::offloaded_path;
pub use gather::PinnedGatherer;
pub use gather::{gather_pinned, is_previous_summary};
pub use section::{missing_pinned, pinned_section, summary_holds, PINNED_HEADING};

/// What kind of fact is pinned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum FactKind {
    /// A file path read, written or edited.
    Path,
    /// The error line of a failed tool result.
    Error,
    /// A real user request.
    Request,
    /// An identifier the user wrote in backticks.
    Identifier,
    /// An active task (pending or in progress).
    Task,
    /// The last stated next step.
    NextStep,
}

crate::model::unit_enum::unit_enum_deserialize!(
    FactKind,
    "FactKind",
    [
        Path = "path",
        Error = "error",
        Request = "request",
        Identifier = "identifier",
        Task = "task",
        NextStep = "next_step"
    ]
);

impl FactKind {
    /// Every kind, in the order a summary lists them.
    pub const ALL: [FactKind; 6] = [
        FactKind::Request,
        FactKind::Path,
        FactKind::Error,
        FactKind::Identifier,
        FactKind::Task,
        FactKind::NextStep,
    ];

    /// The kind's name, as stats and reports show it.
    pub fn as_str(self) -> &'static str {
        match self {
            FactKind::Path => "path",
            FactKind::Error => "error",
            FactKind::Request => "request",
            FactKind::Identifier => "identifier",
            FactKind::Task => "task",
            FactKind::NextStep => "next_step",
        }
    }
}

/// One fact a checkpoint must carry verbatim.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PinnedFact {
    /// What kind of fact.
    pub kind: FactKind,
    /// The text that must appear verbatim in the summary (one line).
    pub text: String,
}

impl PinnedFact {
    /// A fact of `kind` with `text`.
    pub fn new(kind: FactKind, text: impl Into<String>) -> Self {
        PinnedFact {
            kind,
            text: text.into(),
        }
    }

    /// The part of the fact that is verbatim text of the log: all of it, or for a fact pinned
    /// head and tail (` … `) or cut (`…`) its head, trimmed.
    ///
    /// ```
    /// use ctxkit_core::compaction::{FactKind, PinnedFact};
    /// let fact = PinnedFact::new(FactKind::Request, "Rename the flag … and update the docs");
    /// assert_eq!(fact.verbatim_head(), "Rename the flag");
    /// assert_eq!(PinnedFact::new(FactKind::Error, "error: cut…").verbatim_head(), "error: cut");
    /// ```
    pub fn verbatim_head(&self) -> &str {
        let head = self.text.split(" … ").next().unwrap_or_default();
        head.trim().trim_end_matches('…').trim()
    }
}

/// How many facts of each kind a cap dropped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct DroppedFacts {
    /// File paths.
    pub paths: usize,
    /// Error lines.
    pub errors: usize,
    /// User requests.
    pub requests: usize,
    /// Identifiers.
    pub identifiers: usize,
}

impl DroppedFacts {
    /// The count for `kind` (tasks and next steps are never dropped).
    pub fn of(&self, kind: FactKind) -> usize {
        match kind {
            FactKind::Path => self.paths,
            FactKind::Error => self.errors,
            FactKind::Request => self.requests,
            FactKind::Identifier => self.identifiers,
            FactKind::Task | FactKind::NextStep => 0,
        }
    }

    /// True when nothing was dropped.
    pub fn is_none(&self) -> bool {
        *self == DroppedFacts::default()
    }

    /// These counts plus `other`'s.
    pub fn plus(self, other: DroppedFacts) -> DroppedFacts {
        DroppedFacts {
            paths: self.paths + other.paths,
            errors: self.errors + other.errors,
            requests: self.requests + other.requests,
            identifiers: self.identifiers + other.identifiers,
        }
    }

    fn count(&mut self, kind: FactKind) {
        match kind {
            FactKind::Path => self.paths += 1,
            FactKind::Error => self.errors += 1,
            FactKind::Request => self.requests += 1,
            FactKind::Identifier => self.identifiers += 1,
            FactKind::Task | FactKind::NextStep => {}
        }
    }
}

/// The order in which a cap drops kinds: the least important first. Tasks and the next step
/// are never dropped (there are few, and the agent needs them to go on).
const DROP_ORDER: [FactKind; 4] = [
    FactKind::Identifier,
    FactKind::Error,
    FactKind::Path,
    FactKind::Request,
];

/// Bytes a fact costs in a summary: its text and a list item's framing.
pub fn fact_bytes(fact: &PinnedFact) -> usize {
    fact.text.len() + 6
}

/// Fits `facts` into `max_bytes` (by [`fact_bytes`]): drops the oldest facts of the least
/// important kind first (`DROP_ORDER`), then of the next, until they fit; the first request
/// (the goal) goes last of all. Returns what is
/// kept, in its order, and what was dropped per kind.
pub fn cap_pinned(facts: Vec<PinnedFact>, max_bytes: usize) -> (Vec<PinnedFact>, DroppedFacts) {
    let mut total: usize = facts.iter().map(fact_bytes).sum();
    let mut keep = vec![true; facts.len()];
    let mut dropped = DroppedFacts::default();
    // The first request is the goal: the last fact a cap drops.
    let goal = facts.iter().position(|fact| fact.kind == FactKind::Request);
    for kind in DROP_ORDER {
        for (index, fact) in facts.iter().enumerate() {
            if total <= max_bytes {
                break;
            }
            if fact.kind == kind && Some(index) != goal {
                if let Some(slot) = keep.get_mut(index) {
                    *slot = false;
                    total -= fact_bytes(fact);
                    dropped.count(kind);
                }
            }
        }
    }
    if let (Some(index), true) = (goal, total > max_bytes) {
        if let Some(slot) = keep.get_mut(index) {
            *slot = false;
            dropped.count(FactKind::Request);
        }
    }
    let kept = facts
        .into_iter()
        .zip(keep)
        .filter_map(|(fact, kept)| kept.then_some(fact))
        .collect();
    (kept, dropped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cap_drops_the_oldest_of_the_least_important_kind_first() {
        let facts = vec![
            PinnedFact::new(FactKind::Request, "fix the parser"),
            PinnedFact::new(FactKind::Identifier, "old_name"),
            PinnedFact::new(FactKind::Path, "src/a.rs"),
            PinnedFact::new(FactKind::Identifier, "new_name"),
            PinnedFact::new(FactKind::Error, "error[E0308]: mismatched types"),
        ];
        let all: usize = facts.iter().map(fact_bytes).sum();
        let (kept, dropped) = cap_pinned(facts.clone(), all);
        assert_eq!((kept.len(), dropped), (5, DroppedFacts::default()));

        let (kept, dropped) = cap_pinned(facts.clone(), all - 1);
        assert_eq!(dropped.identifiers, 1);
        assert!(!kept.iter().any(|f| f.text == "old_name"));
        assert!(kept.iter().any(|f| f.text == "new_name"));

        let (kept, dropped) = cap_pinned(facts, 20);
        assert_eq!(
            kept,
            vec![PinnedFact::new(FactKind::Request, "fix the parser")]
        );
        assert_eq!(
            dropped,
            DroppedFacts {
                paths: 1,
                errors: 1,
                requests: 0,
                identifiers: 2
            }
        );
    }
}
