//! The token budget of a view, and the marks that trigger and size a compaction.
//!
//! `usable = context_window - output_reserve - tool_schema_tokens - safety_margin`: the
//! reference design compacted at 80% of the raw window and forgot that tool schemas (10-30K
//! tokens) and the model's own output share that window. A compaction starts above the
//! trigger (default 80% of usable) and brings the view down to the low-water mark (default
//! 50%), so the next turns append to a stable prefix for a while instead of compacting again.
//!
//! On a big window the percentages alone let a view grow far past what pays: with prompt
//! caching every call re-reads the whole prefix (at a tenth of the price), so a view twice as
//! big costs about twice as much per call, while a compaction costs one rewrite of what it
//! keeps. The cost marks ([`Budget::cost_trigger_tokens`], [`Budget::cost_low_water_tokens`])
//! cap both marks in tokens. A sawtooth between a low-water mark `L` and a trigger `T`, with a
//! log growing `g` tokens a call, costs per call about `r(L+T)/2 + w·L·g/(T−L)` (reads at `r`,
//! writes at `w` of the input price), lowest at `T = L + sqrt(2·(w/r)·L·g)`: with Anthropic's
//! `w/r = 12.5`, `L = 18,000` and the 1,200 tokens a call of a coding session adds, about
//! 41,000. The defaults (36,000 and 18,000) were measured cheapest at equal fidelity on the
//! corpus Claude Code session; on its cost/needed-next front they keep every fact the agent
//! went on to use at 55% of the recorded cost, 7% above the cheapest pair (24,000/12,000),
//! on a cost line too jagged between the marks to move them for one session
//! (`ctxkit cost --cost-marks`, `scripts/cost-front.py`; `docs/reports/economics.md`, "The default on
//! the cost/recall front").
//!
//! The reserves scale with the window unless set ([`Budget::for_window`],
//! [`fill_window_defaults`] for a budget read from JSON): a budget given only an 8,000-token
//! window keeps 1,000 for the answer and 125 of margin, not the 16,384 and 2,048 a 200k window
//! gets. A budget whose reserves reach the window is refused ([`Budget::validate`],
//! [`CoreError::ReservesFillWindow`]), never planned into an empty view.

use serde::{Deserialize, Serialize};

use crate::error::{CoreError, Result};

/// Sizes that bound a view, in tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default, deny_unknown_fields)]
pub struct Budget {
    /// The model's context window.
    pub context_window: u64,
    /// Kept free for the model's answer (`max_tokens`).
    pub output_reserve: u64,
    /// What the tool definitions sent with each request cost.
    pub tool_schema_tokens: u64,
    /// Slack for estimation error.
    pub safety_margin: u64,
    /// Compact when the view passes this share of the usable budget, in percent.
    pub trigger_percent: u8,
    /// A compaction brings the view down to this share, in percent.
    pub low_water_percent: u8,
    /// Compact above this many tokens even when the percentage allows more (what pays once
    /// prompt caching is counted; see the module doc). `None`: the percentage alone.
    pub cost_trigger_tokens: Option<u64>,
    /// A compaction brings the view down to at most this many tokens. `None`: the percentage
    /// alone.
    pub cost_low_water_tokens: Option<u64>,
}

/// The default [`Budget::cost_trigger_tokens`].
pub const COST_TRIGGER_TOKENS: u64 = 36_000;
/// The default [`Budget::cost_low_water_tokens`].
pub const COST_LOW_WATER_TOKENS: u64 = 18_000;

impl Default for Budget {
    fn default() -> Self {
        Budget {
            context_window: 200_000,
            output_reserve: 16_384,
            tool_schema_tokens: 0,
            safety_margin: 2_048,
            trigger_percent: 80,
            low_water_percent: 50,
            cost_trigger_tokens: Some(COST_TRIGGER_TOKENS),
            cost_low_water_tokens: Some(COST_LOW_WATER_TOKENS),
        }
    }
}

