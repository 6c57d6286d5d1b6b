//! Calibration: once the API has reported the real size of a view, trust it.
//!
//! Estimates drift from the real tokenizer (by content, by model). When a provider reports the
//! real `input_tokens` of a request, ctxkit keeps that as a [`UsageAnchor`] together with what
//! it had estimated for the same view. A later view that extends the anchored one (same
//! checkpoint, more messages) is then counted as the real number plus the estimate of what
//! changed since: the approach Codex uses. The error is confined to the new messages instead of
//! accumulating over the whole view. An anchor from before a compaction no longer describes the
//! view and is ignored.

use serde::{Deserialize, Serialize};

/// The real size of one view, as the API reported it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct UsageAnchor {
    /// The checkpoint the anchored view started from (`None`: no checkpoint).
    pub checkpoint_through: Option<u64>,
    /// The last log `seq` in the anchored view.
    pub last_seq: Option<u64>,
    /// What the provider reported: input tokens, including cached ones.
    pub input_tokens: u64,
    /// What ctxkit estimated for the same view.
    pub estimated_tokens: u64,
}

/// The calibrated size of a view whose raw estimate is `estimated_tokens`, or `None` when the
/// anchor does not describe this view (another checkpoint, or a log that went backwards).
///
/// ```
/// use ctxkit_core::tokens::{calibrated_tokens, UsageAnchor};
///
/// let anchor = UsageAnchor { checkpoint_through: None, last_seq: Some(40), input_tokens: 31_000, estimated_tokens: 25_000 };
/// // Two messages estimated at 1,200 tokens were appended since.
/// assert_eq!(calibrated_tokens(&anchor, None, Some(42), 26_200), Some(32_200));
/// // After a compaction the anchor no longer applies.
/// assert_eq!(calibrated_tokens(&anchor, Some(30), Some(42), 9_000), None);
/// ```
pub fn calibrated_tokens(
    anchor: &UsageAnchor,
    checkpoint_through: Option<u64>,
    last_seq: Option<u64>,
    estimated_tokens: u64,
) -> Option<u64> {
    if anchor.checkpoint_through != checkpoint_through || last_seq < anchor.last_seq {
        return None;
    }
    let real = anchor.input_tokens;
    Some(if estimated_tokens >= anchor.estimated_tokens {
        real.saturating_add(estimated_tokens - anchor.estimated_tokens)
    } else {
        real.saturating_sub(anchor.estimated_tokens - estimated_tokens)
    })
}
