//! What stands for a checkpoint's summary message in a provider's view when the checkpoint
//! keeps that provider's own compaction state ([`super::Checkpoint::compaction_block`]), for
//! every shell (the native engine's views and summary requests, the JS engine's): Anthropic's
//! `compaction` block, sent first in the summary's user message
//! ([`super::anthropic_summary_message`]), or OpenAI's opaque Responses `compaction` item, sent
//! as an input item of its own in the summary message's place
//! ([`super::responses_summary_items`]). Every other format, and a checkpoint without that
//! provider's state, keeps the plaintext [`super::summary_message`].
//!
//! An input item is not a message, so a Responses view is rendered with a marker message in
//! the summary's place ([`RESPONSES_ITEM_MARKER`], which no conversation holds: it opens with
//! a NUL) and the marker's rendered item is then replaced by the checkpoint's items
//! ([`splice_responses_items`]): the rest of the request is rendered exactly as without them.

use serde_json::Value;

use crate::compaction::checkpoint::{
    anthropic_summary_message, responses_summary_items, summary_message,
};
use crate::compaction::Checkpoint;
use crate::model::Message;
use crate::wire::{render_messages, WireFormat};

/// The text of the message that holds a Responses compaction item's place while the view is
/// rendered (see the module doc).
pub const RESPONSES_ITEM_MARKER: &str = "\u{0}ctxkit: the Responses compaction item goes here\u{0}";

/// What stands for a checkpoint's summary message in one format.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryStandIn {
    /// The message rendered in the summary message's place: Anthropic's block message, or the
    /// Responses marker.
    pub message: Message,
    /// In a Responses view, the input items that replace the marker's rendered item after
    /// rendering ([`splice_responses_items`]); empty otherwise.
    pub responses_items: Vec<Value>,
}

/// What stands for `checkpoint`'s summary message in a `format` view, or `None` when the
/// plaintext summary message is sent (the checkpoint keeps no state for that provider, or the
/// format is another provider's).
pub fn summary_stand_in(checkpoint: &Checkpoint, format: WireFormat) -> Option<SummaryStandIn> {
    match format {
        WireFormat::Anthropic => Some(SummaryStandIn {
            message: anthropic_summary_message(checkpoint)?,
            responses_items: Vec::new(),
        }),
        WireFormat::Responses => Some(SummaryStandIn {
            message: Message::user(RESPONSES_ITEM_MARKER),
            responses_items: responses_summary_items(checkpoint)?,
        }),
        _ => None,
    }
}

/// Replaces, in a rendered Responses request `body`, the first input item that is the
/// [`RESPONSES_ITEM_MARKER`] message by `items`. False when `body` has no such item (it is
/// then left as it was).
pub fn splice_responses_items(body: &mut Value, items: &[Value]) -> bool {
    let Some(Value::Array(input)) = body.get_mut("input") else {
        return false;
    };
    let Some(at) = input.iter().position(is_marker) else {
        return false;
    };
    input.splice(at..=at, items.iter().cloned());
    true
}

/// Whether a rendered Responses item is the [`RESPONSES_ITEM_MARKER`] message (its content a
/// string, or one part, possibly carrying a cache breakpoint).
fn is_marker(item: &Value) -> bool {
    match item.get("content") {
        Some(Value::String(text)) => text == RESPONSES_ITEM_MARKER,
        Some(Value::Array(parts)) => match parts.as_slice() {
            [part] => part.get("text").and_then(Value::as_str) == Some(RESPONSES_ITEM_MARKER),
            _ => false,
        },
        _ => false,
    }
}

