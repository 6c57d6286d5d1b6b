//! The proxy's conversations over the engine: each agent request matched to a stored session
//! ([`super::held`] for the sessions whose wire messages it knows, reading only the new
//! messages and two held ones; else [`super::conversation`] over every message), its new
//! messages recorded, and the view prepared; each answer recorded after it.
//!
//! Guarantees: a request's new messages are recorded in one transaction, or none are (the
//! engine's `record_batch`), and the index learns them only once stored, so the index never
//! holds what the store does not. The proxy's sessions are named `proxy_<n>`, or
//! `proxy_<key>_<n>` under an explicit key; at open, the index is rebuilt from those sessions'
//! logs, so a restarted proxy continues the conversations it held. Nothing here sees a header
//! or a credential.

use std::sync::Arc;

use ctxkit_core::compaction::Budget;
use ctxkit_core::tokens::ModelFamily;
use ctxkit_core::turn::HeldEnds;
use ctxkit_core::{Content, Message, Role};
use serde_json::Value;

use super::body::RawList;
use super::conversation::{chain, find, wire_fingerprint, Found, Index};
use super::held::{WireEnds, WireMessages};
use super::idle::{LastRequest, Quiet};
use super::offload::as_sent;
use super::summarizer::SummaryShape;
use crate::engine::{Engine, EngineConfig, IdleOutcome, TurnResult};
use crate::error::Result;
use crate::llm::Llm;

/// One agent request as the conversations need it, whatever its API (Anthropic Messages,
/// Chat Completions): its conversation's raw wire messages and how to read one, what the
/// budget counts beside them, and how ctxkit's view is written in its format.
pub trait AgentTurn {
    /// The request's method and path (`POST /v1/messages`), which errors name.
    fn endpoint(&self) -> &'static str;
    /// The conversation's wire messages (the system prompt left out), each as sent.
    fn wire(&self) -> &RawList;
    /// The wire message at `index` of [`AgentTurn::wire`], read into the core's model; the
    /// error names it as the agent numbered it.
    fn read(&self, raw: &str, index: usize) -> std::result::Result<Vec<Message>, String>;
    /// The agent's system prompt as text, for the budget.
    fn system_text(&self) -> &str;
    /// What the agent's tool definitions cost, by the estimate.
    fn tool_tokens(&self) -> u64;
    /// ctxkit's view, prepared for this request, as the API's `messages` array.
    fn view(&self, turn: &TurnResult) -> Result<Value>;
    /// What a cache-safe summary request through the upstream keeps of this request (its
    /// fields and system items, not its history: see [`super::summarizer`]).
    fn summary_shape(&self) -> SummaryShape;
}

/// `messages` after the view's leading system message when that message is the agent's own
/// system prompt (`system_text`), which the request carries in its own place (Chat
/// Completions' system messages, Responses' `instructions` and system items): the view the
/// APIs' `messages`/`input` get is what follows it.
pub(crate) fn after_agent_system<'a>(messages: &'a [Message], system_text: &str) -> &'a [Message] {
    let skip = match messages.first() {
        Some(first) if first.role == Role::System => {
            usize::from(matches!(&first.content, Content::Text(text) if *text == system_text))
        }
        _ => 0,
    };
    messages.get(skip..).unwrap_or_default()
}

/// The prefix of every session the proxy makes.
const PREFIX: &str = "proxy_";

/// The most characters of an explicit conversation key.
pub const MAX_KEY_CHARS: usize = 64;

/// What a request was admitted as.
#[derive(Debug)]
pub struct Admitted {
    /// The session it continues or started.
    pub session: String,
    /// How many of its messages were new (recorded now).
    pub new_messages: usize,
    /// ctxkit's view as the request's API's `messages` array.
    pub view: Value,
    /// The view's estimated tokens (the agent's system prompt and tools included).
    pub view_tokens: u64,
    /// How many of the request's wire messages were read (parsed and converted) to admit it:
    /// the new ones and two held ones (the first and the last held) when it continues a
    /// session the proxy knows the ends of, every one otherwise.
    pub wire_read: usize,
}

