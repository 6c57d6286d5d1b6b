//! The probe run of a replayed transcript (`ctxkit probe`): what a model still knows after
//! each compaction, asked with the lab's probes and graded by their keys (no judge model).
//!
//! [`replay_for_probes`] plays the steps through an engine as an agent loop would and keeps,
//! at every turn that compacted, the view exactly as the agent would have sent it. Then
//! [`ask_probes`] sends, for each probe, that view (ctxkit), the whole log up to the same
//! point (the ceiling) and a sliding window of the newest messages that fit the same budget
//! (the floor), each followed by the probe's question as a user message, to the model
//! `ask` stands for, and grades each answer with the lab's [`grade`]. A failed request
//! (a refusal, a timeout, junk, a context too long) is that request's outcome; the run goes
//! on. The decisions (the probes, the grading, the sliding window) are `ctxkit_lab::probes`'s.

use ctxkit_core::tokens::estimate_messages;
use ctxkit_core::Message;
use ctxkit_lab::probes::run::{graded_again, probe_messages, request_id};
pub use ctxkit_lab::probes::run::{
    CompactionView, FailureKind, Outcome, ProbeRequest, ProbeRun, ProbeSession, RequestId,
    ViewStrategy,
};
use ctxkit_lab::probes::{grade, session_probes, tools_as_text, Probe};

use crate::llm::{Sampling, SummarizerError};
use crate::reports::probe_guard::RunGuard;
use crate::reports::Step;
use crate::{Engine, Result};

/// The kind of a client error.
pub fn failure_kind(error: &SummarizerError) -> FailureKind {
    match error {
        SummarizerError::Refused { .. } => FailureKind::Refused,
        SummarizerError::Timeout { .. } => FailureKind::Timeout,
        SummarizerError::Malformed { .. } | SummarizerError::Empty { .. } => FailureKind::Junk,
        SummarizerError::TooLarge { .. } => FailureKind::TooLarge,
        // An HTTP answer that is not the model's; its message names the Location.
        SummarizerError::Redirect { .. } => FailureKind::Http,
        SummarizerError::Status { status, body, .. } => {
            let body = body.to_lowercase();
            let too_long = ["context", "too long", "maximum", "exceed"]
                .iter()
                .any(|word| body.contains(word));
            if matches!(status, 400 | 413) && too_long {
                FailureKind::ContextTooLong
            } else {
                FailureKind::Http
            }
        }
        _ => FailureKind::Transport,
    }
}

/// Plays `steps` into `session` as an agent loop would (each step's inputs recorded, the turn
/// prepared, the reply recorded), keeping the view of every turn that compacted, then makes
/// the probes of each checkpoint.
pub fn replay_for_probes(
    engine: &mut Engine,
    session: &str,
    steps: Vec<Step>,
) -> Result<ProbeSession> {
    let mut views = Vec::new();
    for step in steps {
        if !step.inputs.is_empty() {
            engine.record(session, step.inputs)?;
        }
        let view = engine.prepare_turn(session)?;
        if view.compacted.is_some() {
            let through_seq = view.stats.checkpoint_through.unwrap_or(0);
            views.push(CompactionView {
                through_seq,
                tail_end_seq: view.stats.last_seq.unwrap_or(through_seq),
                room_tokens: view.stats.summary_tokens + view.stats.message_tokens,
                messages: view.messages,
            });
        }
        if !step.reply.is_empty() {
            engine.record(session, step.reply)?;
        }
    }
    let whole = engine.export_session(session)?;
    // The views in checkpoint order (a compaction's view names its checkpoint).
    let views: Vec<CompactionView> = whole
        .checkpoints
        .iter()
        .map(|checkpoint| {
            views
                .iter()
                .find(|view| view.through_seq == checkpoint.through_seq)
                .cloned()
                .unwrap_or_else(|| CompactionView {
                    through_seq: checkpoint.through_seq,
                    tail_end_seq: checkpoint.through_seq,
                    messages: Vec::new(),
                    room_tokens: 0,
                })
        })
        .collect();
    let tail_ends: Vec<u64> = views.iter().map(|view| view.tail_end_seq).collect();
    let probes = session_probes(&whole.entries, &whole.checkpoints, &tail_ends);
    Ok(ProbeSession {
        family: whole.family,
        entries: whole.entries,
        views,
        probes,
    })
}

