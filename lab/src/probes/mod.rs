//! Probes: questions with known answers, made from the log, that ask a model what it still
//! knows after a compaction.
//!
//! The published way to judge a compacted view is to ask the model probe questions and have a
//! judge model score its answers. ctxkit keeps the complete log, so every probe here has a
//! known answer taken from the log, and grading is a string check ([`grade`]): no judge.
//!
//! For each checkpoint, [`session_probes`] makes deterministic probes from the log the
//! checkpoint newly covers (after the previous checkpoint's `through_seq`, up to its own):
//!
//! - **recall**: the exact text of a user's request; the telling line of the last failure of a
//!   command (the extractive summary's `telling_line`);
//! - **artifact**: which file defines a given identifier; which files were edited;
//! - **continuation**: what the assistant said it was doing at its last stated step; the open
//!   tasks of the last todo list update;
//! - **decision**: the reason of a choice the assistant stated in a whole sentence
//!   (`… because …`);
//! - **needed next**: the paths the agent's later calls went back to that only the summary
//!   could have given it (the [`needed_next`](crate::needed_next) measure).
//!
//! Each [`Probe`] carries its question, its [`AnswerKey`] (strings that must appear in the
//! answer, each with its accepted variants, such as a path relative to the working directory
//! and its absolute form), its source `seq`, and whether its answer is still in the view's kept
//! tail (the log after the checkpoint that the view still shows), which reports keep apart.
//! Every probe is checked as it is made: each key item is found in the log at its own `seq`,
//! and the question holds none of its answer's variants. Pure and deterministic.
//!
//! [`run`] holds a probe run's data: the views a probe is asked over, the messages each
//! request sends, and what became of each request (the CLI's `ctxkit probe` asks them).

mod artifact;
mod grade;
mod recall;
pub mod run;
mod steps;
#[cfg(test)]
mod tests;
mod views;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use grade::{grade, normalize};
pub use views::{sliding_window, tools_as_text};

use ctxkit_core::compaction::working_directory;
use ctxkit_core::compaction::Checkpoint;
use ctxkit_core::model::Entry;

/// Probes made per checkpoint, at most (the first of each kind are kept).
pub const MAX_PROBES_PER_CHECKPOINT: usize = 12;

/// What a probe asks about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProbeKind {
    /// Exact text from the log: a user's request, the line that told a failure.
    Recall,
    /// Files: which one defines an identifier, which ones were edited.
    Artifact,
    /// Where the work stood: the last stated step, the open tasks.
    Continuation,
    /// Why a stated choice was made.
    Decision,
    /// A fact the agent's later calls needed that only the summary could give.
    NeededNext,
}

impl ProbeKind {
    /// Every kind, in report order.
    pub const ALL: [ProbeKind; 5] = [
        ProbeKind::Recall,
        ProbeKind::Artifact,
        ProbeKind::Continuation,
        ProbeKind::Decision,
        ProbeKind::NeededNext,
    ];

    /// Its name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            ProbeKind::Recall => "recall",
            ProbeKind::Artifact => "artifact",
            ProbeKind::Continuation => "continuation",
            ProbeKind::Decision => "decision",
            ProbeKind::NeededNext => "needed_next",
        }
    }
}

/// One string an answer must hold, in any of its accepted forms.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyItem {
    /// The accepted forms (the first is the one the log gave; a path also relative to the
    /// working directory, or absolute).
    pub variants: Vec<String>,
    /// The `seq` of the log entry that holds it.
    pub seq: u64,
}

/// What a right answer holds: every item, each in one of its forms.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnswerKey {
    /// The items; an answer is held when it holds them all.
    pub all_of: Vec<KeyItem>,
}

/// A question with a known answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Probe {
    /// What it asks about.
    pub kind: ProbeKind,
    /// Which source within the kind (`request`, `failure`, `identifier`, `edited`,
    /// `next_step`, `open_tasks`, `reason`, `path`).
    pub source: String,
    /// The question, sent as a user message after the view.
    pub question: String,
    /// What the answer must hold.
    pub key: AnswerKey,
    /// The latest `seq` of the entries its key comes from.
    pub source_seq: u64,
    /// Whether the whole answer is still in the view's kept tail (the log after the
    /// checkpoint that the view shows), so a summary is not needed to answer it.
    pub in_tail: bool,
}

