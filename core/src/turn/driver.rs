//! The turn driver: the one implementation of the turn protocol, sans I/O.
//!
//! A turn is a small state machine that the caller steps through and answers:
//!
//! ```text
//! start ──► plan ──► Ready(view) ──► finish
//!             │
//!             └─ over the trigger ──► [NeedExtraction(request)] ──► NeedSummary(request)
//!                                       answer_extraction(answer)     answer_summary(answer)
//!                                                                        │
//!                                            plan again (always ready) ◄─┘
//! ```
//!
//! [`TurnDriver::step`] says what the turn needs next ([`TurnStep`]); each request carries
//! everything the caller needs for its I/O, including the call's `max_output_tokens`. The caller
//! answers an LLM call with the model's text, or with `None` when it has no LLM or the call
//! failed: a missing or unusable summary falls back to the extractive one, a missing extraction
//! is skipped. [`TurnStep::NeedExtraction`] comes only when [`TurnInputs::extract_memories`]
//! is set.
//!
//! Guarantees:
//! - **The session is not touched until [`TurnDriver::finish`]**: the driver plans with the
//!   summary it made as a pending checkpoint, so a turn that fails, or is never finished (a
//!   preview), leaves the session exactly as it was. `finish` applies everything the turn
//!   decided at once, and returns it as [`TurnChanges`] for a store to persist in one
//!   transaction.
//! - **A turn compacts at most once**: after a summary the plan is always ready; a second
//!   request is reported as a bug, never looped on.
//! - **A stale answer is dropped**: if a checkpoint reached the session while the caller was
//!   answering (another turn on the same session), the answer is not used and the turn plans
//!   again from what the session now holds; `finish` refuses a session that changed since the
//!   ready view was made.
//! - **Every fallback is said**: each LLM call answered by a fallback (it failed, timed out, was
//!   refused, its answer was unusable or stale, or the summarizer's circuit breaker skipped it)
//!   is listed in the ready view's [`ViewStats::fallbacks`] with its reason
//!   ([`crate::compaction::Fallback`]); the shells report those, never their own.
//! - **A failing summarizer is skipped for a while**: the turn advances the session's
//!   [`SummarizerBreaker`] from what its summary call came to (every failure counts: a
//!   timeout, an error, a refusal, an unusable answer), and while the breaker is open a
//!   turn with a summarizer ([`TurnInputs::has_summarizer`]) compacts extractively without
//!   asking ([`crate::turn::breaker`]).

use serde::{Deserialize, Serialize};

use crate::compaction::{
    covered_entries, plan_turn, summary_checkpoint, Checkpoint, Fallback, FallbackKind, LlmCall,
    Plan, PlanInput, ReadyView, SummaryMethod, SummaryRequest, ViewStats,
};
use crate::error::{CoreError, Result};
use crate::memory::{
    memory_extraction_request, parse_memory_drafts, ExtractionOutcome, ExtractionRequest,
    MemoryDraft, NudgeState,
};
use crate::model::{Message, View};
use crate::turn::breaker::{CallOutcome, SummarizerBreaker};

mod fallbacks;

use crate::turn::rules::policy_for_session;
use crate::turn::{BackgroundSlot, Session, TurnInputs};
pub use fallbacks::{STALE_ANSWER, STALE_BACKGROUND_ANSWER};

/// What the turn needs next.
// A step is made a few times per turn and matched at once: boxing the summary request to even
// out the variants' sizes would only add an allocation.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum TurnStep<'s> {
    /// Ask an LLM for durable memories from the messages about to be summarized, then call
    /// [`TurnDriver::answer_extraction`].
    NeedExtraction(ExtractionRequest),
    /// Ask an LLM for the summary (or not), then call [`TurnDriver::answer_summary`].
    NeedSummary(SummaryRequest),
    /// The view to send, borrowing the session's log. Render it, then call
    /// [`TurnDriver::finish`].
    Ready(View<'s>),
}

/// A summary made during a turn.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryOutcome {
    /// The last `seq` the checkpoint covers.
    pub through_seq: u64,
    /// Who wrote it: the LLM, or the extractive summarizer.
    pub method: SummaryMethod,
    /// Why the summarizer's answer was not used, when there was one and it was refused.
    pub fallback_reason: Option<CoreError>,
    /// True when the checkpoint was made in the background before this turn
    /// ([`crate::turn::background_request`]) and used here instead of a summary call.
    pub background: bool,
}

