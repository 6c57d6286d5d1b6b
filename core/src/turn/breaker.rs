//! The summarizer's circuit breaker: after [`BREAKER_TIMEOUTS`] summary calls in a row timed
//! out, the next compactions go straight to the extractive summary without asking, so a
//! hanging summarizer does not cost its whole timeout on every compaction turn; then the
//! summarizer is asked again.
//!
//! The core has no clock, so the breaker counts compactions, not time: it is plain data
//! ([`SummarizerBreaker`]) carried in the [`crate::Session`] (the JS Engine's state keeps it;
//! the native engine keeps it with its cached session, per process) and advanced by the
//! [`crate::TurnDriver`] from what the turn's summary call came to:
//!
//! - a timeout counts one more in a row; at [`BREAKER_TIMEOUTS`] in a row the breaker opens
//!   for [`BREAKER_SKIPPED_COMPACTIONS`] compactions, doubled for each further timeout in a
//!   row (the probe after a skip that times out again), up to [`BREAKER_MAX_SKIPPED`];
//! - any answer (even an unusable one) or any other failure ends the run of timeouts and
//!   closes the breaker;
//! - while open, each compaction of a turn that would ask the summarizer skips it (and the
//!   memory extraction before it: the same model) and counts down; at zero the next
//!   compaction asks again.
//!
//! Guarantees: a turn without a summarizer (`view`, a preview) neither reads nor changes it;
//! a background summary (off the critical path) never changes it.

use serde::{Deserialize, Serialize};

/// Summary calls in a row that must time out before the breaker opens.
pub const BREAKER_TIMEOUTS: u32 = 2;

/// Compactions the breaker skips the summarizer for when it first opens.
pub const BREAKER_SKIPPED_COMPACTIONS: u32 = 3;

/// The most compactions one opening skips.
pub const BREAKER_MAX_SKIPPED: u32 = 24;

/// The breaker's state: timeouts in a row and compactions still to skip.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default, deny_unknown_fields)]
pub struct SummarizerBreaker {
    /// Summary calls in a row that timed out.
    pub consecutive_timeouts: u32,
    /// Compactions left that go to the extractive summary without asking the summarizer.
    pub skip_compactions: u32,
}

/// What a summary call came to, as the breaker counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallOutcome {
    /// The model answered (whether or not the answer was usable).
    Answered,
    /// No answer within the timeout.
    TimedOut,
    /// Any other failure.
    Failed,
}

impl SummarizerBreaker {
    /// True when the next compaction skips the summarizer.
    pub fn is_open(&self) -> bool {
        self.skip_compactions > 0
    }

    /// True for the closed breaker with no timeout counted (nothing worth storing).
    pub fn is_closed_and_clear(&self) -> bool {
        *self == SummarizerBreaker::default()
    }

    /// The breaker after a compaction that skipped the summarizer.
    pub fn after_skip(self) -> SummarizerBreaker {
        SummarizerBreaker {
            skip_compactions: self.skip_compactions.saturating_sub(1),
            ..self
        }
    }

    /// The breaker after a summary call came to `outcome`.
    pub fn after_call(self, outcome: CallOutcome) -> SummarizerBreaker {
        match outcome {
            CallOutcome::Answered | CallOutcome::Failed => SummarizerBreaker::default(),
            CallOutcome::TimedOut => {
                let consecutive_timeouts = self.consecutive_timeouts.saturating_add(1);
                SummarizerBreaker {
                    consecutive_timeouts,
                    skip_compactions: skipped_for(consecutive_timeouts),
                }
            }
        }
    }
}

/// The compactions skipped after `timeouts` in a row: none below [`BREAKER_TIMEOUTS`], then
/// [`BREAKER_SKIPPED_COMPACTIONS`] doubled for each timeout past it, at most
/// [`BREAKER_MAX_SKIPPED`].
fn skipped_for(timeouts: u32) -> u32 {
    let Some(past) = timeouts.checked_sub(BREAKER_TIMEOUTS) else {
        return 0;
    };
    // Eight doublings are past the cap already: the shift never overflows.
    (BREAKER_SKIPPED_COMPACTIONS << past.min(8)).min(BREAKER_MAX_SKIPPED)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_after_timeouts_in_a_row_counts_down_and_doubles_on_a_failed_probe() {
        let closed = SummarizerBreaker::default();
        let one = closed.after_call(CallOutcome::TimedOut);
        assert!(!one.is_open(), "one timeout is not a run");
        let open = one.after_call(CallOutcome::TimedOut);
        assert_eq!(open.skip_compactions, BREAKER_SKIPPED_COMPACTIONS);
        let mut breaker = open;
        for _ in 0..BREAKER_SKIPPED_COMPACTIONS {
            assert!(breaker.is_open());
            breaker = breaker.after_skip();
        }
        assert!(!breaker.is_open(), "the next compaction asks again");
        let again = breaker.after_call(CallOutcome::TimedOut);
        assert_eq!(again.skip_compactions, 2 * BREAKER_SKIPPED_COMPACTIONS);
        let mut long = again;
        for _ in 0..40 {
            long = SummarizerBreaker {
                skip_compactions: 0,
                ..long
            }
            .after_call(CallOutcome::TimedOut);
            assert!(long.skip_compactions <= BREAKER_MAX_SKIPPED);
        }
        assert_eq!(long.skip_compactions, BREAKER_MAX_SKIPPED);
    }

    #[test]
    fn an_answer_or_another_failure_ends_the_run() {
        let one = SummarizerBreaker::default().after_call(CallOutcome::TimedOut);
        for outcome in [CallOutcome::Answered, CallOutcome::Failed] {
            let reset = one.after_call(outcome);
            assert!(reset.is_closed_and_clear());
            assert!(!reset.after_call(CallOutcome::TimedOut).is_open());
        }
    }
}
