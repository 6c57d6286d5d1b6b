//! What each proxy session holds of the agent's wire messages, so a request is matched with
//! work proportional to its new messages, not to the history it re-sends.
//!
//! An agent re-sends its whole conversation on every call; one Anthropic wire message may be
//! several model messages (a user message of tool results and text), so what a session holds
//! is counted in wire messages: per session, their count and the fingerprints of the first and
//! the last ([`HeldEnds`]). A request then continues a session when the core's rule
//! ([`held_prefix_by`]: the count, the first message and the last held one) says it holds that
//! session's wire messages; only those two messages and the new ones are read
//! ([`WireMessages`] reads each raw message at most once, and counts what it read).
//!
//! A wire message's fingerprint is that of what it says once read (the model messages'
//! meanings chained: role, text, tool calls and results), taken with its `cache_control` marks
//! off and without thinking, so the same message re-sent with its marks moved, or the answer
//! the upstream gave re-sent by the agent, is recognised.
//!
//! Guarantees: [`WireEnds`] is only a shortcut in memory; when it finds nothing (a new
//! conversation, a fork, or any session after a restart) the caller reads the whole request
//! and asks the rule over every message ([`super::conversation`]), which the store backs, and
//! the session's ends are then learnt. A session's ends are updated only after what they name
//! was stored.

use std::collections::HashMap;

use super::body::RawList;
use super::conversation::wire_fingerprint;
use ctxkit_core::turn::{held_prefix_by, HeldEnds, HeldPrefix};
use ctxkit_core::Message;

/// How one raw wire message of a request's API is read into model messages (its index in the
/// conversation given, for the error to name it): [`super::sessions::AgentTurn::read`].
pub type ReadWire<'a> = &'a dyn Fn(&str, usize) -> Result<Vec<Message>, String>;

/// Per session, its key and the ends of the wire messages it holds.
#[derive(Debug, Default)]
pub struct WireEnds {
    sessions: HashMap<String, (String, HeldEnds)>,
    /// First wire message's fingerprint → the sessions opening with it.
    by_first: HashMap<u64, Vec<String>>,
}

impl WireEnds {
    /// Sets what `session` (under `key`) holds.
    pub fn set(&mut self, session: &str, key: &str, ends: HeldEnds) {
        let old = self
            .sessions
            .insert(session.to_owned(), (key.to_owned(), ends));
        if let Some(first) = old.and_then(|(_, old)| old.first) {
            if let Some(holders) = self.by_first.get_mut(&first) {
                holders.retain(|holder| holder != session);
            }
        }
        if let Some(first) = ends.first {
            self.by_first
                .entry(first)
                .or_default()
                .push(session.to_owned());
        }
    }

    /// Adds one wire message of fingerprint `fingerprint` to the end of `session`, if its ends
    /// are known (else the next request finds it by the full path).
    pub fn push(&mut self, session: &str, fingerprint: u64) {
        if let Some((_, ends)) = self.sessions.get_mut(session) {
            ends.count = ends.count.saturating_add(1);
            ends.first = ends.first.or(Some(fingerprint));
            ends.last = Some(fingerprint);
        }
    }

    /// The session of `key` whose wire messages `request` begins with (the one holding the
    /// most, when several do), and how many it holds; `None` when no known session does.
    pub fn find(
        &self,
        key: &str,
        request: &mut WireMessages<'_>,
    ) -> Result<Option<(String, usize)>, String> {
        let first = request.fingerprint(0)?;
        let mut best: Option<(String, usize)> = None;
        for session in self.by_first.get(&first).into_iter().flatten() {
            let Some((session_key, ends)) = self.sessions.get(session) else {
                continue;
            };
            if session_key != key {
                continue;
            }
            let mut failed = None;
            let found = held_prefix_by(ends, request.len(), |at| {
                request
                    .fingerprint(at)
                    .map_err(|problem| failed = Some(problem))
                    .ok()
            });
            if let Some(problem) = failed {
                return Err(problem);
            }
            if let HeldPrefix::Held { held } = found {
                if best.as_ref().is_none_or(|(_, most)| held > *most) {
                    best = Some((session.clone(), held));
                }
            }
        }
        Ok(best)
    }
}

/// A request's raw wire messages, each read (parsed, its marks off, converted to model
/// messages, fingerprinted) only when asked, and at most once.
pub struct WireMessages<'a> {
    raw: &'a RawList,
    reader: ReadWire<'a>,
    read: HashMap<usize, (Vec<Message>, u64)>,
}

impl std::fmt::Debug for WireMessages<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WireMessages")
            .field("len", &self.raw.len())
            .field("read", &self.read.len())
            .finish_non_exhaustive()
    }
}

