//! ctxkit's own strategies replayed over a transcript: the turn driver with the strategy's
//! policy (the default, or with clearing, or without the cold-cache trigger) told the agent's
//! tools (those the transcript calls, so nudges follow the tools it has), big tool outputs
//! offloaded (so the log holds their references), each turn told whether the cache had expired
//! since the call before ([`super::ReplaySetup::cache_expired`], as a shell would say from its
//! clock), and optionally with the summary call an LLM summarizer would make billed, in either
//! mode:
//!
//! - **fresh** ([`SummaryMode::Fresh`]): the summarizer's system prompt and the fenced
//!   transcript of the covered messages, all new input;
//! - **cache-safe** ([`SummaryMode::CacheSafe`]): the session's own request re-sent (what the
//!   previous call sent is read from the cache; what came after it is new) and the
//!   instruction (new), as [`ctxkit_core::compaction::cache_safe_messages`] builds it; the fresh
//!   prompt when the cache-safe request would not fit.
//!
//! The summary itself is the extractive one (the report makes no model call); its tokens are
//! the summary call's output. A pause past the cache's lifetime before a summary call is not
//! modelled (the call is billed as if the previous call's prefix were still cached).
//!
//! With idle compaction (`ctxkit-idle`), an agent loop's idle timer is replayed too. A
//! recorded pause before a call ([`super::ReplaySetup::call_gaps`]) is taken to end with the
//! first message after the previous call that is not the model's (a user's message, or a
//! tool's result: the answer to a question the agent asked, a long command): the session sat
//! idle with the model's messages stored. The timer's check is [`idle_decision`] on the view
//! the next turn would send (the previous call's view without its nudges, plus the messages
//! since), asked when the timer fires (when the pause began, or when the decision's wait is
//! over) if the pause outlasts that; a shorter pause is not measured. When it says compact,
//! a turn planned with its lowered budget runs in the pause (as `Engine::compact_if_idle`
//! does), and the next call starts from that checkpoint. Its summary call is billed as the
//! cache-safe request: the prefix the previous call sent is read from the cache (the call runs
//! before the lifetime ends), what came after it and the instruction are new input, the
//! summary is its output. The simulator is not told of it: the cache it refreshed is not
//! credited to the next call.

use std::sync::Arc;

use ctxkit_core::compaction::{Policy, SummaryMode, SummaryRequest};
use ctxkit_core::memory::NudgePolicy;
use ctxkit_core::model::{Entry, Message, Role, View};
use ctxkit_core::offload::{plan_offload, OffloadPolicy};
use ctxkit_core::tokens::{estimate_message, estimate_text, ModelFamily};
use ctxkit_core::turn::{idle_decision, IdleDecision, Session, TurnDriver, TurnInputs, TurnStep};

use super::strategies::{ReplaySetup, StrategyCall, SummaryCall};

/// Whether and how a replay bills summary calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SummaryCalls {
    /// Extractive summaries, made without a call (ctxkit without an LLM).
    None,
    /// An LLM summarizer's call in this mode.
    Llm(SummaryMode),
}

