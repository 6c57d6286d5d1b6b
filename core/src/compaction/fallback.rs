//! Fallbacks: an LLM call a turn asked for (a summary, or a memory extraction before it) that
//! was not answered by the model's text, and why.
//!
//! The driver records one [`Fallback`] for each: the shell's call failed, timed out or was
//! refused by the model ([`crate::TurnDriver::summary_failed`],
//! [`crate::TurnDriver::extraction_failed`]), the core refused the answer (empty, oversized,
//! without the request's tag: [`FallbackKind::Unusable`]), the answer came after another turn
//! stored a checkpoint over the same messages ([`FallbackKind::Stale`]), or the summarizer was
//! not asked because it failed too often in a row ([`FallbackKind::Skipped`], see
//! [`crate::turn::SummarizerBreaker`]). The ready view's [`crate::ViewStats::fallbacks`] lists
//! them, so every shell reports the same thing in the same words: the native engine as warning
//! events, the JS Engine in its result, the adapters as events.
//!
//! A turn with no LLM (`Engine.view`, a preview, the native extractive summarizer) makes the
//! extractive summary by design: that is not a fallback, and nothing is recorded.

use serde::{Deserialize, Serialize};

/// Which LLM call fell back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum LlmCall {
    /// The summary request: the extractive summary was used instead.
    Summary,
    /// The memory extraction request: no memories were extracted this turn.
    Extraction,
}

crate::model::unit_enum::unit_enum_deserialize!(
    LlmCall,
    "LlmCall",
    [Summary = "summary", Extraction = "extraction"]
);

/// Why a call fell back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum FallbackKind {
    /// The call failed: a connection or HTTP error, a callback that threw or rejected, an
    /// answer that is not text.
    Error,
    /// No answer within the caller's timeout.
    Timeout,
    /// The model declined to answer (a refusal).
    Refused,
    /// The model answered and the core refused the answer: empty, over the size limit, or
    /// without the request's tag where quoted markup could stand in for it.
    Unusable,
    /// The answer came after another turn of the session stored a checkpoint over the same
    /// messages; that checkpoint was kept and the answer dropped.
    Stale,
    /// Not asked: the summarizer failed too many times in a row (any kind of failure, this
    /// one included), so this compaction went straight to the extractive summary (the circuit
    /// breaker).
    Skipped,
}

crate::model::unit_enum::unit_enum_deserialize!(
    FallbackKind,
    "FallbackKind",
    [
        Error = "error",
        Timeout = "timeout",
        Refused = "refused",
        Unusable = "unusable",
        Stale = "stale",
        Skipped = "skipped"
    ]
);

/// One LLM call of a turn that fell back, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Fallback {
    /// The call.
    pub call: LlmCall,
    /// What kind of fallback.
    pub kind: FallbackKind,
    /// Why, in words (the shell's error, or the core's reason).
    pub reason: String,
}

impl Fallback {
    /// The fallback, told as a warning: what happened and, where its reason does not say it,
    /// what was done instead.
    pub fn describe(&self) -> String {
        match (self.call, self.kind) {
            (LlmCall::Extraction, _) => format!("memory extraction skipped: {}", self.reason),
            (LlmCall::Summary, FallbackKind::Stale | FallbackKind::Skipped) => self.reason.clone(),
            (LlmCall::Summary, FallbackKind::Unusable) => format!(
                "the LLM's summary was not used ({}); extractive summary instead",
                self.reason
            ),
            (LlmCall::Summary, _) => format!("{}; extractive summary instead", self.reason),
        }
    }
}
