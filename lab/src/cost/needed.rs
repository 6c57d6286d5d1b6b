//! A cost report's needed-next recall: at a call, what the agent's answer went on to use that
//! the request could only have given it from what stands in for the dropped log.
//!
//! Defined the same way for every strategy, so the rows compare. At a sampled call, take the
//! facts (a file path, a code identifier: [`call_facts`], the needed-next measure's extractor)
//! in the arguments of the tool calls of the agent's answer to that call. A fact is *needed*
//! when the transcript held it earlier (in a message before the answer: [`entry_facts`]) but
//! the request carries none of the messages that held it verbatim: each was dropped,
//! summarized, masked, cleared, cut, or stored as an offload reference. The figure is the
//! share of the needed facts the request still holds anywhere in its text (a summary, a
//! restore block, a reference's preview, a message that quotes it), by the needed-next rule
//! (`needed_next::holds`: verbatim, or a path in its absolute form or relative to a working
//! directory the text states). A strategy that sends the whole log needs nothing: its figure
//! is `None` ("–").
//!
//! The request's text is read as data: a log message that quotes ctxkit's summary header is a
//! message like any other (held while it is sent verbatim, dropped like the rest).
//!
//! Linear in the log: each transcript message's facts are read once for every strategy of a
//! report ([`TranscriptFacts`]), each fact named by a number; the view is tracked by
//! what each call changes (the biller counts each message in it); a call whose answer needs
//! nothing costs its answer's facts and one look-up per holder, newest first; only a call with
//! needed facts searches the request, each message's text rendered once while it stays in the
//! view, and calls are sampled ([`needed_stride`]) so that at most [`NEEDED_SAMPLES`] are.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::recall::request_text;
use crate::needed_next::{call_facts, entry_facts, holds, NeededKind};
use ctxkit_core::model::Message;

/// The most calls a report measures needed-next recall at; a longer session is measured at
/// this many evenly spaced calls ([`needed_stride`]).
pub const NEEDED_SAMPLES: usize = 2_000;

/// Every how many calls needed-next recall is measured in a session of `calls` calls: every
/// call, or evenly spaced so that at most [`NEEDED_SAMPLES`] are.
///
/// ```
/// use ctxkit_lab::cost::needed_stride;
/// assert_eq!(needed_stride(150), 1);
/// assert_eq!(needed_stride(2_000), 1);
/// assert_eq!(needed_stride(2_001), 2);
/// ```
pub fn needed_stride(calls: usize) -> usize {
    calls.div_ceil(NEEDED_SAMPLES).max(1)
}

type Fact = (NeededKind, String);

/// The needed-next facts of a transcript, read once for every strategy a report replays: each
/// distinct fact numbered, each message's facts and its calls' facts as those numbers.
pub(crate) struct TranscriptFacts {
    /// The session's working directory (paths under it are facts relative to it).
    workdir: Option<String>,
    /// Each fact, by its number.
    table: Vec<Fact>,
    /// The facts each message holds ([`entry_facts`]).
    held: Vec<Vec<usize>>,
    /// The distinct facts of each message's tool calls ([`call_facts`]), in call order.
    called: Vec<Vec<usize>>,
}

impl TranscriptFacts {
    /// The facts of `transcript`, whose working directory is `workdir`.
    pub(crate) fn new(transcript: &[Message], workdir: Option<String>) -> Self {
        let mut numbers: BTreeMap<Fact, usize> = BTreeMap::new();
        let mut table = Vec::new();
        let mut number = |fact: Fact| {
            *numbers.entry(fact).or_insert_with_key(|fact| {
                table.push(fact.clone());
                table.len() - 1
            })
        };
        let (mut held, mut called) = (Vec::new(), Vec::new());
        for message in transcript {
            let facts = entry_facts(message, workdir.as_deref());
            held.push(facts.into_iter().map(&mut number).collect());
            let mut calls: Vec<usize> = Vec::new();
            for call in &message.tool_calls {
                for fact in call_facts(&call.arguments, workdir.as_deref()) {
                    let id = number(fact);
                    if !calls.contains(&id) {
                        calls.push(id);
                    }
                }
            }
            called.push(calls);
        }
        TranscriptFacts {
            workdir,
            table,
            held,
            called,
        }
    }
}

