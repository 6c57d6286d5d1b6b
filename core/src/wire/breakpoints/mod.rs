//! Where a view's cache breakpoints go, and how an Anthropic request carries them.
//!
//! Product code: the renderer ([`super::render_view`]) marks the requests it writes with them, the
//! compaction planner reports them in a view's stats, and the validators check the markers.
//! The cost simulator (`ctxkit-lab`) bills requests by the same positions.
//!
//! A breakpoint is worth placing where the next request will repeat everything before it:
//! - the end of the **system prompt** (with the tools before it, the same every turn);
//! - the end of the **checkpoint summary**, which stays put until the next compaction;
//! - the end of the **previous turn** (the message before the last assistant message: where
//!   the previous request's last breakpoint was), so the previous write is read back even when
//!   this turn added more than the provider's lookback of blocks;
//! - the end of the **last message before the trailing nudges**: nudges are not stored and
//!   the next turn drops them, so a breakpoint after them would write what is never read.
//!
//! At most four (Anthropic's limit, and OpenAI's), never two at one place. OpenAI's models
//! before GPT-5.6 cache prefixes by themselves; GPT-5.6 and later take the same positions as
//! `prompt_cache_breakpoint` markers on input parts ([`openai_breakpoints`]).
//!
//! How many content blocks a message renders to in an Anthropic request
//! ([`anthropic_block_counts`]) is here too: a breakpoint marks a message's last block.

use std::borrow::Borrow;

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::model::{Message, Role};
use crate::wire::to_anthropic;

pub(crate) mod openai;

pub use openai::{
    openai_breakpoint_marker, openai_breakpoints, openai_eligible_part_types,
    OPENAI_BREAKPOINT_FIELD, OPENAI_MIN_BREAKPOINT_TOKENS,
};

/// Why a breakpoint is where it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum BreakpointReason {
    /// The end of the system prompt.
    System,
    /// The end of the checkpoint summary.
    Summary,
    /// The end of the previous turn's request.
    PreviousTurn,
    /// The end of the conversation, before trailing nudges.
    LastMessage,
}

crate::model::unit_enum::unit_enum_deserialize!(
    BreakpointReason,
    "BreakpointReason",
    [
        System = "system",
        Summary = "summary",
        PreviousTurn = "previous_turn",
        LastMessage = "last_message"
    ]
);

/// One cache breakpoint of a view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CacheBreakpoint {
    /// Why it is there.
    pub reason: BreakpointReason,
    /// The view message it follows (an index into the view's messages, the system prompt not
    /// counted); `None` for the end of the system prompt.
    pub after_message: Option<usize>,
}

/// The most breakpoints a request carries.
pub const MAX_BREAKPOINTS: usize = 4;

/// The breakpoints of a view whose conversation is `messages` (the system prompt not
/// included): `has_system` when the system prompt is not empty, `has_summary` when
/// `messages[0]` is the checkpoint summary, `trailing_nudges` the nudge messages at the end.
/// In the order they appear in the request.
///
/// ```
/// use ctxkit_core::wire::breakpoints::{place_breakpoints, BreakpointReason};
/// use ctxkit_core::{Message, ToolCall};
/// let view = [
///     Message::user("[Context checkpoint] ..."),
///     Message::user("go on"),
///     Message::assistant("", vec![ToolCall::new("c1", "ls", "{}")]),
///     Message::tool_result("c1", "a.txt", false),
///     Message::user("(a nudge)"),
/// ];
/// let placed = place_breakpoints(&view, true, true, 1);
/// let reasons: Vec<_> = placed.iter().map(|b| (b.reason, b.after_message)).collect();
/// assert_eq!(reasons, [
///     (BreakpointReason::System, None),
///     (BreakpointReason::Summary, Some(0)),
///     (BreakpointReason::PreviousTurn, Some(1)),
///     (BreakpointReason::LastMessage, Some(3)),
/// ]);
/// ```
pub fn place_breakpoints<M: Borrow<Message>>(
    messages: &[M],
    has_system: bool,
    has_summary: bool,
    trailing_nudges: usize,
) -> Vec<CacheBreakpoint> {
    let stable = messages.len().saturating_sub(trailing_nudges);
    let last_assistant = messages
        .get(..stable)
        .unwrap_or_default()
        .iter()
        .rposition(|message| message.borrow().role == Role::Assistant);
    placed_breakpoints(stable, last_assistant, has_system, has_summary)
}

/// [`place_breakpoints`] given the number of `stable` messages and the last assistant message
/// among them: not generic, so compiled once rather than once per message type.
fn placed_breakpoints(
    stable: usize,
    last_assistant: Option<usize>,
    has_system: bool,
    has_summary: bool,
) -> Vec<CacheBreakpoint> {
    let mut placed = Vec::with_capacity(MAX_BREAKPOINTS);
    if has_system {
        placed.push(CacheBreakpoint {
            reason: BreakpointReason::System,
            after_message: None,
        });
    }
    let mut add = |reason, index: usize| {
        if placed.iter().all(|b| b.after_message != Some(index)) {
            placed.push(CacheBreakpoint {
                reason,
                after_message: Some(index),
            });
        }
    };
    if has_summary && stable > 0 {
        add(BreakpointReason::Summary, 0);
    }
    if let Some(previous_end) = last_assistant.and_then(|index| index.checked_sub(1)) {
        add(BreakpointReason::PreviousTurn, previous_end);
    }
    if let Some(last) = stable.checked_sub(1) {
        add(BreakpointReason::LastMessage, last);
    }
    crate::wire::fields::sort_stable_by(&mut placed, |a, b| {
        let at = |b: &CacheBreakpoint| b.after_message.map_or(0, |index| index + 1);
        at(a).cmp(&at(b))
    });
    placed.truncate(MAX_BREAKPOINTS);
    placed
}

