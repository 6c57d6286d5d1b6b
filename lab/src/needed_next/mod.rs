//! The needed-next measure: does a summary hold what the agent went on to need?
//!
//! Pinned-fact recall grades a summary by the facts ctxkit chose to pin, so it grades its own
//! output. This measure is grounded in what the agent did next instead. For a summary that
//! stands for the log up to `through_seq`, take every fact in the arguments of the agent's
//! later tool calls (a file path, a code identifier: see [`call_facts`]) that the log held at
//! or before `through_seq` and did not hold again between `through_seq` and the call: the model
//! could only have had it from the summary. The figure is the share of those facts the summary
//! holds (a path counts as held in its own form or relative to the session's working
//! directory), and the ones it does not hold are listed.
//!
//! The later calls of a summary are those until the next summary takes over (the next
//! checkpoint's `through_seq`, or the next continuation message). The same function measures
//! ctxkit's checkpoints and a transcript's own earlier compactions (Claude Code's continuation
//! summaries, found in the log by [`transcript_summaries`]), so the two sit in one table as
//! each other's anchor. Pure and deterministic: the cost report, `ctxkit fidelity` and a probe
//! reuse it.

mod facts;

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

pub use facts::{call_facts, entry_facts};

use ctxkit_core::compaction::pinned::is_previous_summary;
use ctxkit_core::compaction::Checkpoint;
use ctxkit_core::compaction::{declared_working_directory, relative_to, working_directory};
use ctxkit_core::model::{Entry, Role};

/// A summary to grade: the text the model sees in place of the log through `through_seq`,
/// in charge of the calls after `calls_after` up to and including `until_seq`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GradedSummary {
    /// The last log `seq` the summary stands for.
    pub through_seq: u64,
    /// Calls after this `seq` are graded (the summary's own message, when it is in the log).
    pub calls_after: u64,
    /// The last `seq` whose calls are graded against it (`u64::MAX`: to the end of the log).
    pub until_seq: u64,
    /// The text the model sees.
    pub text: String,
}

/// What kind of fact a later call needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NeededKind {
    /// A file path (relative to the working directory when under it).
    Path,
    /// A code identifier (`parse_args`, `Config::load`, `renderPrecis`).
    Identifier,
}

/// A fact a later call needed that the summary did not hold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MissedFact {
    /// Its kind.
    pub kind: NeededKind,
    /// The fact, as the call wrote it (a path relative to the working directory).
    pub text: String,
    /// The `seq` of the first later call that needed it.
    pub call_seq: u64,
    /// The `seq` of the latest entry at or before `through_seq` that held it.
    pub last_held_seq: u64,
}

/// The needed-next figure of one summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NeededNext {
    /// The last `seq` the summary stands for.
    pub through_seq: u64,
    /// Distinct facts the later calls needed from the summary.
    pub needed: usize,
    /// Of those, the ones the summary holds.
    pub held: usize,
    /// The ones it does not hold, in the order the calls needed them.
    pub missed: Vec<MissedFact>,
}

/// The summaries of `checkpoints` (oldest first), each in charge until the next one's
/// `through_seq`, with their active tasks and restore block as the model sees them.
pub fn checkpoint_summaries(checkpoints: &[Checkpoint]) -> Vec<GradedSummary> {
    checkpoints
        .iter()
        .enumerate()
        .map(|(index, checkpoint)| GradedSummary {
            through_seq: checkpoint.through_seq,
            calls_after: checkpoint.through_seq,
            until_seq: checkpoints
                .get(index + 1)
                .map_or(u64::MAX, |next| next.through_seq),
            text: [
                Some(checkpoint.summary.as_str()),
                checkpoint.active_tasks.as_deref(),
                checkpoint.restore.as_deref(),
            ]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join("\n"),
        })
        .collect()
}

/// The transcript's own compaction summaries (another agent's continuation messages, such as
/// Claude Code's `This session is being continued…`), each standing for the log before it and
/// in charge until the next one.
pub fn transcript_summaries(entries: &[Entry]) -> Vec<GradedSummary> {
    let found: Vec<&Entry> = entries
        .iter()
        .filter(|entry| entry.message.role == Role::User)
        .filter(|entry| is_previous_summary(&entry.message.text_content()))
        .collect();
    found
        .iter()
        .enumerate()
        .map(|(index, entry)| GradedSummary {
            through_seq: entry.seq.saturating_sub(1),
            calls_after: entry.seq,
            until_seq: found.get(index + 1).map_or(u64::MAX, |next| next.seq - 1),
            text: entry.message.text_content().into_owned(),
        })
        .collect()
}