impl Budget {
    /// A default budget for a model with `context_window` tokens: the default output reserve
    /// (16,384) and safety margin (2,048), scaled down for small windows (at most an eighth
    /// and a sixty-fourth of the window) so a small window still leaves room for a view.
    pub fn for_window(context_window: u64) -> Self {
        let defaults = Budget::default();
        Budget {
            context_window,
            output_reserve: defaults.output_reserve.min(context_window / 8),
            safety_margin: defaults.safety_margin.min(context_window / 64),
            ..defaults
        }
    }

    /// Checks the percentages; names the field at fault.
    pub fn validate(&self) -> Result<()> {
        if !(1..=100).contains(&self.trigger_percent) {
            return Err(CoreError::invalid(
                "budget.trigger_percent",
                format!("must be 1 to 100, got {}", self.trigger_percent),
            ));
        }
        for (field, value) in [
            ("budget.cost_trigger_tokens", self.cost_trigger_tokens),
            ("budget.cost_low_water_tokens", self.cost_low_water_tokens),
        ] {
            if value == Some(0) {
                return Err(CoreError::invalid(
                    field,
                    "must be at least 1, or null for none",
                ));
            }
        }
        let reserved = self
            .output_reserve
            .saturating_add(self.tool_schema_tokens)
            .saturating_add(self.safety_margin);
        if reserved >= self.context_window {
            return Err(CoreError::ReservesFillWindow {
                window: self.context_window,
                output_reserve: self.output_reserve,
                tool_schema_tokens: self.tool_schema_tokens,
                safety_margin: self.safety_margin,
                reserved,
            });
        }
        if self.low_water_percent == 0 || self.low_water_percent > self.trigger_percent {
            return Err(CoreError::invalid(
                "budget.low_water_percent",
                format!(
                    "must be 1 to trigger_percent ({}), got {}",
                    self.trigger_percent, self.low_water_percent
                ),
            ));
        }
        Ok(())
    }

    /// Tokens a view may use.
    pub fn usable(&self) -> u64 {
        self.context_window
            .saturating_sub(self.output_reserve)
            .saturating_sub(self.tool_schema_tokens)
            .saturating_sub(self.safety_margin)
    }

    /// Above this many tokens, compact: the trigger percentage of the usable budget, at most
    /// the cost trigger.
    pub fn trigger(&self) -> u64 {
        let by_share = percent_of(self.usable(), self.trigger_percent);
        self.cost_trigger_tokens
            .map_or(by_share, |cap| by_share.min(cap))
    }

    /// The most a view whose only message is cut to fit may hold: the usable budget, at most
    /// the cost trigger. The percentage trigger keeps room for the log to grow before the next
    /// compaction; a message that alone is over it has nothing to compact around it, and the
    /// next turn plans again from the whole message in the log, so that room would only be
    /// text cut for nothing. The cost trigger still bounds it: what pays per call is the same.
    pub fn ceiling(&self) -> u64 {
        self.cost_trigger_tokens
            .map_or(self.usable(), |cap| self.usable().min(cap))
    }

    /// This budget when the provider's cache has expired: the trigger moved `percent` of the
    /// way from the low-water mark to it (the low-water mark stays). A rewrite of the whole
    /// prefix is paid by the next call anyway, so compacting from a lower point costs no extra
    /// rewrite and makes every later call smaller ([`crate::compaction::Policy::cold_trigger_percent`]).
    pub fn with_cold_cache(&self, percent: u8) -> Budget {
        let (trigger, low) = (self.trigger(), self.low_water());
        let cold = low + (trigger - low) * u64::from(percent.min(100)) / 100;
        Budget {
            cost_trigger_tokens: Some(cold),
            cost_low_water_tokens: Some(low),
            ..*self
        }
    }

    /// A compaction aims at this many tokens: the low-water percentage, at most the cost
    /// low-water mark, never above the trigger.
    pub fn low_water(&self) -> u64 {
        let by_share = percent_of(self.usable(), self.low_water_percent);
        self.cost_low_water_tokens
            .map_or(by_share, |cap| by_share.min(cap))
            .min(self.trigger())
    }
}

