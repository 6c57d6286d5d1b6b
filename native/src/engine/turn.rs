//! Preparing a turn: the view to send, following the core's turn protocol
//! (plan → summary request → checkpoint → plan again → ready).
//!
//! When an LLM is configured, a summary request is answered in two calls: first memory
//! extraction over the messages about to be summarized (drafts checked by the core, stored
//! with source `extracted`), then the summary. Either call failing only costs a warning: the
//! summary falls back to the extractive one ([`Session::complete_summary`] with no answer),
//! and extraction is skipped. The memories extracted this turn reach the system prompt from
//! the next turn on (this turn's prompt was built before the plan asked for a summary).

use ctxkit_core::checkpoint::{Checkpoint, SummaryMethod};
use ctxkit_core::memory_extraction::{memory_extraction_request, parse_memory_drafts};
use ctxkit_core::nudge::NudgeState;
use ctxkit_core::plan::{Plan, Policy, ReadyView, ViewStats};
use ctxkit_core::precis::MemorySource;
use ctxkit_core::session::{Session, TurnSettings};
use ctxkit_core::summary_request::{covered_entries, SummaryRequest};
use ctxkit_core::todo::TodoItem;
use ctxkit_core::{to_anthropic, to_openai, Message};

use super::{cached_session, Engine, Event, WarningKind};
use crate::error::{Context, Error, Result};
use crate::store::{AddedMemory, NewMemory};
use crate::summarizer::LlmRequest;

/// The summary call may use at most this many output tokens (twice the summary's limit, for
/// an `<analysis>` preamble, but within what every current model can produce).
const SUMMARY_OUTPUT_CAP: u64 = 8_192;
/// Output tokens for the memory extraction call.
const EXTRACTION_OUTPUT_TOKENS: u64 = 4_096;

/// The view of one turn.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnView {
    /// The session.
    pub session: String,
    /// What to send: the system prompt first, then the conversation.
    pub messages: Vec<Message>,
    /// How the view was made and what it costs.
    pub stats: ViewStats,
    /// The method of the checkpoint made this turn, if one was.
    pub compacted: Option<SummaryMethod>,
    /// What happened on the way (token estimate, compaction, warnings).
    pub events: Vec<Event>,
}

impl TurnView {
    /// The view as an OpenAI Chat Completions `messages` array.
    pub fn to_openai(&self) -> serde_json::Value {
        to_openai(&self.messages)
    }

    /// The view as an Anthropic Messages request body (`system` and `messages`).
    pub fn to_anthropic(&self) -> Result<serde_json::Value> {
        to_anthropic(&self.messages).context(|| format!("session {:?}: view", self.session))
    }

    /// The system prompt sent this turn.
    pub fn system_prompt(&self) -> &str {
        match self.messages.first() {
            Some(first) if first.role == ctxkit_core::Role::System => match &first.content {
                ctxkit_core::Content::Text(text) => text,
                ctxkit_core::Content::Parts(_) => "",
            },
            _ => "",
        }
    }
}

/// What a ready plan hands back, owned (so the session can be changed afterwards).
struct ReadyParts {
    messages: Vec<Message>,
    stats: ViewStats,
    new_checkpoint: Option<Checkpoint>,
    next_nudge_state: NudgeState,
}

impl ReadyParts {
    fn from(ready: ReadyView<'_>) -> Self {
        ReadyParts {
            messages: ready.view.to_messages(),
            stats: ready.stats,
            new_checkpoint: ready.new_checkpoint,
            next_nudge_state: ready.next_nudge_state,
        }
    }
}

/// Plans, returning either the owned ready view or the request.
fn plan_once(
    session: &Session,
    settings: &TurnSettings<'_>,
) -> Result<Result<ReadyParts, SummaryRequest>> {
    let plan = session
        .plan(settings)
        .context(|| "planning the turn".to_owned())?;
    Ok(match plan {
        Plan::Ready(ready) => Ok(ReadyParts::from(*ready)),
        Plan::Summarize(request) => Err(*request),
    })
}

impl Engine {
    /// Prepares the next turn of `session` (see the module doc) and stores what it decided:
    /// a checkpoint if it compacted, and the nudge state.
    pub fn prepare_turn(&mut self, session: &str) -> Result<TurnView> {
        self.prepare_turn_with_todos(session, &[])
    }