/// The needed-next figure of each of `summaries` over `entries` (the whole log, in `seq`
/// order). See the module doc for the definition.
///
/// ```
/// use ctxkit_lab::needed_next::{needed_next, GradedSummary};
/// use ctxkit_core::model::Entry;
/// use ctxkit_core::{Message, ModelFamily, ToolCall};
///
/// let read = |id: &str, path: &str| Message::assistant("", vec![ToolCall::new(id, "Read", format!(r#"{{"file_path":"{path}"}}"#))]);
/// let log = [read("1", "src/parser.rs"), read("2", "src/lexer.rs"), read("3", "src/parser.rs"), read("4", "src/lexer.rs")];
/// let entries: Vec<Entry> = log.into_iter().enumerate().map(|(i, m)| Entry::new(i as u64 + 1, m, ModelFamily::Claude)).collect();
/// let summary = GradedSummary { through_seq: 2, calls_after: 2, until_seq: u64::MAX, text: "Read `src/parser.rs`.".into() };
/// let figure = &needed_next(&entries, &[summary])[0];
/// assert_eq!((figure.held, figure.needed), (1, 2));
/// assert_eq!(figure.missed[0].text, "src/lexer.rs");
/// ```
pub fn needed_next(entries: &[Entry], summaries: &[GradedSummary]) -> Vec<NeededNext> {
    let messages: Vec<_> = entries.iter().map(|entry| entry.message.clone()).collect();
    let workdir = working_directory(&messages);
    let workdir = workdir.as_deref();
    // Every fact of every entry, once: where each was last held at or before a seq is read
    // from the sorted list of the entries that hold it.
    let held_by: Vec<BTreeSet<(NeededKind, String)>> = entries
        .iter()
        .map(|entry| entry_facts(&entry.message, workdir))
        .collect();
    let mut seqs_of: BTreeMap<&(NeededKind, String), Vec<u64>> = BTreeMap::new();
    for (entry, facts) in entries.iter().zip(&held_by) {
        for fact in facts {
            seqs_of.entry(fact).or_default().push(entry.seq);
        }
    }
    summaries
        .iter()
        .map(|summary| grade(entries, &seqs_of, summary, workdir))
        .collect()
}

fn grade(
    entries: &[Entry],
    seqs_of: &BTreeMap<&(NeededKind, String), Vec<u64>>,
    summary: &GradedSummary,
    workdir: Option<&str>,
) -> NeededNext {
    let mut counted: BTreeSet<(NeededKind, String)> = BTreeSet::new();
    let (mut needed, mut held, mut missed) = (0, 0, Vec::new());
    let graded = entries
        .iter()
        .filter(|entry| entry.seq > summary.calls_after && entry.seq <= summary.until_seq);
    for entry in graded {
        for call in &entry.message.tool_calls {
            for fact in call_facts(&call.arguments, workdir) {
                if counted.contains(&fact) {
                    continue;
                }
                let seqs = seqs_of.get(&fact).map(Vec::as_slice).unwrap_or_default();
                // Held at or before the summary's reach, and not again after the summary's
                // own place before this call (the call's own entry holds it, of course).
                let reach = seqs.partition_point(|&seq| seq <= summary.through_seq);
                let Some(&last_held_seq) = reach.checked_sub(1).and_then(|i| seqs.get(i)) else {
                    continue;
                };
                counted.insert(fact.clone());
                let after_summary = seqs.partition_point(|&seq| seq <= summary.calls_after);
                let before_call = seqs.partition_point(|&seq| seq < entry.seq);
                if before_call > after_summary {
                    continue;
                }
                needed += 1;
                if holds(&summary.text, &fact, workdir) {
                    held += 1;
                } else {
                    missed.push(MissedFact {
                        kind: fact.0,
                        text: fact.1,
                        call_seq: entry.seq,
                        last_held_seq,
                    });
                }
            }
        }
    }
    NeededNext {
        through_seq: summary.through_seq,
        needed,
        held,
        missed,
    }
}

/// Whether `text` holds `fact`: verbatim, or for a path (written relative to the working
/// directory when under it) also in its absolute form, or relative to the working directory
/// the summary itself states (which may be deeper than the one the whole log shows).
pub fn holds(text: &str, (kind, fact): &(NeededKind, String), workdir: Option<&str>) -> bool {
    if text.contains(fact.as_str()) {
        return true;
    }
    if *kind != NeededKind::Path {
        return false;
    }
    let absolute = match workdir {
        Some(dir) if !fact.starts_with('/') => format!("{dir}/{fact}"),
        _ => fact.clone(),
    };
    if text.contains(absolute.as_str()) {
        return true;
    }
    declared_working_directory(text).is_some_and(|declared| {
        let relative = relative_to(&absolute, Some(declared));
        relative != absolute && text.contains(relative.as_str())
    })
}

#[cfg(test)]
mod tests;
