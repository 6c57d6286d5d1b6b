//! Token-budget truncation: the last fallback, deterministic and always fitting.
//!
//! Two moves. Dropping: the oldest whole units (an assistant message with its tool results is
//! one unit) go, and a [`SummaryMethod::Truncation`](crate::compaction::SummaryMethod)
//! checkpoint records that they went, carrying the previous summary and the user's first
//! request verbatim, so the task survives. Cutting: a single message too big for what is left
//! is cut head + tail around a marker that says how much was left out; thinking and
//! provider-opaque blocks of a cut message are dropped (they cannot be cut without breaking
//! their signature) and images are replaced by a note.
//!
//! Together they make a view fit whenever the system prompt plus [`MIN_MESSAGE_TOKENS`] per
//! remaining message fits.

use crate::model::ViewMessage;
use crate::model::{Content, Message, Part};
use crate::text::{cut_middle, head_bytes};
use crate::tokens::{estimate_message, ModelFamily};

/// The marker left where a message was cut.
pub const CUT_MARKER: &str = "\n[… {bytes} bytes cut to fit the context window …]\n";
/// A message cannot be cut below this estimate (its framing and the marker).
pub const MIN_MESSAGE_TOKENS: u64 = 24;
/// The content of a message that a cut left with nothing in it (its room was too small, or it
/// held only parts a cut drops: thinking, provider blocks): providers reject empty messages.
pub const REMOVED_CONTENT: &str = "[content removed to fit the context window]";

/// The summary text of a truncation checkpoint.
pub fn truncation_summary(
    dropped_messages: usize,
    first_request: Option<&str>,
    previous_summary: Option<&str>,
    max_bytes: usize,
) -> String {
    let mut text = format!(
        "{dropped_messages} earlier messages were dropped without a summary to fit the context window (they remain in the session log)."
    );
    if let Some(request) = first_request {
        text.push_str("\n\nThe user's first request, verbatim:\n");
        text.push_str(&cut_middle(request.trim(), max_bytes / 3, CUT_MARKER));
    }
    if let Some(previous) = previous_summary {
        text.push_str("\n\nSummary of what came before:\n");
        text.push_str(previous.trim());
    }
    cut_middle(&text, max_bytes, CUT_MARKER)
}

/// `message` with its content cut to about `max_bytes` (text head + tail around
/// `CUT_MARKER`; long string values inside tool-call arguments cut the same way, so the
/// arguments stay valid JSON).
pub fn cut_message(message: &Message, max_bytes: usize) -> Message {
    let mut cut = message.clone();
    let calls = cut.tool_calls.len();
    // Share the room between the content and the arguments of each call.
    let share = max_bytes / (calls + 1).max(1);
    cut.content = match &message.content {
        Content::Text(text) => Content::Text(cut_middle(text, share, CUT_MARKER)),
        Content::Parts(parts) => {
            let texts = parts
                .iter()
                .filter(|p| matches!(p, Part::Text { .. }))
                .count()
                .max(1);
            Content::Parts(
                parts
                    .iter()
                    .filter_map(|part| match part {
                        Part::Text { text } => Some(Part::Text {
                            text: cut_middle(text, share / texts, CUT_MARKER),
                        }),
                        Part::Image { .. } => Some(Part::Text {
                            text: "[image removed to fit the context window]".to_owned(),
                        }),
                        Part::Thinking { .. } | Part::Opaque { .. } => None,
                    })
                    .collect(),
            )
        }
    };
    for call in &mut cut.tool_calls {
        call.arguments = cut_arguments(&call.arguments, share);
    }
    // A tiny room cuts text to nothing, and a cut drops thinking and provider blocks: a message
    // that said something still says what happened (providers reject empty messages, and the
    // model should know something was there).
    if cut.content.is_blank() && !message.content.is_blank() {
        cut.content = Content::Text(REMOVED_CONTENT.to_owned());
    }
    cut
}