/// The probes of one checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckpointProbes {
    /// The checkpoint's `through_seq`.
    pub through_seq: u64,
    /// The last `seq` the view made at that compaction shows.
    pub tail_end_seq: u64,
    /// Its probes, in kind order.
    pub probes: Vec<Probe>,
}

/// The log as probes read it: the entries, the working directory, a `seq` lookup.
pub(crate) struct ProbeLog<'a> {
    pub(crate) entries: &'a [Entry],
    pub(crate) workdir: Option<String>,
    by_seq: BTreeMap<u64, usize>,
}

impl<'a> ProbeLog<'a> {
    fn new(entries: &'a [Entry]) -> Self {
        let messages: Vec<_> = entries.iter().map(|e| e.message.clone()).collect();
        ProbeLog {
            entries,
            workdir: working_directory(&messages),
            by_seq: entries
                .iter()
                .enumerate()
                .map(|(i, e)| (e.seq, i))
                .collect(),
        }
    }

    /// The entry with `seq`.
    pub(crate) fn at(&self, seq: u64) -> Option<&'a Entry> {
        self.by_seq
            .get(&seq)
            .and_then(|&index| self.entries.get(index))
    }

    /// The entries with `from < seq <= to`.
    pub(crate) fn range(&self, from: u64, to: u64) -> &'a [Entry] {
        let entries = self.entries;
        let start = entries.partition_point(|e| e.seq <= from);
        let end = entries.partition_point(|e| e.seq <= to).max(start);
        entries.get(start..end).unwrap_or_default()
    }

    /// The forms a path is accepted in: as written, relative to the working directory, and
    /// absolute under it.
    pub(crate) fn path_variants(&self, path: &str) -> Vec<String> {
        let mut variants = vec![path.to_owned()];
        let relative = ctxkit_core::compaction::relative_to(path, self.workdir.as_deref());
        if relative != path {
            variants.push(relative);
        } else if let Some(dir) = self.workdir.as_deref().filter(|_| !path.starts_with('/')) {
            variants.push(format!("{dir}/{path}"));
        }
        variants
    }
}

/// The text of an entry that probes search: its text and its calls' names and arguments.
pub(crate) fn entry_text(entry: &Entry) -> String {
    let mut text = entry.message.text_content().into_owned();
    for call in &entry.message.tool_calls {
        text.push('\n');
        text.push_str(&call.name);
        text.push(' ');
        text.push_str(&call.arguments);
    }
    text
}

/// The probes of each of `checkpoints` (oldest first) over `entries` (the whole log, in `seq`
/// order). `tail_ends[i]` is the last `seq` the view made at checkpoint `i`'s compaction
/// shows (missing: the next checkpoint's `through_seq`, or the end of the log).
pub fn session_probes(
    entries: &[Entry],
    checkpoints: &[Checkpoint],
    tail_ends: &[u64],
) -> Vec<CheckpointProbes> {
    let log = ProbeLog::new(entries);
    let last_seq = entries.last().map_or(0, |e| e.seq);
    checkpoints
        .iter()
        .enumerate()
        .map(|(index, checkpoint)| {
            let from = index
                .checked_sub(1)
                .and_then(|i| checkpoints.get(i))
                .map_or(0, |c| c.through_seq);
            let until = checkpoints
                .get(index + 1)
                .map_or(u64::MAX, |next| next.through_seq);
            let tail_end = tail_ends
                .get(index)
                .copied()
                .unwrap_or_else(|| until.min(last_seq));
            let scope = Scope {
                from,
                through: checkpoint.through_seq,
                tail_end,
                until,
            };
            CheckpointProbes {
                through_seq: checkpoint.through_seq,
                tail_end_seq: tail_end,
                probes: checkpoint_probes(&log, &scope),
            }
        })
        .collect()
}

