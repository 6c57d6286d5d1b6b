//! Preparing a turn: the core's [`TurnDriver`] answered with I/O.
//!
//! The driver decides; this file only answers its steps: an extraction request with the LLM
//! (when one is configured and extraction is on), a summary request with the LLM (or `None`
//! without one, or when the call failed: the driver falls back to the extractive summary), and
//! the ready view by rendering it. Then everything the turn changed (its checkpoint, the nudge
//! state and the memories extraction found) is stored in one transaction, and the cached
//! session is updated the same way. A failed LLM call only costs a warning: the driver lists
//! every fallback in the view's stats (`stats.fallbacks`, with the kind the call's error says:
//! a timeout, a refusal, another error), and the engine reports each as one
//! [`Event::Warning`], in the same words; the session's summarizer circuit breaker (the core's,
//! kept with the cached session in this process) skips a summarizer that keeps failing. A
//! compaction's LLM calls (the extraction, then the summary) share one deadline, the LLM's
//! summary timeout from the first call ([`crate::llm::Llm::deadline`]): however the server
//! stalls, drips or refuses, the compaction falls back within it.
//!
//! The system prompt's parts that change between compactions are frozen with the checkpoint
//! (`prompt.rs`): the turn plans with the frozen prompt and, when it compacts, plans the view
//! after its new checkpoint with the prompt of the parts read this turn, then stores those
//! parts. The memories extracted this turn reach the system prompt at the next compaction (or
//! [`Engine::refresh_prompt`]): both prompts were built before the plan asked for a summary.
//!
//! Two workers preparing one session's turn at once (a fleet on one PostgreSQL store, or two
//! processes on one SQLite file) both plan from the same log; the first to store its
//! checkpoint wins, and the other's refused store (its checkpoint no longer moves forward) is
//! a lost race, not an error: its turn runs again from what the winner stored (at most
//! [`super::APPEND_ATTEMPTS`] times), so both return a valid view and one checkpoint is
//! stored.

use std::time::Instant;

use ctxkit_core::compaction::{
    Budget, Checkpoint, Fallback, FallbackKind, LlmCall, SummaryRequest,
};
use ctxkit_core::turn::{cache_expired, BackgroundSlot, DEFAULT_CACHE_TTL_SECONDS};
use ctxkit_core::TurnResult as CoreTurnResult;
use ctxkit_core::{Message, TurnChanges, TurnDriver, TurnInputs, TurnStep};

use super::turn_llm::{Answer, KeptBlock};
pub use super::view::TurnResult;
use super::view::{anthropic_summary, responses_summary};
use super::{cached_session, Engine, Event, WarningKind};
use crate::error::{Context, Result};
use crate::store::{AddedMemory, NewMemory};

/// What one attempt at a turn came to.
enum Attempt {
    /// The turn, stored.
    Done(Box<TurnResult>),
    /// Another writer stored a checkpoint first; the turn runs again.
    Raced(crate::Error),
}

/// What storing a turn came to.
enum Committed {
    /// Stored: what became of each extracted memory.
    Stored(Vec<AddedMemory>),
    /// Refused because another writer's checkpoint came first.
    Raced(crate::Error),
}

/// How a turn's LLM calls are answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Answers {
    /// With the configured LLM, if any (a real turn).
    Llm,
    /// Never (a preview: the extractive summary, in memory only).
    Offline,
}

impl Engine {
    /// Prepares the next turn of `session` (see the module doc) and stores what it decided.
    pub fn prepare_turn(&mut self, session: &str) -> Result<TurnResult> {
        self.run_turn(session, Answers::Llm, self.budget_for(session))
    }

    /// The view the next turn would send, without storing anything or calling an LLM: a
    /// compaction, if due, is answered extractively in memory only (`compacted` says so).
    pub fn preview_turn(&mut self, session: &str) -> Result<TurnResult> {
        self.run_turn(session, Answers::Offline, self.budget_for(session))
    }