/// JSON arguments with long string values cut so the text is about `max_bytes`; arguments that
/// are not JSON are cut as text.
fn cut_arguments(arguments: &str, max_bytes: usize) -> String {
    if arguments.len() <= max_bytes {
        return arguments.to_owned();
    }
    match serde_json::from_str::<serde_json::Value>(arguments) {
        Ok(mut value) => {
            let strings = count_strings(&value).max(1);
            cut_strings(&mut value, max_bytes / strings);
            serde_json::to_string(&value)
                .unwrap_or_else(|_| head_bytes(arguments, max_bytes).to_owned())
        }
        Err(_) => cut_middle(arguments, max_bytes, CUT_MARKER),
    }
}

fn count_strings(value: &serde_json::Value) -> usize {
    match value {
        serde_json::Value::String(_) => 1,
        serde_json::Value::Array(items) => items.iter().map(count_strings).sum(),
        serde_json::Value::Object(map) => map.values().map(count_strings).sum(),
        _ => 0,
    }
}

fn cut_strings(value: &mut serde_json::Value, max_bytes: usize) {
    match value {
        serde_json::Value::String(text) if text.len() > max_bytes => {
            *text = cut_middle(text, max_bytes, CUT_MARKER)
        }
        serde_json::Value::Array(items) => items
            .iter_mut()
            .for_each(|item| cut_strings(item, max_bytes)),
        serde_json::Value::Object(map) => map
            .values_mut()
            .for_each(|item| cut_strings(item, max_bytes)),
        _ => {}
    }
}