/// The calls ctxkit makes over `transcript`, one before each assistant message, each handed to
/// `on_call` with the log stored so far; returns the stored log. A view message the turn left
/// as the log's own is the stored message itself (shared, not copied), and a message the turn
/// made that is the same as the one at its place in the call before is that one, so billing
/// renders each message once; a call reports only what follows the messages it repeats.
/// `idle`: replay the idle timer in the recorded pauses (see the module doc).
pub(crate) fn replay_ctxkit(
    transcript: &[Message],
    setup: &ReplaySetup,
    policy: &Policy,
    summaries: SummaryCalls,
    idle: bool,
    on_call: &mut dyn FnMut(&[Arc<Message>], StrategyCall),
) -> Vec<Arc<Message>> {
    // The agent's tools, as a caller tells ctxkit (`NudgePolicy::agent_tools`): the ones the
    // transcript calls. A nudge about tools the agent does not have (a memory nudge without a
    // memory tool, a stall nudge without file tools) is not sent.
    let tools: std::collections::BTreeSet<&str> = transcript
        .iter()
        .flat_map(|message| &message.tool_calls)
        .map(|call| call.name.as_str())
        .collect();
    let policy = Policy {
        family: setup.family,
        summary_mode: match summaries {
            SummaryCalls::Llm(mode) => mode,
            // An idle summary is the cache-safe request.
            SummaryCalls::None if idle => SummaryMode::CacheSafe,
            SummaryCalls::None => SummaryMode::Fresh,
        },
        nudges: NudgePolicy {
            agent_tools: Some(tools.into_iter().map(str::to_owned).collect()),
            ..policy.nudges.clone()
        },
        working_directory: setup
            .working_directory
            .clone()
            .or_else(|| policy.working_directory.clone()),
        ..policy.clone()
    };
    let offload = OffloadPolicy::default();
    let inputs = TurnInputs::new(&setup.system, setup.budget(), &policy);
    let mut session = Session::new(setup.family);
    // The stored log, shared; the previous call's conversation and trailing nudges.
    let mut stored: Vec<Arc<Message>> = Vec::with_capacity(transcript.len());
    let mut previous: Option<(Vec<Arc<Message>>, usize)> = None;
    let mut calls = 0usize;
    // The log's length at the previous call; the idle compaction made in the current pause.
    let mut log_at_call = 0usize;
    let mut idle_checked = 0usize;
    let mut idle_summary: Option<SummaryCall> = None;
    for message in transcript {
        // The first message after a call that is not the model's (a user's message, a tool's
        // result) ends the pause before the next call, if there was one: the idle timer ran
        // while the session waited for it.
        if idle && message.role != Role::Assistant && calls > idle_checked {
            idle_checked = calls;
            if let Some((view, nudges)) = previous.as_ref() {
                let pause = IdlePause {
                    gap: setup.call_gaps.get(calls).copied().flatten(),
                    view,
                    nudges: *nudges,
                    since: stored.get(log_at_call..).unwrap_or_default(),
                };
                idle_summary = idle_compaction(&mut session, &inputs, setup, &stored, &pause);
            }
        }
        if message.role == Role::Assistant {
            let before = session.latest_checkpoint().map(|c| c.through_seq);
            // The caller's word on the cache, as a shell would give it from its clock.
            let inputs = TurnInputs {
                cache_expired: setup.cache_expired.get(calls).copied().unwrap_or(false),
                ..inputs
            };
            let last = previous
                .as_ref()
                .map_or(&[][..], |(view, _)| view.as_slice());
            if let Some(mut call) = one_call(&mut session, &inputs, &stored, last) {
                // A new checkpoint rewrites the view.
                call.compacted |= call.checkpoint != before;
                if let (SummaryCalls::Llm(mode), Some(request)) = (summaries, call.request.take()) {
                    let output = session.latest_checkpoint().map_or(0, |c| c.tokens);
                    let sent = previous
                        .as_ref()
                        .map(|(view, nudges)| sent_tokens(view, *nudges, setup));
                    call.summary_call = Some(bill_summary(&request, mode, sent, output, setup));
                }
                let kept = last
                    .iter()
                    .zip(&call.messages)
                    .take_while(|(a, b)| Arc::ptr_eq(a, b))
                    .count();
                let (view, nudges) = (call.messages.clone(), call.trailing_nudges);
                calls += 1;
                log_at_call = session.entries.len();
                let mut call = call.into_call(kept, log_at_call);
                if let Some(summary) = idle_summary.take() {
                    call.compacted = true;
                    call.idle_compaction = true;
                    call.summary_call = Some(summary);
                }
                on_call(&stored, call);
                previous = Some((view, nudges));
            }
        }
        let seq = session.entries.len() as u64 + 1;
        let stored_message = match plan_offload(seq, "cost", message, None, &offload) {
            Ok(Some(plan)) => plan.reference,
            _ => message.clone(),
        };
        stored.push(Arc::new(stored_message.clone()));
        session.append([stored_message]);
    }
    stored
}

