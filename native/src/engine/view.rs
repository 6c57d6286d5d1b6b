//! The native turn's result: the view the core made, rendered in any format. An Anthropic
//! rendering sends the checkpoint's compaction block (Anthropic's server compaction, kept
//! beside the checkpoint) first, in place of the summary's text; every other format gets the
//! plaintext summary.

use ctxkit_core::compaction::{
    anthropic_summary_message, summary_message, Checkpoint, SummaryMethod, ViewStats,
};
use ctxkit_core::wire::{render_messages, render_messages_cached, WireFormat};
use ctxkit_core::Message;

use super::Event;
use crate::error::{Context, Result};

/// One turn of one session, as the native engine returns it: the core's turn result with the
/// view rendered (owned) and the events of the turn.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnResult {
    /// The session.
    pub session: String,
    /// What to send: the system prompt first, then the conversation.
    pub messages: Vec<Message>,
    /// How the view was made and what it costs.
    pub stats: ViewStats,
    /// The method of the checkpoint made this turn, if one was.
    pub compacted: Option<SummaryMethod>,
    /// What happened on the way (token estimate, compaction, warnings).
    pub events: Vec<Event>,
    /// Where the checkpoint's summary message is in `messages`, and what stands for it in an
    /// Anthropic view, when the checkpoint holds Anthropic's compaction block.
    pub(super) anthropic_summary: Option<(usize, Message)>,
}

impl TurnResult {
    /// The signed compaction block the view's checkpoint holds (Anthropic's server
    /// compaction), as stored: an Anthropic rendering sends it first, in place of the summary's
    /// text; every other format sends the plaintext summary in `messages`.
    pub fn compaction_block(&self) -> Option<&serde_json::Value> {
        let (_, message) = self.anthropic_summary.as_ref()?;
        match &message.content {
            ctxkit_core::Content::Parts(parts) => parts.iter().find_map(|part| match part {
                ctxkit_core::Part::Opaque { block, .. } => Some(block),
                _ => None,
            }),
            ctxkit_core::Content::Text(_) => None,
        }
    }

    /// The messages to render in `format`: `messages`, with the compaction block in place of
    /// the summary message in an Anthropic view.
    fn messages_for(&self, format: WireFormat) -> std::borrow::Cow<'_, [Message]> {
        match (&self.anthropic_summary, format) {
            (Some((index, message)), WireFormat::Anthropic) if *index < self.messages.len() => {
                let mut messages = self.messages.clone();
                if let Some(slot) = messages.get_mut(*index) {
                    *slot = message.clone();
                }
                std::borrow::Cow::Owned(messages)
            }
            _ => std::borrow::Cow::Borrowed(&self.messages),
        }
    }

    /// The view in `format`, rendered by the core's one renderer.
    pub fn render(&self, format: WireFormat) -> Result<serde_json::Value> {
        render_messages(&self.messages_for(format), format)
            .context(|| format!("session {:?}: view", self.session))
    }

    /// The view in `format` with its cache breakpoints (`stats.cache_breakpoints`) marked
    /// where the format has markers: Anthropic's `cache_control`, OpenAI's
    /// `prompt_cache_breakpoint` for Responses and Chat Completions (GPT-5.6 and later; see the
    /// core's [`render_messages_cached`]); the other formats render as [`TurnResult::render`]
    /// does.
    pub fn render_cached(&self, format: WireFormat) -> Result<serde_json::Value> {
        render_messages_cached(
            &self.messages_for(format),
            format,
            &self.stats.cache_breakpoints,
        )
        .context(|| format!("session {:?}: view", self.session))
    }

    /// The view as an OpenAI Chat Completions `messages` array.
    pub fn to_openai(&self) -> serde_json::Value {
        ctxkit_core::to_openai(&self.messages)
    }

    /// The view as an Anthropic Messages request body (`system` and `messages`).
    pub fn to_anthropic(&self) -> Result<serde_json::Value> {
        self.render(WireFormat::Anthropic)
    }

    /// The system prompt sent this turn.
    pub fn system_prompt(&self) -> &str {
        match self.messages.first() {
            Some(first) if first.role == ctxkit_core::Role::System => match &first.content {
                ctxkit_core::Content::Text(text) => text,
                ctxkit_core::Content::Parts(_) => "",
            },
            _ => "",
        }
    }
}

/// Where the view's summary message is and the message that stands for it in an Anthropic
/// view, when the view's checkpoint (this turn's, or one of the session's) holds a compaction
/// block and its summary message is in the view as the core made it.
pub(super) fn anthropic_summary(
    messages: &[Message],
    stats: &ViewStats,
    pending: Option<&Checkpoint>,
    session: Option<&ctxkit_core::Session>,
) -> Option<(usize, Message)> {
    let through = stats.checkpoint_through?;
    let checkpoint = match pending.filter(|checkpoint| checkpoint.through_seq == through) {
        Some(checkpoint) => checkpoint,
        None => session?
            .checkpoints
            .iter()
            .rev()
            .find(|checkpoint| checkpoint.through_seq == through)?,
    };
    checkpoint.compaction_block.as_ref()?;
    let plain = summary_message(checkpoint);
    let index = messages.iter().position(|message| *message == plain)?;
    Some((index, anthropic_summary_message(checkpoint)?))
}

/// `messages` (a cache-safe summary request's conversation) as the agent's Anthropic requests
/// sent them (the core's [`ctxkit_core::compaction::anthropic_conversation`] for the session's
/// latest checkpoint).
pub(super) fn anthropic_conversation(
    messages: &[Message],
    session: &ctxkit_core::Session,
) -> Option<Vec<Message>> {
    ctxkit_core::compaction::anthropic_conversation(messages, session.latest_checkpoint())
}
