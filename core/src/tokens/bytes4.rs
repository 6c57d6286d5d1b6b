//! The reference estimator: bytes divided by 4.
//!
//! This is the rule of the reference design, kept for compatibility and golden tests, not for
//! accuracy (see `docs/reports/estimator.md`: it is off by 20–30% on JSON and agent traffic and by 2–4×
//! on CJK). What it counts, exactly:
//!
//! - the UTF-8 bytes of text content (a text string, or each text part);
//! - the bytes of thinking text (the reasoning is sent back to the model; the signature is not
//!   counted);
//! - for an opaque provider block, the bytes of its compact JSON text;
//! - images count nothing here;
//! - for each tool call, the bytes of its id, name and arguments;
//! - the bytes of `tool_call_id`.
//!
//! The sum is divided by 4, rounding down. [`bytes4_messages`] divides the *total* of all
//! messages once (as the reference did), so it can exceed the sum of [`bytes4_message`] over
//! the same messages by the rounding of each.
//!
//! Guarantees: never panics, saturates instead of overflowing.

use crate::model::{Content, Message, Part};

/// The byte count [`bytes4_message`] divides by 4.
pub fn message_bytes(message: &Message) -> u64 {
    let content = match &message.content {
        Content::Text(text) => len(text),
        Content::Parts(parts) => parts
            .iter()
            .fold(0u64, |sum, part| sum.saturating_add(part_bytes(part))),
    };
    let calls = message.tool_calls.iter().fold(0u64, |sum, call| {
        sum.saturating_add(len(&call.id))
            .saturating_add(len(&call.name))
            .saturating_add(len(&call.arguments))
    });
    let answered = message.tool_call_id.as_deref().map_or(0, len);
    content.saturating_add(calls).saturating_add(answered)
}

/// The reference estimate of one message: its bytes (see the module doc) divided by 4.
pub fn bytes4_message(message: &Message) -> u64 {
    message_bytes(message) / 4
}

/// The reference estimate of a list of messages: the total of their bytes, divided by 4 once.
pub fn bytes4_messages(messages: &[Message]) -> u64 {
    messages.iter().fold(0u64, |sum, message| {
        sum.saturating_add(message_bytes(message))
    }) / 4
}

fn part_bytes(part: &Part) -> u64 {
    match part {
        Part::Text { text } => len(text),
        Part::Thinking { thinking, .. } => len(thinking),
        Part::Opaque { block, .. } => len(&block.to_string()),
        Part::Image { .. } => 0,
    }
}

fn len(text: &str) -> u64 {
    u64::try_from(text.len()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Provider, ToolCall};

    #[test]
    fn golden_tool_call_of_22_bytes_estimates_5() {
        // id (6) + name (9) + arguments (7) = 22 bytes; 22 / 4 = 5.
        let call = ToolCall::new("call_1", "get_order", r#"{"a":1}"#);
        let message = Message::assistant("", vec![call]);
        assert_eq!(message_bytes(&message), 22);
        assert_eq!(bytes4_message(&message), 5);
    }

    #[test]
    fn counts_text_thinking_opaque_and_ids_but_not_images() {
        let message = Message {
            content: Content::Parts(vec![
                Part::Text {
                    text: "abcd".into(),
                },
                Part::Thinking {
                    thinking: "hmm!".into(),
                    signature: "not counted".into(),
                },
                Part::Opaque {
                    provider: Provider::Anthropic,
                    block: serde_json::json!({"a": 1}),
                },
                Part::Image {
                    source: crate::model::ImageSource::Url {
                        url: "https://x/y.png".into(),
                    },
                    detail: None,
                },
            ]),
            ..Message::tool_result("id12", "", false)
        };
        // 4 + 4 + len(`{"a":1}`) = 7, + tool_call_id 4 = 19.
        assert_eq!(message_bytes(&message), 19);
        assert_eq!(bytes4_message(&message), 4);
    }

    #[test]
    fn messages_divide_the_total_once() {
        let three = Message::user("abc");
        assert_eq!(bytes4_message(&three), 0);
        assert_eq!(bytes4_messages(&[three.clone(), three.clone()]), 1);
        assert_eq!(bytes4_messages(&[]), 0);
    }
}
