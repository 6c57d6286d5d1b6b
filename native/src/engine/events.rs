//! What the engine reports besides its results: token usage before and after each model call,
//! compactions, offloads, and warnings for everything that fell back instead of failing.
//!
//! Each call returns the events it produced, and the engine also passes every event to the
//! sink set with [`crate::Engine::on_event`] (a logger, a progress display). Events are data:
//! serializable, never needed for correctness.

use ctxkit_core::compaction::SummaryMethod;
use serde::Serialize;

/// Something the engine did or had to work around.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Event {
    /// Before the model call: what the prepared view is estimated to cost.
    TokensEstimated {
        /// The session.
        session: String,
        /// The view's estimate (system prompt, summary, messages, nudges).
        estimated_tokens: u64,
        /// The estimate corrected by the last real usage, when an anchor applied.
        calibrated_tokens: Option<u64>,
        /// The usable budget.
        budget_tokens: u64,
        /// Whether the view fits it.
        fits: bool,
    },
    /// After the model call: what the API said the view cost.
    TokensReported {
        /// The session.
        session: String,
        /// The real input tokens.
        input_tokens: u64,
        /// What ctxkit had estimated for the same view.
        estimated_tokens: u64,
    },
    /// After the model call: a reported usage the calibration refused (outside the plausible
    /// band of the estimate: [`ctxkit_core::tokens::check_usage`]); nothing was stored.
    UsageRefused {
        /// The session.
        session: String,
        /// What was reported.
        input_tokens: u64,
        /// What ctxkit had estimated for the same view.
        estimated_tokens: u64,
        /// Why, in words.
        reason: String,
    },
    /// The plan asked for a summary.
    SummaryRequested {
        /// The session.
        session: String,
        /// The previous checkpoint's end.
        after_seq: Option<u64>,
        /// The new checkpoint's end.
        through_seq: u64,
        /// Messages covered.
        messages: usize,
        /// Their estimated tokens.
        covered_tokens: u64,
    },
    /// A summary request was handed to a worker thread, to answer before the trigger.
    BackgroundSummaryStarted {
        /// The session.
        session: String,
        /// The checkpoint it builds on.
        after_seq: Option<u64>,
        /// The last seq it covers.
        through_seq: u64,
    },
    /// A checkpoint was stored.
    Compacted {
        /// The session.
        session: String,
        /// How the summary was made.
        method: SummaryMethod,
        /// The last seq it covers.
        through_seq: u64,
        /// The summary message's estimate.
        summary_tokens: u64,
    },
    /// Memories were extracted before a compaction.
    MemoriesExtracted {
        /// The session.
        session: String,
        /// New memories stored.
        added: usize,
        /// Drafts that repeated a memory.
        duplicates: usize,
        /// Drafts the core rejected.
        rejected: usize,
    },
    /// A tool output was written to a file and replaced by a reference.
    Offloaded {
        /// The session.
        session: String,
        /// The tool message's seq.
        seq: u64,
        /// The file, relative to the working directory.
        relative_path: String,
        /// Its size.
        bytes: u64,
    },
    /// The summary call's cost, when its API said (Anthropic's server compaction: the sum of
    /// its iterations).
    SummarizerUsage {
        /// The session.
        session: String,
        /// Input tokens billed.
        input_tokens: u64,
        /// Output tokens billed.
        output_tokens: u64,
        /// The server-side iterations they were summed over (1 when none were listed).
        iterations: usize,
    },
    /// Something fell back instead of failing.
    Warning {
        /// The session, when there is one.
        session: Option<String>,
        /// What kind of fallback.
        kind: WarningKind,
        /// What happened, in words.
        message: String,
    },
}

/// What a warning is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum WarningKind {
    /// An output stayed in the log instead of being offloaded.
    OffloadFailed,
    /// The LLM summarizer failed; the extractive summary was used.
    SummarizerFailed,
    /// The LLM's summary was unusable (empty, too long, without the request's tag); the
    /// extractive summary was used.
    SummaryRejected,
    /// The LLM's summary came after another turn stored a checkpoint over the same messages;
    /// that checkpoint was kept.
    SummaryStale,
    /// The summarizer was not asked: it failed too many times in a row (timed out, answered
    /// an error status, could not be reached, refused, or answered unusably: the core's
    /// circuit breaker); the extractive summary was used.
    SummarizerSkipped,
    /// Memory extraction failed; compaction went on without it.
    ExtractionFailed,
    /// `MEMORY.md` could not be written; the memories are stored.
    MemoryFileFailed,
    /// `AGENTS.md` exists but could not be read; the prompt goes without it.
    AgentsMdUnreadable,
    /// The store could not make the turn durable against power loss (the data is committed).
    SyncFailed,
}

impl Event {
    /// A warning.
    pub fn warning(session: Option<&str>, kind: WarningKind, message: impl Into<String>) -> Self {
        Event::Warning {
            session: session.map(str::to_owned),
            kind,
            message: message.into(),
        }
    }

    /// True for [`Event::Warning`].
    pub fn is_warning(&self) -> bool {
        matches!(self, Event::Warning { .. })
    }
}
