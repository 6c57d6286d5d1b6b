//! The policy: everything configurable about planning a turn (the compaction [`Strategy`],
//! what a summary may cost and must keep, clearing, nudges), with the defaults a coding agent
//! on a 200k window wants.

use serde::{Deserialize, Serialize};

use crate::compaction::{ClearPolicy, ExtractiveLimits};
use crate::memory::NudgePolicy;
use crate::text::TranscriptLimits;
use crate::tokens::ModelFamily;

/// How to bring an over-budget view down.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Strategy {
    /// Summarize the oldest turns into a checkpoint (LLM or extractive), then truncate if
    /// that is not enough.
    Summarize,
    /// Keep only the last messages (pair-safe), then truncate if that is not enough.
    SlidingWindow {
        /// How many messages to keep.
        keep_last: usize,
    },
    /// Truncate only: no summary.
    Truncate,
    /// Never compact (the view may exceed the budget; stats say so).
    Off,
}

/// Everything configurable about planning.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default, deny_unknown_fields)]
pub struct Policy {
    /// Which tokenizer to estimate for.
    pub family: ModelFamily,
    /// How to compact.
    pub strategy: Strategy,
    /// A summary never covers the last this-many messages.
    pub keep_last_messages: usize,
    /// Summaries estimated above this are rejected (and a request asks for less).
    pub max_summary_tokens: u64,
    /// Bounds of the transcript inside a summary request.
    pub transcript: TranscriptLimits,
    /// Bounds of the extractive summarizer.
    pub extractive: ExtractiveLimits,
    /// Clear old tool results before compacting (off by default).
    pub clear_tool_results: Option<ClearPolicy>,
    /// Reminders.
    pub nudges: NudgePolicy,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            family: ModelFamily::default(),
            strategy: Strategy::Summarize,
            keep_last_messages: 6,
            max_summary_tokens: 6_000,
            transcript: TranscriptLimits::default(),
            extractive: ExtractiveLimits::default(),
            clear_tool_results: None,
            nudges: NudgePolicy::default(),
        }
    }
}
