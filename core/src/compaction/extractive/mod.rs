//! The extractive summarizer: a checkpoint summary without an LLM.
//!
//! It builds the sections an LLM is asked for (Goal, Progress, Key Decisions, Files, Commands,
//! Next Steps, Critical Context) from what the covered messages literally contain: the user's
//! requests, every tool call with its key argument and outcome, the assistant's stated
//! decisions, file paths, identifiers, and error lines quoted verbatim. It is the default when
//! no LLM is configured and the fallback when one fails; an LLM's answer gets the identifiers
//! and error lines it leaves out appended by the same reading (`appendix.rs`).
//!
//! Guarantees: deterministic, total (any messages in, a summary out), bounded (the output never
//! exceeds [`ExtractiveLimits::max_bytes`]), and incremental: given the previous summary it
//! merges instead of starting over, so file paths, the goal and errors survive any number of
//! compactions.

use crate::wire::fields::StringSet;

use serde::{Deserialize, Serialize};

mod appendix;
mod facts;
mod lines;
mod mentioned;
mod previous;
mod sections;
pub(crate) mod signals;
mod state;

pub(crate) use crate::facts::is_known_extension;
pub(crate) use appendix::log_state_appendix;
pub use signals::file_paths_in_arguments;
pub use signals::{
    decision_sentences, identifiers, key_argument, sentences, telling_line, WRITTEN_KEYS,
};

use facts::Facts;
pub use lines::one_line;
pub(crate) use lines::whole_words;
use lines::{backticked, cap_lines};
pub use previous::pinned_from_summary;
use sections::{goal_section, merged_earlier, relative, render, Draft};
use state::State;
pub(crate) use state::{file_accesses, FileAccess};

use crate::compaction::pinned::{cap_pinned, gather_pinned, FactKind, PinnedFact};
use crate::compaction::workdir::{workdir_line, working_directory};
use crate::facts::stated_run_directory;
use crate::model::Message;
use crate::text::is_working_directory;

/// Bounds on the extractive summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default, deny_unknown_fields)]
pub struct ExtractiveLimits {
    /// The whole summary, in bytes.
    pub max_bytes: usize,
    /// Tool calls listed one by one in Progress (the most recent ones; the rest are counted).
    pub recent_calls: usize,
    /// User requests listed after the goal.
    pub later_requests: usize,
    /// Decisions quoted.
    pub decisions: usize,
    /// Error lines quoted.
    pub errors: usize,
    /// File paths listed.
    pub files: usize,
    /// Identifiers listed.
    pub identifiers: usize,
}

impl Default for ExtractiveLimits {
    fn default() -> Self {
        ExtractiveLimits {
            max_bytes: 8_000,
            recent_calls: 15,
            later_requests: 8,
            decisions: 8,
            errors: 10,
            files: 300,
            identifiers: 40,
        }
    }
}

/// The label of the line of identifiers in use, as written and as read back.
const IN_USE_LABEL: &str = "Identifiers in use (most used first): ";

/// The label of the line of names the files the agent read import and define, as written and
/// as read back.
const CODE_NAMES_LABEL: &str = "Names the files read import or define (latest read first): ";

/// The section headings, in order. LLM summaries are asked for the same ones.
pub const SECTIONS: [&str; 5] = [
    "Goal",
    "Progress",
    "Key Decisions",
    "Next Steps",
    "Critical Context",
];

/// The sections the extractive summary adds between Key Decisions and Next Steps: the
/// session's state (each file once with what was done to it, each command once with its last
/// outcome).
pub const STATE_SECTIONS: [&str; 2] = ["Files", "Commands"];

