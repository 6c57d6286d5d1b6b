//! The turn's fallbacks and the summarizer's circuit breaker, as the driver records them: an
//! LLM call the caller reports as failed ([`TurnDriver::summary_failed`],
//! [`TurnDriver::extraction_failed`]), an answer the driver drops, and a compaction whose
//! summarizer the breaker skips. Each becomes one [`Fallback`] of the ready view's stats.

use crate::compaction::{Fallback, FallbackKind, LlmCall, SummaryRequest};
use crate::error::Result;
use crate::turn::breaker::{CallOutcome, SummarizerBreaker};
use crate::turn::Session;

use super::{out_of_order, State, TurnDriver};

/// Why an answer was dropped as stale (the reason of a [`FallbackKind::Stale`]).
pub const STALE_ANSWER: &str = "the summarizer's answer arrived after another turn of this session (a view or prepare that ran while it was awaited) stored a checkpoint covering the same messages; that checkpoint was kept and this answer dropped";

/// Why a background summary was dropped as stale (the reason of a [`FallbackKind::Stale`]).
pub const STALE_BACKGROUND_ANSWER: &str = "the background summarizer's answer arrived after another turn of this session (a view or prepare that ran while it was awaited) stored a checkpoint; that checkpoint was kept and this answer dropped";

impl TurnDriver<'_> {
    /// Records, once a turn, that the caller's background checkpoint is stale
    /// ([`crate::turn::BackgroundCheckpoint::is_stale`]) when a model wrote it: the model's
    /// answer is dropped, and the turn's stats say so and why. (An extractive one loses no
    /// model's work: nothing is recorded.)
    pub(super) fn note_stale_background(&mut self, session: &Session) {
        let crate::turn::BackgroundSlot::Ready(ready) = self.inputs.background else {
            return;
        };
        if self.background_tried
            || ready.checkpoint.method != crate::compaction::SummaryMethod::Llm
            || !ready.is_stale(session)
        {
            return;
        }
        self.background_tried = true;
        self.fell_back(
            LlmCall::Summary,
            FallbackKind::Stale,
            STALE_BACKGROUND_ANSWER,
        );
    }

    /// Answers [`crate::TurnStep::NeedExtraction`] with the failure of the call (`kind`: how it
    /// failed, usually [`FallbackKind::Error`], [`FallbackKind::Timeout`] or
    /// [`FallbackKind::Refused`]; `reason`: the caller's words): the extraction is skipped and
    /// the ready view's stats list the fallback.
    pub fn extraction_failed(
        &mut self,
        kind: FallbackKind,
        reason: impl Into<String>,
    ) -> Result<()> {
        if !matches!(self.state, State::Extracting(_)) {
            return Err(out_of_order(
                "extraction_failed",
                "no extraction was asked for",
            ));
        }
        self.fell_back(LlmCall::Extraction, kind, reason);
        self.answer_extraction(None)
    }

    /// Answers [`crate::TurnStep::NeedSummary`] with the failure of the call (see
    /// [`TurnDriver::extraction_failed`]): the extractive summary is used, the ready view's
    /// stats list the fallback, and the session's [`SummarizerBreaker`] counts it: one more
    /// failure in a row, whatever its kind.
    pub fn summary_failed(
        &mut self,
        session: &Session,
        kind: FallbackKind,
        reason: impl Into<String>,
    ) -> Result<()> {
        if !matches!(self.state, State::Summarizing(_)) {
            return Err(out_of_order("summary_failed", "no summary was asked for"));
        }
        let after = self.breaker(session).after_call(CallOutcome::Failed);
        let mut reason = reason.into();
        if after.is_open() {
            reason.push_str(&opened(after));
        }
        self.set_breaker(session, after);
        self.fell_back(LlmCall::Summary, kind, reason);
        self.answer_summary(session, None)
    }

    /// Counts an answer the core refused ([`FallbackKind::Unusable`]) as a failure of the
    /// summarizer: returns what to add to the fallback's reason when that opened the breaker.
    pub(super) fn count_unusable(&mut self, session: &Session) -> String {
        let after = self.breaker(session).after_call(CallOutcome::Failed);
        self.set_breaker(session, after);
        if after.is_open() {
            opened(after)
        } else {
            String::new()
        }
    }

    /// The breaker as this turn stands: the session's, or what this turn made of it.
    pub(super) fn breaker(&self, session: &Session) -> SummarizerBreaker {
        self.breaker.unwrap_or(session.summarizer_breaker)
    }

    /// Keeps `next` as the breaker after this turn (nothing to keep when it is the session's).
    pub(super) fn set_breaker(&mut self, session: &Session, next: SummarizerBreaker) {
        self.breaker = (next != session.summarizer_breaker).then_some(next);
    }

    /// Records that `call` fell back.
    pub(super) fn fell_back(
        &mut self,
        call: LlmCall,
        kind: FallbackKind,
        reason: impl Into<String>,
    ) {
        self.fallbacks.push(Fallback {
            call,
            kind,
            reason: reason.into(),
        });
    }

    /// Makes this compaction's summary extractively without asking, the breaker being open:
    /// the skip (of the summary, and of the extraction the turn would have asked first) is
    /// listed with the breaker's numbers, and the breaker counts one compaction down.
    pub(super) fn skip_summarizer(
        &mut self,
        session: &Session,
        request: SummaryRequest,
        breaker: SummarizerBreaker,
    ) -> Result<()> {
        let reason = format!(
            "not asked: the summarizer failed {} times in a row, so the extractive summary is used for this compaction and {} more before it is asked again",
            breaker.consecutive_failures,
            breaker.skip_compactions.saturating_sub(1)
        );
        if self.inputs.extract_memories {
            self.fell_back(LlmCall::Extraction, FallbackKind::Skipped, reason.clone());
        }
        self.fell_back(LlmCall::Summary, FallbackKind::Skipped, reason);
        self.set_breaker(session, breaker.after_skip());
        self.state = State::Summarizing(Box::new(request));
        self.answer_summary(session, None)
    }
}

/// What a fallback's reason adds when its failure opened the breaker `after`.
fn opened(after: SummarizerBreaker) -> String {
    format!(
        " (the summarizer failed {} times in a row: the next {} compactions use the extractive summary without asking it)",
        after.consecutive_failures, after.skip_compactions
    )
}
