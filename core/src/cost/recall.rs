//! A cost report's pinned recall: of the pinned paths, user requests and error lines of the
//! log so far (as the strategy stored it), the share whose text (the head, for one pinned head
//! and tail) a call's request holds, sampled every [`super::RECALL_EVERY`] calls and at the
//! last one. A fact is kept when the request holds it as written, or relative to the working
//! directory a summary in the request states (the summary writes paths under it relative: the
//! pinned check's rule, `pinned::summary_holds`).
//!
//! The facts are gathered as the log grows, each message read once (not the whole log at each
//! sample); a sample renders the request's text and looks each fact up in it, a fact that is a
//! whole word of the text found by a set of its words before a substring search.

use std::collections::HashSet;
use std::sync::Arc;

use crate::compaction::pinned::PinnedGatherer;
use crate::compaction::workdir::{declared_working_directory, relativize_text};
use crate::compaction::FactKind;
use crate::model::Message;

/// The facts of the log read so far, and the counts of the samples taken.
#[derive(Default)]
pub(crate) struct Recall {
    gatherer: PinnedGatherer,
    /// How many log messages were read.
    read: usize,
    /// For each fact of the counted kinds (in the gatherer's order): its head and its head
    /// with whitespace flattened.
    heads: Vec<(String, String)>,
    /// How many of the gatherer's facts `heads` went through.
    seen: usize,
    expected: usize,
    kept: usize,
}

impl Recall {
    /// Reads the messages of `log` past those already read.
    pub(crate) fn read(&mut self, log: &[Arc<Message>]) {
        for message in log.get(self.read..).unwrap_or_default() {
            self.gatherer.gather(message);
        }
        self.read = self.read.max(log.len());
        let facts = self.gatherer.facts();
        for fact in facts.get(self.seen..).unwrap_or_default() {
            if matches!(
                fact.kind,
                FactKind::Path | FactKind::Request | FactKind::Error
            ) {
                let head = fact.verbatim_head();
                self.heads.push((head.to_owned(), flat(head)));
            }
        }
        self.seen = facts.len();
    }

    /// Counts the facts read so far that the request of conversation `messages` holds.
    pub(crate) fn sample(&mut self, messages: &[Arc<Message>]) {
        let text = request_text(messages);
        let workdir = declared_working_directory(&text);
        let shown = flat(&text);
        let words: HashSet<&str> = shown.split(' ').collect();
        let contains = |needle: &str| {
            (!needle.contains(' ') && words.contains(needle)) || shown.contains(needle)
        };
        let held = |(head, flat_head): &(String, String)| {
            contains(flat_head)
                || workdir.is_some_and(|dir| {
                    let relative = relativize_text(head, Some(dir));
                    relative != *head && contains(&flat(&relative))
                })
        };
        self.expected += self.heads.len();
        self.kept += self.heads.iter().filter(|head| held(head)).count();
    }

    /// The share kept over the samples; `None` when no fact was expected.
    pub(crate) fn share(&self) -> Option<f64> {
        (self.expected > 0).then(|| self.kept as f64 / self.expected as f64)
    }
}

fn request_text(messages: &[Arc<Message>]) -> String {
    let mut text = String::new();
    for message in messages {
        text.push_str(&message.text_content());
        text.push('\n');
        for call in &message.tool_calls {
            text.push_str(&call.arguments);
            text.push('\n');
            // Paths in arguments are JSON strings: the decoded form is what facts hold.
            if let Ok(value) = serde_json::from_str::<serde_json::Value>(&call.arguments) {
                push_strings(&value, &mut text);
            }
        }
    }
    text
}

fn push_strings(value: &serde_json::Value, out: &mut String) {
    match value {
        serde_json::Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| push_strings(v, out)),
        serde_json::Value::Object(map) => map.values().for_each(|v| push_strings(v, out)),
        _ => {}
    }
}

fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
