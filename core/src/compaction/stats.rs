//! What a view is made of and how the pipeline made it: the [`Tier`] that produced it and its
//! [`ViewStats`] (tokens per part, the budget, what was dropped, cleared, cut, repaired).

use serde::{Deserialize, Serialize};

use crate::compaction::{DroppedFacts, Fallback, SummaryMethod};
use crate::memory::NudgeKind;
use crate::tokens::{RefusedUsage, UsageAnchor};
use crate::wire::breakpoints::CacheBreakpoint;
use crate::wire::RepairReport;

/// Which tier produced the view.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// The view fit as it was.
    #[default]
    Fits,
    /// Old tool results were cleared.
    Cleared,
    /// A checkpoint made this turn (LLM or extractive summary) shaped the view.
    Summarized,
    /// A sliding window.
    Window,
    /// Truncation: units dropped and/or messages cut.
    Truncated,
    /// Compaction is off and the view is over the trigger.
    Uncompacted,
}

crate::model::unit_enum::unit_enum_deserialize!(
    Tier,
    "Tier",
    [
        Fits = "fits",
        Cleared = "cleared",
        Summarized = "summarized",
        Window = "window",
        Truncated = "truncated",
        Uncompacted = "uncompacted"
    ]
);

/// Where a view's tokens went and what the pipeline did to make it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ViewStats {
    /// The tier that produced the view.
    pub tier: Option<Tier>,
    /// Estimated tokens of the system prompt.
    pub system_tokens: u64,
    /// Estimated tokens of the checkpoint's summary message.
    pub summary_tokens: u64,
    /// Estimated tokens of the conversation messages.
    pub message_tokens: u64,
    /// Estimated tokens of the nudges.
    pub nudge_tokens: u64,
    /// The sum of the above.
    pub total_tokens: u64,
    /// The total corrected by the last real usage, when an anchor applied.
    pub calibrated_tokens: Option<u64>,
    /// The usable budget, the trigger and the low-water mark.
    pub budget_tokens: u64,
    /// See [`crate::Budget::trigger`].
    pub trigger_tokens: u64,
    /// See [`crate::Budget::low_water`].
    pub low_water_tokens: u64,
    /// Whether the view fits the usable budget.
    pub fits: bool,
    /// Messages in the view (summary and nudges included).
    pub messages: usize,
    /// The checkpoint the view starts from.
    pub checkpoint_through: Option<u64>,
    /// How that checkpoint was made.
    pub checkpoint_method: Option<SummaryMethod>,
    /// The last log `seq` in the view (for a usage anchor).
    pub last_seq: Option<u64>,
    /// Log messages dropped this turn by a sliding window or by truncation (messages covered
    /// by a summary are not counted here).
    pub dropped_messages: usize,
    /// Tool results cleared this turn.
    pub cleared_results: usize,
    /// Messages cut head + tail this turn.
    pub cut_messages: usize,
    /// Offload references in the view.
    pub offload_references: usize,
    /// Nudges appended.
    pub nudges: Vec<NudgeKind>,
    /// What tool-pair repair changed.
    pub repair: RepairReport,
    /// The pinned facts that summary caps dropped so far, per kind, as the checkpoint in the
    /// view records them (they stay in the log: history search finds them).
    #[serde(default)]
    pub dropped_facts: DroppedFacts,
    /// Where the view's cache breakpoints are ([`crate::wire::breakpoints::place_breakpoints`]): the end
    /// of the system prompt, of the checkpoint summary, of the previous turn and of the
    /// conversation before its nudges. An Anthropic rendering carries them as `cache_control`
    /// when the caller asks for caching ([`crate::wire::render_view_cached`]); OpenAI caches
    /// the same prefixes by itself.
    #[serde(default)]
    pub cache_breakpoints: Vec<CacheBreakpoint>,
    /// The last reported usage the calibration refused, if one was refused since the last it
    /// took ([`crate::tokens::check_usage`]): the view is counted without it. Absent when
    /// none was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused_usage: Option<RefusedUsage>,
    /// The LLM calls of this turn answered by a fallback, and why
    /// ([`crate::compaction::fallback`]): a failed, timed-out or refused call, an unusable or
    /// stale answer, a summarizer the circuit breaker skipped. Absent when none was.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fallbacks: Vec<Fallback>,
}

impl ViewStats {
    /// The anchor to store once the API reports `input_tokens` for this view.
    pub fn usage_anchor(&self, input_tokens: u64) -> UsageAnchor {
        UsageAnchor {
            checkpoint_through: self.checkpoint_through,
            last_seq: self.last_seq,
            input_tokens,
            estimated_tokens: self.total_tokens,
        }
    }
}
