//! Compaction ahead of the cache's expiry: the decision a shell's timer asks for while the
//! user is away.
//!
//! A provider keeps a request's prefix cached for a lifetime (five minutes or an hour at
//! Anthropic, 30 minutes for OpenAI's explicit breakpoints). When the user comes back after it
//! ran out, the next call writes the whole prefix again, at the write price. Compacting just
//! before the lifetime ends, while the prefix is still cached, makes that next write the small
//! compacted prefix, and an LLM summary made now reads the history from the cache (the
//! cache-safe mode) and runs off the critical path. Claude Code does this about 54 minutes into
//! its one-hour lifetime for sessions of 200k tokens or more.
//!
//! [`idle_decision`] is the rule, pure: given the view's size, the time since the session's last
//! call and the lifetime in use, compact now (with the budget to compact with), wait (and for
//! how long), or skip (and why). The shell owns the clock and runs the compaction:
//! `Engine::compact_if_idle` natively, `engine.compactIfIdle(...)` in JS.
//!
//! Guarantees: deterministic; never compacts a view at or below the floor
//! ([`Policy::idle_trigger_percent`] of the way from the low-water mark to the trigger); the
//! margin before expiry is [`Policy::idle_margin_percent`] of the lifetime, at least
//! [`MIN_IDLE_MARGIN_SECONDS`] and at most the lifetime.

use serde::{Deserialize, Serialize};

use crate::compaction::{Budget, Policy};

/// The shortest margin before the cache's expiry at which an idle compaction runs: a summary
/// call needs time to finish while the cache still holds the prefix.
pub const MIN_IDLE_MARGIN_SECONDS: u64 = 30;

/// What a shell's idle timer should do for a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum IdleDecision {
    /// Compact now, planning with `budget` (its trigger lowered to the floor, so the view is
    /// over it); `expired`: the lifetime has already run out (the prefix will be written
    /// whole anyway, but the next turn no longer waits for the compaction).
    Compact {
        /// The budget to plan the compaction with.
        budget: Budget,
        /// The cache's lifetime ran out before the check.
        expired: bool,
    },
    /// Too early: ask again after this many seconds (when the margin before expiry begins).
    Wait {
        /// Seconds until the margin before expiry begins.
        seconds: u64,
    },
    /// Nothing to do.
    Skip {
        /// Why.
        reason: IdleSkip,
    },
}

/// Why an idle check does not compact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum IdleSkip {
    /// The policy turns idle compaction off (`idle_trigger_percent: None`).
    Off,
    /// The view is small enough that compacting would not pay for itself.
    BelowFloor {
        /// The view's tokens.
        view_tokens: u64,
        /// The floor it must be above.
        floor_tokens: u64,
    },
    /// The cache has no lifetime to run out (a lifetime of 0).
    NoLifetime,
}

/// The margin before a cache lifetime of `ttl_seconds` ends at which an idle compaction runs:
/// `margin_percent` of it, at least [`MIN_IDLE_MARGIN_SECONDS`], at most the lifetime.
pub fn idle_margin_seconds(ttl_seconds: u64, margin_percent: u8) -> u64 {
    (ttl_seconds.saturating_mul(u64::from(margin_percent.min(100))) / 100)
        .max(MIN_IDLE_MARGIN_SECONDS)
        .min(ttl_seconds)
}

