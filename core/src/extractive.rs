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

use crate::message::{Message, Role};
use crate::text::{cut_middle, head_bytes};

/// Bounds on the extractive summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
/// use ctxkit_core::extractive::{extractive_summary, ExtractiveLimits};
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

/// What the covered messages say, gathered in one pass.
#[derive(Default)]
struct Facts {
    requests: Vec<String>,
    calls: Vec<CallRecord>,
    decisions: Vec<String>,
    last_assistant_text: Option<String>,
    request_after_last_reply: Option<String>,
    files: Vec<String>,
    identifiers: Vec<String>,
    errors: Vec<String>,
}

struct CallRecord {
    id: String,
    tool: String,
    key_argument: String,
    outcome: Option<Outcome>,
}

struct Outcome {
    failed: bool,
    first_line: String,
}

impl Facts {
    fn gather(messages: &[Message], limits: &ExtractiveLimits) -> Facts {
        let mut facts = Facts::default();
        let mut seen_files = BTreeSet::new();
        let mut seen_identifiers = BTreeSet::new();
        let mut seen_errors = BTreeSet::new();
        for message in messages {
            let text = message.text_content();
            match message.role {
                Role::User if is_request(&text) => {
                    facts.requests.push(text.trim().to_owned());
                    facts.request_after_last_reply = Some(text.trim().to_owned());
                    for path in paths_in_text(&text) {
                        push_unique(&mut facts.files, &mut seen_files, path);
                    }
                }
                Role::Assistant => {
                    if !text.trim().is_empty() {
                        facts.request_after_last_reply = None;
                        facts.last_assistant_text = Some(text.trim().to_owned());
                        facts.decisions.extend(decision_sentences(&text));
                        for identifier in backticked_identifiers(&text) {
                            push_unique(&mut facts.identifiers, &mut seen_identifiers, identifier);
                        }
                    }
                    for call in &message.tool_calls {
                        for path in file_paths_in_arguments(&call.arguments) {
                            push_unique(&mut facts.files, &mut seen_files, path);
                        }
                        facts.calls.push(CallRecord {
                            id: call.id.clone(),
                            tool: call.name.clone(),
                            key_argument: key_argument(&call.arguments),
                            outcome: None,
                        });
                    }
                }
                Role::Tool => {
                    let lines = error_lines(&text, message.is_error);
                    let outcome = Outcome {
                        failed: message.is_error,
                        first_line: lines.first().cloned().unwrap_or_else(|| first_line(&text)),
                    };
                    for line in lines {
                        if seen_errors.insert(line.clone()) {
                            facts.errors.push(line);
                        }
                    }
                    // Match by id among the open calls; a result with an unknown id goes to the
                    // oldest of the calls still open since the last answered one.
                    let id = message.tool_call_id.as_deref().unwrap_or_default();
                    let by_id = facts
                        .calls
                        .iter()
                        .rposition(|c| c.outcome.is_none() && c.id == id);
                    let oldest_open = facts
                        .calls
                        .iter()
                        .rev()
                        .take_while(|c| c.outcome.is_none())
                        .count();
                    let index = by_id
                        .or_else(|| (oldest_open > 0).then(|| facts.calls.len() - oldest_open));
                    if let Some(record) = index.and_then(|i| facts.calls.get_mut(i)) {
                        record.outcome = Some(outcome);
                    }
                }
                _ => {}
            }
        }
        let keep = facts.decisions.len().saturating_sub(limits.decisions);
        facts.decisions.drain(..keep);
        let keep = facts.errors.len().saturating_sub(limits.errors);
        facts.errors.drain(..keep);
        facts
    }