    /// Runs a turn planned with `budget` (the configured one, or an idle compaction's
    /// lowered one), again when another writer's checkpoint came first.
    pub(super) fn run_turn(
        &mut self,
        session: &str,
        answers: Answers,
        budget: Budget,
    ) -> Result<TurnResult> {
        let mut attempt = 1;
        loop {
            match self.try_turn(session, answers, budget)? {
                Attempt::Done(result) => return Ok(*result),
                Attempt::Raced(error) if attempt >= super::APPEND_ATTEMPTS => return Err(error),
                Attempt::Raced(_) => attempt += 1,
            }
        }
    }

    /// One attempt at a turn: plan it with the driver, answer its LLM steps, store what it
    /// changed (or return the view only, offline) and report it as events.
    fn try_turn(&mut self, session: &str, answers: Answers, budget: Budget) -> Result<Attempt> {
        let mut events = Vec::new();
        let now = self.clock.now_unix();
        let prompt = self.system_prompt(session, self.clock.today(), now, &mut events)?;
        let policy = self.config.policy.clone();
        let has_llm = answers == Answers::Llm && self.llm.is_some();
        let base = TurnInputs {
            extract_memories: has_llm && self.config.memory.extract_before_compaction,
            has_summarizer: has_llm,
            cache_expired: cache_expired(
                self.last_turn_at.get(session).copied(),
                now,
                DEFAULT_CACHE_TTL_SECONDS,
            ),
            refreshed_system_prompt: Some(&prompt.refreshed),
            ..TurnInputs::new(&prompt.prompt, budget, &policy)
        };
        // Background compaction: pick up a finished answer first; the driver reads the slot.
        let background = answers == Answers::Llm && policy.background_percent.is_some();
        let ready = match (background, self.llm.is_some()) {
            (true, true) => {
                let cached = cached_session(self.store.as_ref(), &mut self.sessions, session)?;
                self.background.poll(session, cached, &base);
                self.background.slot(session).cloned_ready()
            }
            _ => None,
        };
        let in_flight = background && self.background.slot(session) == BackgroundSlot::InFlight;
        let inputs = TurnInputs {
            background: match &ready {
                Some(ready) => BackgroundSlot::Ready(ready),
                None if in_flight => BackgroundSlot::InFlight,
                None => BackgroundSlot::Idle,
            },
            ..base
        };
        let mut turn = TurnDriver::start(&inputs)
            .context(|| format!("session {session:?}: planning the turn"))?;
        let mut kept_block: KeptBlock = None;
        let messages = self.drive(session, answers, &mut turn, &mut events, &mut kept_block)?;
        let (result, mut changes) = turn
            .result()
            .context(|| format!("session {session:?}: the turn's result"))?;
        keep_block(&mut changes, kept_block);
        let cached = self.sessions.get(session).map(|cached| &cached.session);
        let checkpoint = changes.checkpoint.as_ref();
        let done = TurnResult {
            session: session.to_owned(),
            anthropic_summary: anthropic_summary(&messages, &result.stats, checkpoint, cached),
            responses_summary: responses_summary(&messages, &result.stats, checkpoint, cached),
            messages,
            stats: result.stats.clone(),
            compacted: result.compacted(&changes),
            events: Vec::new(),
        };
        if answers == Answers::Offline {
            return Ok(Attempt::Done(Box::new(TurnResult { events, ..done })));
        }
        for fallback in &result.stats.fallbacks {
            let warning =
                Event::warning(Some(session), warning_kind(fallback), fallback.describe());
            self.emit(&mut events, warning);
        }
        let stored = match self.commit(session, turn, &changes, now)? {
            Committed::Stored(stored) => stored,
            Committed::Raced(error) => return Ok(Attempt::Raced(error)),
        };
        self.last_turn_at.insert(session.to_owned(), now);
        if let Some(frozen) = &prompt.frozen {
            self.store_frozen_prompt(session, frozen, result.prompt_refreshed)?;
        }
        if let (true, Some(llm)) = (background, &self.llm) {
            let cached = cached_session(self.store.as_ref(), &mut self.sessions, session)?;
            if let Some(request) = self.background.after_turn(session, cached, &base, llm) {
                let event = Event::BackgroundSummaryStarted {
                    session: session.to_owned(),
                    after_seq: request.after_seq,
                    through_seq: request.through_seq,
                };
                self.emit(&mut events, event);
            }
        }
        self.report_stored(session, &result, &changes, &stored, &mut events);
        Ok(Attempt::Done(Box::new(TurnResult { events, ..done })))
    }

