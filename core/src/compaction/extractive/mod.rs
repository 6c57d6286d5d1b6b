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

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

mod appendix;
mod facts;
mod lines;
mod mentioned;
mod previous;
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
use lines::{backticked, cap_lines, holds_word, list_items, quoted_lines};
use mentioned::{labelled_line, mentioned_line, push_latest, same_file, REQUESTED_LABEL};
pub use previous::pinned_from_summary;
use previous::{without_headings, PreviousSummary};
use state::State;
pub(crate) use state::{file_accesses, FileAccess};

use crate::compaction::pinned::{
    cap_pinned, gather_pinned, is_previous_summary, FactKind, PinnedFact,
};
use crate::compaction::workdir::{relative_to, relativize_text, workdir_line, working_directory};
use crate::facts::stated_run_directory;
use crate::model::{Message, Role};

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
// Over 100 lines; left whole here while another branch edits this folder (issue 35, item 7).
#[allow(clippy::too_many_lines)]
pub fn extractive_summary_with(
    messages: &[Message],
    previous: Option<&str>,
    limits: &ExtractiveLimits,
    pinned: &[PinnedFact],
) -> String {
    let facts = Facts::gather(messages, limits);
    let mut earlier = previous.map(PreviousSummary::parse).unwrap_or_default();
    // Another agent's compaction summary in the log (Claude Code's continuation message) is
    // an earlier summary: merged as such, not summarized as a request.
    let continued = messages
        .iter()
        .rev()
        .filter(|message| message.role == Role::User)
        .map(|message| message.text_content())
        .find(|text| is_previous_summary(text));
    if let Some(continued) = continued {
        let joined = match earlier.unparsed.take() {
            Some(before) => format!("{before}\n{continued}"),
            None => continued.into_owned(),
        };
        earlier.unparsed = Some(joined);
    }
    let of_kind = |kind: FactKind| -> Vec<String> {
        pinned
            .iter()
            .filter(|fact| fact.kind == kind)
            .map(|fact| fact.text.clone())
            .collect()
    };

    // The fixed part: every pinned fact, in its section.
    let requests = of_kind(FactKind::Request);
    let mut goal_section = String::new();
    match requests.split_first() {
        Some((goal, later)) => {
            goal_section.push_str(&format!("- {goal}"));
            if !later.is_empty() {
                goal_section.push_str("\nLater requests:");
                for request in later {
                    goal_section.push_str(&format!("\n- {request}"));
                }
            }
        }
        None => goal_section.push_str("(no user request in the summarized messages)"),
    }
    let mut next_steps = facts
        .next_steps()
        .or_else(|| earlier.next_steps.clone())
        .unwrap_or_else(|| "Continue from the most recent messages.".to_owned());
    for step in of_kind(FactKind::NextStep) {
        if !next_steps.contains(&step) {
            next_steps.push_str(&format!("\n- {step}"));
        }
    }
    // The working directory the paths are written relative to: the previous summary's (so
    // every summary of a session keeps one base), else the one the messages show.
    // When the messages show a directory above the previous one (the first part of a session
    // worked in one folder of the project), the summary moves up to it and the previous
    // entries are rebased onto it.
    // A log whose paths point into several trees has no directory most of them lie under;
    // the folder its commands say they run in is then the base.
    let inferred = working_directory(messages).or_else(|| stated_run_directory(messages));
    let workdir = match (&earlier.workdir, inferred) {
        (Some(before), Some(now)) if before.starts_with(&format!("{now}/")) => Some(now),
        (Some(before), _) => Some(before.clone()),
        (None, now) => now,
    };
    let workdir = workdir.as_deref();
    let relative = |path: &str| relativize_text(&relative_to(path, workdir), workdir);
    let mut state =
        State::from_previous(earlier.file_entries.as_deref(), earlier.commands.as_deref());
    if let Some(before) = earlier.workdir.as_deref().filter(|b| Some(*b) != workdir) {
        state.rebase(before, workdir);
    }
    state.gather(messages, workdir);
    // The working directory itself is held by the line that states it.
    let paths: Vec<String> = of_kind(FactKind::Path)
        .iter()
        .map(|p| relative(p))
        .filter(|p| Some(p.as_str()) != workdir)
        .collect();
    let mut critical = String::new();
    let has_files = !state.files.is_empty() || !paths.is_empty();
    if let (Some(dir), false) = (workdir, has_files) {
        critical.push_str(&format!("{}\n", workdir_line(dir)));
    }
    // The files the tools' output named and the agent did not open (leads), merged with the
    // previous summary's: a tenth of the summary, up to a fifth when the goal, next step and
    // pinned paths leave most of it free (a search's forty matches are where the agent goes
    // next; a path is a few words, a search run again a whole output).
    let early_fixed =
        goal_section.len() + next_steps.len() + paths.iter().map(|p| p.len() + 6).sum::<usize>();
    let leads_bytes = (limits.max_bytes.saturating_sub(early_fixed) / 4)
        .clamp(limits.max_bytes / 10, limits.max_bytes / 5);
    let mut named = earlier.mentioned.clone();
    for path in &facts.mentioned {
        push_latest(&mut named, relative(path));
    }
    let other: BTreeSet<String> =
        crate::wire::fields::set_of(facts.files.iter().map(|path| relative(path)));
    let named_line = mentioned_line(
        &named,
        |path| {
            state.files.iter().any(|f| same_file(&f.path, path))
                || paths.iter().chain(&other).any(|p| same_file(p, path))
        },
        leads_bytes,
    );
    // The files the user's requests named (a request is quoted head and tail only), merged
    // with the previous summary's, the most recent first, within a tenth of the summary.
    let mut requested = earlier.requested.clone();
    for path in &facts.requested {
        push_latest(&mut requested, relative(path));
    }
    let requested_line = labelled_line(
        REQUESTED_LABEL,
        &requested,
        |path| {
            state.files.iter().any(|f| same_file(&f.path, path))
                || paths.iter().any(|p| same_file(p, path))
        },
        limits.max_bytes / 10,
    );
    let named_line = [requested_line.clone(), named_line]
        .into_iter()
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join("\n");
    // What the summary writes in any case: an identifier it holds already (a path's file
    // name, a word of a request) is not listed again.
    let written = format!(
        "{goal_section}\n{next_steps}\n{}\n{named_line}",
        paths.join("\n")
    );
    let identifiers = of_kind(FactKind::Identifier);
    if !identifiers.is_empty() {
        critical.push_str(&format!("Identifiers: {}\n", backticked(&identifiers)));
    }
    // The code identifiers the calls and the assistant used most (the latest first among
    // equals): the ones a next move is likeliest to need.
    let in_use: Vec<String> = facts
        .ranked_identifiers(
            limits.identifiers + identifiers.len(),
            &earlier.identifiers_in_use,
        )
        .into_iter()
        .filter(|item| !identifiers.contains(item) && !holds_word(&written, item))
        .take(limits.identifiers)
        .scan(0, |bytes, item| {
            // At most an eighth of the summary, so the narrative keeps its room.
            *bytes += item.len() + 4;
            (*bytes <= limits.max_bytes / 8).then_some(item)
        })
        .collect();
    if !in_use.is_empty() {
        critical.push_str(&format!("{IN_USE_LABEL}{}\n", backticked(&in_use)));
    }
    // An error a later run of the same call passed is marked so.
    let error_item = |error: &str| match facts.resolved.iter().find(|(line, _)| line == error) {
        Some((_, call)) => format!("- {error} (resolved: a later `{call}` passed)\n"),
        None => format!("- {error}\n"),
    };
    let errors = of_kind(FactKind::Error);
    if !errors.is_empty() {
        critical.push_str("Errors (verbatim):\n");
        for error in &errors {
            critical.push_str(&error_item(error));
        }
    }

    // The narrative shares what the fixed part leaves. Earlier items come first and are the
    // first a cap drops, whole lines at a time.
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
    let room = limits.max_bytes.saturating_sub(
        goal_section.len()
            + next_steps.len()
            + critical.len()
            + files_section.len()
            + commands_section.len()
            + 200,
    );
    let (count_line, recent_calls) = facts.progress_text(limits);
    let mut progress_items = String::new();
    if let Some(before) = &earlier.progress {
        for item in list_items(before) {
            if !recent_calls.contains(&item) {
                progress_items.push_str(&format!("{item}\n"));
            }
        }
    }
    progress_items.push_str(&recent_calls);
    let progress = format!(
        "{count_line}\n{}",
        cap_lines(
            &progress_items,
            (room / 2).saturating_sub(count_line.len() + 1),
            "calls"
        )
    );
    let mut decision_items = Vec::new();
    if let Some(before) = &earlier.decisions {
        decision_items.extend(list_items(before));
    }
    decision_items.extend(facts.decisions.iter().map(|d| format!("- {d}")));
    let mut seen = BTreeSet::new();
    decision_items.retain(|item| seen.insert(item.clone()));
    let decisions = cap_lines(&decision_items.join("\n"), room / 5, "decisions");
    // What else the messages mention, beyond the pinned facts.
    let unpinned = |items: &[String], cap: usize| -> Vec<String> {
        let mut rest: Vec<String> = items
            .iter()
            .filter(|item| !pinned.iter().any(|fact| fact.text == **item))
            .cloned()
            .collect();
        rest.drain(..rest.len().saturating_sub(cap));
        rest
    };
    let mut mentioned = String::new();
    let listed: BTreeSet<&str> =
        crate::wire::fields::set_of(state.files.iter().map(|f| f.path.as_str()));
    let mentioned_files: Vec<String> = facts
        .files
        .iter()
        .map(|path| relative(path))
        .filter(|path| {
            !listed.contains(path.as_str())
                && !paths.contains(path)
                && !requested_line.contains(&format!("`{path}`"))
                && Some(path.as_str()) != workdir
        })
        .collect();
    let other_files = unpinned(&mentioned_files, limits.files);
    if !other_files.is_empty() {
        mentioned.push_str(&format!("Other files: {}\n", backticked(&other_files)));
    }
    for error in unpinned(&facts.errors, limits.errors) {
        mentioned.push_str(&error_item(&error));
    }
    if let Some(extra) = &earlier.unparsed {
        mentioned.push_str(&format!(
            "Earlier summary:\n{}\n",
            quoted_lines(extra, usize::MAX)
        ));
    }
    if !mentioned.is_empty() {
        critical.push_str(&cap_lines(mentioned.trim_end(), room / 4, "lines"));
    }

    // Each section is within its share already (the narrative ones capped above).
    let sections = [
        ("Goal", goal_section),
        ("Progress", progress),
        ("Key Decisions", decisions),
        ("Files", files_section),
        ("Commands", commands_section),
        ("Next Steps", next_steps),
        ("Critical Context", critical),
    ];
    let mut out = String::new();
    let mut written = BTreeSet::new();
    for (name, body) in sections {
        let body = body.trim_end();
        // No path under the working directory is written out in full (line by line: a line
        // that changes directory keeps its paths as written).
        let body = body
            .lines()
            .map(|line| relativize_text(line, workdir))
            .collect::<Vec<_>>()
            .join("\n");
        // A quoted line that markdown reads as a heading goes behind a list marker.
        let heading_like = body.lines().any(|line| line.trim_start().starts_with('#'));
        let body = if heading_like {
            without_headings(&body)
        } else {
            body
        };
        // No line twice in one summary (the first stays).
        let body: Vec<&str> = body
            .lines()
            .filter(|line| line.trim().is_empty() || written.insert(line.trim().to_owned()))
            .collect();
        // A list label whose items all went (written before) goes too.
        let body: Vec<&str> = body
            .iter()
            .enumerate()
            .filter(|(at, line)| {
                !LIST_LABELS.contains(*line)
                    || body.get(at + 1).is_some_and(|next| next.starts_with("- "))
            })
            .map(|(_, line)| *line)
            .collect();
        // No label without content: a section with nothing to say is left out.
        if body.iter().all(|line| line.trim().is_empty()) {
            continue;
        }
        out.push_str(&format!("## {name}\n{}\n\n", body.join("\n")));
    }
    out.trim_end().to_owned()
}

/// The labels of a list of items under them.
const LIST_LABELS: [&str; 3] = ["Later requests:", "Errors (verbatim):", "Earlier summary:"];

pub(super) fn push_unique(list: &mut Vec<String>, seen: &mut BTreeSet<String>, item: String) {
    if seen.insert(item.clone()) {
        list.push(item);
    }
}

#[cfg(test)]
mod tests;
