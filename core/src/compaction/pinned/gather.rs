//! Finding the pinned facts of the messages a checkpoint covers.

use super::{FactKind, PinnedFact};
use crate::compaction::extractive::one_line;
use crate::compaction::extractive::signals::{backticked_identifiers, paths_in_text, telling_line};
use crate::compaction::{TodoItem, TodoStatus, SUMMARY_HEADER};
use crate::model::{Message, Role, ToolCall};
use crate::offload::OFFLOAD_HEADER;
use crate::text::{head_bytes, tail_bytes, user_words};

/// A request longer than this (on one line) is pinned head and tail.
const REQUEST_MAX_BYTES: usize = 600;
/// An error line or the next step is pinned up to this many bytes.
const LINE_MAX_BYTES: usize = 300;

/// How another agent's compaction summary starts when it is a message of the log (Claude
/// Code writes it as a user message after a compact boundary).
const CONTINUATION_OPENINGS: [&str; 2] = [
    "This session is being continued from a previous conversation",
    SUMMARY_HEADER,
];

/// True when `text` is a previous agent's compaction summary kept in the log (Claude Code's
/// continuation message, or a ctxkit summary message): it is read as a previous summary, not
/// as a user request.
pub fn is_previous_summary(text: &str) -> bool {
    let text = text.trim_start();
    CONTINUATION_OPENINGS
        .iter()
        .any(|opening| text.starts_with(opening))
}

/// The pinned facts of `covered` (the messages a new checkpoint covers), after those of the
/// previous checkpoint (`previous`), deduplicated, oldest first. `todos`: the agent's todo
/// list now (its pending and in-progress items are the tasks; an empty list keeps the
/// previous tasks). The next step is the last one stated.
pub fn gather_pinned<'m>(
    covered: impl IntoIterator<Item = &'m Message>,
    previous: &[PinnedFact],
    todos: &[TodoItem],
) -> Vec<PinnedFact> {
    let mut facts = carried_facts(previous, todos);
    for message in covered {
        facts.gather(message);
    }
    facts.into_list()
}

/// [`gather_pinned`]'s facts before the covered messages': the previous ones and the open
/// tasks. Not generic, so compiled once rather than once per iterator the callers pass.
fn carried_facts(previous: &[PinnedFact], todos: &[TodoItem]) -> Facts {
    let mut facts = Facts::default();
    let tasks: Vec<PinnedFact> = todos
        .iter()
        .filter(|item| item.status != TodoStatus::Completed)
        .map(|item| PinnedFact::new(FactKind::Task, one_line(&item.content, LINE_MAX_BYTES)))
        .collect();
    for fact in previous {
        let replaced = fact.kind == FactKind::Task && !todos.is_empty();
        if !replaced {
            facts.push(fact.clone());
        }
    }
    for task in tasks {
        facts.push(task);
    }
    facts
}

/// The pinned facts of a log read one message at a time, as [`gather_pinned`] would find them
/// in the messages read so far (no previous checkpoint, no todo list), the next step left
/// out: a cost report's recall reads each message once instead of the whole log per sample.
#[derive(Debug, Default)]
pub struct PinnedGatherer {
    facts: Facts,
}

impl PinnedGatherer {
    /// Reads the next message of the log.
    pub fn gather(&mut self, message: &Message) {
        self.facts.gather(message);
    }

    /// The facts so far, oldest first, the next step left out.
    pub fn facts(&self) -> &[PinnedFact] {
        &self.facts.list
    }
}

/// Facts in order, without repeats; the next step kept apart (only the last counts).
#[derive(Debug, Default)]
struct Facts {
    list: Vec<PinnedFact>,
    /// `kind` and text (`path\nsrc/a.rs`): strings, as the other sets, so the .wasm has one
    /// BTreeSet type fewer (docs/performance.md, "Size").
    seen: crate::wire::fields::StringSet,
    next_step: Option<PinnedFact>,
}

impl Facts {
    fn push(&mut self, fact: PinnedFact) {
        if fact.text.trim().is_empty() {
            return;
        }
        if fact.kind == FactKind::NextStep {
            self.next_step = Some(fact);
            return;
        }
        // The kind's name has no newline, so the key is the pair.
        if self
            .seen
            .insert(format!("{}\n{}", fact.kind.as_str(), fact.text))
        {
            self.list.push(fact);
        }
    }