    /// [`Engine::prepare_turn`] with the agent's todo list (its active items are kept in a
    /// checkpoint made this turn).
    pub fn prepare_turn_with_todos(
        &mut self,
        session: &str,
        todos: &[TodoItem],
    ) -> Result<TurnView> {
        let mut events = Vec::new();
        let (now, system_prompt, policy) = self.turn_inputs(session, &mut events)?;
        let settings = TurnSettings {
            system_prompt: &system_prompt,
            budget: self.config.budget,
            policy: &policy,
            todos,
        };
        let mut compacted = None;
        let first = plan_once(
            cached_session(self.store.as_ref(), &mut self.sessions, session)?,
            &settings,
        )?;
        let ready = match first {
            Ok(ready) => ready,
            Err(request) => {
                compacted = Some(self.compact(session, &request, &policy, now, &mut events)?);
                let cached = cached_session(self.store.as_ref(), &mut self.sessions, session)?;
                plan_once(cached, &settings)?.map_err(|_| second_request(session))?
            }
        };
        let stored = self.store.finish_turn(
            session,
            ready.new_checkpoint.as_ref(),
            &ready.next_nudge_state,
            now,
        );
        if let Err(error) = stored {
            self.sessions.remove(session);
            return Err(error);
        }
        if let Some(checkpoint) = &ready.new_checkpoint {
            compacted = Some(checkpoint.method);
            let event = compacted_event(session, checkpoint);
            self.emit(&mut events, event);
        }
        if let Some(cached) = self.sessions.get_mut(session) {
            // The cache follows what was just stored. Should the two ever disagree, the head
            // check of the next call reads the session again.
            let cached = &mut cached.session;
            if cached
                .finish_turn(ready.new_checkpoint.clone(), ready.next_nudge_state)
                .is_err()
            {
                self.sessions.remove(session);
            } else {
                trim_to_turn_tail(cached);
            }
        }
        // The turn's durability point: what was recorded before it survives a power loss.
        if let Err(error) = self.store.sync() {
            let warning = Event::warning(Some(session), WarningKind::SyncFailed, error.to_string());
            self.emit(&mut events, warning);
        }
        let estimate = Event::TokensEstimated {
            session: session.to_owned(),
            estimated_tokens: ready.stats.total_tokens,
            calibrated_tokens: ready.stats.calibrated_tokens,
            budget_tokens: ready.stats.budget_tokens,
            fits: ready.stats.fits,
        };
        self.emit(&mut events, estimate);
        Ok(TurnView {
            session: session.to_owned(),
            messages: ready.messages,
            stats: ready.stats,
            compacted,
            events,
        })
    }

    /// The view the next turn would send, without storing anything or calling an LLM: a
    /// compaction, if due, is answered extractively in memory only (`compacted` says so).
    pub fn preview_turn(&mut self, session: &str) -> Result<TurnView> {
        let mut events = Vec::new();
        let (_, system_prompt, policy) = self.turn_inputs(session, &mut events)?;
        let settings = TurnSettings {
            system_prompt: &system_prompt,
            budget: self.config.budget,
            policy: &policy,
            todos: &[],
        };
        let mut scratch = cached_session(self.store.as_ref(), &mut self.sessions, session)?.clone();
        let mut compacted = None;
        let ready = match plan_once(&scratch, &settings)? {
            Ok(ready) => ready,
            Err(request) => {
                let (method, _) = scratch
                    .complete_summary(&request, None, &policy)
                    .context(|| format!("session {session:?}: extractive summary"))?;
                compacted = Some(method);
                plan_once(&scratch, &settings)?.map_err(|_| second_request(session))?
            }
        };
        Ok(TurnView {
            session: session.to_owned(),
            messages: ready.messages,
            stats: ready.stats,
            compacted: compacted.or(ready.new_checkpoint.map(|c| c.method)),
            events,
        })
    }

    /// What every turn reads first: the time, this turn's system prompt (clock, AGENTS.md,
    /// memory) and the session's policy.
    fn turn_inputs(
        &mut self,
        session: &str,
        events: &mut Vec<Event>,
    ) -> Result<(i64, String, Policy)> {
        let now = self.clock.now_unix();
        let system_prompt = self.system_prompt(session, self.clock.today(), now, events)?;
        let policy = self.policy_for(session)?;
        Ok((now, system_prompt, policy))
    }

    /// The policy for `session`: the config's, with the family the session's cached
    /// estimates were made for.
    fn policy_for(&mut self, session: &str) -> Result<Policy> {
        let family = cached_session(self.store.as_ref(), &mut self.sessions, session)?.family;
        Ok(Policy {
            family,
            ..self.config.policy.clone()
        })
    }