/// What one checkpoint's probes read: entries after `from` up to `through` are covered, the
/// view shows up to `tail_end`, and the checkpoint is in charge until `until`.
pub(crate) struct Scope {
    pub(crate) from: u64,
    pub(crate) through: u64,
    pub(crate) tail_end: u64,
    pub(crate) until: u64,
}

fn checkpoint_probes(log: &ProbeLog<'_>, scope: &Scope) -> Vec<Probe> {
    let candidates = [
        recall::requests(log, scope),
        recall::failures(log, scope),
        artifact::identifiers(log, scope),
        artifact::edited(log, scope),
        steps::next_step(log, scope),
        steps::open_tasks(log, scope),
        steps::reasons(log, scope),
        artifact::needed_paths(log, scope),
    ];
    let mut probes: Vec<Probe> = candidates
        .into_iter()
        .flatten()
        .filter_map(|probe| checked(log, scope, probe))
        .collect();
    probes.sort_by_key(|probe| probe.kind);
    probes.truncate(MAX_PROBES_PER_CHECKPOINT);
    probes
}

/// `probe` when its key is found in the log at each item's `seq` and its question holds none
/// of its answer, with `in_tail` set; else `None`.
fn checked(log: &ProbeLog<'_>, scope: &Scope, mut probe: Probe) -> Option<Probe> {
    if probe.key.all_of.is_empty() {
        return None;
    }
    let question = normalize(&probe.question);
    for item in &probe.key.all_of {
        let at = normalize(&entry_text(log.at(item.seq)?));
        let forms: Vec<String> = item.variants.iter().map(|v| normalize(v)).collect();
        if forms
            .iter()
            .any(|form| form.is_empty() || question.contains(form.as_str()))
        {
            return None;
        }
        if !forms.iter().any(|form| at.contains(form.as_str())) {
            return None;
        }
    }
    let tail: Vec<String> = log
        .range(scope.through, scope.tail_end)
        .iter()
        .map(|entry| normalize(&entry_text(entry)))
        .collect();
    probe.in_tail = probe.key.all_of.iter().all(|item| {
        item.variants
            .iter()
            .map(|v| normalize(v))
            .any(|form| tail.iter().any(|text| text.contains(form.as_str())))
    });
    probe.source_seq = probe
        .key
        .all_of
        .iter()
        .map(|item| item.seq)
        .max()
        .unwrap_or(probe.source_seq);
    Some(probe)
}

/// A probe not yet checked.
pub(crate) fn probe(
    kind: ProbeKind,
    source: &str,
    question: String,
    all_of: Vec<KeyItem>,
) -> Probe {
    Probe {
        kind,
        source: source.to_owned(),
        question,
        key: AnswerKey { all_of },
        source_seq: 0,
        in_tail: false,
    }
}

/// At most `max` probes of `all`, spread over kinds and checkpoints: each kind's probes are
/// ordered first of every checkpoint, then second of every checkpoint, and so on; then the
/// kinds take turns (in report order). Each is returned as (checkpoint index, probe index).
pub fn select_probes(all: &[CheckpointProbes], max: usize) -> Vec<(usize, usize)> {
    let mut of_kind: BTreeMap<ProbeKind, Vec<(usize, usize, usize)>> = BTreeMap::new();
    for (c, checkpoint) in all.iter().enumerate() {
        let mut seen: BTreeMap<ProbeKind, usize> = BTreeMap::new();
        for (p, probe) in checkpoint.probes.iter().enumerate() {
            let rank = seen.entry(probe.kind).or_default();
            of_kind.entry(probe.kind).or_default().push((*rank, c, p));
            *rank += 1;
        }
    }
    let mut turns: Vec<(usize, ProbeKind, usize, usize)> = Vec::new();
    for (kind, mut list) in of_kind {
        list.sort();
        turns.extend(
            list.into_iter()
                .enumerate()
                .map(|(turn, (_, c, p))| (turn, kind, c, p)),
        );
    }
    turns.sort();
    turns
        .into_iter()
        .take(max)
        .map(|(_, _, c, p)| (c, p))
        .collect()
}
