//! The policy: everything configurable about planning a turn (the compaction [`Strategy`],
//! what a summary may cost and must keep, clearing, nudges), with the defaults a coding agent
//! on a 200k window wants.

use serde::{Deserialize, Serialize};

use crate::compaction::{Budget, ClearPolicy, ExtractiveLimits, RestoreLimits, SummaryCaps};
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

/// How a summary request is meant to be sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum SummaryMode {
    /// A fresh prompt only: the covered messages fenced as a transcript under the summarizer's
    /// own system prompt. Works with any summarizer model.
    #[default]
    Fresh,
    /// The fresh prompt and the cache-safe request beside it
    /// ([`crate::compaction::SummaryRequest::cache_safe_messages`]), for a summarizer that is
    /// the agent's own model: the provider serves the history from its cache (see
    /// `docs/reports/economics.md` for what that saves).
    CacheSafe,
}

crate::model::unit_enum::unit_enum_deserialize!(
    SummaryMode,
    "SummaryMode",
    [Fresh = "fresh", CacheSafe = "cache_safe"]
);

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
    /// A summary may also cost at most this share of the usable budget, in percent, so a small
    /// window gets a small summary (see [`Policy::summary_caps`]).
    pub summary_share_percent: u8,
    /// Bounds of the transcript inside a summary request.
    pub transcript: TranscriptLimits,
    /// Bounds of the extractive summarizer.
    pub extractive: ExtractiveLimits,
    /// Clear old tool results before compacting (off by default).
    pub clear_tool_results: Option<ClearPolicy>,
    /// Reminders.
    pub nudges: NudgePolicy,
    /// Whether summary requests also carry their cache-safe form.
    pub summary_mode: SummaryMode,
    /// Background compaction: past this point, in percent of the way from the low-water mark
    /// to the trigger, a ready turn also hands out a summary request to answer off the
    /// critical path ([`crate::turn::background_request`]); `None` (the default): off.
    pub background_percent: Option<u8>,
    /// When the caller says the provider's cache has expired
    /// ([`crate::turn::TurnInputs::cache_expired`]), compact from this point, in percent of the
    /// way from the low-water mark to the trigger ([`crate::compaction::Budget::with_cold_cache`]);
    /// `None`: the trigger is the same warm or cold. Default 25: on the corpus's Claude Code
    /// session it cut the billed input by 2.9% at the same compactions and pinned recall
    /// (docs/reports/economics.md).
    pub cold_trigger_percent: Option<u8>,
    /// Compaction ahead of the cache's expiry ([`crate::turn::idle_decision`]): a session idle
    /// into the last [`Policy::idle_margin_percent`] of its cache lifetime is compacted when
    /// its view is above this point, in percent of the way from the low-water mark to the
    /// trigger; `None`: never. Default 50: below it a compaction shrinks the view too little
    /// to pay for the summary.
    pub idle_trigger_percent: Option<u8>,
    /// The share of the cache lifetime, in percent, before its end at which an idle
    /// compaction runs (at least 30 seconds). Default 10: 54 minutes into an hour, as Claude
    /// Code does.
    pub idle_margin_percent: u8,
    /// The restore block a compaction keeps with its checkpoint: the latest content of the
    /// files read most recently before the cut, sent right after the summary
    /// ([`crate::compaction::restore_block`]); `None`: off. On by default (5 files, 5,000
    /// tokens each, 10% of the usable budget, at most 25,000): on the corpus's Claude Code
    /// session `ctxkit fidelity`'s needed next rose from 52/62 (84%) to 51/57 (89%) at 100k and
    /// 200k and from 58/68 (85%) to 82/96 (85%) at 32k, and `ctxkit cost` went from 54.9% to
    /// 55.3% of the recorded cost at 200k (docs/reports/economics.md).
    pub restore: Option<RestoreLimits>,
    /// The directory the agent works in, when the caller knows it (a transcript's own records,
    /// [`crate::import::ImportedSession::working_directory`]; the harness's settings): every
    /// summary names it and writes paths relative to it. `None` (the default): the directory
    /// the log shows (a harness's `<environment_context>`, else the one most absolute paths of
    /// the calls lie under). A value that is not an absolute directory on one line
    /// ([`crate::text::is_working_directory`]) is not taken.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub working_directory: Option<String>,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            family: ModelFamily::default(),
            strategy: Strategy::Summarize,
            keep_last_messages: 6,
            max_summary_tokens: 6_000,
            summary_share_percent: 10,
            transcript: TranscriptLimits::default(),
            extractive: ExtractiveLimits::default(),
            clear_tool_results: None,
            nudges: NudgePolicy::default(),
            summary_mode: SummaryMode::Fresh,
            background_percent: None,
            cold_trigger_percent: Some(25),
            idle_trigger_percent: Some(50),
            idle_margin_percent: 10,
            restore: Some(RestoreLimits::default()),
            working_directory: None,
        }
    }
}

impl Policy {
    /// The limits of a summary made for `budget`: [`Policy::max_summary_tokens`], but at most
    /// [`Policy::summary_share_percent`] of the usable budget; and in bytes three per token
    /// (safe for code and English), at most [`ExtractiveLimits::max_bytes`]. On a 200k window
    /// the defaults give 6,000 tokens and 8,000 bytes.
    pub fn summary_caps(&self, budget: &Budget) -> SummaryCaps {
        let share = budget
            .usable()
            .saturating_mul(u64::from(self.summary_share_percent))
            / 100;
        let max_summary_tokens = self.max_summary_tokens.min(share).max(1);
        let max_bytes = usize::try_from(max_summary_tokens.saturating_mul(3))
            .unwrap_or(usize::MAX)
            .min(self.extractive.max_bytes);
        SummaryCaps {
            max_summary_tokens,
            max_bytes,
        }
    }

    /// The transcript bounds of a summary or extraction request made for `budget`:
    /// [`Policy::transcript`], but the whole transcript at most the usable budget at three
    /// bytes a token (the estimate's worst case for code), and no message bigger than the
    /// whole, so a request made for a small window fits a model of that window (before, a 9k
    /// window's request carried a 60 KB transcript). On a 200k window the defaults are
    /// unchanged; on an 8k one the transcript is at most about 20 KB.
    pub fn transcript_limits(&self, budget: &Budget) -> TranscriptLimits {
        let by_window = usize::try_from(budget.usable().saturating_mul(3))
            .unwrap_or(usize::MAX)
            .max(1);
        let total_bytes = self.transcript.total_bytes.min(by_window);
        TranscriptLimits {
            per_tool_output_bytes: self.transcript.per_tool_output_bytes.min(total_bytes),
            per_tool_call_bytes: self.transcript.per_tool_call_bytes.min(total_bytes),
            per_message_bytes: self.transcript.per_message_bytes.min(total_bytes),
            total_bytes,
        }
    }
}