    fn progress_text(&self, limits: &ExtractiveLimits) -> String {
        if self.calls.is_empty() {
            return "No tool calls in this part of the session.".to_owned();
        }
        let mut per_tool: Vec<(String, usize, usize)> = Vec::new();
        for call in &self.calls {
            let failed = usize::from(call.outcome.as_ref().is_some_and(|o| o.failed));
            match per_tool.iter_mut().find(|(tool, _, _)| *tool == call.tool) {
                Some(entry) => {
                    entry.1 += 1;
                    entry.2 += failed;
                }
                None => per_tool.push((call.tool.clone(), 1, failed)),
            }
        }
        let counts: Vec<String> = per_tool
            .iter()
            .map(|(tool, n, failed)| {
                if *failed > 0 {
                    format!("{tool} ×{n} ({failed} failed)")
                } else {
                    format!("{tool} ×{n}")
                }
            })
            .collect();
        let mut text = format!("{} tool calls: {}\n", self.calls.len(), counts.join(", "));
        let recent = self
            .calls
            .get(self.calls.len().saturating_sub(limits.recent_calls)..)
            .unwrap_or_default();
        if recent.len() < self.calls.len() {
            text.push_str(&format!("Most recent {}:\n", recent.len()));
        }
        for call in recent {
            let outcome = match &call.outcome {
                None => "no result".to_owned(),
                Some(Outcome {
                    failed: true,
                    first_line,
                }) => format!("failed: {first_line}"),
                Some(Outcome {
                    failed: false,
                    first_line,
                }) if first_line.is_empty() => "ok".to_owned(),
                Some(Outcome {
                    failed: false,
                    first_line,
                }) => format!("ok: {first_line}"),
            };
            let argument = if call.key_argument.is_empty() {
                String::new()
            } else {
                format!(" `{}`", call.key_argument)
            };
            text.push_str(&format!("- {}{argument} → {outcome}\n", call.tool));
        }
        text
    }

    fn next_steps(&self) -> Option<String> {
        if let Some(request) = &self.request_after_last_reply {
            return Some(format!(
                "Answer the user's latest request: {}",
                one_line(request, 600)
            ));
        }
        self.last_assistant_text
            .as_ref()
            .map(|text| format!("Last stated by the assistant: {}", one_line(text, 800)))
    }
}

/// A previous summary split into the sections this module writes (or an LLM was asked for).
#[derive(Default)]
struct PreviousSummary {
    goal: Option<String>,
    progress: Option<String>,
    decisions: Option<String>,
    next_steps: Option<String>,
    files: Vec<String>,
    identifiers: Vec<String>,
    errors: Vec<String>,
    /// A summary without the expected headings, kept whole.
    unparsed: Option<String>,
}

impl PreviousSummary {
    fn parse(summary: &str) -> PreviousSummary {
        let mut parsed = PreviousSummary::default();
        let mut found = false;
        for (heading, body) in sections(summary) {
            found = true;
            let body = body.trim();
            let non_empty = (!body.is_empty()).then(|| body.to_owned());
            match heading {
                "Goal" => parsed.goal = non_empty,
                "Progress" => parsed.progress = non_empty,
                "Key Decisions" => parsed.decisions = non_empty.filter(|d| d != "(none stated)"),
                "Next Steps" => parsed.next_steps = non_empty,
                "Critical Context" => {
                    for line in body.lines() {
                        if let Some(list) = line.strip_prefix("Files: ") {
                            parsed.files = backticked_items(list);
                        } else if let Some(list) = line.strip_prefix("Identifiers: ") {
                            parsed.identifiers = backticked_items(list);
                        } else if let Some(error) = line.strip_prefix("- ") {
                            parsed.errors.push(error.to_owned());
                        }
                    }
                    // An LLM's critical context is prose: keep its paths at least.
                    if parsed.files.is_empty() {
                        parsed.files = paths_in_text(body);
                    }
                }
                _ => {}
            }
        }
        if !found && !summary.trim().is_empty() {
            parsed.files = paths_in_text(summary);
            parsed.unparsed = Some(summary.trim().to_owned());
        }
        parsed
    }
}