    /// Steps the driver until its view is ready, answering each extraction and summary request
    /// (with the LLM, or offline with none), and returns the view's messages.
    fn drive(
        &mut self,
        session: &str,
        answers: Answers,
        turn: &mut TurnDriver<'_>,
        events: &mut Vec<Event>,
        kept_block: &mut KeptBlock,
    ) -> Result<Vec<Message>> {
        let mut requested = false;
        // The compaction's one deadline, from its first LLM call: the extraction and the
        // summary share the summary timeout, so a compaction ends within it.
        let mut deadline: Option<Instant> = None;
        loop {
            let cached = cached_session(self.store.as_ref(), &mut self.sessions, session)?;
            let step = turn
                .step(cached)
                .context(|| format!("session {session:?}: planning the turn"))?;
            match step {
                TurnStep::Ready(view) => return Ok(view.to_messages()),
                TurnStep::NeedExtraction(request) => {
                    let by = self.compaction_deadline(&mut deadline);
                    match self.ask_for_memories(&request, by) {
                        Answer::Text(answer) => turn.answer_extraction(Some(&answer)),
                        Answer::None => turn.answer_extraction(None),
                        Answer::Failed(kind, reason) => turn.extraction_failed(kind, reason),
                    }
                    .context(|| format!("session {session:?}: memory extraction"))?;
                }
                TurnStep::NeedSummary(request) => {
                    if !requested && answers == Answers::Llm {
                        requested = true;
                        self.emit(events, summary_requested(session, &request));
                    }
                    let by = self.compaction_deadline(&mut deadline);
                    let answer = match answers {
                        Answers::Llm => self.llm_summary(session, &request, by, events, kept_block),
                        Answers::Offline => Answer::None,
                    };
                    let cached = cached_session(self.store.as_ref(), &mut self.sessions, session)?;
                    match answer {
                        Answer::Text(answer) => turn.answer_summary(cached, Some(&answer)),
                        Answer::None => turn.answer_summary(cached, None),
                        Answer::Failed(kind, reason) => turn.summary_failed(cached, kind, reason),
                    }
                    .context(|| format!("session {session:?}: completing the summary"))?;
                }
            }
        }
    }

    /// Reports a stored turn: the memories it extracted (refreshing MEMORY.md when any was
    /// added), its compaction, a failed sync as a warning, and the view's token estimate.
    fn report_stored(
        &mut self,
        session: &str,
        result: &CoreTurnResult,
        changes: &TurnChanges,
        stored: &[AddedMemory],
        events: &mut Vec<Event>,
    ) {
        if let Some(outcome) = &result.extraction {
            let added = stored
                .iter()
                .filter(|memory| matches!(memory, AddedMemory::Added(_)))
                .count();
            if added > 0 {
                self.refresh_memory_file(events);
            }
            let extracted = Event::MemoriesExtracted {
                session: session.to_owned(),
                added,
                duplicates: stored.len() - added,
                rejected: outcome.rejected.len(),
            };
            self.emit(events, extracted);
        }
        if let Some(checkpoint) = &changes.checkpoint {
            let event = compacted_event(session, checkpoint);
            self.emit(events, event);
        }
        // The turn's durability point: what was recorded before it survives a power loss.
        if let Err(error) = self.store.sync() {
            let warning = Event::warning(Some(session), WarningKind::SyncFailed, error.to_string());
            self.emit(events, warning);
        }
        let estimate = Event::TokensEstimated {
            session: session.to_owned(),
            estimated_tokens: result.stats.total_tokens,
            calibrated_tokens: result.stats.calibrated_tokens,
            budget_tokens: result.stats.budget_tokens,
            fits: result.stats.fits,
        };
        self.emit(events, estimate);
    }