/// Adds `cache_control: {"type": "ephemeral"}` to an Anthropic request rendered from the same
/// view: on the system prompt's last block (a string system prompt becomes one text block) and
/// on the last block of each breakpoint's message. `blocks_per_message[i]` is how many content
/// blocks view message `i` renders to ([`anthropic_block_counts`]); tool results and the
/// user message after them share one request message, which is why blocks are counted.
/// A breakpoint past the end of the request is skipped.
pub fn mark_anthropic(
    request: &mut Value,
    breakpoints: &[CacheBreakpoint],
    blocks_per_message: &[usize],
) {
    let marker = json!({"type": "ephemeral"});
    let Some(object) = request.as_object_mut() else {
        return;
    };
    if breakpoints.iter().any(|b| b.after_message.is_none()) {
        if let Some(system) = object.get_mut("system") {
            mark_last_block(system, &marker);
        }
    }
    let Some(Value::Array(messages)) = object.get_mut("messages") else {
        return;
    };
    for breakpoint in breakpoints {
        let Some(index) = breakpoint.after_message else {
            continue;
        };
        let Some(end) = blocks_per_message
            .get(..=index)
            .map(|counts| counts.iter().sum::<usize>())
        else {
            continue;
        };
        if end > 0 {
            mark_block(messages, end - 1, &marker);
        }
    }
}

/// Marks the `flat`-th content block of `messages` (counting every message's blocks in order;
/// string content is one block).
fn mark_block(messages: &mut [Value], flat: usize, marker: &Value) {
    let mut seen = 0;
    for message in messages {
        let Some(content) = message.get_mut("content") else {
            continue;
        };
        let count = match content {
            Value::Array(blocks) => blocks.len(),
            _ => 1,
        };
        if flat < seen + count {
            as_blocks(content);
            if let Some(Value::Object(block)) = content
                .as_array_mut()
                .and_then(|blocks| blocks.get_mut(flat - seen))
            {
                block.insert("cache_control".to_owned(), marker.clone());
            }
            return;
        }
        seen += count;
    }
}

fn mark_last_block(content: &mut Value, marker: &Value) {
    as_blocks(content);
    if let Some(Value::Object(block)) = content.as_array_mut().and_then(|b| b.last_mut()) {
        block.insert("cache_control".to_owned(), marker.clone());
    }
}

/// A string content becomes one text block, so it can carry a marker.
fn as_blocks(content: &mut Value) {
    if let Value::String(text) = content {
        let mut block = Map::new();
        block.insert("type".to_owned(), json!("text"));
        block.insert("text".to_owned(), Value::String(std::mem::take(text)));
        *content = Value::Array(vec![Value::Object(block)]);
    }
}

/// How many content blocks each message renders to in an Anthropic request.
pub fn anthropic_block_counts<M: Borrow<Message>>(messages: &[M]) -> Vec<usize> {
    messages
        .iter()
        .map(|message| anthropic_block_count(message.borrow()))
        .collect()
}

/// How many content blocks `message` renders to alone in an Anthropic request, without
/// rendering each block as text (the npm package's renderer calls this, and the .wasm has a
/// size limit).
fn anthropic_block_count(message: &Message) -> usize {
    let rendered = if message.role == Role::System {
        to_anthropic(&[Message {
            role: Role::User,
            ..message.clone()
        }])
    } else {
        to_anthropic(std::slice::from_ref(message))
    };
    rendered
        .ok()
        .and_then(|request| {
            let content = request.get("messages")?.get(0)?.get("content")?;
            Some(content.as_array().map_or(1, |blocks| blocks.len().max(1)))
        })
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_more_than_four_nor_two_at_one_place() {
        let view = [Message::user("only")];
        let placed = place_breakpoints(&view, true, true, 0);
        assert_eq!(placed.len(), 2, "{placed:?}");
        assert!(place_breakpoints::<Message>(&[], false, false, 0).is_empty());
        let long: Vec<Message> = (0..50)
            .flat_map(|i| {
                [
                    Message::user(format!("u{i}")),
                    Message::assistant("a", vec![]),
                ]
            })
            .collect();
        assert!(place_breakpoints(&long, true, true, 3).len() <= MAX_BREAKPOINTS);
    }

    #[test]
    fn markers_land_on_the_blocks_of_merged_messages() {
        let mut request = json!({
            "system": "sys",
            "messages": [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "c", "name": "x", "input": {}}]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "c", "content": "ok"},
                    {"type": "text", "text": "nudge"}
                ]}
            ]
        });
        let breakpoints = [
            CacheBreakpoint {
                reason: BreakpointReason::System,
                after_message: None,
            },
            CacheBreakpoint {
                reason: BreakpointReason::LastMessage,
                after_message: Some(2),
            },
        ];
        // hi, tool_use, tool_result, nudge: one block each.
        mark_anthropic(&mut request, &breakpoints, &[1, 1, 1, 1]);
        assert_eq!(request["system"][0]["cache_control"]["type"], "ephemeral");
        let last = &request["messages"][2]["content"];
        assert_eq!(last[0]["cache_control"]["type"], "ephemeral");
        assert!(
            last[1].get("cache_control").is_none(),
            "the nudge is not cached"
        );
    }
}
