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

use ctxkit_core::tokens::{estimate_messages, ModelFamily};
use ctxkit_core::{Message, Role};
use ctxkit_lab::probes::{
    grade, session_probes, sliding_window, tools_as_text, CheckpointProbes, Probe,
};

use crate::llm::{Sampling, SummarizerError};
use crate::reports::probe_guard::RunGuard;
use crate::reports::Step;
use crate::{Engine, Result};

/// Which view a probe is asked over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ViewStrategy {
    /// The view ctxkit made at the compaction.
    Ctxkit,
    /// The whole log up to the same point (the ceiling).
    Full,
    /// The newest messages that fit the same budget (the floor).
    SlidingWindow,
}

impl ViewStrategy {
    /// Every strategy, in report order.
    pub const ALL: [ViewStrategy; 3] = [
        ViewStrategy::Ctxkit,
        ViewStrategy::Full,
        ViewStrategy::SlidingWindow,
    ];

    /// Its name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            ViewStrategy::Ctxkit => "ctxkit",
            ViewStrategy::Full => "full",
            ViewStrategy::SlidingWindow => "sliding-window",
        }
    }
}

/// The view of one compaction, as the agent would have sent it.
#[derive(Debug, Clone)]
pub struct CompactionView {
    /// The `through_seq` of the checkpoint the compaction made.
    pub through_seq: u64,
    /// The last `seq` of the log when the view was made.
    pub tail_end_seq: u64,
    /// The messages sent: the system prompt, then the conversation.
    pub messages: Vec<Message>,
    /// The tokens of the view's conversation (its summary and messages): the sliding
    /// window gets as many.
    pub room_tokens: u64,
}

/// A replayed session ready to be probed.
#[derive(Debug, Clone)]
pub struct ProbeSession {
    /// The whole log after the replay.
    pub entries: Vec<ctxkit_core::Entry>,
    /// The view of each compaction, oldest first.
    pub views: Vec<CompactionView>,
    /// The probes of each checkpoint, in the same order.
    pub probes: Vec<CheckpointProbes>,
    /// The tokenizer family of the replay.
    pub family: ModelFamily,
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

/// Why a request got no answer to grade.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum FailureKind {
    /// The model declined.
    Refused,
    /// No answer in time.
    Timeout,
    /// An answer that is not the API's JSON, or empty.
    Junk,
    /// The server said the request does not fit the model's context.
    ContextTooLong,
    /// Another error status, or a redirect (not followed).
    Http,
    /// The connection failed.
    Transport,
    /// The request is bigger than the run allows, or the response than the client reads.
    TooLarge,
}

impl FailureKind {
    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            FailureKind::Refused => "refused",
            FailureKind::Timeout => "timeout",
            FailureKind::Junk => "junk",
            FailureKind::ContextTooLong => "context_too_long",
            FailureKind::Http => "http",
            FailureKind::Transport => "transport",
            FailureKind::TooLarge => "too_large",
        }
    }

    /// The kind of a [`FailureKind::name`].
    pub fn from_name(name: &str) -> Option<FailureKind> {
        [
            FailureKind::Refused,
            FailureKind::Timeout,
            FailureKind::Junk,
            FailureKind::ContextTooLong,
            FailureKind::Http,
            FailureKind::Transport,
            FailureKind::TooLarge,
        ]
        .into_iter()
        .find(|kind| kind.name() == name)
    }

    /// The kind of a client error.
    pub fn of(error: &SummarizerError) -> FailureKind {
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
}

/// What became of one request.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The model answered; `held`: the answer holds the key.
    Answered {
        /// The answer.
        answer: String,
        /// Whether it holds the probe's key.
        held: bool,
    },
    /// The request failed.
    Failed {
        /// Why.
        kind: FailureKind,
        /// The error, in the client's words.
        message: String,
    },
    /// Not sent (the view does not fit the model's window, or the run's deadline passed or
    /// its circuit breaker opened: [`RunGuard`]).
    Skipped {
        /// Why.
        reason: String,
    },
}

