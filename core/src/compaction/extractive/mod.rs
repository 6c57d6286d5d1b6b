//! The extractive summarizer: a checkpoint summary without an LLM.
//!
//! It builds the same five sections an LLM is asked for (Goal, Progress, Key Decisions, Next
//! Steps, Critical Context) from what the covered messages literally contain: the user's
//! requests, every tool call with its key argument and outcome, the assistant's stated
//! decisions, file paths, identifiers, and error lines quoted verbatim. It is the default when
//! no LLM is configured and the fallback when one fails.
//!
//! Guarantees: deterministic, total (any messages in, a summary out), bounded (the output never
//! exceeds [`ExtractiveLimits::max_bytes`]), and incremental: given the previous summary it
//! merges instead of starting over, so file paths, the goal and errors survive any number of
//! compactions.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

mod facts;
mod previous;
mod signals;

pub use signals::file_paths_in_arguments;

use facts::Facts;
use previous::PreviousSummary;

use crate::model::Message;
use crate::text::{cut_middle, head_bytes};

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
            max_bytes: 16_384,
            recent_calls: 15,
            later_requests: 8,
            decisions: 8,
            errors: 10,
            files: 300,
            identifiers: 40,
        }
    }
}

/// The section headings, in order. LLM summaries are asked for the same ones.
pub const SECTIONS: [&str; 5] = [
    "Goal",
    "Progress",
    "Key Decisions",
    "Next Steps",
    "Critical Context",
];

/// Summarizes `messages` (the ones a checkpoint will cover), merging `previous` (the summary of
/// the checkpoint before, if any).
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
/// assert!(summary.starts_with("## Goal\nFix the failing test in src/parser.rs"));
/// assert!(summary.contains("bash `cargo test` → failed: error[E0308]: mismatched types"));
/// assert!(summary.contains("`src/parser.rs`"));
/// ```
pub fn extractive_summary(
    messages: &[Message],
    previous: Option<&str>,
    limits: &ExtractiveLimits,
) -> String {
    let facts = Facts::gather(messages, limits);
    let earlier = previous.map(PreviousSummary::parse).unwrap_or_default();
    let budget = limits.max_bytes;

    let goal = match (&earlier.goal, facts.requests.first()) {
        (Some(goal), _) => goal.clone(),
        (None, Some(first)) => head_bytes(first, 1_200).to_owned(),
        (None, None) => "(no user request in the summarized messages)".to_owned(),
    };
    let mut goal_section = goal;
    let later: Vec<&String> = facts
        .requests
        .iter()
        .skip(usize::from(earlier.goal.is_none()))
        .collect();
    let later = later
        .get(later.len().saturating_sub(limits.later_requests)..)
        .unwrap_or_default();
    if !later.is_empty() {
        goal_section.push_str("\nLater requests:");
        for request in later {
            goal_section.push_str(&format!("\n- {}", one_line(request, 300)));
        }
    }

    let mut progress = String::new();
    if let Some(before) = &earlier.progress {
        progress.push_str(&format!(
            "Earlier:\n{}\n",
            cut_middle(
                before,
                budget / 8,
                "\n[… {bytes} bytes of earlier progress cut …]\n"
            )
        ));
    }
    progress.push_str(&facts.progress_text(limits));

    let mut decisions = String::new();
    if let Some(before) = &earlier.decisions {
        decisions.push_str(&cut_middle(
            before,
            budget / 16,
            "\n[… {bytes} bytes cut …]\n",
        ));
        decisions.push('\n');
    }
    for decision in &facts.decisions {
        decisions.push_str(&format!("- {decision}\n"));
    }
    if decisions.trim().is_empty() {
        decisions.push_str("(none stated)");
    }

    let next_steps = facts
        .next_steps()
        .or_else(|| earlier.next_steps.clone())
        .unwrap_or_else(|| "Continue from the most recent messages.".to_owned());

    let files = merge_lists(&earlier.files, &facts.files, limits.files);
    let identifiers = merge_lists(&earlier.identifiers, &facts.identifiers, limits.identifiers);
    let errors = merge_recent(&earlier.errors, &facts.errors, limits.errors);
    let mut critical = String::new();
    critical.push_str(&format!("Files: {}\n", backticked(&files)));
    if !identifiers.is_empty() {
        critical.push_str(&format!("Identifiers: {}\n", backticked(&identifiers)));
    }
    if !errors.is_empty() {
        critical.push_str("Errors (verbatim):\n");
        for error in &errors {
            critical.push_str(&format!("- {error}\n"));
        }
    }
    if let Some(extra) = &earlier.unparsed {
        critical.push_str(&format!(
            "Earlier summary:\n{}\n",
            cut_middle(extra, budget / 4, "\n[… {bytes} bytes cut …]\n")
        ));
    }

    // Fit the cap: the flexible sections shrink first, the file list last.
    let sections = [goal_section, progress, decisions, next_steps, critical];
    let shares = [8, 4, 8, 8, 2];
    let mut out = String::new();
    for ((name, body), share) in SECTIONS.iter().zip(&sections).zip(shares) {
        let body = cut_middle(
            body.trim_end(),
            budget / share,
            "\n[… {bytes} bytes cut …]\n",
        );
        out.push_str(&format!("## {name}\n{body}\n\n"));
    }
    let out = out.trim_end().to_owned();
    cut_middle(&out, budget, "\n[… {bytes} bytes cut …]\n")
}

