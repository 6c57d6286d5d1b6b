//! Which stored conversation a request continues, found by content (no state from the agent
//! is needed): the pure rule the proxy asks before every forwarded request.
//!
//! Every message the agent sends is reduced to a fingerprint of what it means (its role, its
//! text, its tool calls and results; not the placement of `cache_control` marks, which an
//! agent moves every turn, nor thinking text), and fingerprints are chained, so the chain
//! value at position `i` stands for the whole sequence up to `i`. A session held by the proxy
//! keeps the chain of its log. A request is then:
//! - **Continue**: its longest held prefix is a whole session's log (the session's tip); the
//!   messages after it are new and are appended there. A request that re-sends exactly what is
//!   held (a retry) continues with nothing new.
//! - **Start** (a fork): its longest held prefix ends inside a session (an edit, a rewind, a retry after
//!   the answer was kept): the request becomes a session of its own, so the two histories
//!   never mix.
//! - **Start**: nothing is held (a new conversation, a sub-agent with its own first message,
//!   the agent's own compaction starting over with a summary).
//!
//! An explicit key (the `x-ctxkit-conversation` header) confines the search to that key's
//! sessions. The work per request is one chain step per message of the request (a hash) and
//! one lookup per message from the end back to the longest held prefix: it grows with the
//! history, so it is the full path, asked only when the core's rule over the wire messages a
//! session is known to hold ([`super::held`]) finds none (a new conversation, a fork, a
//! session's first request after a restart). [`wire_fingerprint`] is what that rule compares.

use std::collections::HashMap;

use ctxkit_core::text::fingerprint;
use ctxkit_core::{Content, Message, Part, Provider};

/// What a request is, against the held sessions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// Append the request's messages from `held` on to `session`.
    Continue {
        /// The session continued.
        session: String,
        /// How many of the request's messages it already holds.
        held: usize,
    },
    /// A new session with all the request's messages.
    Start,
}

/// The held sessions' chains, and where each chain value occurs.
#[derive(Debug, Default)]
pub struct Index {
    /// Each session's key and chain (one value per logged message).
    sessions: HashMap<String, (String, Vec<u64>)>,
    /// Chain value → the sessions and positions (1-based length) holding it.
    positions: HashMap<u64, Vec<(String, usize)>>,
}

impl Index {
    /// Adds `messages` to the end of `session` (made, under `key`, if new).
    pub fn extend(&mut self, session: &str, key: &str, messages: &[Message]) {
        let (_, chain) = self
            .sessions
            .entry(session.to_owned())
            .or_insert_with(|| (key.to_owned(), Vec::new()));
        let mut last = chain.last().copied().unwrap_or(0);
        for message in messages {
            last = chain_step(last, message);
            chain.push(last);
            self.positions
                .entry(last)
                .or_default()
                .push((session.to_owned(), chain.len()));
        }
    }

    /// How many sessions are held.
    pub fn len(&self) -> usize {
        self.sessions.len()
    }

    /// Whether no session is held.
    pub fn is_empty(&self) -> bool {
        self.sessions.is_empty()
    }

    fn tip(&self, session: &str) -> Option<(&str, usize)> {
        self.sessions
            .get(session)
            .map(|(key, chain)| (key.as_str(), chain.len()))
    }
}

/// The chain values of `messages` (see the module doc).
pub fn chain(messages: &[Message]) -> Vec<u64> {
    let mut last = 0;
    messages
        .iter()
        .map(|message| {
            last = chain_step(last, message);
            last
        })
        .collect()
}

/// The fingerprint of one wire message, from the model messages it was read into: their
/// chain values (see the module doc) from the start, the last of them.
pub fn wire_fingerprint(messages: &[Message]) -> u64 {
    messages.iter().fold(0, chain_step)
}

/// What the request with chain values `request` is under `key` (see the module doc).
pub fn find(index: &Index, key: &str, request: &[u64]) -> Found {
    // From the longest prefix down: the first length some session of this key holds.
    for held in (1..=request.len()).rev() {
        let Some(value) = request.get(held - 1) else {
            continue;
        };
        let Some(holders) = index.positions.get(value) else {
            continue;
        };
        let mut of_key = holders
            .iter()
            .filter(|(session, _)| index.tip(session).is_some_and(|(k, _)| k == key))
            .peekable();
        if of_key.peek().is_none() {
            continue;
        }
        // A session whose whole log this prefix is continues; else the request forks.
        let continued = of_key.find(|(session, position)| {
            *position == held && index.tip(session).is_some_and(|(_, len)| len == held)
        });
        return match continued {
            Some((session, _)) => Found::Continue {
                session: session.clone(),
                held,
            },
            None => Found::Start,
        };
    }
    Found::Start
}

