//! A probe run's data: the views a probe is asked over ([`ViewStrategy`]: ctxkit's view at a
//! compaction, the whole log up to it, a sliding window of the same size), the messages each
//! request sends ([`probe_messages`]), what names a request across runs ([`RequestId`]), and
//! what became of it ([`Outcome`], [`FailureKind`]), graded by the probe's key.
//!
//! Pure: the replay that makes the views and the client that asks are the native crate's
//! (`ctxkit::reports::probe`); an answer read back from a resume file is graded again here
//! ([`graded_again`]), never trusted.

use ctxkit_core::model::{Entry, Message, Role};
use ctxkit_core::tokens::ModelFamily;

use super::{grade, sliding_window, CheckpointProbes, Probe};

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
    pub entries: Vec<Entry>,
    /// The view of each compaction, oldest first.
    pub views: Vec<CompactionView>,
    /// The probes of each checkpoint, in the same order.
    pub probes: Vec<CheckpointProbes>,
    /// The tokenizer family of the replay.
    pub family: ModelFamily,
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
    /// its circuit breaker opened).
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
    /// The probes asked, as (checkpoint index, probe index) (see [`super::select_probes`]).
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
    /// Tool calls and results written as text ([`super::tools_as_text`]), for a server
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
    /// The probe's kind, as [`super::ProbeKind::as_str`] names it.
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

/// What names the request of `probe` at the checkpoint through `through_seq`, over
/// `strategy`'s view, sample `sample`.
pub fn request_id(
    through_seq: u64,
    probe: &Probe,
    strategy: ViewStrategy,
    sample: u32,
) -> RequestId {
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

/// `outcome` (taken from a resume file) with its answer graded against `probe`'s key, and
/// whether that changed the grade it came with.
pub fn graded_again(outcome: Outcome, probe: &Probe) -> (Outcome, bool) {
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
