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

/// A reported usage the calibration did not take: outside the plausible band of the estimate.
///
/// A provider's real count differs from ctxkit's estimate by the tokenizer, the tool
/// definitions and the framing, never by orders of magnitude; a number far outside the band is
/// a caller's mistake (the wrong field, cached tokens left out) or a lie, and believing it would
/// let a view overflow the window (a low number) or compact every turn (a high one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct RefusedUsage {
    /// What was reported.
    pub input_tokens: u64,
    /// What ctxkit estimated for the same view.
    pub estimated_tokens: u64,
    /// The lowest count taken for that estimate.
    pub lowest_plausible: u64,
    /// The highest count taken for that estimate.
    pub highest_plausible: u64,
}

impl std::fmt::Display for RefusedUsage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "reported usage of {} input tokens refused: the view was estimated at {} tokens, so only {} to {} is plausible (pass the provider's whole input: uncached + cache reads + cache writes)",
            self.input_tokens, self.estimated_tokens, self.lowest_plausible, self.highest_plausible
        )
    }
}

/// Checks a reported usage against the view's estimate and usable budget before it becomes an
/// anchor. Taken: from half the estimate, less a hundredth of the budget (small views, where
/// the estimate's fixed overheads dominate), to four times the estimate plus the whole budget
/// (tool definitions and images the estimate does not see). Zero is never taken: a request
/// always has input.
///
/// ```
/// use ctxkit_core::tokens::check_usage;
///
/// // The issue's case: a 25.8k-token view reported as 10 tokens on an 8k budget.
/// assert!(check_usage(25_800, 8_000, 10).is_err());
/// // A real count 20% over the estimate, and one with cached tokens left out by half.
/// assert!(check_usage(25_800, 100_000, 31_000).is_ok());
/// assert!(check_usage(25_800, 100_000, 9_000).is_err());
/// ```
pub fn check_usage(
    estimated_tokens: u64,
    budget_tokens: u64,
    input_tokens: u64,
) -> Result<(), RefusedUsage> {
    let lowest_plausible = (estimated_tokens / 2)
        .saturating_sub(budget_tokens / 100)
        .max(1);
    let highest_plausible = estimated_tokens
        .saturating_mul(4)
        .saturating_add(budget_tokens);
    if (lowest_plausible..=highest_plausible).contains(&input_tokens) {
        Ok(())
    } else {
        Err(RefusedUsage {
            input_tokens,
            estimated_tokens,
            lowest_plausible,
            highest_plausible,
        })
    }
}
