//! OpenAI's explicit cache breakpoints (GPT-5.6 and later): where a view's breakpoints go in
//! an OpenAI request, and the marker that carries them.
//!
//! OpenAI takes a breakpoint as a field on an input part ([`OPENAI_BREAKPOINT_FIELD`], whose
//! value is [`openai_breakpoint_marker`]): in Responses on `input_text`, `input_image` and
//! `input_file` parts (of a message item or of a function call's output), in Chat Completions
//! on `text`, `image_url` and `file` parts. At most four a request, each ending a prefix of at
//! least 1,024 tokens; a later request reads a prefix only where one of its own breakpoints
//! ends exactly the same one.
//!
//! The core's breakpoints ([`super::place_breakpoints`]) end messages. An assistant message's
//! parts are the model's output (`output_text`), which takes no marker, so a breakpoint that
//! ends one moves back to the last eligible part before it ([`openai_breakpoints`]), and one
//! whose prefix is then under [`OPENAI_MIN_BREAKPOINT_TOKENS`] is dropped. The system prompt,
//! which Responses sends as `instructions` (no part, no marker), is sent as a leading `system`
//! message with one `input_text` part when a breakpoint ends it.
//!
//! The shape of the marker is the one OpenAI's SDKs document (`{"mode": "explicit"}`); it is
//! written in one place, [`openai_breakpoint_marker`].

use std::borrow::{Borrow, Cow};

use serde_json::{json, Value};

use super::CacheBreakpoint;
use crate::model::{Content, Message, Part, Provider, Role};
use crate::tokens::{estimate_message, ModelFamily};
use crate::wire::{to_openai, to_responses, WireFormat};

/// The field of an input part that marks an OpenAI cache breakpoint.
pub const OPENAI_BREAKPOINT_FIELD: &str = "prompt_cache_breakpoint";

/// The shortest prefix an OpenAI breakpoint may end, in tokens.
pub const OPENAI_MIN_BREAKPOINT_TOKENS: u64 = 1_024;

/// The value of [`OPENAI_BREAKPOINT_FIELD`]: `{"mode": "explicit"}`.
pub fn openai_breakpoint_marker() -> Value {
    json!({"mode": "explicit"})
}

/// The part types that may carry a breakpoint in `format` (Chat Completions for
/// [`WireFormat::Openai`], else Responses).
pub fn openai_eligible_part_types(format: WireFormat) -> [&'static str; 3] {
    if format == WireFormat::Openai {
        ["text", "image_url", "file"]
    } else {
        ["input_text", "input_image", "input_file"]
    }
}

/// `breakpoints` (of a conversation `messages`, the system prompt not counted) moved to where
/// OpenAI takes them: each onto the last message at or before its own that holds an eligible
/// part (an assistant message never does), dropped when there is none, never two at one place.
/// The system prompt's breakpoint (`after_message: None`) stays. In request order.
///
/// ```
/// use ctxkit_core::wire::breakpoints::{openai_breakpoints, place_breakpoints};
/// use ctxkit_core::Message;
/// let view = [Message::user("question"), Message::assistant("answer", vec![])];
/// let placed = place_breakpoints(&view, true, false, 0);
/// let moved = openai_breakpoints(&view, &placed);
/// // The last message is the assistant's: its breakpoint moves back onto the question.
/// assert_eq!(moved.iter().map(|b| b.after_message).collect::<Vec<_>>(), [None, Some(0)]);
/// ```
pub fn openai_breakpoints<M: Borrow<Message>>(
    messages: &[M],
    breakpoints: &[CacheBreakpoint],
) -> Vec<CacheBreakpoint> {
    moved_breakpoints(messages, breakpoints, WireFormat::Responses)
}

/// [`openai_breakpoints`] with the eligible parts of `format`.
fn moved_breakpoints<M: Borrow<Message>>(
    messages: &[M],
    breakpoints: &[CacheBreakpoint],
    format: WireFormat,
) -> Vec<CacheBreakpoint> {
    let mut moved: Vec<CacheBreakpoint> = Vec::with_capacity(breakpoints.len());
    for breakpoint in breakpoints {
        let at = match breakpoint.after_message {
            None => None,
            Some(index) => {
                let upto = messages.get(..=index).unwrap_or(messages);
                match upto
                    .iter()
                    .rposition(|message| eligible_part(message.borrow(), format).is_some())
                {
                    Some(at) => Some(at),
                    None => continue,
                }
            }
        };
        if moved.iter().all(|b| b.after_message != at) {
            moved.push(CacheBreakpoint {
                reason: breakpoint.reason,
                after_message: at,
            });
        }
    }
    crate::wire::fields::sort_stable_by(&mut moved, |a, b| {
        let at = |b: &CacheBreakpoint| b.after_message.map_or(0, |index| index + 1);
        at(a).cmp(&at(b))
    });
    moved
}