/// The engine and the index of the proxy's sessions.
#[derive(Debug)]
pub struct Conversations {
    engine: Engine,
    /// The chain of every held session's log: the full path, backed by the store.
    index: Index,
    /// The wire messages each session is known to hold: the shortcut (see [`super::held`]).
    wire: WireEnds,
    /// The number the next session's name gets.
    next: u64,
    /// The conversations the idle timer may compact (see [`super::idle`]).
    quiet: Quiet,
}

impl Conversations {
    /// Opens over `engine`, rebuilding the index from the stored proxy sessions.
    pub fn open(engine: Engine) -> Result<Conversations> {
        let mut index = Index::default();
        let mut next = 1;
        for info in engine.list_sessions()? {
            let Some((key, number)) = parse_name(&info.name) else {
                continue;
            };
            // As the agent sent them: an offloaded output's fingerprint is its full text's.
            let messages = as_sent(&engine, &info.name)?;
            index.extend(&info.name, key, &messages);
            next = next.max(number.saturating_add(1));
        }
        Ok(Conversations {
            engine,
            index,
            wire: WireEnds::default(),
            next,
            quiet: Quiet::default(),
        })
    }

    /// Matches `request` under `key` (the explicit key, or ""), records what is new and
    /// prepares the view.
    pub fn admit(&mut self, key: &str, request: &dyn AgentTurn) -> Result<Admitted> {
        let read = |raw: &str, index: usize| request.read(raw, index);
        let mut wire = WireMessages::new(request.wire(), &read);
        let unreadable = |problem: String| crate::Error::invalid(request.endpoint(), problem);
        let (session, new) = self.matched(key, &mut wire).map_err(unreadable)?;
        // Both read already (the first to match, the last as held or new): no more work.
        let ends = HeldEnds {
            count: wire.len() as u64,
            first: Some(wire.fingerprint(0).map_err(unreadable)?),
            last: Some(
                wire.fingerprint(wire.len().saturating_sub(1))
                    .map_err(unreadable)?,
            ),
        };
        if !new.is_empty() {
            self.engine.record_batch(&session, new.clone(), true)?;
            self.index.extend(&session, key, &new);
        }
        // Learnt once stored: the session's log is now the request's messages.
        self.wire.set(&session, key, ends);
        let turn = self.engine.prepare_agent_turn(
            &session,
            request.system_text(),
            request.tool_tokens(),
        )?;
        let view = request.view(&turn)?;
        Ok(Admitted {
            session,
            new_messages: new.len(),
            view,
            view_tokens: turn
                .stats
                .total_tokens
                .saturating_add(request.tool_tokens()),
            wire_read: wire.read_count(),
        })
    }

    /// The session `wire` continues or starts, and its new messages in the core's model. A
    /// session whose wire ends are known is found reading two held messages; else (a new
    /// conversation, a fork, a session held before a restart) every message is read and
    /// the chain over the stored logs decides.
    fn matched(
        &mut self,
        key: &str,
        wire: &mut WireMessages<'_>,
    ) -> std::result::Result<(String, Vec<Message>), String> {
        if let Some((session, held)) = self.wire.find(key, wire)? {
            let new = wire.read_from(held)?;
            return Ok((session, new));
        }
        let all = wire.read_from(0)?;
        let (session, held) = match find(&self.index, key, &chain(&all)) {
            Found::Continue { session, held } => (session, held),
            Found::Start => (self.new_name(key), 0),
        };
        Ok((session, all.into_iter().skip(held).collect()))
    }

    /// Uses `llm` as the summarizer of the turns that follow (`None`: extractive).
    pub fn use_summarizer(&mut self, llm: Option<Arc<dyn Llm>>) {
        self.engine.set_llm(llm);
    }

    /// Remembers `request` as `session`'s last, for the idle timer.
    pub fn saw(&mut self, session: &str, request: LastRequest) {
        self.quiet.saw(session, request);
    }