    /// Stores what the turn changed in one transaction, then applies it to the cached session.
    /// Returns what the store did with each extracted memory, or the store's refusal when
    /// another writer stored a checkpoint since the turn read the session (a lost race).
    fn commit(
        &mut self,
        session: &str,
        turn: TurnDriver<'_>,
        changes: &TurnChanges,
        now: i64,
    ) -> Result<Committed> {
        let memories: Vec<NewMemory> = changes.memories.iter().map(NewMemory::extracted).collect();
        let stored = self
            .store
            .finish_turn(session, changes, &memories, &self.project, now);
        let added = match stored {
            Ok(added) => added,
            Err(error) => {
                let planned_from = self
                    .sessions
                    .remove(session)
                    .and_then(|cached| cached.session.latest_checkpoint().map(|c| c.through_seq));
                let moved = changes.checkpoint.is_some()
                    && self
                        .store
                        .session_head(session)
                        .is_ok_and(|head| head.checkpoint_through != planned_from);
                return if moved {
                    Ok(Committed::Raced(error))
                } else {
                    Err(error)
                };
            }
        };
        if let Some(cached) = self.sessions.get_mut(session) {
            // The cache follows what was just stored. Should the two ever disagree, the head
            // check of the next call reads the session again.
            if turn.finish(&mut cached.session).is_err() {
                self.sessions.remove(session);
            } else {
                // The driver's checkpoint is the core's; the block kept beside it is the shell's.
                if let (Some(stored), Some(last)) = (
                    changes.checkpoint.as_ref(),
                    cached.session.checkpoints.last_mut(),
                ) {
                    if last.through_seq == stored.through_seq {
                        last.compaction_block.clone_from(&stored.compaction_block);
                    }
                }
                cached.trim_to_turn_tail();
            }
        }
        Ok(Committed::Stored(added))
    }
}

/// Puts a summary answer's compaction block beside the turn's checkpoint when that checkpoint
/// is the answer's (the rule is the core's `keep_compaction_block`, for an Anthropic block and
/// a Responses item alike); a refused or stale answer's block is dropped.
fn keep_block(changes: &mut TurnChanges, kept: KeptBlock) {
    if let (Some(checkpoint), Some((through_seq, text, block))) =
        (changes.checkpoint.as_mut(), kept)
    {
        ctxkit_core::compaction::keep_compaction_block(checkpoint, through_seq, &text, block);
    }
}

/// The warning kind a fallback is reported as.
fn warning_kind(fallback: &Fallback) -> WarningKind {
    match (fallback.call, fallback.kind) {
        (LlmCall::Extraction, _) => WarningKind::ExtractionFailed,
        (LlmCall::Summary, FallbackKind::Unusable) => WarningKind::SummaryRejected,
        (LlmCall::Summary, FallbackKind::Stale) => WarningKind::SummaryStale,
        (LlmCall::Summary, FallbackKind::Skipped) => WarningKind::SummarizerSkipped,
        (LlmCall::Summary, _) => WarningKind::SummarizerFailed,
    }
}

fn summary_requested(session: &str, request: &SummaryRequest) -> Event {
    Event::SummaryRequested {
        session: session.to_owned(),
        after_seq: request.after_seq,
        through_seq: request.through_seq,
        messages: request.messages,
        covered_tokens: request.covered_tokens,
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