/// The index of the last part of `message` that takes a marker in `format` (0 for non-empty
/// text content), or `None`: an assistant message, empty text, or no eligible part.
fn eligible_part(message: &Message, format: WireFormat) -> Option<usize> {
    if message.role == Role::Assistant {
        return None;
    }
    match &message.content {
        Content::Text(text) => (!text.is_empty()).then_some(0),
        Content::Parts(parts) => parts.iter().rposition(|part| match part {
            Part::Text { text } => !text.is_empty(),
            Part::Image { .. } => true,
            Part::Opaque { provider, block } => {
                *provider == own_provider(format)
                    && block
                        .get("type")
                        .and_then(Value::as_str)
                        .is_some_and(|kind| openai_eligible_part_types(format).contains(&kind))
            }
            Part::Thinking { .. } => false,
        }),
    }
}

fn own_provider(format: WireFormat) -> Provider {
    if format == WireFormat::Openai {
        Provider::OpenAi
    } else {
        Provider::Responses
    }
}

/// `messages` as sent (the view's system prompt first when `skip` is 1) with a marker on the
/// last eligible part each of `breakpoints` ends ([`openai_breakpoints`]), for `format`
/// (Chat Completions or Responses): a marked message's part becomes the format's own part,
/// with the marker, kept verbatim by the writer. A breakpoint whose prefix (the messages'
/// estimated tokens, up to and including the marked part) is under
/// [`OPENAI_MIN_BREAKPOINT_TOKENS`] is not marked. The other messages are borrowed unchanged.
pub(crate) fn mark_openai<'m, M: Borrow<Message>>(
    messages: &'m [M],
    breakpoints: &[CacheBreakpoint],
    skip: usize,
    format: WireFormat,
) -> Vec<Cow<'m, Message>> {
    let mut out: Vec<Cow<'m, Message>> = messages
        .iter()
        .map(|message| Cow::Borrowed(message.borrow()))
        .collect();
    let conversation = messages.get(skip..).unwrap_or_default();
    let targets: Vec<usize> = moved_breakpoints(conversation, breakpoints, format)
        .iter()
        .filter_map(|b| match b.after_message {
            None => skip.checked_sub(1),
            Some(index) => Some(index + skip),
        })
        .collect();
    let mut before = 0u64;
    let mut counted = 0usize;
    for target in targets {
        for message in messages.get(counted..target).unwrap_or_default() {
            before += estimate_message(message.borrow(), ModelFamily::OpenAi);
        }
        counted = counted.max(target);
        let Some(message) = messages.get(target).map(Borrow::borrow) else {
            continue;
        };
        let Some(part) = eligible_part(message, format) else {
            continue;
        };
        let marked = marked_message(message, part, format);
        let through = estimate_message(&upto_part(message, part), ModelFamily::OpenAi);
        if before + through >= OPENAI_MIN_BREAKPOINT_TOKENS {
            if let Some(slot) = out.get_mut(target) {
                *slot = Cow::Owned(marked);
            }
        }
    }
    out
}

/// `message` with its parts after `part` left out (what the prefix through `part` holds).
fn upto_part(message: &Message, part: usize) -> Message {
    match &message.content {
        Content::Parts(parts) => Message {
            content: Content::Parts(parts.get(..=part).unwrap_or(parts).to_vec()),
            ..message.clone()
        },
        Content::Text(_) => message.clone(),
    }
}

/// `message` with part `part` (its text, for text content) as the format's own part carrying
/// the marker.
fn marked_message(message: &Message, part: usize, format: WireFormat) -> Message {
    let parts = match &message.content {
        Content::Text(text) => vec![Part::Text { text: text.clone() }],
        Content::Parts(parts) => parts.clone(),
    };
    let parts = parts
        .into_iter()
        .enumerate()
        .map(|(index, original)| {
            if index != part {
                return original;
            }
            match own_part(&original, format) {
                Some(Value::Object(mut block)) => {
                    block.insert(
                        OPENAI_BREAKPOINT_FIELD.to_owned(),
                        openai_breakpoint_marker(),
                    );
                    Part::Opaque {
                        provider: own_provider(format),
                        block: Value::Object(block),
                    }
                }
                _ => original,
            }
        })
        .collect();
    Message {
        content: Content::Parts(parts),
        ..message.clone()
    }
}

/// `part` as `format` writes it in a user message.
fn own_part(part: &Part, format: WireFormat) -> Option<Value> {
    if let Part::Opaque { block, .. } = part {
        return Some(block.clone());
    }
    let alone = Message {
        content: Content::Parts(vec![part.clone()]),
        ..Message::user("")
    };
    if format == WireFormat::Openai {
        to_openai(std::slice::from_ref(&alone))
            .get(0)?
            .get("content")?
            .get(0)
            .cloned()
    } else {
        to_responses(std::slice::from_ref(&alone))
            .get("input")?
            .get(0)?
            .get("content")?
            .get(0)
            .cloned()
    }
}

#[cfg(test)]
mod tests;
