//! The default estimate of whole messages: content, tool calls, images and the framing the
//! provider wraps around each message.
//!
//! What a message costs, for a [`ModelFamily`]:
//! - its text, thinking text, and the compact JSON text of opaque blocks, by [`estimate_text`];
//! - each image by [`estimate_image`];
//! - each tool call's name, arguments and id, plus [`Framing::per_tool_call`];
//! - a tool result's `tool_call_id` and `name`, plus [`Framing::per_tool_result`];
//! - [`Framing::per_message`] for the role and the separators around the message.
//!
//! The framing constants come from OpenAI's cookbook (3 tokens per message plus the role); the
//! Claude ones are estimates of its block structure (`tool_use` and `tool_result` blocks with
//! ids), consistent with the real prompt growth of a Claude Code session but hardly
//! constrained by it: framing is under 1% of those intervals (see `docs/reports/estimator.md`).
//!
//! Guarantees: [`estimate_messages`] is additive, the sum of [`estimate_message`] over the
//! slice, with no per-request constant inside (so a caller may cache per-message estimates and
//! add them up); the once-per-request costs are [`request_overhead`] and
//! [`super::estimate_tool_schemas`]. Never panics; saturates instead of overflowing.

use super::family::ModelFamily;
use super::image::estimate_image;
use super::text::estimate_text;
use crate::model::{Content, Message, Part};

/// Fixed token costs a provider adds around the content of messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Framing {
    /// Every message: role marker and separators.
    pub per_message: u64,
    /// Every tool call an assistant makes: the call's envelope beyond its name and arguments.
    pub per_tool_call: u64,
    /// Every tool result message, beyond `per_message`: the result's envelope.
    pub per_tool_result: u64,
    /// Once per request: the tokens that prime the reply.
    pub per_request: u64,
}

/// The framing of a family.
pub const fn framing(family: ModelFamily) -> Framing {
    match family {
        // OpenAI cookbook: 3 per message, plus the role (1 token), plus 3 to prime the reply.
        ModelFamily::OpenAi => Framing {
            per_message: 4,
            per_tool_call: 6,
            per_tool_result: 2,
            per_request: 3,
        },
        // Claude wraps tool use and results in more structure (block types, ids): estimates,
        // consistent with real prompt growth in a Claude Code session.
        ModelFamily::Claude | ModelFamily::Claude47 => Framing {
            per_message: 4,
            per_tool_call: 10,
            per_tool_result: 6,
            per_request: 4,
        },
    }
}

/// Tokens added once per request beyond the messages (reply priming). Not part of
/// [`estimate_messages`], which stays additive.
pub const fn request_overhead(family: ModelFamily) -> u64 {
    framing(family).per_request
}

/// Estimated tokens of one message for `family`.
pub fn estimate_message(message: &Message, family: ModelFamily) -> u64 {
    let frame = framing(family);
    let content = match &message.content {
        Content::Text(text) => estimate_text(text, family),
        Content::Parts(parts) => parts.iter().fold(0u64, |sum, part| {
            sum.saturating_add(estimate_part(part, family))
        }),
    };
    let calls = message.tool_calls.iter().fold(0u64, |sum, call| {
        sum.saturating_add(frame.per_tool_call)
            .saturating_add(estimate_text(&call.id, family))
            .saturating_add(estimate_text(&call.name, family))
            .saturating_add(estimate_text(&call.arguments, family))
    });
    let result = message.tool_call_id.as_deref().map_or(0, |id| {
        frame
            .per_tool_result
            .saturating_add(estimate_text(id, family))
    });
    let name = message
        .name
        .as_deref()
        .map_or(0, |name| estimate_text(name, family));
    frame
        .per_message
        .saturating_add(content)
        .saturating_add(calls)
        .saturating_add(result)
        .saturating_add(name)
}

/// Estimated tokens of a list of messages: exactly the sum of [`estimate_message`] over it.
pub fn estimate_messages(messages: &[Message], family: ModelFamily) -> u64 {
    messages.iter().fold(0u64, |sum, message| {
        sum.saturating_add(estimate_message(message, family))
    })
}

fn estimate_part(part: &Part, family: ModelFamily) -> u64 {
    match part {
        Part::Text { text } => estimate_text(text, family),
        // The reasoning text is what the model reads back; the signature is checked, not read.
        Part::Thinking { thinking, .. } => estimate_text(thinking, family),
        Part::Opaque { block, .. } => estimate_text(&block.to_string(), family),
        Part::Image { source, detail } => estimate_image(source, detail.as_deref(), family),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ImageSource, ToolCall};

    #[test]
    fn framing_is_counted_once_per_message() {
        for family in ModelFamily::ALL {
            let empty = Message::user("");
            assert_eq!(
                estimate_message(&empty, family),
                framing(family).per_message
            );
            let hello = Message::user("hello");
            assert_eq!(
                estimate_message(&hello, family),
                framing(family).per_message + estimate_text("hello", family)
            );
        }
    }

    #[test]
    fn tool_calls_and_results_cost_their_text_and_envelope() {
        let family = ModelFamily::OpenAi;
        let call = ToolCall::new("call_1", "get_order", r##"{"order_id":"#W123"}"##);
        let assistant = Message::assistant("", vec![call.clone()]);
        let expected = framing(family).per_message
            + framing(family).per_tool_call
            + estimate_text(&call.id, family)
            + estimate_text(&call.name, family)
            + estimate_text(&call.arguments, family);
        assert_eq!(estimate_message(&assistant, family), expected);
        let result = Message::tool_result("call_1", "ok", false);
        assert!(estimate_message(&result, family) > estimate_message(&Message::user("ok"), family));
    }

    #[test]
    fn images_are_priced_by_family() {
        let image = Message {
            content: Content::Parts(vec![Part::Image {
                source: ImageSource::Url {
                    url: "https://example.com/a.png".into(),
                },
                detail: Some("low".into()),
            }]),
            ..Message::user("")
        };
        assert_eq!(estimate_message(&image, ModelFamily::OpenAi), 4 + 85);
        assert_eq!(estimate_message(&image, ModelFamily::Claude), 4 + 1600);
    }

    #[test]
    fn messages_are_additive() {
        let messages = vec![
            Message::user("a b c"),
            Message::assistant("d", vec![]),
            Message::user("中文"),
        ];
        for family in ModelFamily::ALL {
            let sum: u64 = messages
                .iter()
                .map(|message| estimate_message(message, family))
                .sum();
            assert_eq!(estimate_messages(&messages, family), sum);
            assert_eq!(estimate_messages(&[], family), 0);
        }
    }
}
