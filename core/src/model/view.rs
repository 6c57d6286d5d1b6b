//! The view: what is sent to the model this turn.
//!
//! A [`View`] is the system prompt plus a list of [`ViewMessage`]s. A view message borrows its
//! message from the log when the pipeline left it unchanged (a 100k-message log costs nothing
//! to view), and carries the log's `seq` and cached token estimate with it, so accounting never
//! re-estimates what the log already knows. Any change makes the message owned and drops the
//! cached estimate, so a stale estimate can never be used.

use std::borrow::Cow;
use std::ops::Deref;

use crate::model::Entry;
use crate::model::Message;

/// One message of a view.
#[derive(Debug, Clone, PartialEq)]
pub struct ViewMessage<'a> {
    /// The message, borrowed from the log when unchanged.
    pub message: Cow<'a, Message>,
    /// The log `seq` it came from; `None` for messages the pipeline made (summary, placeholders,
    /// nudges).
    pub seq: Option<u64>,
    /// The cached token estimate, when known to match `message`.
    pub tokens: Option<u64>,
}

impl<'a> ViewMessage<'a> {
    /// A view of a log entry: borrowed, with its seq and estimate.
    pub fn from_entry(entry: &'a Entry) -> Self {
        ViewMessage {
            message: Cow::Borrowed(&entry.message),
            seq: Some(entry.seq),
            tokens: Some(entry.tokens),
        }
    }

    /// A borrowed message with no seq or estimate.
    pub fn borrowed(message: &'a Message) -> Self {
        ViewMessage {
            message: Cow::Borrowed(message),
            seq: None,
            tokens: None,
        }
    }

    /// A message the pipeline made.
    pub fn owned(message: Message) -> Self {
        ViewMessage {
            message: Cow::Owned(message),
            seq: None,
            tokens: None,
        }
    }

    /// The message for changing: copies a borrowed one, and forgets the cached estimate.
    pub fn to_mut(&mut self) -> &mut Message {
        self.tokens = None;
        self.message.to_mut()
    }

    /// True when the message is still the log's own (not copied).
    pub fn is_borrowed(&self) -> bool {
        matches!(self.message, Cow::Borrowed(_))
    }
}

impl Deref for ViewMessage<'_> {
    type Target = Message;
    fn deref(&self) -> &Message {
        &self.message
    }
}

/// What is sent to the model this turn.
#[derive(Debug, Clone, PartialEq)]
pub struct View<'a> {
    /// The system prompt, rebuilt every turn and never stored.
    pub system: String,
    /// The conversation: the latest checkpoint's summary (if any), the log after it as policy
    /// shaped it, repaired, then nudges.
    pub messages: Vec<ViewMessage<'a>>,
}

impl View<'_> {
    /// The system prompt as a system message, or `None` when it is empty (an empty system
    /// prompt is left out of every wire format).
    pub fn system_message(&self) -> Option<Message> {
        (!self.system.is_empty()).then(|| Message::text(crate::Role::System, self.system.clone()))
    }

    /// The view as one message list with the system prompt first (the shape the wire
    /// converters take). Empty system prompts are left out.
    pub fn to_messages(&self) -> Vec<Message> {
        self.system_message()
            .into_iter()
            .chain(
                self.messages
                    .iter()
                    .map(|item| item.message.as_ref().clone()),
            )
            .collect()
    }
}
