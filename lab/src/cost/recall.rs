//! A cost report's pinned recall: of the pinned paths, user requests and error lines of the
//! log so far (as the strategy stored it), the share whose text (the head, for one pinned head
//! and tail) a call's request holds, sampled every [`super::RECALL_EVERY`] calls (further
//! apart in a very long session: [`super::recall_stride`]) and at the last one. A fact is kept when the request holds it as written, or relative to the working
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

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::needles::{first_occurrences, occurring};
use ctxkit_core::compaction::pinned::PinnedGatherer;
use ctxkit_core::compaction::FactKind;
use ctxkit_core::compaction::{declared_working_directory, relativize_text};
use ctxkit_core::model::Message;

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
    previous: BTreeSet<usize>,
    /// Each message of the last sample's request: the message, its part of the request text,
    /// that part with whitespace flattened.
    pieces: BTreeMap<usize, (Arc<Message>, String, String)>,
    /// In the last sample's request, the message whose non-empty part follows each one's.
    next: BTreeMap<usize, usize>,
    /// Whether no message was twice in the last sample's request.
    unique: bool,
}

/// A fact of a counted kind.
struct Fact {
    head: String,
    /// What is searched: the head with whitespace flattened, and the head relative to the
    /// stated working directory when that differs.
    needles: Vec<String>,
    state: State,
}

/// What the last sample knew of a fact.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    /// Not looked up in the request since its needles were set, or held across parts.
    New,
    /// Held by this message (an address of the last sample's request).
    Held(usize),
    /// Not in the last sample's request text.
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
    /// held by a message still in the request, or missing from the last request and from what
    /// is new since, is settled without a search of the whole request.
    pub(crate) fn sample(&mut self, messages: &[Arc<Message>]) {
        let mut text = String::new();
        let mut shown = String::new();
        let mut current = BTreeSet::new();
        let mut fresh = String::new();
        // The messages with a non-empty part, in order, and where each part starts in `shown`.
        let mut parts: Vec<(usize, usize)> = Vec::with_capacity(messages.len());
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
                parts.push((key, shown.len()));
                shown.push_str(flat_piece);
                if !self.previous.contains(&key) {
                    fresh.push_str(flat_piece);
                    fresh.push(' ');
                }
            }
            current.insert(key);
        }
        let unique = current.len() == messages.len();
        let workdir = declared_working_directory(&text).map(str::to_owned);
        if workdir != self.workdir {
            self.workdir = workdir;
            for fact in &mut self.facts {
                fact.needles = needles(&fact.head, self.workdir.as_deref());
                fact.state = State::New;
            }
        }
        let longest = self
            .facts
            .iter()
            .filter(|fact| fact.state == State::Missing)
            .flat_map(|fact| fact.needles.iter().map(String::len))
            .max()
            .unwrap_or(0);
        let changed = (unique && self.unique)
            .then(|| changed_regions(&shown, &parts, &self.previous, &self.next, longest));
        let search = Search {
            messages,
            pieces: &self.pieces,
            current: &current,
            shown: &shown,
        };
        let new_hits = new_hits(&self.facts, &fresh, changed.as_deref());
        // Settled from what the last sample knew, or `None`: to be looked up in the request.
        let early: Vec<Option<(State, bool)>> = self
            .facts
            .iter()
            .zip(new_hits)
            .map(|(fact, new_hit)| search.settle_early(fact.state, new_hit))
            .collect();
        let looked_up = search.look_up(&self.facts, &early, &parts);
        let mut kept = 0;
        for ((fact, early), late) in self.facts.iter_mut().zip(early).zip(looked_up) {
            if let Some((state, held)) = early.or(late) {
                fact.state = state;
                kept += usize::from(held);
            }
        }
        self.expected += self.facts.len();
        self.kept += kept;
        self.pieces.retain(|key, _| current.contains(key));
        self.next = parts
            .windows(2)
            .filter_map(|pair| Some((pair.first()?.0, pair.get(1)?.0)))
            .collect();
        self.previous = current;
        self.unique = unique;
    }

    /// The share kept over the samples; `None` when no fact was expected.
    pub(crate) fn share(&self) -> Option<f64> {
        (self.expected > 0).then(|| self.kept as f64 / self.expected as f64)
    }
}

/// One sample's request, as [`Search::settle`] looks facts up in it.
struct Search<'a> {
    messages: &'a [Arc<Message>],
    pieces: &'a BTreeMap<usize, (Arc<Message>, String, String)>,
    current: &'a BTreeSet<usize>,
    shown: &'a str,
}