/// `(heading, body)` for each `## heading` line of a markdown text.
fn sections(text: &str) -> Vec<(&str, &str)> {
    let mut out = Vec::new();
    let mut current: Option<(&str, usize)> = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if let Some(heading) = line.strip_prefix("## ") {
            if let Some((name, start)) = current.take() {
                out.push((name, text.get(start..offset).unwrap_or_default()));
            }
            current = Some((heading.trim(), offset + line.len()));
        }
        offset += line.len();
    }
    if let Some((name, start)) = current {
        out.push((name, text.get(start..).unwrap_or_default()));
    }
    out
}

/// File paths named in a tool call's JSON arguments: string values under keys that name a
/// file or path (`file_path`, `path`, `filePath`, `notebook_path`, `filename`, `paths`...),
/// plus path-looking words inside a `command`.
pub fn file_paths_in_arguments(arguments: &str) -> Vec<String> {
    let Ok(serde_json::Value::Object(object)) =
        serde_json::from_str::<serde_json::Value>(arguments)
    else {
        return Vec::new();
    };
    let mut paths = Vec::new();
    for (key, value) in &object {
        let lower = key.to_ascii_lowercase();
        if lower.contains("path")
            || lower.contains("file")
            || lower == "dir"
            || lower == "directory"
        {
            match value {
                serde_json::Value::String(path) if looks_like_path(path) => {
                    paths.push(path.clone())
                }
                serde_json::Value::Array(items) => paths.extend(
                    items
                        .iter()
                        .filter_map(|v| v.as_str())
                        .filter(|p| looks_like_path(p))
                        .map(str::to_owned),
                ),
                _ => {}
            }
        } else if lower == "command" || lower == "cmd" {
            if let Some(command) = value.as_str() {
                paths.extend(paths_in_text(command));
            }
        }
    }
    paths
}

fn looks_like_path(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 400
        && !text.contains('\n')
        && !text.contains(' ')
        && text != "."
        && text != "/"
}

/// Words of `text` that look like file paths: containing `/` with a file-ish tail, or a bare
/// name with a short extension (`main.rs`). Surrounding quotes, backticks and punctuation are
/// stripped.
fn paths_in_text(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for word in text.split(|c: char| {
        c.is_whitespace()
            || matches!(
                c,
                '`' | '"' | '\'' | '(' | ')' | '<' | '>' | ',' | ';' | '|'
            )
    }) {
        let word = word.trim_end_matches([':', '.', '!', '?']);
        let word = word.split(':').next().unwrap_or_default();
        if word.len() < 3 || word.len() > 300 || word.contains("://") || word.starts_with('-') {
            continue;
        }
        let has_extension = word.rsplit_once('.').is_some_and(|(stem, ext)| {
            !stem.is_empty()
                && (1..=5).contains(&ext.len())
                && ext.chars().all(|c| c.is_ascii_alphanumeric())
                && ext.chars().any(|c| c.is_ascii_alphabetic())
        });
        let has_dir = word.contains('/')
            && word.chars().all(|c| {
                c.is_alphanumeric() || matches!(c, '/' | '.' | '_' | '-' | '~' | '@' | '+')
            });
        if has_dir && (has_extension || word.starts_with('/') || word.starts_with("./"))
            || has_extension
                && !word.contains('/')
                && word
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
                && word.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                && !is_number_like(word)
        {
            out.push(word.to_owned());
        }
    }
    out
}

fn is_number_like(word: &str) -> bool {
    word.chars().all(|c| c.is_ascii_digit() || c == '.')
}

/// The argument that says what a call did: a command, a path, a pattern, a query, a URL, else
/// the first string value.
fn key_argument(arguments: &str) -> String {
    const KEYS: [&str; 12] = [
        "command",
        "cmd",
        "file_path",
        "path",
        "filePath",
        "pattern",
        "query",
        "url",
        "description",
        "prompt",
        "content",
        "text",
    ];
    let Ok(serde_json::Value::Object(object)) =
        serde_json::from_str::<serde_json::Value>(arguments)
    else {
        return one_line(arguments, 120);
    };
    let chosen = KEYS
        .iter()
        .find_map(|key| object.get(*key).and_then(|v| v.as_str()))
        .or_else(|| object.values().find_map(|v| v.as_str()));
    chosen.map(|value| one_line(value, 120)).unwrap_or_default()
}