/// Cuts the biggest messages of `items` until their estimates sum to at most `allowance`, or
/// every message is at its floor. Returns how many messages were cut. Deterministic: the same
/// items and allowance always give the same cuts.
pub fn cut_to_fit(items: &mut [ViewMessage<'_>], allowance: u64, family: ModelFamily) -> usize {
    let mut tokens: Vec<u64> = items
        .iter()
        .map(|item| {
            item.tokens
                .unwrap_or_else(|| estimate_message(item, family))
        })
        .collect();
    // Each message is cut from its original text (never a cut of a cut), at most a few times:
    // the bytes-per-token guess may land a little over its target.
    const ATTEMPTS: u8 = 4;
    let mut attempts = vec![0u8; items.len()];
    let mut originals: Vec<Option<Message>> = vec![None; items.len()];
    loop {
        let total: u64 = tokens.iter().sum();
        let Some(excess) = total.checked_sub(allowance).filter(|excess| *excess > 0) else {
            break;
        };
        let biggest = tokens
            .iter()
            .zip(&attempts)
            .enumerate()
            .filter(|(_, (tokens, tried))| **tried < ATTEMPTS && **tokens > MIN_MESSAGE_TOKENS)
            .max_by_key(|(index, (tokens, _))| (**tokens, std::cmp::Reverse(*index)))
            .map(|(index, (tokens, _))| (index, *tokens));
        let Some((index, before)) = biggest else {
            break;
        };
        let (Some(item), Some(slot), Some(tried), Some(original)) = (
            items.get_mut(index),
            tokens.get_mut(index),
            attempts.get_mut(index),
            originals.get_mut(index),
        ) else {
            break;
        };
        *tried += 1;
        let original = original.get_or_insert_with(|| item.message.as_ref().clone());
        // Aim a little under the target: 2% and a few tokens to spare.
        let target = before
            .saturating_sub(excess + excess / 50 + 2)
            .max(MIN_MESSAGE_TOKENS);
        // Bytes per token of this very message, so the cut lands near the target.
        let bytes = u128::from(message_bytes(item) as u64);
        let room = usize::try_from(bytes * u128::from(target) / u128::from(before.max(1)))
            .unwrap_or(usize::MAX);
        let smaller = cut_message(original, room.saturating_sub(CUT_MARKER.len()));
        let after = estimate_message(&smaller, family);
        if after < before {
            *item.to_mut() = smaller;
            item.tokens = Some(after);
            *slot = after;
        }
    }
    originals
        .iter()
        .filter(|original| original.is_some())
        .count()
}

fn message_bytes(message: &Message) -> usize {
    let content = match &message.content {
        Content::Text(text) => text.len(),
        Content::Parts(parts) => parts
            .iter()
            .map(|part| match part {
                Part::Text { text } => text.len(),
                Part::Thinking { thinking, .. } => thinking.len(),
                Part::Image { .. } | Part::Opaque { .. } => 64,
            })
            .sum(),
    };
    content
        + message
            .tool_calls
            .iter()
            .map(|call| call.arguments.len())
            .sum::<usize>()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ToolCall;

    #[test]
    fn cut_messages_keep_both_ends_and_valid_arguments() {
        let big = Message::assistant(
            "a".repeat(5_000),
            vec![ToolCall::new(
                "c",
                "write_file",
                serde_json::json!({"path": "x.rs", "content": "b".repeat(20_000)}).to_string(),
            )],
        );
        let cut = cut_message(&big, 2_000);
        assert!(cut.text_content().len() <= 1_000);
        assert!(cut.text_content().contains("bytes cut"));
        let arguments: serde_json::Value =
            serde_json::from_str(&cut.tool_calls[0].arguments).unwrap();
        assert_eq!(arguments["path"], "x.rs");
        assert!(cut.tool_calls[0].arguments.len() < 1_200);
    }

    /// Found by `plan_properties`: a message made only of parts a cut drops must not come out
    /// empty (Anthropic rejects empty messages).
    #[test]
    fn a_cut_message_is_never_left_empty() {
        let only_dropped = Message {
            content: Content::Parts(vec![
                Part::Thinking {
                    thinking: "hm".into(),
                    signature: "sig".into(),
                },
                Part::Opaque {
                    provider: crate::model::Provider::OpenAi,
                    block: serde_json::json!({"type": "input_audio", "input_audio": {"data": "aa", "format": "wav"}}),
                },
            ]),
            ..Message::text(crate::model::Role::System, "")
        };
        let cut = cut_message(&only_dropped, 100);
        assert_eq!(cut.content, Content::Text(REMOVED_CONTENT.to_owned()));
        assert_eq!(
            cut_message(&Message::assistant("some words", vec![]), 0).content,
            Content::Text(REMOVED_CONTENT.to_owned())
        );
        let with_call = Message::assistant("", vec![ToolCall::new("c", "ls", "{}")]);
        assert_eq!(
            cut_message(&with_call, 100).content,
            Content::Text(String::new())
        );
    }

    #[test]
    fn a_message_cut_to_nothing_still_says_it_was_cut() {
        for message in [
            Message::user("some words"),
            Message::tool_result("c", "output", false),
        ] {
            assert_eq!(cut_message(&message, 0).text_content(), REMOVED_CONTENT);
        }
        assert!(cut_message(&Message::user(""), 0).content.is_blank());
    }

    #[test]
    fn cut_to_fit_reaches_the_allowance() {
        let log = [
            Message::user("x".repeat(40_000)),
            Message::user("small"),
            Message::tool_result("c", "y".repeat(9_000), false),
        ];
        let family = ModelFamily::OpenAi;
        let others = estimate_message(&log[1], family) + estimate_message(&log[2], family);
        let allowance = others + 500;
        let mut items: Vec<ViewMessage> = log.iter().map(ViewMessage::borrowed).collect();
        let cut = cut_to_fit(&mut items, allowance, family);
        let total: u64 = items.iter().map(|m| estimate_message(m, family)).sum();
        assert!(total <= allowance, "{total} > {allowance}");
        assert!(
            total + 100 > allowance,
            "cut near the allowance, not far below it: {total}"
        );
        assert_eq!(cut, 1, "only the biggest needed cutting");
        assert!(items[1].is_borrowed());

        let mut tight: Vec<ViewMessage> = log.iter().map(ViewMessage::borrowed).collect();
        cut_to_fit(&mut tight, 3 * MIN_MESSAGE_TOKENS, ModelFamily::OpenAi);
        let total: u64 = tight
            .iter()
            .map(|m| estimate_message(m, ModelFamily::OpenAi))
            .sum();
        assert!(total <= 3 * MIN_MESSAGE_TOKENS, "{total}");
    }
}
