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

use super::cut_search::{cut_to_tokens, Prepared};
use crate::model::{Message, ViewMessage};
use crate::text::cut_middle;
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
/// arguments stay valid JSON). The room is shared by water-filling: texts and arguments
/// shorter than an equal share keep all of theirs, the rest goes to the longer ones.
pub fn cut_message(message: &Message, max_bytes: usize) -> Message {
    Prepared::new(message).cut(max_bytes)
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
    // Each message is cut from its original text (never a cut of a cut). The search makes each
    // cut land on its target, so a message is cut again only when a later round asks for
    // less; a few rounds bound the loop.
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
        let target = before.saturating_sub(excess).max(MIN_MESSAGE_TOKENS);
        let whole = estimate_message(original, family);
        let smaller = cut_to_tokens(original, whole, target, family);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Content, Part, ToolCall};

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