/// Lines of a tool output worth quoting as errors: all lines with an error marker (for a
/// failed call, the first non-empty line when none has one).
fn error_lines(text: &str, failed: bool) -> Vec<String> {
    const MARKERS: [&str; 10] = [
        "error",
        "Error",
        "ERROR",
        "FAILED",
        "failed",
        "panicked",
        "Traceback",
        "Exception",
        "exception",
        "fatal",
    ];
    let mut lines: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|line| MARKERS.iter().any(|marker| line.contains(marker)))
        .filter(|line| !line.starts_with('#') && line.len() > 3)
        .take(3)
        .map(|line| one_line(line, 300))
        .collect();
    if failed && lines.is_empty() {
        lines.extend(
            text.lines()
                .map(str::trim)
                .find(|line| !line.is_empty())
                .map(|line| one_line(line, 300)),
        );
    }
    lines
}

fn first_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .map(|line| one_line(line, 100))
        .unwrap_or_default()
}

/// A user message that is a request, not harness noise (reminders, our own summaries).
fn is_request(text: &str) -> bool {
    let text = text.trim();
    !text.is_empty()
        && !text.starts_with("[Context checkpoint]")
        && !text.starts_with("<system-reminder>")
        && !text.starts_with("[Earlier conversation")
        && !text.starts_with("<local-command")
}

/// Sentences in which the assistant states a choice.
fn decision_sentences(text: &str) -> Vec<String> {
    const MARKERS: [&str; 10] = [
        "I'll ",
        "I will ",
        "decided",
        "instead",
        "Instead",
        "switch to",
        "going to",
        "approach",
        "because",
        "The fix",
    ];
    text.split(['\n', '.'])
        .map(str::trim)
        .filter(|sentence| sentence.len() > 12 && MARKERS.iter().any(|m| sentence.contains(m)))
        .map(|sentence| one_line(sentence, 240))
        .collect()
}

/// Identifiers the assistant put in backticks (`parse_args`, `Config::load`).
fn backticked_identifiers(text: &str) -> Vec<String> {
    backticked_items(text)
        .into_iter()
        .filter(|item| item.len() >= 3 && item.len() <= 80)
        .filter(|item| {
            item.chars().all(|c| {
                c.is_alphanumeric() || matches!(c, '_' | ':' | '.' | '-' | '#' | '!' | '(' | ')')
            })
        })
        .filter(|item| item.chars().any(|c| c.is_alphabetic()))
        .collect()
}

fn backticked_items(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .filter(|item| !item.is_empty())
        .collect()
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

fn push_unique(list: &mut Vec<String>, seen: &mut BTreeSet<String>, item: String) {
    if seen.insert(item.clone()) {
        list.push(item);
    }
}

/// `text` on one line (whitespace runs collapsed), cut to `max_bytes` with an ellipsis.
fn one_line(text: &str, max_bytes: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.len() <= max_bytes {
        return flat;
    }
    format!("{}…", head_bytes(&flat, max_bytes.saturating_sub(3)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::ToolCall;

    #[test]
    fn paths_come_from_path_keys_and_commands() {
        assert_eq!(
            file_paths_in_arguments(r#"{"file_path":"/home/u/app/lib/a.ex","limit":20}"#),
            vec!["/home/u/app/lib/a.ex"]
        );
        assert_eq!(
            file_paths_in_arguments(
                r#"{"command":"cd app && mix test test/a_test.exs 2>&1 | tail -5"}"#
            ),
            vec!["test/a_test.exs"]
        );
        assert_eq!(
            file_paths_in_arguments(r#"{"paths":["src/a.rs","b.md"]}"#),
            vec!["src/a.rs", "b.md"]
        );
        assert!(file_paths_in_arguments("not json").is_empty());
        assert_eq!(
            paths_in_text("see `src/main.rs:12` and README.md, v1.2 or https://x.io/a.js"),
            vec!["src/main.rs", "README.md"]
        );
    }

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