    /// Answers `request` (extraction first, then the summary), stores the checkpoint.
    fn compact(
        &mut self,
        session: &str,
        request: &SummaryRequest,
        policy: &Policy,
        now: i64,
        events: &mut Vec<Event>,
    ) -> Result<SummaryMethod> {
        let requested = Event::SummaryRequested {
            session: session.to_owned(),
            after_seq: request.after_seq,
            through_seq: request.through_seq,
            messages: request.messages,
            covered_tokens: request.covered_tokens,
        };
        self.emit(events, requested);
        let mut answer = None;
        if self.llm.is_some() {
            if self.config.memory.extract_before_compaction {
                self.extract_memories(session, request, policy, now, events)?;
            }
            answer = self.ask_for_summary(session, request, events);
        }
        let cached = cached_session(self.store.as_ref(), &mut self.sessions, session)?;
        let (method, fallback_reason) = cached
            .complete_summary(request, answer.as_deref(), policy)
            .context(|| format!("session {session:?}: completing the summary"))?;
        let checkpoint = cached.latest_checkpoint().cloned();
        if let Some(checkpoint) = &checkpoint {
            if let Err(error) = self.store.add_checkpoint(session, checkpoint, now) {
                self.sessions.remove(session);
                return Err(error);
            }
        }
        if let Some(reason) = fallback_reason {
            let warning = Event::warning(
                Some(session),
                WarningKind::SummaryRejected,
                format!("the LLM's summary was not used ({reason}); extractive summary instead"),
            );
            self.emit(events, warning);
        }
        if let Some(checkpoint) = &checkpoint {
            self.emit(events, compacted_event(session, checkpoint));
        }
        Ok(method)
    }

    /// The LLM's summary, or `None` (and a warning) when the call failed.
    fn ask_for_summary(
        &mut self,
        session: &str,
        request: &SummaryRequest,
        events: &mut Vec<Event>,
    ) -> Option<String> {
        let llm = self.llm.as_ref()?;
        let result = llm.complete(&LlmRequest {
            system: &request.system,
            prompt: &request.prompt,
            max_tokens: request
                .max_summary_tokens
                .saturating_mul(2)
                .clamp(1, SUMMARY_OUTPUT_CAP),
        });
        match result {
            Ok(answer) => Some(answer),
            Err(error) => {
                let warning = Event::warning(
                    Some(session),
                    WarningKind::SummarizerFailed,
                    format!("{error}; extractive summary instead"),
                );
                self.emit(events, warning);
                None
            }
        }
    }

    /// Extracts memories from the messages `request` covers and stores the accepted drafts.
    /// Only a store failure is an error; an LLM failure is a warning.
    fn extract_memories(
        &mut self,
        session: &str,
        request: &SummaryRequest,
        policy: &Policy,
        now: i64,
        events: &mut Vec<Event>,
    ) -> Result<()> {
        let cached = cached_session(self.store.as_ref(), &mut self.sessions, session)?;
        let covered: Vec<Message> = covered_entries(request, &cached.entries)
            .iter()
            .map(|entry| entry.message.clone())
            .collect();
        let Some(llm) = self.llm.as_ref() else {
            return Ok(());
        };
        let extraction = memory_extraction_request(&covered, &policy.transcript);
        let answer = llm.complete(&LlmRequest {
            system: &extraction.system,
            prompt: &extraction.prompt,
            max_tokens: EXTRACTION_OUTPUT_TOKENS,
        });
        let answer = match answer {
            Ok(answer) => answer,
            Err(error) => {
                let warning = Event::warning(
                    Some(session),
                    WarningKind::ExtractionFailed,
                    format!("memory extraction skipped: {error}"),
                );
                self.emit(events, warning);
                return Ok(());
            }
        };
        let outcome = parse_memory_drafts(&answer);
        let (mut added, mut duplicates) = (0, 0);
        for draft in outcome.drafts {
            let memory = NewMemory {
                title: draft.title,
                content: draft.content,
                category: draft.category,
                importance: i64::from(draft.importance),
                source: MemorySource::Extracted,
                ..NewMemory::default()
            };
            match self.store.add_memory(&self.project, &memory, now)? {
                AddedMemory::Added(_) => added += 1,
                AddedMemory::Duplicate(_) => duplicates += 1,
            }
        }
        if added > 0 {
            self.refresh_memory_file(events);
        }
        let extracted = Event::MemoriesExtracted {
            session: session.to_owned(),
            added,
            duplicates,
            rejected: outcome.rejected.len(),
        };
        self.emit(events, extracted);
        Ok(())
    }
}

fn compacted_event(session: &str, checkpoint: &Checkpoint) -> Event {
    Event::Compacted {
        session: session.to_owned(),
        method: checkpoint.method,
        through_seq: checkpoint.through_seq,
        summary_tokens: checkpoint.tokens,
    }
}

/// Drops the entries the next turn will not read (what [`crate::store::SessionStore::load_for_turn`]
/// would not load), so a long session's cache stays the size of its view.
fn trim_to_turn_tail(session: &mut Session) {
    let Some(through) = session.latest_checkpoint().map(|c| c.through_seq) else {
        return;
    };
    let after = session
        .nudge_state
        .last_seq
        .map_or(through, |last| through.min(last));
    let keep_from = session.entries.partition_point(|entry| entry.seq <= after);
    session.entries.drain(..keep_from);
}

/// The error for a plan that asks for a second summary after one was answered: the core
/// guarantees the second plan is ready, so this is a bug in ctxkit, reported, never looped on.
fn second_request(session: &str) -> Error {
    Error::invalid(
        "plan",
        format!("session {session:?}: a second summary request in one turn (a bug in ctxkit)"),
    )
}