/// Decides what an idle timer does for a session whose next view is `view_tokens` (as a
/// preview measures it), `idle_seconds` after its last call, with a cache lifetime of
/// `ttl_seconds`, under `budget` and `policy`.
///
/// ```
/// use ctxkit_core::compaction::{Budget, Policy};
/// use ctxkit_core::turn::{idle_decision, IdleDecision};
///
/// let (budget, policy) = (Budget::for_window(200_000), Policy::default());
/// // 40 minutes into a one-hour lifetime: wait until 54 minutes.
/// assert_eq!(idle_decision(30_000, 2_400, 3_600, &budget, &policy), IdleDecision::Wait { seconds: 840 });
/// // 55 minutes in: compact now, from the floor down to the low-water mark.
/// let IdleDecision::Compact { budget: lowered, expired } = idle_decision(30_000, 3_300, 3_600, &budget, &policy) else { panic!() };
/// assert!(!expired && lowered.trigger() < 30_000 && lowered.low_water() == budget.low_water());
/// ```
pub fn idle_decision(
    view_tokens: u64,
    idle_seconds: u64,
    ttl_seconds: u64,
    budget: &Budget,
    policy: &Policy,
) -> IdleDecision {
    let Some(percent) = policy.idle_trigger_percent else {
        return IdleDecision::Skip {
            reason: IdleSkip::Off,
        };
    };
    if ttl_seconds == 0 {
        return IdleDecision::Skip {
            reason: IdleSkip::NoLifetime,
        };
    }
    let lowered = budget.with_cold_cache(percent);
    let floor_tokens = lowered.trigger();
    if view_tokens <= floor_tokens {
        return IdleDecision::Skip {
            reason: IdleSkip::BelowFloor {
                view_tokens,
                floor_tokens,
            },
        };
    }
    let starts_at = ttl_seconds - idle_margin_seconds(ttl_seconds, policy.idle_margin_percent);
    if idle_seconds < starts_at {
        return IdleDecision::Wait {
            seconds: starts_at - idle_seconds,
        };
    }
    IdleDecision::Compact {
        budget: lowered,
        expired: idle_seconds >= ttl_seconds,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decide(view: u64, idle: u64, ttl: u64) -> IdleDecision {
        idle_decision(
            view,
            idle,
            ttl,
            &Budget::for_window(200_000),
            &Policy::default(),
        )
    }

    #[test]
    fn waits_until_the_margin_then_compacts_even_after_expiry() {
        // Five minutes: the margin is the 30-second minimum.
        assert_eq!(decide(40_000, 0, 300), IdleDecision::Wait { seconds: 270 });
        assert!(matches!(
            decide(40_000, 270, 300),
            IdleDecision::Compact { expired: false, .. }
        ));
        assert!(matches!(
            decide(40_000, 301, 300),
            IdleDecision::Compact { expired: true, .. }
        ));
    }

    #[test]
    fn a_small_view_or_a_policy_without_it_is_skipped() {
        let budget = Budget::for_window(200_000);
        let floor = budget.with_cold_cache(50).trigger();
        assert!(floor > budget.low_water() && floor < budget.trigger());
        assert_eq!(
            decide(floor, 3_500, 3_600),
            IdleDecision::Skip {
                reason: IdleSkip::BelowFloor {
                    view_tokens: floor,
                    floor_tokens: floor
                }
            }
        );
        let off = Policy {
            idle_trigger_percent: None,
            ..Policy::default()
        };
        assert_eq!(
            idle_decision(100_000, 3_500, 3_600, &budget, &off),
            IdleDecision::Skip {
                reason: IdleSkip::Off
            }
        );
        assert_eq!(
            decide(100_000, 10, 0),
            IdleDecision::Skip {
                reason: IdleSkip::NoLifetime
            }
        );
    }

    #[test]
    fn the_lowered_budget_puts_the_view_over_its_trigger_and_keeps_the_low_water_mark() {
        let budget = Budget::for_window(8_000);
        let IdleDecision::Compact {
            budget: lowered, ..
        } = idle_decision(budget.trigger() - 1, 299, 300, &budget, &Policy::default())
        else {
            panic!("a view just under the trigger compacts when idle");
        };
        assert!(lowered.trigger() < budget.trigger() - 1);
        assert_eq!(lowered.low_water(), budget.low_water());
    }

    #[test]
    fn the_margin_is_bounded() {
        assert_eq!(idle_margin_seconds(3_600, 10), 360);
        assert_eq!(idle_margin_seconds(300, 10), 30);
        assert_eq!(idle_margin_seconds(10, 10), 10);
        assert_eq!(idle_margin_seconds(3_600, 250), 3_600);
    }
}