impl Search<'_> {
    /// A fact's state now and whether the request holds it, when its state at the last sample
    /// settles it: held by a message still in the request, or missing then and not in the
    /// text that could newly hold it (`new_hit`: see [`new_hits`]). `None`: look it up.
    fn settle_early(&self, state: State, new_hit: Option<bool>) -> Option<(State, bool)> {
        match state {
            State::Held(key) if self.current.contains(&key) => Some((state, true)),
            State::Missing if new_hit == Some(false) => Some((state, false)),
            _ => None,
        }
    }

    /// The state and whether the request holds it of each fact `early` did not settle, looked
    /// up in the whole request, all at once ([`first_occurrences`]). A needle without a space is
    /// in the text exactly when it is in one message's part (parts are joined by a space), so
    /// its first occurrence names its holder (`parts`: each message with a part and where the
    /// part starts in `shown`); one with a space may cross parts, so a message holding it whole
    /// is searched for, and without one it is held across parts.
    fn look_up(
        &self,
        facts: &[Fact],
        early: &[Option<(State, bool)>],
        parts: &[(usize, usize)],
    ) -> Vec<Option<(State, bool)>> {
        let mut asked: Vec<(usize, &str)> = Vec::new();
        for (index, (fact, early)) in facts.iter().zip(early).enumerate() {
            if early.is_none() {
                asked.extend(fact.needles.iter().map(|n| (index, n.as_str())));
            }
        }
        let needles: Vec<&str> = asked.iter().map(|&(_, needle)| needle).collect();
        // Each fact's first occurrence in the request (the earliest of its needles').
        let mut first: Vec<Option<usize>> = vec![None; facts.len()];
        for (&(index, _), found) in asked.iter().zip(first_occurrences(&needles, &[self.shown])) {
            if let (Some(slot), Some((_, at))) = (first.get_mut(index), found) {
                *slot = Some(slot.map_or(at, |before: usize| before.min(at)));
            }
        }
        facts
            .iter()
            .zip(early)
            .zip(first)
            .map(|((fact, early), first)| {
                if early.is_some() {
                    return None;
                }
                let Some(at) = first else {
                    return Some((State::Missing, false));
                };
                if !is_spaced(&fact.needles) {
                    let part = parts.partition_point(|&(_, start)| start <= at);
                    let holder = part.checked_sub(1).and_then(|p| parts.get(p));
                    return Some(match holder {
                        Some(&(key, _)) => (State::Held(key), true),
                        None => (State::Missing, false),
                    });
                }
                Some(match self.holder(&fact.needles) {
                    Some(key) => (State::Held(key), true),
                    None => (State::New, true),
                })
            })
            .collect()
    }

    /// The first message whose part holds one of `needles`.
    fn holder(&self, needles: &[String]) -> Option<usize> {
        self.messages.iter().find_map(|message| {
            let key = Arc::as_ptr(message) as usize;
            let (_, _, piece) = self.pieces.get(&key)?;
            needles
                .iter()
                .any(|needle| piece.contains(needle.as_str()))
                .then_some(key)
        })
    }
}

/// Whether a fact's needles may cross two messages' parts (a space, or nothing to find).
fn is_spaced(needles: &[String]) -> bool {
    needles.iter().any(|n| n.is_empty() || n.contains(' '))
}

/// For each fact missing from the last sample, whether the text that can newly hold it does:
/// `fresh` (the parts new since) for a needle without a space, the `changed` stretches for one
/// with (`None` for it when they are not known); `None` for every other fact. All the
/// needles are looked up in one pass over each text ([`occurring`]).
fn new_hits(facts: &[Fact], fresh: &str, changed: Option<&[&str]>) -> Vec<Option<bool>> {
    let mut plain: Vec<(usize, &str)> = Vec::new();
    let mut spaced: Vec<(usize, &str)> = Vec::new();
    for (index, fact) in facts.iter().enumerate() {
        if fact.state != State::Missing {
            continue;
        }
        let into = if is_spaced(&fact.needles) {
            if changed.is_none() {
                continue;
            }
            &mut spaced
        } else {
            &mut plain
        };
        into.extend(fact.needles.iter().map(|needle| (index, needle.as_str())));
    }
    let mut hits = vec![None; facts.len()];
    for (needles, texts) in [
        (plain, vec![fresh]),
        (spaced, changed.unwrap_or_default().to_vec()),
    ] {
        let strings: Vec<&str> = needles.iter().map(|&(_, needle)| needle).collect();
        for (&(index, _), found) in needles.iter().zip(occurring(&strings, &texts)) {
            if let Some(hit) = hits.get_mut(index) {
                *hit = Some(hit.unwrap_or(false) || found);
            }
        }
    }
    hits
}