fn backticked(items: &[String]) -> String {
    if items.is_empty() {
        return "(none)".to_owned();
    }
    items
        .iter()
        .map(|item| format!("`{}`", item.replace('`', "'")))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `earlier` then the new items not in it, at most `cap` (the oldest beyond the cap dropped).
fn merge_lists(earlier: &[String], new: &[String], cap: usize) -> Vec<String> {
    let mut seen = BTreeSet::new();
    let mut merged: Vec<String> = earlier
        .iter()
        .chain(new)
        .filter(|item| seen.insert(item.as_str()))
        .cloned()
        .collect();
    let excess = merged.len().saturating_sub(cap);
    merged.drain(..excess);
    merged
}

/// The last `cap` items of `earlier` followed by `new`, without repeats.
fn merge_recent(earlier: &[String], new: &[String], cap: usize) -> Vec<String> {
    merge_lists(earlier, new, cap)
}

pub(super) fn push_unique(list: &mut Vec<String>, seen: &mut BTreeSet<String>, item: String) {
    if seen.insert(item.clone()) {
        list.push(item);
    }
}

/// `text` on one line (whitespace runs collapsed), cut to `max_bytes` with an ellipsis.
pub(super) fn one_line(text: &str, max_bytes: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.len() <= max_bytes {
        return flat;
    }
    format!("{}…", head_bytes(&flat, max_bytes.saturating_sub(3)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ToolCall;

    #[test]
    fn a_merge_keeps_earlier_files_goal_and_errors() {
        let first = [
            Message::user("Port the parser to Rust"),
            Message::assistant(
                "",
                vec![ToolCall::new(
                    "1",
                    "read_file",
                    r#"{"path":"old/parser.py"}"#,
                )],
            ),
            Message::tool_result("1", "Traceback: boom", true),
        ];
        let limits = ExtractiveLimits::default();
        let earlier = extractive_summary(&first, None, &limits);
        let second = [
            Message::user("now add tests"),
            Message::assistant(
                "I'll add tests in `parser_tests`.",
                vec![ToolCall::new(
                    "2",
                    "write_file",
                    r#"{"path":"src/parser.rs"}"#,
                )],
            ),
            Message::tool_result("2", "ok", false),
        ];
        let merged = extractive_summary(&second, Some(&earlier), &limits);
        assert!(
            merged
                .starts_with("## Goal\nPort the parser to Rust\nLater requests:\n- now add tests"),
            "{merged}"
        );
        assert!(
            merged.contains("Files: `old/parser.py`, `src/parser.rs`"),
            "{merged}"
        );
        assert!(merged.contains("- Traceback: boom"), "{merged}");
        assert!(merged.contains("Identifiers: `parser_tests`"), "{merged}");
        assert_eq!(
            extractive_summary(&second, Some(&earlier), &limits),
            merged,
            "deterministic"
        );
    }

    #[test]
    fn output_is_bounded_for_huge_inputs() {
        let limits = ExtractiveLimits {
            max_bytes: 2_000,
            ..ExtractiveLimits::default()
        };
        let huge: Vec<Message> = (0..500)
            .flat_map(|i| {
                [
                    Message::user(format!("request {i} {}", "word ".repeat(100))),
                    Message::assistant(
                        "",
                        vec![ToolCall::new(
                            format!("c{i}"),
                            "bash",
                            format!(r#"{{"command":"cat dir{i}/file{i}.txt"}}"#),
                        )],
                    ),
                    Message::tool_result(format!("c{i}"), "error: nope ".repeat(50), true),
                ]
            })
            .collect();
        let summary = extractive_summary(&huge, None, &limits);
        assert!(summary.len() <= 2_000, "{}", summary.len());
        assert!(extractive_summary(&[], None, &limits).contains("## Critical Context"));
    }
}
