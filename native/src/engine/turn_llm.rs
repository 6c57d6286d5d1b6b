//! A turn's LLM calls: the memory extraction and the summary, asked within the compaction's one
//! deadline, and what each answer is as the core's driver is told ([`Answer`]).
//!
//! Nothing here decides: a call that fails becomes [`Answer::Failed`] with the kind its error
//! says (a timeout, a refusal, another error) and the driver falls back; a summary answer's
//! compaction block is handed back to the turn, which keeps it beside the checkpoint it is for.

use std::time::Instant;

use ctxkit_core::compaction::{FallbackKind, SummaryRequest, RESPONSES_ITEM_PREFIX};
use ctxkit_core::memory::ExtractionRequest;

use super::view::{anthropic_conversation, responses_conversation};
use super::{Engine, Event};
use crate::llm::{LlmRequest, SummarizerError, SummaryAnswer};

/// A summary answer's compaction block, kept for the checkpoint it is for: (through seq, the
/// summary text, the block).
pub(super) type KeptBlock = Option<(u64, String, String)>;

impl Engine {
    /// Asks the LLM for the summary `request` wants and tells what came of it as the driver
    /// takes it. The answer's usage is reported as an event; its compaction block goes to
    /// `kept_block`. A Responses item is opaque: its plaintext record is the extractive
    /// summary, so the driver is told there was no text.
    pub(super) fn llm_summary(
        &mut self,
        session: &str,
        request: &SummaryRequest,
        deadline: Option<Instant>,
        events: &mut Vec<Event>,
        kept_block: &mut KeptBlock,
    ) -> Answer {
        let answer = match self.ask_for_summary(session, request, deadline) {
            Ok(Some(answer)) => answer,
            Ok(None) => return Answer::None,
            Err(error) => return Answer::of(Err(error)),
        };
        if let Some(usage) = answer.usage {
            let event = Event::SummarizerUsage {
                session: session.to_owned(),
                input_tokens: usage.input_tokens,
                output_tokens: usage.output_tokens,
                iterations: usage.iterations,
            };
            self.emit(events, event);
        }
        let opaque = answer
            .compaction_block
            .as_deref()
            .is_some_and(|block| block.starts_with(RESPONSES_ITEM_PREFIX));
        *kept_block = answer
            .compaction_block
            .map(|block| (request.through_seq, answer.text.clone(), block));
        if opaque {
            Answer::None
        } else {
            Answer::Text(answer.text)
        }
    }

    /// The deadline of this compaction's LLM calls: set at the first call from the LLM's
    /// summary timeout ([`crate::llm::Llm::deadline`]), then kept.
    pub(super) fn compaction_deadline(&self, deadline: &mut Option<Instant>) -> Option<Instant> {
        if deadline.is_none() {
            let timeout = self.llm.as_ref().and_then(|llm| llm.deadline());
            *deadline = timeout.and_then(|timeout| Instant::now().checked_add(timeout));
        }
        *deadline
    }

    /// The LLM's memory drafts, or why there are none.
    pub(super) fn ask_for_memories(
        &self,
        request: &ExtractionRequest,
        deadline: Option<Instant>,
    ) -> Answer {
        let Some(llm) = self.llm.as_ref() else {
            return Answer::None;
        };
        Answer::of(llm.complete(&LlmRequest {
            system: &request.system,
            prompt: &request.prompt,
            messages: &[],
            anthropic_messages: None,
            responses_input: None,
            max_tokens: request.max_output_tokens,
            deadline,
        }))
    }

    /// The LLM's summary (with any state to keep beside it), `None` without an LLM, or why
    /// the call failed.
    pub(super) fn ask_for_summary(
        &self,
        session: &str,
        request: &SummaryRequest,
        deadline: Option<Instant>,
    ) -> std::result::Result<Option<SummaryAnswer>, SummarizerError> {
        let Some(llm) = self.llm.as_ref() else {
            return Ok(None);
        };
        let anthropic = self.sessions.get(session).and_then(|cached| {
            anthropic_conversation(&request.cache_safe_messages, &cached.session)
        });
        let responses = self.sessions.get(session).and_then(|cached| {
            let (_instruction, conversation) = request.cache_safe_messages.split_last()?;
            responses_conversation(conversation, &cached.session)
        });
        llm.summarize(&LlmRequest {
            system: &request.system,
            prompt: &request.prompt,
            messages: &request.cache_safe_messages,
            anthropic_messages: anthropic.as_deref(),
            responses_input: responses.as_ref(),
            max_tokens: request.max_output_tokens,
            deadline,
        })
        .map(Some)
    }
}

/// What an LLM call of a turn came to, as the driver is told.
pub(super) enum Answer {
    /// The model's text.
    Text(String),
    /// No LLM to ask: the extractive summary (or no extraction) by design, not a fallback.
    None,
    /// The call failed: how, and the error in words.
    Failed(FallbackKind, String),
}

impl Answer {
    /// The answer of a call. A [`SummarizerError::NotConfigured`] from a call means there is no
    /// summarizer for this turn (a Python engine given no `summarize`), not a failure.
    pub(super) fn of(result: std::result::Result<String, SummarizerError>) -> Answer {
        match result {
            Ok(text) => Answer::Text(text),
            Err(SummarizerError::NotConfigured { .. }) => Answer::None,
            Err(error) => Answer::Failed(fallback_kind(&error), error.to_string()),
        }
    }
}

/// The fallback kind of a summarizer error.
fn fallback_kind(error: &SummarizerError) -> FallbackKind {
    match error {
        SummarizerError::Timeout { .. } => FallbackKind::Timeout,
        SummarizerError::Refused { .. } => FallbackKind::Refused,
        _ => FallbackKind::Error,
    }
}