/// The requests of a probe run, and how many were left unasked.
#[derive(Debug, Clone)]
pub struct Asked {
    /// The requests done (earlier ones included), in run order.
    pub requests: Vec<ProbeRequest>,
    /// The requests of the run not done, because the run's bound on sent requests was reached.
    pub left: usize,
    /// The requests taken from `earlier` whose stored grade did not match their answer.
    pub regraded: usize,
}

/// Asks every selected probe over every strategy's view, `run.samples` times each, through
/// `ask` (the messages and the sampling in, the answer or the client's error out), and grades
/// the answers. A request `earlier` knows the outcome of (a resumed run's) is not sent again:
/// its answer is used and graded again here, never its stored grade, so a file whose grades
/// were changed cannot change the table (the changed ones are counted in
/// [`Asked::regraded`]). At most `max_sent` requests are sent (`None`: no bound); the requests
/// after that are counted in [`Asked::left`]. `guard` bounds the run in time and failures: a
/// request it refuses (the run's deadline passed, or its breaker opened) is not sent but
/// reported as [`Outcome::Skipped`] with the guard's reason. `progress` hears of each request
/// as it is done, with `true` when it was done now (not taken from `earlier`, and not
/// refused by the guard, so a resumed run asks it again).
pub fn ask_probes(
    session: &ProbeSession,
    run: &ProbeRun,
    earlier: impl Fn(&RequestId) -> Option<Outcome>,
    max_sent: Option<usize>,
    guard: &mut RunGuard,
    mut ask: impl FnMut(&[Message], Sampling) -> std::result::Result<String, SummarizerError>,
    mut progress: impl FnMut(&ProbeRequest, bool),
) -> Asked {
    let mut done = Vec::new();
    let mut sent = 0;
    let mut left = 0;
    let mut regraded = 0;
    for &(c, p) in &run.selected {
        let (Some(view), Some(probe)) = (
            session.views.get(c),
            session.probes.get(c).and_then(|cp| cp.probes.get(p)),
        ) else {
            continue;
        };
        for &strategy in &run.strategies {
            let mut messages = probe_messages(session, view, strategy, probe);
            if run.tools_as_text {
                messages = tools_as_text(&messages);
            }
            for sample in 0..run.samples {
                let id = request_id(view.through_seq, probe, strategy, sample);
                let (outcome, fresh) = match earlier(&id) {
                    Some(outcome) => {
                        let (outcome, changed) = graded_again(outcome, probe);
                        regraded += usize::from(changed);
                        (outcome, false)
                    }
                    None if max_sent.is_some_and(|max| sent >= max) => {
                        left += 1;
                        continue;
                    }
                    None => match guard.refusal() {
                        Some(reason) => (Outcome::Skipped { reason }, false),
                        None => {
                            let mut counted = |messages: &[Message], sampling: Sampling| {
                                sent += 1;
                                let result = ask(messages, sampling);
                                guard.record(&result);
                                result
                            };
                            let outcome =
                                outcome(session, run, &messages, probe, sample, &mut counted);
                            (outcome, true)
                        }
                    },
                };
                let request = ProbeRequest {
                    through_seq: view.through_seq,
                    probe: probe.clone(),
                    strategy,
                    sample,
                    outcome,
                };
                progress(&request, fresh);
                done.push(request);
            }
        }
    }
    Asked {
        requests: done,
        left,
        regraded,
    }
}

fn outcome(
    session: &ProbeSession,
    run: &ProbeRun,
    messages: &[Message],
    probe: &Probe,
    sample: u32,
    ask: &mut impl FnMut(&[Message], Sampling) -> std::result::Result<String, SummarizerError>,
) -> Outcome {
    if let Some(window) = run.model_window {
        let tokens = estimate_messages(messages, session.family);
        if tokens > window {
            return Outcome::Skipped {
                reason: format!(
                    "the view is about {tokens} tokens, over the model's window of {window}"
                ),
            };
        }
    }
    let bytes = ctxkit_core::to_openai(messages).to_string().len();
    if bytes > run.max_request_bytes {
        return Outcome::Failed {
            kind: FailureKind::TooLarge,
            message: format!(
                "the request's messages are {bytes} bytes, over the run's bound of {}",
                run.max_request_bytes
            ),
        };
    }
    let sampling = Sampling {
        temperature: 0.0,
        seed: run.seed.wrapping_add(u64::from(sample)),
    };
    match ask(messages, sampling) {
        Ok(answer) => {
            let held = grade(&answer, &probe.key);
            Outcome::Answered { answer, held }
        }
        Err(error) => Outcome::Failed {
            kind: failure_kind(&error),
            message: error.to_string(),
        },
    }
}