/// A recorded pause before a call, as the idle timer sees it.
struct IdlePause<'a> {
    /// Its length in seconds (`None`: not recorded, so no timer fires).
    gap: Option<u64>,
    /// The previous call's conversation and trailing nudges.
    view: &'a [Arc<Message>],
    nudges: usize,
    /// The messages stored since that call.
    since: &'a [Arc<Message>],
}

/// The idle timer over one pause: when [`idle_decision`] says compact before the pause ends,
/// runs the compaction turn with the budget it gives and returns its summary call, billed as
/// the cache-safe request made while the prefix is cached (all zero when the turn asked no
/// summary). `None`: the timer did not compact.
fn idle_compaction(
    session: &mut Session,
    inputs: &TurnInputs<'_>,
    setup: &ReplaySetup,
    stored: &[Arc<Message>],
    pause: &IdlePause<'_>,
) -> Option<SummaryCall> {
    let gap = pause.gap?;
    let decide = |view_tokens, idle_seconds| {
        idle_decision(
            view_tokens,
            idle_seconds,
            setup.cache_ttl_seconds,
            &inputs.budget,
            inputs.policy,
        )
    };
    // When the timer fires, whatever the view's size: a pause that ends first (most do) is
    // not measured, so a call's work stays in proportion to what it changes.
    let due = match decide(u64::MAX, 0) {
        IdleDecision::Compact { .. } => 0,
        IdleDecision::Wait { seconds } if seconds < gap => seconds,
        IdleDecision::Wait { .. } | IdleDecision::Skip { .. } => return None,
    };
    // The view the next turn would send, without the reserve: what a preview measures.
    let sent = sent_tokens(pause.view, pause.nudges, setup);
    let view_tokens = sent.saturating_sub(setup.reserve_tokens)
        + pause
            .since
            .iter()
            .map(|m| estimate_message(m, setup.family))
            .sum::<u64>();
    // The timer's check when it fires (the user still away).
    let IdleDecision::Compact { budget, .. } = decide(view_tokens, due) else {
        return None;
    };
    let before = session.latest_checkpoint().map(|c| c.through_seq);
    let idle_inputs = TurnInputs {
        budget,
        cache_expired: false,
        ..*inputs
    };
    let turn = one_call(session, &idle_inputs, stored, pause.view)?;
    if turn.checkpoint == before {
        return None;
    }
    let output = session.latest_checkpoint().map_or(0, |c| c.tokens);
    // A checkpoint made without a summary request (none asked) costs no call, but it is still
    // the pause's compaction.
    Some(turn.request.map_or_else(SummaryCall::default, |request| {
        bill_summary(&request, SummaryMode::CacheSafe, Some(sent), output, setup)
    }))
}

/// One turn's call, before it is a [`StrategyCall`]: the view and the summary request the
/// turn answered, if any.
struct Turn {
    messages: Vec<Arc<Message>>,
    has_summary: bool,
    trailing_nudges: usize,
    compacted: bool,
    overflow: bool,
    checkpoint: Option<u64>,
    request: Option<SummaryRequest>,
    summary_call: Option<SummaryCall>,
}

impl Turn {
    fn into_call(self, kept: usize, log_len: usize) -> StrategyCall {
        StrategyCall {
            kept,
            messages: self.messages.get(kept..).unwrap_or_default().to_vec(),
            has_summary: self.has_summary,
            trailing_nudges: self.trailing_nudges,
            compacted: self.compacted,
            overflow: self.overflow,
            summary_call: self.summary_call,
            log_len,
            idle_compaction: false,
        }
    }
}