/// The facts of the transcript read so far, the view as the calls changed it, and the counts.
pub(crate) struct NeededRecall<'f> {
    facts: &'f TranscriptFacts,
    /// For each fact (by number), the indices of the messages read so far that hold it.
    holders: Vec<Vec<usize>>,
    /// For each message read: whether the strategy stored it as the transcript has it.
    same: Vec<bool>,
    /// The text of view messages a search read, by address (forgotten once they outnumber the
    /// view, keeping those still in it).
    pieces: BTreeMap<usize, (Arc<Message>, String)>,
    needed: usize,
    held: usize,
}

impl<'f> NeededRecall<'f> {
    /// A measure over the transcript whose facts are `facts`.
    pub(crate) fn new(facts: &'f TranscriptFacts) -> Self {
        NeededRecall {
            facts,
            holders: vec![Vec::new(); facts.table.len()],
            same: Vec::new(),
            pieces: BTreeMap::new(),
            needed: 0,
            held: 0,
        }
    }

    /// Reads the transcript's messages up to `upto` (those before the call's answer) past
    /// those already read; `stored`: the log as the strategy stored it, one per message.
    pub(crate) fn read(&mut self, transcript: &[Message], stored: &[Arc<Message>], upto: usize) {
        let from = self.same.len();
        for index in from..upto {
            let (Some(message), Some(kept)) = (transcript.get(index), stored.get(index)) else {
                break;
            };
            for &id in self
                .facts
                .held
                .get(index)
                .map(Vec::as_slice)
                .unwrap_or_default()
            {
                if let Some(holders) = self.holders.get_mut(id) {
                    holders.push(index);
                }
            }
            self.same.push(**kept == *message);
        }
    }

    /// Counts the facts the tool calls of the transcript's message `answer` (the answer to
    /// the call) need and those the request of `view` holds; `stored`: the log as the strategy
    /// stored it (the messages read are its first ones); `in_view`: whether a message (by
    /// address) is in the view, which the caller keeps as the calls change it.
    pub(crate) fn sample(
        &mut self,
        answer: usize,
        view: &[Arc<Message>],
        stored: &[Arc<Message>],
        in_view: &dyn Fn(&Arc<Message>) -> bool,
    ) {
        if self.pieces.len() > 2 * view.len() + 1_024 {
            self.pieces.retain(|_, (message, _)| in_view(message));
        }
        let needed = self.needed_facts(answer, stored, in_view);
        if needed.is_empty() {
            return;
        }
        let workdir = self.facts.workdir.as_deref();
        let count = needed.len();
        let mut open: Vec<&Fact> = needed;
        for message in view {
            if open.is_empty() {
                break;
            }
            let (_, text) = self
                .pieces
                .entry(address(message))
                .or_insert_with(|| (message.clone(), request_text(std::slice::from_ref(message))));
            open.retain(|fact| !holds(text, fact, workdir));
        }
        self.needed += count;
        self.held += count - open.len();
    }

    /// The distinct facts of the calls of message `answer` that a message read earlier held
    /// and that no message the view carries verbatim holds.
    fn needed_facts(
        &self,
        answer: usize,
        stored: &[Arc<Message>],
        in_view: &dyn Fn(&Arc<Message>) -> bool,
    ) -> Vec<&'f Fact> {
        let facts = self.facts;
        let called = facts
            .called
            .get(answer)
            .map(Vec::as_slice)
            .unwrap_or_default();
        called
            .iter()
            .filter(|&&id| {
                let holders = self.holders.get(id).map(Vec::as_slice).unwrap_or_default();
                !holders.is_empty()
                    && !holders.iter().rev().any(|&index| {
                        self.same.get(index).copied().unwrap_or(false)
                            && stored.get(index).is_some_and(in_view)
                    })
            })
            .filter_map(|&id| facts.table.get(id))
            .collect()
    }

    /// The share of the needed facts the requests held, with the counts; `None` when no call
    /// needed one.
    pub(crate) fn figure(&self) -> (Option<f64>, usize, usize) {
        let share = (self.needed > 0).then(|| self.held as f64 / self.needed as f64);
        (share, self.held, self.needed)
    }
}

fn address(message: &Arc<Message>) -> usize {
    Arc::as_ptr(message) as usize
}

#[cfg(test)]
#[path = "needed_tests.rs"]
mod tests;
