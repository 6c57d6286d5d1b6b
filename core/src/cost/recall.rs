//! A cost report's pinned recall: of the pinned paths, user requests and error lines of the
//! log so far (as the strategy stored it), the share whose text (the head, for one pinned head
//! and tail) a call's request holds, sampled every [`super::RECALL_EVERY`] calls and at the
//! last one. A fact is kept when the request holds it as written, or relative to the working
//! directory a summary in the request states (the summary writes paths under it relative: the
//! pinned check's rule, `pinned::summary_holds`).
//!
//! The facts are gathered as the log grows, each message read once (not the whole log at each
//! sample), and each message's part of the request text is rendered once while it stays in
//! the request. A fact without a space is in the text exactly when it is in one message's part,
//! so a sample remembers which message held it: still held while that message is in the
//! request, still missing unless a message new since the last sample holds it; only then is
//! the whole request searched. A fact with a space (a request, an error line) is searched in
//! the whole text every sample.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::compaction::pinned::PinnedGatherer;
use crate::compaction::workdir::{declared_working_directory, relativize_text};
use crate::compaction::FactKind;
use crate::model::Message;

/// The facts of the log read so far, what the last sample knew of each, and the counts of the
/// samples taken.
#[derive(Default)]
pub(crate) struct Recall {
    gatherer: PinnedGatherer,
    /// How many log messages were read.
    read: usize,
    facts: Vec<Fact>,
    /// How many of the gatherer's facts `facts` went through.
    seen: usize,
    expected: usize,
    kept: usize,
    /// The working directory the last sample's request stated.
    workdir: Option<String>,
    /// The last sample's messages (their addresses: each is held in `pieces` until the next
    /// sample, so an address seen again is the same message).
    previous: HashSet<usize>,
    /// Each message of the last sample's request: the message, its part of the request text,
    /// that part with whitespace flattened.
    pieces: HashMap<usize, (Arc<Message>, String, String)>,
}

/// A fact of a counted kind.
struct Fact {
    head: String,
    /// What is searched: the head with whitespace flattened, and the head relative to the
    /// stated working directory when that differs.
    needles: Vec<String>,
    state: State,
}

/// What the last sample knew of a fact whose needles have no space (a needle without a space
/// is in the request text exactly when it is in one message's part of it).
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    /// Not looked up in the request since its needles were set.
    New,
    /// Held by this message (an address of the last sample's request).
    Held(usize),
    /// In no message of the last sample's request.
    Missing,
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
                let head = fact.verbatim_head().to_owned();
                let needles = needles(&head, self.workdir.as_deref());
                self.facts.push(Fact {
                    head,
                    needles,
                    state: State::New,
                });
            }
        }
        self.seen = facts.len();
    }

    /// Counts the facts read so far that the request of conversation `messages` holds. A fact
    /// held by a message still in the request, or missing from the last request and from the
    /// messages new since, is settled without a search of the whole request.
    pub(crate) fn sample(&mut self, messages: &[Arc<Message>]) {
        let mut text = String::new();
        let mut shown = String::new();
        let mut current = HashSet::with_capacity(messages.len());
        let mut fresh = String::new();
        for message in messages {
            let key = Arc::as_ptr(message) as usize;
            let (_, raw, flat_piece) = self.pieces.entry(key).or_insert_with(|| {
                let raw = request_text(std::slice::from_ref(message));
                let flat_piece = flat(&raw);
                (message.clone(), raw, flat_piece)
            });
            text.push_str(raw);
            // Each part ends with a line break, so flattening the whole text is flattening each
            // part and joining them with one space.
            if !flat_piece.is_empty() {
                if !shown.is_empty() {
                    shown.push(' ');
                }
                shown.push_str(flat_piece);
                if !self.previous.contains(&key) {
                    fresh.push_str(flat_piece);
                    fresh.push(' ');
                }
            }
            current.insert(key);
        }
        let workdir = declared_working_directory(&text).map(str::to_owned);
        if workdir != self.workdir {
            self.workdir = workdir;
            for fact in &mut self.facts {
                fact.needles = needles(&fact.head, self.workdir.as_deref());
                fact.state = State::New;
            }
        }
        let pieces = &self.pieces;
        let holder = |needles: &[String]| {
            messages.iter().find_map(|message| {
                let key = Arc::as_ptr(message) as usize;
                let (_, _, piece) = pieces.get(&key)?;
                needles
                    .iter()
                    .any(|needle| piece.contains(needle.as_str()))
                    .then_some(key)
            })
        };
        let mut kept = 0;
        for fact in &mut self.facts {
            let held = if fact.needles.iter().any(|n| n.is_empty() || n.contains(' ')) {
                fact.needles
                    .iter()
                    .any(|needle| shown.contains(needle.as_str()))
            } else {
                fact.state = match fact.state {
                    State::Held(key) if current.contains(&key) => State::Held(key),
                    State::Missing if !fact.needles.iter().any(|n| fresh.contains(n.as_str())) => {
                        State::Missing
                    }
                    _ => holder(&fact.needles).map_or(State::Missing, State::Held),
                };
                matches!(fact.state, State::Held(_))
            };
            kept += usize::from(held);
        }
        self.expected += self.facts.len();
        self.kept += kept;
        self.pieces.retain(|key, _| current.contains(key));
        self.previous = current;
    }

    /// The share kept over the samples; `None` when no fact was expected.
    pub(crate) fn share(&self) -> Option<f64> {
        (self.expected > 0).then(|| self.kept as f64 / self.expected as f64)
    }
}

/// The needles of a fact whose head is `head`, the request stating `workdir`.
fn needles(head: &str, workdir: Option<&str>) -> Vec<String> {
    let mut out = vec![flat(head)];
    if let Some(dir) = workdir {
        let relative = relativize_text(head, Some(dir));
        if relative != head {
            out.push(flat(&relative));
        }
    }
    out
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