impl<'a> WireMessages<'a> {
    /// Over `raw`, read with `reader`, nothing read yet.
    pub fn new(raw: &'a RawList, reader: ReadWire<'a>) -> Self {
        WireMessages {
            raw,
            reader,
            read: HashMap::new(),
        }
    }

    /// How many wire messages the request holds.
    pub fn len(&self) -> usize {
        self.raw.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.raw.is_empty()
    }

    /// How many wire messages were read so far (the work done on this request).
    pub fn read_count(&self) -> usize {
        self.read.len()
    }

    /// The wire message at `at`, read: its model messages and its fingerprint.
    pub fn read(&mut self, at: usize) -> Result<&(Vec<Message>, u64), String> {
        if !self.read.contains_key(&at) {
            let raw = self
                .raw
                .get(at)
                .ok_or_else(|| format!("messages[{at}]: no such message"))?;
            let messages = (self.reader)(raw, at)?;
            let fingerprint = wire_fingerprint(&messages);
            self.read.insert(at, (messages, fingerprint));
        }
        self.read
            .get(&at)
            .ok_or_else(|| format!("messages[{at}]: not read"))
    }

    /// The fingerprint of the wire message at `at`.
    pub fn fingerprint(&mut self, at: usize) -> Result<u64, String> {
        self.read(at).map(|(_, fingerprint)| *fingerprint)
    }

    /// The model messages of the wire messages from `from` on, in order.
    pub fn read_from(&mut self, from: usize) -> Result<Vec<Message>, String> {
        let mut messages = Vec::new();
        for at in from..self.raw.len() {
            let (read, _) = self.read(at)?;
            messages.extend(read.iter().cloned());
        }
        Ok(messages)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proxy::anthropic::read_wire_message;

    fn raw(messages: &[&str]) -> RawList {
        RawList::of(messages.iter().copied())
    }

    const TASK: &str = r#"{"role":"user","content":"fix the bug"}"#;
    const ANSWER: &str = r#"{"role":"assistant","content":[{"type":"text","text":"done"}]}"#;
    const ANSWER_MARKED: &str = r#"{"role":"assistant","content":[{"type":"text","text":"done","cache_control":{"type":"ephemeral"}}]}"#;
    const THANKS: &str = r#"{"role":"user","content":"thanks"}"#;

    fn ends_of(messages: &[&str]) -> HeldEnds {
        let raw = raw(messages);
        let mut wire = WireMessages::new(&raw, &read_wire_message);
        HeldEnds {
            count: raw.len() as u64,
            first: Some(wire.fingerprint(0).unwrap()),
            last: Some(wire.fingerprint(raw.len() - 1).unwrap()),
        }
    }

    #[test]
    fn a_held_message_re_sent_with_its_cache_mark_moved_is_still_held() {
        let mut ends = WireEnds::default();
        ends.set("a", "", ends_of(&[TASK, ANSWER]));
        let request = raw(&[TASK, ANSWER_MARKED, THANKS]);
        let mut wire = WireMessages::new(&request, &read_wire_message);
        assert_eq!(ends.find("", &mut wire).unwrap(), Some(("a".into(), 2)));
        assert_eq!(
            wire.read_count(),
            2,
            "only the first and the last held are read"
        );
        let edited = raw(&[TASK, r#"{"role":"assistant","content":"other"}"#, THANKS]);
        assert_eq!(
            ends.find("", &mut WireMessages::new(&edited, &read_wire_message))
                .unwrap(),
            None
        );
        let request = raw(&[TASK, ANSWER, THANKS]);
        assert_eq!(
            ends.find(
                "other-key",
                &mut WireMessages::new(&request, &read_wire_message)
            )
            .unwrap(),
            None
        );
    }

    #[test]
    fn the_session_holding_the_most_is_continued_and_a_push_moves_its_end() {
        let mut ends = WireEnds::default();
        ends.set("short", "", ends_of(&[TASK]));
        ends.set("long", "", ends_of(&[TASK, ANSWER]));
        let request = raw(&[TASK, ANSWER, THANKS]);
        let found = ends
            .find("", &mut WireMessages::new(&request, &read_wire_message))
            .unwrap();
        assert_eq!(found, Some(("long".into(), 2)));
        let thanks = WireMessages::new(&raw(&[THANKS]), &read_wire_message)
            .fingerprint(0)
            .unwrap();
        ends.push("long", thanks);
        let found = ends
            .find("", &mut WireMessages::new(&request, &read_wire_message))
            .unwrap();
        assert_eq!(found, Some(("long".into(), 3)));
    }
}