/// What a turn did, besides its view.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnResult {
    /// How the view was made.
    pub stats: ViewStats,
    /// The summary this turn made, if it made one.
    pub summary: Option<SummaryOutcome>,
    /// What memory extraction gave, if the turn asked for it and got an answer.
    pub extraction: Option<ExtractionOutcome>,
    /// The summarizer's circuit breaker after this turn (`finish` keeps it in the session).
    pub summarizer_breaker: SummarizerBreaker,
    /// True when the view was planned from a checkpoint this turn made, so it holds
    /// [`TurnInputs::refreshed_system_prompt`] (when given): a caller that freezes the
    /// prompt's parts freezes the ones read this turn
    /// ([`crate::prompt::FrozenPrompt::after_turn`]).
    pub prompt_refreshed: bool,
}

impl TurnResult {
    /// The method of the checkpoint this turn made (a summary or a truncation), if any.
    pub fn compacted(&self, changes: &TurnChanges) -> Option<SummaryMethod> {
        changes
            .checkpoint
            .as_ref()
            .map(|checkpoint| checkpoint.method)
    }
}

/// What a finished turn changed, for a store to persist in one transaction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnChanges {
    /// The checkpoint this turn made (a summary's, or a truncation's), at most one.
    pub checkpoint: Option<Checkpoint>,
    /// The nudge state for the next turn.
    pub nudge_state: NudgeState,
    /// The memories extraction accepted, to store (source: extracted).
    pub memories: Vec<MemoryDraft>,
}

/// Where the turn stands.
#[derive(Debug, Clone, PartialEq)]
enum State {
    Planning,
    Extracting(Box<SummaryRequest>),
    Summarizing(Box<SummaryRequest>),
    Ready(Box<Prepared>),
}

/// What the ready plan handed back, owned, with the session's shape it was planned on.
#[derive(Debug, Clone, PartialEq)]
struct Prepared {
    stats: ViewStats,
    next_nudge_state: NudgeState,
    truncation: Option<Checkpoint>,
    planned_on: (u64, Option<u64>),
}

/// One turn of one session (see the module doc).
#[derive(Debug, Clone)]
pub struct TurnDriver<'x> {
    inputs: TurnInputs<'x>,
    state: State,
    /// The checkpoint of this turn's summary, not yet in the session.
    pending: Option<Checkpoint>,
    summary: Option<SummaryOutcome>,
    extraction: Option<ExtractionOutcome>,
    /// The caller's background checkpoint was considered (it is, at most once a turn).
    background_tried: bool,
    /// The LLM calls of this turn that fell back, in order.
    fallbacks: Vec<Fallback>,
    /// The breaker as this turn left it, when it changed it.
    breaker: Option<SummarizerBreaker>,
    /// The plan uses the refreshed system prompt: the turn made a checkpoint.
    refreshed: bool,
}

impl<'x> TurnDriver<'x> {
    /// Starts a turn with `inputs`. Fails on an invalid budget.
    pub fn start(inputs: &TurnInputs<'x>) -> Result<Self> {
        inputs.budget.validate()?;
        Ok(TurnDriver {
            inputs: *inputs,
            state: State::Planning,
            pending: None,
            summary: None,
            extraction: None,
            background_tried: false,
            fallbacks: Vec::new(),
            breaker: None,
            refreshed: false,
        })
    }

