//! The native turn's result: the view the core made, rendered in any format. An Anthropic
//! rendering sends the checkpoint's compaction block (Anthropic's server compaction, kept
//! beside the checkpoint) first, in place of the summary's text; a Responses rendering sends
//! the checkpoint's Responses `compaction` item (OpenAI Responses compaction) there instead;
//! every other format gets the plaintext summary.

use ctxkit_core::compaction::{
    splice_responses_items, summary_message, summary_stand_in, Checkpoint, SummaryMethod,
    SummaryStandIn, ViewStats, RESPONSES_ITEM_MARKER,
};
use ctxkit_core::wire::{render_messages, render_messages_cached, WireFormat};
use ctxkit_core::Message;
use serde_json::Value;

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
    /// Where the checkpoint's summary message is in `messages`, and the Responses input items
    /// that stand for it in a Responses view, when the checkpoint holds a Responses
    /// `compaction` item.
    pub(super) responses_summary: Option<(usize, Vec<Value>)>,
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

    /// The Responses `compaction` item the view's checkpoint holds (OpenAI Responses
    /// compaction): a Responses rendering sends it first, in place of the summary message;
    /// every other format sends the plaintext (extractive) summary in `messages`.
    pub fn responses_compaction_item(&self) -> Option<&Value> {
        self.responses_summary.as_ref()?.1.first()
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
        if let (WireFormat::Responses, Some((index, items))) = (format, &self.responses_summary) {
            return responses_with_items(&self.messages, *index, items, |messages| {
                render_messages(messages, format)
            })
            .context(|| format!("session {:?}: view", self.session));
        }
        render_messages(&self.messages_for(format), format)
            .context(|| format!("session {:?}: view", self.session))
    }

    /// The view in `format` with its cache breakpoints (`stats.cache_breakpoints`) marked
    /// where the format has markers: Anthropic's `cache_control`, OpenAI's
    /// `prompt_cache_breakpoint` for Responses and Chat Completions (GPT-5.6 and later; see the
    /// core's [`render_messages_cached`]); the other formats render as [`TurnResult::render`]
    /// does.
    pub fn render_cached(&self, format: WireFormat) -> Result<serde_json::Value> {
        if let (WireFormat::Responses, Some((index, items))) = (format, &self.responses_summary) {
            return responses_with_items(&self.messages, *index, items, |messages| {
                render_messages_cached(messages, format, &self.stats.cache_breakpoints)
            })
            .context(|| format!("session {:?}: view", self.session));
        }
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

/// The checkpoint the view was made from: this turn's (`pending`), or one of the session's
/// (the core's `view_checkpoint`).
fn view_checkpoint<'a>(
    stats: &ViewStats,
    pending: Option<&'a Checkpoint>,
    session: Option<&'a ctxkit_core::Session>,
) -> Option<&'a Checkpoint> {
    let stored = session.map_or(&[][..], |session| session.checkpoints.as_slice());
    ctxkit_core::compaction::view_checkpoint(stats.checkpoint_through?, pending, stored)
}

/// Where the view's summary message is and what stands for it in a `format` view (the core's
/// [`summary_stand_in`]), when the view's checkpoint (this turn's, or one of the session's)
/// keeps that provider's compaction state and its summary message is in the view as the core
/// made it.
fn stand_in(
    messages: &[Message],
    stats: &ViewStats,
    pending: Option<&Checkpoint>,
    session: Option<&ctxkit_core::Session>,
    format: WireFormat,
) -> Option<(usize, SummaryStandIn)> {
    let checkpoint = view_checkpoint(stats, pending, session)?;
    let stand_in = summary_stand_in(checkpoint, format)?;
    let plain = summary_message(checkpoint);
    let index = messages.iter().position(|message| *message == plain)?;
    Some((index, stand_in))
}

/// Where the view's summary message is and the message that stands for it in an Anthropic
/// view, when the view's checkpoint holds Anthropic's compaction block.
pub(super) fn anthropic_summary(
    messages: &[Message],
    stats: &ViewStats,
    pending: Option<&Checkpoint>,
    session: Option<&ctxkit_core::Session>,
) -> Option<(usize, Message)> {
    stand_in(messages, stats, pending, session, WireFormat::Anthropic)
        .map(|(index, stand_in)| (index, stand_in.message))
}

/// Where the view's summary message is and the Responses input items that stand for it in a
/// Responses view, when the view's checkpoint holds a Responses `compaction` item.
pub(super) fn responses_summary(
    messages: &[Message],
    stats: &ViewStats,
    pending: Option<&Checkpoint>,
    session: Option<&ctxkit_core::Session>,
) -> Option<(usize, Vec<Value>)> {
    stand_in(messages, stats, pending, session, WireFormat::Responses)
        .map(|(index, stand_in)| (index, stand_in.responses_items))
}

/// `messages` rendered by `render` as a Responses body, with the message at `index` replaced
/// by `items` in `input` (the core's marker and [`splice_responses_items`]: the rest rendered
/// exactly as without them).
fn responses_with_items(
    messages: &[Message],
    index: usize,
    items: &[Value],
    render: impl Fn(&[Message]) -> ctxkit_core::Result<Value>,
) -> ctxkit_core::Result<Value> {
    let mut marked = messages.to_vec();
    if let Some(slot) = marked.get_mut(index) {
        *slot = Message::user(RESPONSES_ITEM_MARKER);
    }
    let mut body = render(&marked)?;
    splice_responses_items(&mut body, items);
    Ok(body)
}

/// `messages` (a cache-safe summary request's conversation, without its final instruction)
/// as the agent's Responses requests sent them (the core's
/// [`ctxkit_core::compaction::responses_conversation`] for the session's latest checkpoint).
pub(super) fn responses_conversation(
    messages: &[Message],
    session: &ctxkit_core::Session,
) -> Option<Value> {
    ctxkit_core::compaction::responses_conversation(messages, session.latest_checkpoint())
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