/// Summarizes `messages` (the ones a checkpoint will cover), merging `previous` (the summary of
/// the checkpoint before, if any). The pinned facts are those of `messages` and those the
/// previous summary's sections list (a checkpoint passes its own, kept as data, to
/// [`extractive_summary_with`] instead).
///
/// ```
/// use ctxkit_core::compaction::{extractive_summary, ExtractiveLimits};
/// use ctxkit_core::{Message, ToolCall};
///
/// let messages = [
///     Message::user("Fix the failing test in src/parser.rs"),
///     Message::assistant("I'll run the tests first.", vec![ToolCall::new("c1", "bash", r#"{"command":"cargo test"}"#)]),
///     Message::tool_result("c1", "error[E0308]: mismatched types\n --> src/parser.rs:12:5", true),
/// ];
/// let summary = extractive_summary(&messages, None, &ExtractiveLimits::default());
/// assert!(summary.starts_with("## Goal\n- Fix the failing test in src/parser.rs"));
/// assert!(summary.contains("## Commands\n- `cargo test` → failed: error[E0308]: mismatched types"));
/// assert!(summary.contains("`src/parser.rs`"));
/// ```
pub fn extractive_summary(
    messages: &[Message],
    previous: Option<&str>,
    limits: &ExtractiveLimits,
) -> String {
    let earlier = previous.map(pinned_from_summary).unwrap_or_default();
    let (pinned, _) = cap_pinned(
        gather_pinned(messages, &earlier, &[]),
        limits.max_bytes * 3 / 4,
    );
    extractive_summary_with(messages, previous, limits, &pinned)
}

/// Summarizes `messages` around `pinned` (the facts the checkpoint must carry verbatim, the
/// previous checkpoint's included): they are written whole into their sections (requests under
/// Goal, paths, identifiers and errors under Critical Context, the next step under Next Steps;
/// tasks are the checkpoint's Active Tasks section), and only the narrative (progress, decisions, an earlier summary without sections)
/// is cut to fit [`ExtractiveLimits::max_bytes`]. Every line quoted from a message is one line
/// behind a list marker, so no message can add a heading to the summary.
pub fn extractive_summary_with(
    messages: &[Message],
    previous: Option<&str>,
    limits: &ExtractiveLimits,
    pinned: &[PinnedFact],
) -> String {
    extractive_summary_in(messages, previous, limits, pinned, None)
}