/// `messages` (a cache-safe summary request's conversation, without its final instruction)
/// as the agent's Responses requests sent them: `latest`'s Responses `compaction` item in
/// place of its summary message, or `None` when that checkpoint keeps no such item or its
/// summary message is not among `messages`.
pub fn responses_conversation(messages: &[Message], latest: Option<&Checkpoint>) -> Option<Value> {
    let checkpoint = latest?;
    let stand_in = summary_stand_in(checkpoint, WireFormat::Responses)?;
    let plain = summary_message(checkpoint);
    let index = messages.iter().position(|message| *message == plain)?;
    let mut marked = messages.to_vec();
    *marked.get_mut(index)? = stand_in.message;
    let mut body = render_messages(&marked, WireFormat::Responses).ok()?;
    splice_responses_items(&mut body, &stand_in.responses_items).then_some(body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compaction::checkpoint::responses_compaction_block;
    use crate::compaction::{DroppedFacts, SummaryMethod};
    use serde_json::json;

    const ITEM: &str = r#"{"type":"compaction","id":"cmp_1","encrypted_content":"gAAA"}"#;

    fn checkpoint(block: Option<String>) -> Checkpoint {
        Checkpoint {
            through_seq: 3,
            summary: "## Goal\nShip it.".to_owned(),
            method: SummaryMethod::Extractive,
            active_tasks: None,
            tokens: 10,
            made_at_turn: 1,
            pinned: Vec::new(),
            dropped_facts: DroppedFacts::default(),
            compaction_block: block,
            restore: None,
        }
    }

    #[test]
    fn a_responses_item_stands_in_only_in_responses_views() {
        let kept = checkpoint(Some(responses_compaction_block(ITEM)));
        let stand_in = summary_stand_in(&kept, WireFormat::Responses).unwrap();
        assert_eq!(stand_in.message, Message::user(RESPONSES_ITEM_MARKER));
        assert_eq!(
            stand_in.responses_items,
            vec![serde_json::from_str::<Value>(ITEM).unwrap()]
        );
        for format in [
            WireFormat::Anthropic,
            WireFormat::Openai,
            WireFormat::Gemini,
        ] {
            assert_eq!(summary_stand_in(&kept, format), None, "{format:?}");
        }
        assert_eq!(
            summary_stand_in(&checkpoint(None), WireFormat::Responses),
            None
        );
    }

    #[test]
    fn the_item_takes_the_summary_messages_place_and_nothing_else_changes() {
        let kept = checkpoint(Some(responses_compaction_block(ITEM)));
        let quoted = Message::user(format!("quoting {RESPONSES_ITEM_MARKER:?} as data"));
        let messages = vec![
            Message::text(crate::model::Role::System, "You are terse."),
            summary_message(&kept),
            quoted.clone(),
            Message::assistant("ok", Vec::new()),
        ];
        let body = responses_conversation(&messages, Some(&kept)).unwrap();
        let plain = render_messages(&messages, WireFormat::Responses).unwrap();
        let input = body["input"].as_array().unwrap();
        let plain_input = plain["input"].as_array().unwrap();
        assert_eq!(input[0], serde_json::from_str::<Value>(ITEM).unwrap());
        assert_eq!(input[1..], plain_input[1..], "the rest as without the item");
        assert_eq!(body["instructions"], plain["instructions"]);
        // Without the item, or without its summary message, there is no Responses form.
        assert_eq!(
            responses_conversation(&messages, Some(&checkpoint(None))),
            None
        );
        assert_eq!(responses_conversation(&messages[2..], Some(&kept)), None);
    }

    #[test]
    fn a_body_without_the_marker_is_left_as_it_was() {
        let mut body = json!({"input": [{"role": "user", "content": "hi"}]});
        let before = body.clone();
        assert!(!splice_responses_items(
            &mut body,
            &[json!({"type": "compaction"})]
        ));
        assert_eq!(body, before);
        let mut marked = json!({"input": [{"role": "user", "content": [
            {"type": "input_text", "text": RESPONSES_ITEM_MARKER,
             "prompt_cache_breakpoint": {"mode": "explicit"}}
        ]}]});
        assert!(splice_responses_items(
            &mut marked,
            &[json!({"type": "compaction"})]
        ));
        assert_eq!(marked, json!({"input": [{"type": "compaction"}]}));
    }
}
