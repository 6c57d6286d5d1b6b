//! The bounds of a probe run in time and failures: a deadline for the whole run, and the
//! summarizer's circuit breaker (the core's [`SummarizerBreaker`], counting every failed
//! request whatever its kind). Before, a run had neither: against a stalled server every
//! request waited its whole `--timeout`, hours at the defaults (issue 34, item 3).
//!
//! A request is sent only while the run's deadline has not passed and the breaker is closed;
//! each request's own deadline is the run's when that comes first. Once the breaker opens
//! ([`BREAKER_FAILURES`] failed requests in a row) it stays open for the rest of the run: a
//! probe run is a measurement, and a model that failed that often would only make the rest
//! of it fail too. The requests not sent are reported as skipped, with the reason.

use std::time::{Duration, Instant};

use ctxkit_core::turn::breaker::{CallOutcome, BREAKER_FAILURES};
use ctxkit_core::turn::SummarizerBreaker;

use crate::llm::SummarizerError;

/// A probe run's deadline and breaker.
#[derive(Debug, Clone)]
pub struct RunGuard {
    /// When the run ends, and how long it was given.
    deadline: Option<(Instant, Duration)>,
    breaker: SummarizerBreaker,
    /// The last failure's words, for the reason of the requests skipped after it.
    last_failure: String,
}

impl RunGuard {
    /// A guard whose run ends `limit` from now (`None`: no deadline).
    pub fn start(limit: Option<Duration>) -> RunGuard {
        RunGuard {
            deadline: limit.and_then(|limit| Some((Instant::now().checked_add(limit)?, limit))),
            breaker: SummarizerBreaker::default(),
            last_failure: String::new(),
        }
    }

    /// When the run ends, if it has a deadline: a request's own deadline when earlier.
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline.map(|(deadline, _)| deadline)
    }

    /// Why the next request is not sent, or `None` when it may be.
    pub fn refusal(&self) -> Option<String> {
        if self.breaker.consecutive_failures >= BREAKER_FAILURES {
            return Some(format!(
                "not sent: the last {} requests failed in a row (the run's circuit breaker; the last: {})",
                self.breaker.consecutive_failures, self.last_failure
            ));
        }
        match self.deadline {
            Some((deadline, limit)) if Instant::now() >= deadline => Some(format!(
                "not sent: the run's deadline of {} s (--deadline) passed",
                limit.as_secs()
            )),
            _ => None,
        }
    }

    /// Counts what a sent request came to.
    pub fn record(&mut self, result: &Result<String, SummarizerError>) {
        let outcome = match result {
            Ok(_) => CallOutcome::Answered,
            Err(error) => {
                self.last_failure = error.to_string();
                CallOutcome::Failed
            }
        };
        self.breaker = self.breaker.after_call(outcome);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure() -> Result<String, SummarizerError> {
        Err(SummarizerError::Status {
            url: "http://x/v1/chat/completions".to_owned(),
            status: 429,
            body: String::new(),
        })
    }

    #[test]
    fn failures_in_a_row_stop_the_run_and_an_answer_resets_the_count() {
        let mut guard = RunGuard::start(None);
        guard.record(&failure());
        assert_eq!(guard.refusal(), None);
        guard.record(&Ok("answer".to_owned()));
        guard.record(&failure());
        assert_eq!(
            guard.refusal(),
            None,
            "the answer ended the run of failures"
        );
        guard.record(&failure());
        let refusal = guard.refusal().unwrap();
        assert!(
            refusal.starts_with("not sent: the last 2 requests failed in a row")
                && refusal.contains("HTTP 429"),
            "{refusal}"
        );
    }

    #[test]
    fn a_passed_deadline_stops_the_run() {
        let guard = RunGuard::start(Some(Duration::ZERO));
        assert_eq!(
            guard.refusal().as_deref(),
            Some("not sent: the run's deadline of 0 s (--deadline) passed")
        );
        assert!(RunGuard::start(None).refusal().is_none());
        assert!(RunGuard::start(Some(Duration::from_secs(60)))
            .refusal()
            .is_none());
    }
}