/// [`extractive_summary_with`] for an agent known to work in `known_workdir` (the caller's
/// [`crate::compaction::Policy::working_directory`]): the summary states that directory and
/// writes paths relative to it, whatever the log shows. A directory that fails
/// [`is_working_directory`] is not taken.
pub(crate) fn extractive_summary_in(
    messages: &[Message],
    previous: Option<&str>,
    limits: &ExtractiveLimits,
    pinned: &[PinnedFact],
    known_workdir: Option<&str>,
) -> String {
    let facts = Facts::gather(messages, limits);
    let earlier = merged_earlier(messages, previous);
    let of_kind = |kind: FactKind| -> Vec<String> {
        pinned
            .iter()
            .filter(|fact| fact.kind == kind)
            .map(|fact| fact.text.clone())
            .collect()
    };

    // The fixed part: every pinned fact, in its section.
    let goal_section = goal_section(&of_kind(FactKind::Request));
    let mut next_steps = facts
        .next_steps()
        .or_else(|| earlier.next_steps.clone())
        .unwrap_or_else(|| "Continue from the most recent messages.".to_owned());
    for step in of_kind(FactKind::NextStep) {
        if !next_steps.contains(&step) {
            next_steps.push_str(&format!("\n- {step}"));
        }
    }
    let workdir = summary_workdir(earlier.workdir.as_deref(), known_workdir, messages);
    let workdir = workdir.as_deref();
    let mut state =
        State::from_previous(earlier.file_entries.as_deref(), earlier.commands.as_deref());
    if let Some(before) = earlier.workdir.as_deref().filter(|b| Some(*b) != workdir) {
        state.rebase(before, workdir);
    }
    state.gather(messages, workdir);
    // The working directory itself is held by the line that states it.
    let paths: Vec<String> = of_kind(FactKind::Path)
        .iter()
        .map(|p| relative(p, workdir))
        .filter(|p| Some(p.as_str()) != workdir)
        .collect();
    let draft = Draft {
        facts: &facts,
        earlier: &earlier,
        limits,
        pinned,
        workdir,
        state: &state,
        paths: &paths,
    };
    let has_files = !state.files.is_empty() || !paths.is_empty();
    let early_fixed =
        goal_section.len() + next_steps.len() + paths.iter().map(|p| p.len() + 6).sum::<usize>();
    let (named_line, requested_line) = draft.named_lines(early_fixed);
    // What the summary writes in any case: an identifier it holds already is not listed again.
    let written = format!(
        "{goal_section}\n{next_steps}\n{}\n{named_line}",
        paths.join("\n")
    );
    let identifiers = of_kind(FactKind::Identifier);
    let errors = of_kind(FactKind::Error);
    let mut critical = draft.critical(has_files, &identifiers, &errors, &written);

    // The state sections come next: the pinned paths are fixed (bare when their entries do
    // not fit), the entries share what the fixed part leaves with the narrative.
    let pinned_paths_bytes: usize = paths.iter().map(|path| path.len() + 6).sum();
    let fixed = goal_section.len() + next_steps.len() + critical.len() + pinned_paths_bytes + 200;
    let left = limits.max_bytes.saturating_sub(fixed);
    let mut files_section = state.files_section(
        &paths,
        pinned_paths_bytes + (limits.max_bytes / 4).min(left * 3 / 10),
        |path| paths.iter().any(|p| p == path),
    );
    if !named_line.is_empty() {
        files_section = [files_section.as_str(), named_line.as_str()]
            .iter()
            .filter(|part| !part.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join("\n");
    }
    if let (Some(dir), true) = (workdir, has_files) {
        files_section = format!("{}\n{files_section}", workdir_line(dir));
    }
    let commands_section = state.commands_section((limits.max_bytes / 5).min(left / 4));
    // The narrative shares what the fixed part leaves. Earlier items come first and are the
    // first a cap drops, whole lines at a time.
    let room = limits.max_bytes.saturating_sub(
        goal_section.len()
            + next_steps.len()
            + critical.len()
            + files_section.len()
            + commands_section.len()
            + 200,
    );
    let mentioned = draft.mentioned(&requested_line);
    if !mentioned.is_empty() {
        critical.push_str(&cap_lines(mentioned.trim_end(), room / 4, "lines"));
    }
    let mut sections = [
        ("Goal", goal_section),
        ("Progress", draft.progress(room)),
        ("Key Decisions", draft.decisions(room)),
        ("Files", files_section),
        ("Commands", commands_section),
        ("Next Steps", next_steps),
        ("Critical Context", critical),
    ];
    // Each section is within its share already (the narrative ones capped above); the names
    // of the code read take what they leave.
    let names = names_in_room(&draft, &sections);
    let critical = &mut sections[6].1;
    if !names.is_empty() && !critical.is_empty() && !critical.ends_with('\n') {
        critical.push('\n');
    }
    critical.push_str(&names);
    render(sections, workdir)
}

/// The line of names the files read import and define, in what the other `sections` leave of
/// the summary: it never takes the narrative's room.
fn names_in_room(draft: &Draft, sections: &[(&str, String); 7]) -> String {
    let used: usize = sections.iter().map(|(_, body)| body.len() + 24).sum();
    let written = sections
        .each_ref()
        .map(|(_, body)| body.as_str())
        .join("\n");
    draft.code_names_line(&written, draft.limits.max_bytes.saturating_sub(used))
}

/// The working directory the paths are written relative to: the previous summary's (so every
/// summary of a session keeps one base), else the one the messages show. When the messages
/// show a directory above the previous one (the first part of a session worked in one folder
/// of the project), the summary moves up to it and the previous entries are rebased onto it.
/// A log whose paths point into several trees has no directory most of them lie under; the
/// folder its commands say they run in is then the base. A directory the caller knows comes
/// before all of these (the previous entries are rebased onto it).
fn summary_workdir(
    before: Option<&str>,
    known: Option<&str>,
    messages: &[Message],
) -> Option<String> {
    if let Some(known) = known.filter(|dir| is_working_directory(dir)) {
        return Some(known.to_owned());
    }
    let inferred = working_directory(messages).or_else(|| stated_run_directory(messages));
    match (before, inferred) {
        (Some(before), Some(now)) if before.starts_with(&format!("{now}/")) => Some(now),
        (Some(before), _) => Some(before.to_owned()),
        (None, now) => now,
    }
}

pub(super) fn push_unique(list: &mut Vec<String>, seen: &mut StringSet, item: String) {
    if seen.insert(item.clone()) {
        list.push(item);
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod known_workdir_tests;