    /// The idle timer's check at `now`, for a cache lifetime of `ttl_seconds`: each quiet
    /// conversation measured as its agent's last request would see it, and compacted when the
    /// core's rule says so. A conversation compacted, or with nothing to do, is forgotten
    /// until its next request; a failed check is reported and forgotten too (the next request
    /// compacts as usual).
    pub fn compact_idle(
        &mut self,
        now: std::time::Instant,
        ttl_seconds: u64,
    ) -> Vec<(String, Result<IdleOutcome>)> {
        let mut done = Vec::new();
        for (session, last, idle_seconds) in self.quiet.idle_at(now) {
            self.engine.set_llm(last.summarizer.clone());
            let outcome = self.engine.compact_agent_if_idle(
                &session,
                idle_seconds,
                ttl_seconds,
                &last.system,
                last.tool_tokens,
            );
            self.engine.set_llm(None);
            let waits = matches!(
                outcome,
                Ok(IdleOutcome {
                    decision: ctxkit_core::turn::IdleDecision::Wait { .. },
                    ..
                })
            );
            if !waits {
                self.quiet.forget(&session);
            }
            done.push((session, outcome));
        }
        done
    }

    /// Records the assistant's answer at the end of `session`.
    pub fn answered(&mut self, session: &str, answer: Vec<Message>) -> Result<()> {
        if answer.is_empty() {
            return Ok(());
        }
        self.engine.record_batch(session, answer.clone(), false)?;
        self.index.extend(session, key_of(session), &answer);
        // The agent re-sends the answer as one wire message: the same fingerprint.
        self.wire.push(session, wire_fingerprint(&answer));
        Ok(())
    }

    fn new_name(&mut self, key: &str) -> String {
        let number = self.next;
        self.next += 1;
        if key.is_empty() {
            format!("{PREFIX}{number}")
        } else {
            format!("{PREFIX}{key}_{number}")
        }
    }
}

/// The engine's configuration for the proxy, for a model of `window` tokens: ctxkit builds no
/// system prompt (the agent's is sent), offloads nothing (a reference must name a tool of the
/// agent's: the caller sets [`super::offload::offload_policy`]'s), adds no nudge (its reminders
/// name tools the agent may not have, and the agent's requests are its own), and summarizes
/// extractively.
pub fn engine_config(window: u64, family: ModelFamily) -> EngineConfig {
    let mut config = EngineConfig {
        budget: Budget::for_window(window),
        offload: None,
        ..EngineConfig::default()
    };
    config.policy.family = family;
    config.policy.nudges.memory_every_turns = 0;
    config.policy.nudges.stall_after_turns = 0;
    config.prompt.read_agents_md = false;
    config.prompt.history_guidance = false;
    config.memory.in_prompt = false;
    config.memory.write_memory_file = false;
    // Memories are not used, and a fresh extraction prompt is not the agent's to send.
    config.memory.extract_before_compaction = false;
    config
}

/// Whether `key` may be an explicit conversation key: 1 to [`MAX_KEY_CHARS`] ASCII letters,
/// digits and `-` (it becomes part of a session name).
pub fn valid_key(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= MAX_KEY_CHARS
        && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// A proxy session's key and number, from its name; `None` for another session.
fn parse_name(name: &str) -> Option<(&str, u64)> {
    let rest = name.strip_prefix(PREFIX)?;
    match rest.rsplit_once('_') {
        Some((key, number)) if valid_key(key) => Some((key, number.parse().ok()?)),
        Some(_) => None,
        None => Some(("", rest.parse().ok()?)),
    }
}

fn key_of(session: &str) -> &str {
    parse_name(session).map_or("", |(key, _)| key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_carry_their_key_and_number() {
        assert_eq!(parse_name("proxy_7"), Some(("", 7)));
        assert_eq!(parse_name("proxy_agent-2_12"), Some(("agent-2", 12)));
        assert_eq!(parse_name("demo"), None);
        assert_eq!(parse_name("proxy_bad key_1"), None);
        assert!(!valid_key("a_b") && !valid_key("") && valid_key("sub-agent-1"));
    }
}