    fn gather(&mut self, message: &Message) {
        let text = message.text_content();
        match message.role {
            Role::User if is_previous_summary(&text) => {
                for path in paths_in_text(&text) {
                    self.push(PinnedFact::new(FactKind::Path, path));
                }
                for identifier in backticked_identifiers(&text) {
                    self.push(PinnedFact::new(FactKind::Identifier, identifier));
                }
            }
            // A request is the user's own words, without the harness's blocks.
            Role::User => {
                if let Some(words) = user_words(&text) {
                    self.push(PinnedFact::new(FactKind::Request, request_line(&words)));
                    for identifier in backticked_identifiers(&words) {
                        self.push(PinnedFact::new(FactKind::Identifier, identifier));
                    }
                }
            }
            Role::Assistant => {
                for call in &message.tool_calls {
                    for path in touched_paths(call) {
                        self.push(PinnedFact::new(FactKind::Path, path));
                    }
                }
                if !text.trim().is_empty() {
                    self.push(PinnedFact::new(
                        FactKind::NextStep,
                        one_line(&text, LINE_MAX_BYTES),
                    ));
                }
            }
            Role::Tool => {
                if let Some(path) = offloaded_path(&text) {
                    self.push(PinnedFact::new(FactKind::Path, path));
                }
                if message.is_error {
                    if let Some(line) = telling_line(&text) {
                        self.push(PinnedFact::new(
                            FactKind::Error,
                            one_line(&line, LINE_MAX_BYTES),
                        ));
                    }
                }
            }
            Role::System => {}
        }
    }

    fn into_list(mut self) -> Vec<PinnedFact> {
        self.list.extend(self.next_step);
        self.list
    }
}

/// A request on one line; a long one as its head and tail around ` … `.
fn request_line(text: &str) -> String {
    let line = one_line(text, usize::MAX);
    if line.len() <= REQUEST_MAX_BYTES {
        return line;
    }
    // Cut at spaces, so neither part starts or ends inside a word.
    let head = head_bytes(&line, REQUEST_MAX_BYTES * 2 / 3);
    let head = match head.rfind(' ') {
        Some(space) if space >= head.len() / 2 => head.get(..space).unwrap_or(head),
        _ => head,
    };
    let tail = tail_bytes(&line, REQUEST_MAX_BYTES / 4);
    let tail = match tail.find(' ') {
        Some(space) if space <= tail.len() / 2 => tail.get(space + 1..).unwrap_or(tail),
        _ => tail,
    };
    format!("{} … {}", head.trim_end(), tail.trim_start())
}

/// The paths a call reads, writes or edits: string values under keys that name a file or a
/// path (a shell command's words are not counted: they are too often not paths).
fn touched_paths(call: &ToolCall) -> Vec<String> {
    let Ok(serde_json::Value::Object(object)) =
        serde_json::from_str::<serde_json::Value>(&call.arguments)
    else {
        return Vec::new();
    };
    let mut paths = Vec::new();
    for (key, value) in &object {
        let lower = key.to_ascii_lowercase();
        if !(lower.contains("path") || lower.contains("file")) {
            continue;
        }
        let values: Vec<&str> = match value {
            serde_json::Value::String(path) => vec![path.as_str()],
            serde_json::Value::Array(items) => items.iter().filter_map(|v| v.as_str()).collect(),
            _ => Vec::new(),
        };
        paths.extend(
            values
                .into_iter()
                .filter(|path| is_path_value(path))
                .map(str::to_owned),
        );
    }
    paths
}

fn is_path_value(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 400
        && !text.contains(['\n', '\r', ' ', '`'])
        && text != "."
        && text != "/"
}

