//! The summarizer's circuit breaker: after [`BREAKER_FAILURES`] summary calls in a row
//! failed, the next compactions go straight to the extractive summary without asking, so a
//! summarizer that hangs, is rate-limited or is down does not cost its whole deadline on every
//! compaction turn; then the summarizer is asked again.
//!
//! The core has no clock, so the breaker counts compactions, not time: it is plain data
//! ([`SummarizerBreaker`]) carried in the [`crate::Session`] (the JS Engine's state keeps it;
//! the native engine keeps it with its cached session, per process) and advanced by the
//! [`crate::TurnDriver`] from what the turn's summary call came to:
//!
//! - every failure counts one more in a row, whatever its kind: a timeout, an error status
//!   (429, 5xx, a redirect), a connection that failed, a refusal, an answer the core found
//!   unusable (issue 34, item 3: counting only timeouts let a 429 storm cost every compaction
//!   its retries); at [`BREAKER_FAILURES`] in a row the breaker opens for
//!   [`BREAKER_SKIPPED_COMPACTIONS`] compactions, doubled for each further failure in a row
//!   (the probe after a skip that fails again), up to [`BREAKER_MAX_SKIPPED`];
//! - a usable answer (or one made stale by another turn's checkpoint: the model did answer)
//!   ends the run and closes the breaker;
//! - while open, each compaction of a turn that would ask the summarizer skips it (and the
//!   memory extraction before it: the same model) and counts down; at zero the next
//!   compaction asks again.
//!
//! Guarantees: a turn without a summarizer (`view`, a preview) neither reads nor changes it;
//! a background summary (off the critical path) never changes it. The state read from JSON
//! written before failures of every kind were counted (`consecutive_timeouts`) is read as
//! the same count.

use serde::{Deserialize, Serialize};

/// Summary calls in a row that must fail before the breaker opens.
pub const BREAKER_FAILURES: u32 = 2;

/// Compactions the breaker skips the summarizer for when it first opens.
pub const BREAKER_SKIPPED_COMPACTIONS: u32 = 3;

/// The most compactions one opening skips.
pub const BREAKER_MAX_SKIPPED: u32 = 24;

/// The breaker's state: failures in a row and compactions still to skip.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default, deny_unknown_fields)]
pub struct SummarizerBreaker {
    /// Summary calls in a row that failed (of any kind).
    #[serde(alias = "consecutive_timeouts")]
    pub consecutive_failures: u32,
    /// Compactions left that go to the extractive summary without asking the summarizer.
    pub skip_compactions: u32,
}

/// What a summary call came to, as the breaker counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallOutcome {
    /// The model answered with a usable summary (or one another turn made stale).
    Answered,
    /// The call failed, whatever the kind: a timeout, an error status, a connection failure,
    /// a redirect, a refusal, an unusable answer.
    Failed,
}

impl SummarizerBreaker {
    /// True when the next compaction skips the summarizer.
    pub fn is_open(&self) -> bool {
        self.skip_compactions > 0
    }

    /// True for the closed breaker with no failure counted (nothing worth storing).
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
            CallOutcome::Answered => SummarizerBreaker::default(),
            CallOutcome::Failed => {
                let consecutive_failures = self.consecutive_failures.saturating_add(1);
                SummarizerBreaker {
                    consecutive_failures,
                    skip_compactions: skipped_for(consecutive_failures),
                }
            }
        }
    }
}

/// The compactions skipped after `failures` in a row: none below [`BREAKER_FAILURES`], then
/// [`BREAKER_SKIPPED_COMPACTIONS`] doubled for each failure past it, at most
/// [`BREAKER_MAX_SKIPPED`].
fn skipped_for(failures: u32) -> u32 {
    let Some(past) = failures.checked_sub(BREAKER_FAILURES) else {
        return 0;
    };
    // Eight doublings are past the cap already: the shift never overflows.
    (BREAKER_SKIPPED_COMPACTIONS << past.min(8)).min(BREAKER_MAX_SKIPPED)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_after_failures_in_a_row_counts_down_and_doubles_on_a_failed_probe() {
        let closed = SummarizerBreaker::default();
        let one = closed.after_call(CallOutcome::Failed);
        assert!(!one.is_open(), "one failure is not a run");
        let open = one.after_call(CallOutcome::Failed);
        assert_eq!(open.skip_compactions, BREAKER_SKIPPED_COMPACTIONS);
        let mut breaker = open;
        for _ in 0..BREAKER_SKIPPED_COMPACTIONS {
            assert!(breaker.is_open());
            breaker = breaker.after_skip();
        }
        assert!(!breaker.is_open(), "the next compaction asks again");
        let again = breaker.after_call(CallOutcome::Failed);
        assert_eq!(again.skip_compactions, 2 * BREAKER_SKIPPED_COMPACTIONS);
        let mut long = again;
        for _ in 0..40 {
            long = SummarizerBreaker {
                skip_compactions: 0,
                ..long
            }
            .after_call(CallOutcome::Failed);
            assert!(long.skip_compactions <= BREAKER_MAX_SKIPPED);
        }
        assert_eq!(long.skip_compactions, BREAKER_MAX_SKIPPED);
    }

    #[test]
    fn only_an_answer_ends_the_run() {
        let one = SummarizerBreaker::default().after_call(CallOutcome::Failed);
        let reset = one.after_call(CallOutcome::Answered);
        assert!(reset.is_closed_and_clear());
        assert!(!reset.after_call(CallOutcome::Failed).is_open());
        assert!(one.after_call(CallOutcome::Failed).is_open());
    }

    #[test]
    fn a_state_written_when_only_timeouts_counted_reads_as_failures() {
        let old: SummarizerBreaker =
            serde_json::from_str(r#"{"consecutive_timeouts": 1, "skip_compactions": 0}"#).unwrap();
        assert_eq!(old.consecutive_failures, 1);
        assert!(old.after_call(CallOutcome::Failed).is_open());
        let written = serde_json::to_value(old).unwrap();
        assert_eq!(
            written,
            serde_json::json!({"consecutive_failures": 1, "skip_compactions": 0})
        );
    }
}