/// Drives one turn with extractive answers, keeping the summary request it asked. `stored`:
/// the log's messages shared (entry `i` of the session is `stored[i]`); `last`: the previous
/// call's conversation.
fn one_call(
    session: &mut Session,
    inputs: &TurnInputs<'_>,
    stored: &[Arc<Message>],
    last: &[Arc<Message>],
) -> Option<Turn> {
    let mut turn = TurnDriver::start(inputs).ok()?;
    let mut request = None;
    let mut messages = loop {
        match turn.step(session).ok()? {
            TurnStep::NeedExtraction(_) => turn.answer_extraction(None).ok()?,
            TurnStep::NeedSummary(asked) => {
                request = Some(asked);
                turn.answer_summary(session, None).ok()?;
            }
            TurnStep::Ready(view) => break shared_messages(&view, &session.entries, stored, last),
        }
    };
    let (result, _) = turn.finish(session).ok()?;
    if messages.first().is_some_and(|m| m.role == Role::System) {
        messages.remove(0);
    }
    let stats = result.stats;
    Some(Turn {
        messages,
        has_summary: stats.checkpoint_through.is_some(),
        trailing_nudges: stats.nudges.len(),
        // Messages cut or dropped to fit rewrite the view as a new checkpoint does.
        compacted: stats.cut_messages > 0 || stats.dropped_messages > 0,
        overflow: !stats.fits,
        checkpoint: stats.checkpoint_through,
        request,
        summary_call: None,
    })
}

/// `view.to_messages()` with each message shared: the stored message when the view borrows a
/// log entry, the previous call's message at the same place when equal, else a new one.
fn shared_messages(
    view: &View<'_>,
    entries: &[Entry],
    stored: &[Arc<Message>],
    last: &[Arc<Message>],
) -> Vec<Arc<Message>> {
    let system = view.system_message().map(Arc::new);
    let offset = usize::from(system.is_some());
    let mut out: Vec<Arc<Message>> = system.into_iter().collect();
    for item in &view.messages {
        // The place this message had in the previous call's list (its system prompt removed).
        let place = out.len().checked_sub(offset);
        let own = item
            .seq
            .filter(|_| item.is_borrowed())
            .and_then(|seq| usize::try_from(seq).ok()?.checked_sub(1))
            .filter(|&at| entries.get(at).is_some_and(|e| Some(e.seq) == item.seq))
            .and_then(|at| stored.get(at));
        let same = place
            .and_then(|at| last.get(at))
            .filter(|previous| ***previous == *item.message);
        out.push(match (own, same) {
            (Some(own), _) => own.clone(),
            (None, Some(same)) => same.clone(),
            (None, None) => Arc::new(item.message.as_ref().clone()),
        });
    }
    out
}

/// The tokens a call of conversation `view` with `nudges` trailing nudges sent before them
/// (the prefix the next call can read from the cache): the reserve, the system prompt and its
/// stable messages.
fn sent_tokens(view: &[Arc<Message>], nudges: usize, setup: &ReplaySetup) -> u64 {
    let stable = view.len().saturating_sub(nudges);
    setup.reserve_tokens
        + estimate_text(&setup.system, setup.family)
        + view
            .get(..stable)
            .unwrap_or_default()
            .iter()
            .map(|m| estimate_message(m, setup.family))
            .sum::<u64>()
}

fn tokens(messages: &[Message], family: ModelFamily) -> u64 {
    messages.iter().map(|m| estimate_message(m, family)).sum()
}

/// What the summary call of `request` costs in `mode`, the previous call having sent
/// `previous` tokens; `output`: the summary's tokens.
fn bill_summary(
    request: &SummaryRequest,
    mode: SummaryMode,
    previous: Option<u64>,
    output: u64,
    setup: &ReplaySetup,
) -> SummaryCall {
    let family = setup.family;
    match (mode, request.cache_safe_messages.split_last()) {
        (SummaryMode::CacheSafe, Some((instruction, history))) => {
            let history = setup.reserve_tokens + tokens(history, family);
            let cached = previous.unwrap_or(0).min(history);
            SummaryCall {
                cached_input: cached,
                new_input: history - cached + estimate_message(instruction, family),
                output,
            }
        }
        _ => SummaryCall {
            cached_input: 0,
            new_input: estimate_text(&request.system, family)
                + estimate_text(&request.prompt, family),
            output,
        },
    }
}