/// The file an offload reference names (the line after "saved in full to:").
pub(crate) fn offloaded_path(text: &str) -> Option<String> {
    if !text.starts_with(OFFLOAD_HEADER) {
        return None;
    }
    let mut lines = text.lines();
    lines.find(|line| line.ends_with("saved in full to:"))?;
    lines
        .next()
        .map(str::trim)
        .filter(|path| is_path_value(path))
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ToolCall;

    #[test]
    fn facts_come_from_calls_failures_requests_and_the_previous_checkpoint() {
        let messages = [
            Message::user("Fix `parse_args` in src/cli.rs\n\n## Goal\nINJECTED"),
            Message::assistant(
                "I'll read it.",
                vec![ToolCall::new(
                    "c1",
                    "Read",
                    r#"{"file_path":"src/cli.rs","command":"cat /etc/passwd"}"#,
                )],
            ),
            Message::tool_result("c1", "boom\nerror[E0425]: cannot find value `x`", true),
            Message::user("<system-reminder>not a request</system-reminder>"),
            Message::assistant("Next I will run the tests.", vec![]),
        ];
        let previous = [PinnedFact::new(FactKind::Path, "docs/old.md")];
        let facts = gather_pinned(&messages, &previous, &[]);
        let texts: Vec<(FactKind, &str)> =
            facts.iter().map(|f| (f.kind, f.text.as_str())).collect();
        assert_eq!(
            texts,
            vec![
                (FactKind::Path, "docs/old.md"),
                (
                    FactKind::Request,
                    "Fix `parse_args` in src/cli.rs ## Goal INJECTED"
                ),
                (FactKind::Identifier, "parse_args"),
                (FactKind::Path, "src/cli.rs"),
                (FactKind::Error, "error[E0425]: cannot find value `x`"),
                (FactKind::NextStep, "Next I will run the tests."),
            ]
        );
    }

    #[test]
    fn long_requests_keep_head_and_tail_and_summaries_are_not_requests() {
        let long = format!("start {} end", "word ".repeat(400));
        let facts = gather_pinned(&[Message::user(long)], &[], &[]);
        let request = &facts[0].text;
        assert!(request.starts_with("start word") && request.ends_with("word end"));
        assert!(request.len() <= REQUEST_MAX_BYTES + 8);

        let continued = Message::user(
            "This session is being continued from a previous conversation. Edited `src/main.rs`.",
        );
        let facts = gather_pinned(&[continued], &[], &[]);
        assert!(facts.iter().all(|f| f.kind != FactKind::Request));
        assert!(facts.iter().any(|f| f.text == "src/main.rs"));
    }

    #[test]
    fn a_request_is_pinned_as_the_users_words() {
        let messages = [
            Message::user("<environment_context>\n  <cwd>/w/app</cwd>\n</environment_context>"),
            Message::user(
                "# Context from my IDE setup:\n\n## Open tabs:\n- a.ts: src/a.ts\n\n## My request for Codex:\nRename `load_team`\n",
            ),
            Message::user("<command-message>go is running…</command-message>\n<command-name>/go</command-name>\n<command-args>ship it</command-args>"),
        ];
        let facts = gather_pinned(&messages, &[], &[]);
        let texts: Vec<(FactKind, &str)> =
            facts.iter().map(|f| (f.kind, f.text.as_str())).collect();
        // ctxkit's own markers, spelled out again in `user_words` (which sits below
        // compaction and wire): they stay in step.
        assert_eq!(user_words(SUMMARY_HEADER), None);
        assert_eq!(user_words(crate::wire::repair::LEADING_USER), None);
        assert_eq!(
            texts,
            vec![
                (FactKind::Request, "Rename `load_team`"),
                (FactKind::Identifier, "load_team"),
                (FactKind::Request, "ship it"),
            ]
        );
    }

    #[test]
    fn an_offload_reference_pins_its_file() {
        let reference = format!(
            "{OFFLOAD_HEADER}\nThe output of `bash` (9 bytes, 1 lines) was too large to keep in context; it was saved in full to:\n.ctxkit/tool_results/s/0000000003-c1.txt\nThe tool succeeded."
        );
        let facts = gather_pinned(&[Message::tool_result("c1", reference, false)], &[], &[]);
        assert_eq!(
            facts,
            vec![PinnedFact::new(
                FactKind::Path,
                ".ctxkit/tool_results/s/0000000003-c1.txt"
            )]
        );
    }
}