/// The stretches of `shown` (whose non-empty parts are `parts`: each message and where its part
/// starts) an occurrence of a needle up to `longest` bytes must overlap if the last sample's
/// text (its messages `previous`, each followed by `next`'s) did not hold it: around each part
/// new since, and around each join of two parts that did not follow each other. Any other
/// stretch is a run of parts that followed each other in the last text too.
fn changed_regions<'s>(
    shown: &'s str,
    parts: &[(usize, usize)],
    previous: &BTreeSet<usize>,
    next: &BTreeMap<usize, usize>,
    longest: usize,
) -> Vec<&'s str> {
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let mut add = |from: usize, to: usize| {
        let from = from.saturating_sub(longest);
        let to = to.saturating_add(longest).min(shown.len());
        match spans.last_mut() {
            Some(last) if from <= last.1 => last.1 = last.1.max(to),
            _ => spans.push((from, to)),
        }
    };
    for (index, &(key, start)) in parts.iter().enumerate() {
        let end = parts.get(index + 1).map_or(shown.len(), |&(_, s)| s);
        if !previous.contains(&key) {
            add(start, end);
        } else if let Some(&(before, _)) = index.checked_sub(1).and_then(|i| parts.get(i)) {
            if next.get(&before) != Some(&key) {
                add(start.saturating_sub(1), start);
            }
        }
    }
    spans
        .into_iter()
        .filter_map(|(mut from, mut to)| {
            while !shown.is_char_boundary(from) {
                from -= 1;
            }
            while !shown.is_char_boundary(to) {
                to += 1;
            }
            shown.get(from..to)
        })
        .collect()
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

/// The text a recall search reads of `messages`: each one's text, its calls' arguments as
/// written and their JSON strings decoded.
pub fn request_text(messages: &[Arc<Message>]) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;
    use ctxkit_core::ToolCall;

    fn log() -> Vec<Arc<Message>> {
        let mut out = vec![Arc::new(Message::user(
            "Fix the parser in `src/a.rs` please",
        ))];
        for turn in 0..60 {
            let id = format!("c{turn}");
            out.push(Arc::new(Message::assistant(
                "",
                vec![ToolCall::new(
                    &id,
                    "read",
                    format!(r#"{{"file_path":"src/m{}.rs"}}"#, turn % 7),
                )],
            )));
            out.push(Arc::new(Message::tool_result(
                &id,
                format!("error: bad token at src/m{}.rs line {turn}", turn % 7),
                turn % 5 == 0,
            )));
            if turn % 9 == 4 {
                out.push(Arc::new(Message::user(format!(
                    "Now check the lexer too, step {turn}"
                ))));
            }
        }
        out
    }

    /// Counts of one sample taken from scratch: every fact searched in the whole request.
    fn from_scratch(log: &[Arc<Message>], view: &[Arc<Message>]) -> (usize, usize) {
        let mut recall = Recall::default();
        recall.read(log);
        recall.sample(view);
        (recall.expected, recall.kept)
    }

    #[test]
    fn samples_count_what_a_search_of_the_whole_request_counts() {
        let log = log();
        let mut recall = Recall::default();
        // Growing views, windows that slide, a view that drops its middle, one that repeats a
        // message, and a rewritten message in place: each sample as if taken from scratch.
        let mut views: Vec<(usize, Vec<Arc<Message>>)> = Vec::new();
        for end in (10..log.len()).step_by(7) {
            views.push((end, log[..end].to_vec()));
            views.push((end, log[end.saturating_sub(12)..end].to_vec()));
            let mut gapped = log[..3].to_vec();
            gapped.extend_from_slice(&log[end - 4..end]);
            views.push((end, gapped));
            let mut twice = log[end - 5..end].to_vec();
            twice.push(log[end - 5].clone());
            views.push((end, twice));
            let mut rewritten = log[end - 6..end].to_vec();
            rewritten[2] = Arc::new(Message::user("Now check the lexer too, step 13"));
            views.push((end, rewritten));
        }
        for (end, view) in views {
            let before = (recall.expected, recall.kept);
            recall.read(&log[..end]);
            recall.sample(&view);
            let counted = (recall.expected - before.0, recall.kept - before.1);
            assert_eq!(counted, from_scratch(&log[..end], &view), "view of {end}");
            assert!(counted.1 > 0 && counted.1 <= counted.0);
        }
    }
}