    /// What the turn needs next. Planning happens here; asking again without answering gives
    /// the same request.
    pub fn step<'s>(&mut self, session: &'s Session) -> Result<TurnStep<'s>> {
        match &self.state {
            State::Extracting(request) => {
                return Ok(TurnStep::NeedExtraction(extraction_request(
                    session,
                    request,
                    &self.inputs,
                )))
            }
            State::Summarizing(request) => return Ok(TurnStep::NeedSummary((**request).clone())),
            State::Planning | State::Ready(_) => {}
        }
        self.note_stale_background(session);
        if self.pending_is_stale(session) {
            if self
                .summary
                .as_ref()
                .is_some_and(|s| s.method == SummaryMethod::Llm && !s.background)
            {
                self.fell_back(LlmCall::Summary, FallbackKind::Stale, STALE_ANSWER);
            }
            self.pending = None;
            self.summary = None;
        }
        let policy = policy_for_session(self.inputs.policy, session.family);
        self.refreshed |= self.pending.is_some();
        let checkpoint = self.pending.as_ref().or(session.latest_checkpoint());
        let plan = plan_turn(&PlanInput {
            log: &session.entries,
            checkpoint,
            system_prompt: self.system_prompt(),
            budget: match policy.cold_trigger_percent {
                Some(percent) if self.inputs.cache_expired => {
                    self.inputs.budget.with_cold_cache(percent)
                }
                _ => self.inputs.budget,
            },
            policy: &policy,
            nudge_state: session.nudge_state,
            usage_anchor: session.usage_anchor.as_ref(),
            todos: self.inputs.todos,
        })?;
        match plan {
            // A view cut to fit makes its own checkpoint: planned again with the refreshed
            // prompt (once), when that prompt differs.
            Plan::Ready(ready) if ready.new_checkpoint.is_some() && !self.refreshed => {
                self.refreshed = true;
                if self.system_prompt() == self.inputs.system_prompt {
                    self.step_ready(session, *ready)
                } else {
                    self.step(session)
                }
            }
            Plan::Ready(ready) => self.step_ready(session, *ready),
            Plan::Summarize(_) if self.summary.is_none() && self.take_background(session) => {
                self.step(session)
            }
            Plan::Summarize(request) if self.summary.is_none() || self.background_only() => {
                // A background checkpoint that did not bring the view under the trigger is
                // dropped: the turn compacts as it would have without it.
                self.pending = None;
                self.summary = None;
                let breaker = self.breaker(session);
                if self.inputs.has_summarizer && breaker.is_open() {
                    self.skip_summarizer(session, *request, breaker)?;
                    return self.step(session);
                }
                if self.inputs.extract_memories {
                    let step = TurnStep::NeedExtraction(extraction_request(
                        session,
                        &request,
                        &self.inputs,
                    ));
                    self.state = State::Extracting(request);
                    Ok(step)
                } else {
                    self.state = State::Summarizing(request.clone());
                    Ok(TurnStep::NeedSummary(*request))
                }
            }
            Plan::Summarize(_) => Err(second_request()),
        }
    }

    /// Answers [`TurnStep::NeedExtraction`] with the model's text (`None`: no answer, the
    /// extraction is skipped). The drafts are checked by [`parse_memory_drafts`].
    pub fn answer_extraction(&mut self, answer: Option<&str>) -> Result<()> {
        let State::Extracting(request) = &self.state else {
            return Err(out_of_order(
                "answer_extraction",
                "no extraction was asked for",
            ));
        };
        self.extraction = answer.map(parse_memory_drafts);
        self.state = State::Summarizing(request.clone());
        Ok(())
    }

    /// Answers [`TurnStep::NeedSummary`] with the model's text (`None`: no LLM, or the call
    /// failed). An unusable answer (empty, oversized) falls back to the extractive summary, and
    /// the result's [`SummaryOutcome::fallback_reason`] says why. When a checkpoint reached the
    /// session meanwhile, the answer is stale and dropped. Both are listed in the ready view's
    /// [`ViewStats::fallbacks`]. A usable or stale answer closes the session's
    /// [`SummarizerBreaker`]; an unusable one counts as a failure.
    pub fn answer_summary(&mut self, session: &Session, answer: Option<&str>) -> Result<()> {
        let State::Summarizing(request) = &self.state else {
            return Err(out_of_order("answer_summary", "no summary was asked for"));
        };
        let request = request.clone();
        self.state = State::Planning;
        let stale = session
            .latest_checkpoint()
            .is_some_and(|latest| latest.through_seq >= request.through_seq);
        if stale {
            if answer.is_some() {
                // The model did answer: that ends a run of failures.
                let after = self.breaker(session).after_call(CallOutcome::Answered);
                self.set_breaker(session, after);
                self.fell_back(LlmCall::Summary, FallbackKind::Stale, STALE_ANSWER);
            }
            return Ok(());
        }
        let policy = policy_for_session(self.inputs.policy, session.family);
        let (checkpoint, fallback_reason) = summary_checkpoint(
            &request,
            answer,
            &session.entries,
            &policy.extractive,
            session.family,
        )?;
        if let Some(refused) = &fallback_reason {
            let opened = self.count_unusable(session);
            self.fell_back(
                LlmCall::Summary,
                FallbackKind::Unusable,
                format!("{refused}{opened}"),
            );
        } else if answer.is_some() {
            let after = self.breaker(session).after_call(CallOutcome::Answered);
            self.set_breaker(session, after);
        }
        self.summary = Some(SummaryOutcome {
            through_seq: checkpoint.through_seq,
            method: checkpoint.method,
            fallback_reason,
            background: false,
        });
        self.pending = Some(checkpoint);
        Ok(())
    }

    /// The ready view's stats (its cache breakpoints, to render them): `None` before the
    /// ready step.
    pub fn ready_stats(&self) -> Option<&ViewStats> {
        match &self.state {
            State::Ready(prepared) => Some(&prepared.stats),
            _ => None,
        }
    }

    /// The turn's result and changes without applying them (for a preview, or a store that
    /// persists before the session in memory is updated). Fails before the ready step.
    pub fn result(&self) -> Result<(TurnResult, TurnChanges)> {
        let State::Ready(prepared) = &self.state else {
            return Err(out_of_order("result", "the turn has no ready view yet"));
        };
        let result = TurnResult {
            stats: prepared.stats.clone(),
            summary: self.summary.clone(),
            extraction: self.extraction.clone(),
            summarizer_breaker: self.breaker.unwrap_or_default(),
            prompt_refreshed: self.refreshed,
        };
        let changes = TurnChanges {
            checkpoint: self.pending.clone().or_else(|| prepared.truncation.clone()),
            nudge_state: prepared.next_nudge_state,
            memories: self
                .extraction
                .as_ref()
                .map(|outcome| outcome.drafts.clone())
                .unwrap_or_default(),
        };
        Ok((result, changes))
    }

    /// Ends the turn: applies its changes to `session` (all or nothing) and returns them with
    /// the result. Fails, changing nothing, before the ready step or when the session changed
    /// since the ready view was made.
    pub fn finish(self, session: &mut Session) -> Result<(TurnResult, TurnChanges)> {
        let (result, changes) = self.result()?;
        if let State::Ready(prepared) = &self.state {
            if prepared.planned_on != shape(session) {
                return Err(CoreError::invalid(
                    "turn",
                    "the session changed after its view was made; prepare the turn again",
                ));
            }
        }
        session.apply(&changes)?;
        if let Some(breaker) = self.breaker {
            session.summarizer_breaker = breaker;
        }
        Ok((result, changes))
    }

    /// The system prompt the plan uses: the refreshed one once the turn made a checkpoint.
    fn system_prompt(&self) -> &'x str {
        match self.inputs.refreshed_system_prompt {
            Some(refreshed) if self.refreshed => refreshed,
            _ => self.inputs.system_prompt,
        }
    }

    /// Keeps a ready plan and hands back its view.
    fn step_ready<'s>(
        &mut self,
        session: &'s Session,
        ready: ReadyView<'s>,
    ) -> Result<TurnStep<'s>> {
        let ReadyView {
            view,
            mut stats,
            next_nudge_state,
            new_checkpoint,
        } = ready;
        stats.refused_usage = session.refused_usage;
        stats.fallbacks = self.fallbacks.clone();
        self.state = State::Ready(Box::new(Prepared {
            stats,
            next_nudge_state,
            truncation: new_checkpoint,
            planned_on: shape(session),
        }));
        Ok(TurnStep::Ready(view))
    }

    /// Takes the caller's background checkpoint as this turn's summary when it is usable
    /// (once per turn); true when it did.
    fn take_background(&mut self, session: &Session) -> bool {
        let BackgroundSlot::Ready(ready) = self.inputs.background else {
            return false;
        };
        if self.background_tried || !ready.usable(session) {
            return false;
        }
        self.background_tried = true;
        self.summary = Some(SummaryOutcome {
            through_seq: ready.checkpoint.through_seq,
            method: ready.checkpoint.method,
            fallback_reason: None,
            background: true,
        });
        self.pending = Some(ready.checkpoint.clone());
        true
    }

    /// True when this turn's only summary so far is a background checkpoint.
    fn background_only(&self) -> bool {
        self.summary
            .as_ref()
            .is_some_and(|summary| summary.background)
    }

    /// True when a checkpoint at or past this turn's pending summary reached the session.
    fn pending_is_stale(&self, session: &Session) -> bool {
        match (&self.pending, session.latest_checkpoint()) {
            (Some(pending), Some(latest)) => latest.through_seq >= pending.through_seq,
            _ => false,
        }
    }
}

/// The extraction request for the messages `request` covers.
fn extraction_request(
    session: &Session,
    request: &SummaryRequest,
    inputs: &TurnInputs<'_>,
) -> ExtractionRequest {
    let covered: Vec<Message> = covered_entries(request, &session.entries)
        .iter()
        .map(|entry| entry.message.clone())
        .collect();
    memory_extraction_request(&covered, &inputs.policy.transcript_limits(&inputs.budget))
}

/// The session's next seq and latest checkpoint: what a ready view was planned on.
fn shape(session: &Session) -> (u64, Option<u64>) {
    (
        session.next_seq(),
        session.latest_checkpoint().map(|c| c.through_seq),
    )
}

fn out_of_order(call: &str, problem: &str) -> CoreError {
    CoreError::invalid(format!("turn.{call}"), problem)
}

/// A plan that asks for a second summary after one was answered: the core guarantees the
/// second plan is ready, so this is a bug in ctxkit, reported, never looped on.
fn second_request() -> CoreError {
    CoreError::invalid(
        "plan",
        "a second summary request in one turn (this is a bug in ctxkit)",
    )
}