/// The chain value after `previous` for `message`.
fn chain_step(previous: u64, message: &Message) -> u64 {
    fingerprint(&format!("{previous:016x}\u{0}{}", meaning(message)))
}

/// What a message says, as one string: its role, text, tool calls and result, and the blocks
/// ctxkit does not model; without thinking (Anthropic's, or a Responses `reasoning` item: an
/// agent may drop it or its ids when re-sending) and with
/// consecutive text parts read as one text (a string and one text block are the same).
fn meaning(message: &Message) -> String {
    let mut out = format!("{:?}\u{0}", message.role);
    match &message.content {
        Content::Text(text) => out.push_str(text),
        Content::Parts(parts) => {
            for part in parts {
                match part {
                    Part::Text { text } => out.push_str(text),
                    Part::Thinking { .. } => {}
                    // A Responses `reasoning` item is the model's thinking too: its `id` and
                    // `status` are in the response and not in what an agent re-sends (Codex
                    // drops them), so its form would not match.
                    Part::Opaque {
                        provider: Provider::Responses,
                        block,
                    } if block.get("type").and_then(|kind| kind.as_str()) == Some("reasoning") => {}
                    other => {
                        out.push('\u{1}');
                        out.push_str(&serde_json::to_string(other).unwrap_or_default());
                    }
                }
            }
        }
    }
    for call in &message.tool_calls {
        let arguments = serde_json::from_str::<serde_json::Value>(&call.arguments)
            .map_or_else(|_| call.arguments.clone(), |value| value.to_string());
        out.push_str(&format!(
            "\u{2}{}\u{0}{}\u{0}{arguments}",
            call.id, call.name
        ));
    }
    if let Some(id) = &message.tool_call_id {
        out.push_str(&format!("\u{3}{id}\u{0}{}", message.is_error));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index_of(sessions: &[(&str, &[Message])]) -> Index {
        let mut index = Index::default();
        for (name, messages) in sessions {
            index.extend(name, "", messages);
        }
        index
    }

    #[test]
    fn a_growing_history_continues_its_session_from_the_new_messages() {
        let held = [
            Message::user("fix the bug"),
            Message::assistant("done", vec![]),
        ];
        let index = index_of(&[("a", &held)]);
        let mut request = held.to_vec();
        request.push(Message::user("thanks"));
        let found = find(&index, "", &chain(&request));
        let expected = Found::Continue {
            session: "a".into(),
            held: 2,
        };
        assert_eq!(found, expected);
    }

    #[test]
    fn an_edit_a_new_first_message_or_another_key_never_continues() {
        let held = [
            Message::user("fix the bug"),
            Message::assistant("done", vec![]),
        ];
        let index = index_of(&[("a", &held)]);
        let edited = [
            Message::user("fix the bug"),
            Message::assistant("other", vec![]),
        ];
        assert_eq!(find(&index, "", &chain(&edited)), Found::Start);
        let rewound = [Message::user("fix the bug")];
        assert_eq!(find(&index, "", &chain(&rewound)), Found::Start);
        let summary = [
            Message::user("Summary of the earlier work"),
            held[1].clone(),
        ];
        assert_eq!(find(&index, "", &chain(&summary)), Found::Start);
        assert_eq!(find(&index, "other-key", &chain(&held)), Found::Start);
    }

    #[test]
    fn a_string_and_one_text_block_and_thinking_mean_the_same() {
        let plain = Message::user("hello");
        let block = Message {
            content: Content::Parts(vec![
                Part::Thinking {
                    thinking: "hm".into(),
                    signature: "sig".into(),
                },
                Part::Text {
                    text: "hello".into(),
                },
            ]),
            ..Message::user("")
        };
        assert_eq!(chain(&[plain]), chain(&[block]));
    }

    #[test]
    fn a_reasoning_item_re_sent_without_its_id_means_the_same() {
        let read = |items: serde_json::Value| ctxkit_core::wire::from_responses(&items).unwrap();
        let given = read(serde_json::json!([
            {"id": "rs_1", "type": "reasoning", "summary": [], "encrypted_content": "e"},
            {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
             "content": [{"type": "output_text", "text": "done", "annotations": []}]}
        ]));
        let re_sent = read(serde_json::json!([
            {"type": "reasoning", "summary": [], "content": null, "encrypted_content": "e"},
            {"type": "message", "role": "assistant",
             "content": [{"type": "output_text", "text": "done"}]}
        ]));
        assert_ne!(given, re_sent);
        assert_eq!(chain(&given), chain(&re_sent));
        let other = read(serde_json::json!([{"type": "message", "role": "assistant",
                                               "content": "other"}]));
        assert_ne!(chain(&given), chain(&other));
    }
}