/// Fills the reserves a budget read from JSON leaves out with the ones its window scales to
/// ([`Budget::for_window`]): `output_reserve` and `safety_margin`, for the `context_window` it
/// gives (the default window when it gives none, or one that is not a number, which reading
/// then reports). Anything that is not an object is left as it is, for the reader to report.
///
/// ```
/// use ctxkit_core::compaction::{fill_window_defaults, Budget};
///
/// let mut json = serde_json::json!({ "context_window": 8000 });
/// fill_window_defaults(&mut json);
/// let budget: Budget = serde_json::from_value(json).unwrap();
/// assert_eq!((budget.output_reserve, budget.safety_margin), (1_000, 125));
/// ```
pub fn fill_window_defaults(json: &mut serde_json::Value) {
    let serde_json::Value::Object(fields) = json else {
        return;
    };
    let window = fields
        .get("context_window")
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(Budget::default().context_window);
    let scaled = Budget::for_window(window);
    for (field, value) in [
        ("output_reserve", scaled.output_reserve),
        ("safety_margin", scaled.safety_margin),
    ] {
        fields
            .entry(field)
            .or_insert_with(|| serde_json::Value::from(value));
    }
}

fn percent_of(total: u64, percent: u8) -> u64 {
    total.saturating_mul(u64::from(percent)) / 100
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usable_counts_output_schemas_and_margin() {
        let budget = Budget {
            context_window: 200_000,
            output_reserve: 20_000,
            tool_schema_tokens: 18_000,
            safety_margin: 2_000,
            cost_trigger_tokens: None,
            cost_low_water_tokens: None,
            ..Budget::default()
        };
        assert_eq!(budget.usable(), 160_000);
        assert_eq!(budget.trigger(), 128_000);
        assert_eq!(budget.low_water(), 80_000);
        // The cost marks cap both on a big window, and leave a small one alone.
        let capped = Budget::for_window(200_000);
        assert_eq!(capped.trigger(), COST_TRIGGER_TOKENS);
        assert_eq!(capped.low_water(), COST_LOW_WATER_TOKENS);
        let small = Budget::for_window(32_000);
        assert_eq!(small.trigger(), percent_of(small.usable(), 80));
        assert_eq!(
            Budget::for_window(200_000).usable(),
            200_000 - 16_384 - 2_048
        );
        assert_eq!(Budget::for_window(32_000).usable(), 32_000 - 4_000 - 500);
        let tiny = Budget {
            context_window: 1_000,
            ..Budget::default()
        };
        assert_eq!(
            tiny.usable(),
            0,
            "a window smaller than the reserves leaves nothing"
        );
    }

    #[test]
    fn reserves_that_fill_the_window_are_refused_with_the_numbers() {
        let full = Budget {
            context_window: 8_000,
            ..Budget::default()
        };
        let message = full.validate().map_err(|e| e.to_string()).unwrap_err();
        assert!(
            message.contains("context_window is 8000")
                && message.contains("output_reserve (16384)")
                && message.contains("safety_margin (2048)")
                && message.contains("= 18432"),
            "{message}"
        );
        assert_eq!(Budget::for_window(8_000).validate(), Ok(()));
        let mut json = serde_json::json!({ "context_window": 8_000, "output_reserve": 500 });
        fill_window_defaults(&mut json);
        assert_eq!(json["output_reserve"], 500, "a set reserve is kept");
        assert_eq!(json["safety_margin"], 125);
    }

    #[test]
    fn bad_percentages_are_named() {
        let bad = Budget {
            low_water_percent: 90,
            ..Budget::default()
        };
        assert_eq!(
            bad.validate().map_err(|e| e.to_string()),
            Err("budget.low_water_percent: must be 1 to trigger_percent (80), got 90".to_owned())
        );
    }
}