/// One request of a probe run.
#[derive(Debug, Clone)]
pub struct ProbeRequest {
    /// The checkpoint's `through_seq`.
    pub through_seq: u64,
    /// The probe.
    pub probe: Probe,
    /// The view it was asked over.
    pub strategy: ViewStrategy,
    /// The sample, from 0.
    pub sample: u32,
    /// What became of it.
    pub outcome: Outcome,
}

/// The bounds and settings of a probe run.
#[derive(Debug, Clone)]
pub struct ProbeRun {
    /// The probes asked, as (checkpoint index, probe index) (see the lab's `select_probes`).
    pub selected: Vec<(usize, usize)>,
    /// The views each probe is asked over.
    pub strategies: Vec<ViewStrategy>,
    /// Samples per probe and view (each with its own seed).
    pub samples: u32,
    /// The seed of the first sample.
    pub seed: u64,
    /// The model's context window, when known: a view above it is not sent.
    pub model_window: Option<u64>,
    /// The largest request body sent, in bytes.
    pub max_request_bytes: usize,
    /// Tool calls and results written as text (the lab's `tools_as_text`), for a server
    /// that takes no tools.
    pub tools_as_text: bool,
}

/// The instruction after each question.
const ANSWER_INSTRUCTION: &str =
    "Answer from the conversation above, briefly; quote exact text where asked.";

/// The messages a probe is asked with over `strategy`'s view of `view`.
pub fn probe_messages(
    session: &ProbeSession,
    view: &CompactionView,
    strategy: ViewStrategy,
    probe: &Probe,
) -> Vec<Message> {
    let system: Vec<Message> = view
        .messages
        .first()
        .filter(|m| m.role == Role::System)
        .cloned()
        .into_iter()
        .collect();
    let mut messages = match strategy {
        ViewStrategy::Ctxkit => view.messages.clone(),
        ViewStrategy::Full => {
            let log = session
                .entries
                .iter()
                .filter(|e| e.seq <= view.tail_end_seq)
                .map(|e| e.message.clone());
            system.into_iter().chain(log).collect()
        }
        ViewStrategy::SlidingWindow => {
            let newest = sliding_window(&session.entries, view.tail_end_seq, view.room_tokens);
            system.into_iter().chain(newest).collect()
        }
    };
    messages.push(Message::user(format!(
        "{}\n\n{ANSWER_INSTRUCTION}",
        probe.question
    )));
    messages
}

/// What names one request of a run across runs (for `ctxkit probe --resume`): its
/// checkpoint, its probe (kind, source, source `seq`, question), its view and its sample.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct RequestId {
    /// The checkpoint's `through_seq`.
    pub through_seq: u64,
    /// The probe's kind, as the lab names it.
    pub kind: String,
    /// The probe's source within its kind.
    pub source: String,
    /// The probe's source `seq`.
    pub source_seq: u64,
    /// The probe's question.
    pub question: String,
    /// The view's name ([`ViewStrategy::name`]).
    pub strategy: String,
    /// The sample, from 0.
    pub sample: u32,
}

impl ProbeRequest {
    /// What names this request across runs.
    pub fn id(&self) -> RequestId {
        request_id(self.through_seq, &self.probe, self.strategy, self.sample)
    }
}

fn request_id(through_seq: u64, probe: &Probe, strategy: ViewStrategy, sample: u32) -> RequestId {
    RequestId {
        through_seq,
        kind: probe.kind.as_str().to_owned(),
        source: probe.source.clone(),
        source_seq: probe.source_seq,
        question: probe.question.clone(),
        strategy: strategy.name().to_owned(),
        sample,
    }
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

/// `outcome` (taken from a resume file) with its answer graded against `probe`'s key, and
/// whether that changed the grade it came with.
fn graded_again(outcome: Outcome, probe: &Probe) -> (Outcome, bool) {
    match outcome {
        Outcome::Answered { answer, held } => {
            let graded = grade(&answer, &probe.key);
            (
                Outcome::Answered {
                    answer,
                    held: graded,
                },
                graded != held,
            )
        }
        other => (other, false),
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
            kind: FailureKind::of(&error),
            message: error.to_string(),
        },
    }
}
