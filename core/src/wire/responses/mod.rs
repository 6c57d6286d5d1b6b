//! OpenAI Responses: input and output items to and from the model.
//!
//! Reading ([`from_responses`]) takes a request body (`{instructions?, input}`, `input` a string
//! or an array of items), a response (`{output: [...]}`), or a bare array of items. Writing
//! ([`to_responses`]) gives `{instructions?, input: [...]}`.
//!
//! How the shapes map:
//! - `instructions` is a leading [`crate::Role::System`] message; a `message` item (with or
//!   without `"type": "message"`) with role `user`, `system` or `developer` is one message
//!   (`developer` reads as system and is written back as `system`, as for Chat Completions).
//! - Assistant-side items in a row (`reasoning`, an assistant `message`, `function_call`,
//!   `custom_tool_call`, and items ctxkit does not model such as `web_search_call`) form one
//!   assistant message: items other than messages and calls are [`crate::Part::Opaque`] parts
//!   with `provider: Responses`, kept verbatim (so `reasoning` keeps its `encrypted_content`
//!   byte for byte), the message's content parts follow in order, and calls become
//!   [`crate::ToolCall`]s. A second assistant `message` item, or one after a call, starts a new
//!   assistant message.
//! - Content parts: `input_text` and `output_text` (with empty `annotations` and `logprobs`)
//!   are text, `input_image` with an `image_url` is an image (`detail` kept); every other part
//!   (`refusal`, `input_file`, an annotated `output_text`...) is kept opaque.
//! - `function_call` and `custom_tool_call` are calls by `call_id`; `function_call_output` and
//!   `custom_tool_call_output` are tool messages answering them. Item fields the model has no
//!   place for (`id`, `status`, Codex's `phase`, the custom type) are the call's or message's
//!   [`crate::ProviderFields`], written back only here.
//!
//! Normalizations (JSON in → JSON out): `type: "message"` is added where it was left out;
//! `developer` becomes `system`; a leading system item with string content becomes
//! `instructions`; `annotations: []` is written on every assistant `output_text`; a `reasoning`
//! or other opaque item after a call moves before the calls of its assistant message;
//! `is_error` (no Responses field) is dropped; and a `reasoning` item followed by nothing or by
//! the user's side (its message or call was dropped, by repair say) is left out, as the API
//! refuses it.
//!
//! Guarantees: `from_responses(&to_responses(msgs))? == msgs` for every list the format can
//! represent; no function panics; every error names the path of the bad value
//! (`input[3].call_id: missing`).

pub(crate) mod read;
mod write;

pub use read::from_responses;
pub use write::to_responses;

/// An input's items split as an agent re-sends its conversation (what a shell matching it
/// against a log counts as one message): each item on the user's side (a
/// user, system or developer message, a tool's output) alone, and each run of assistant-side
/// items in a row (`reasoning`, assistant `message`s, calls: one model answer's output) as one.
/// So one response's `output`, re-sent by the agent in its next `input`, is one run, read by
/// [`from_responses`] into the same messages as the response was. Only each item's `type` and
/// `role` are looked at (a shell may pass items holding just those).
///
/// ```
/// use ctxkit_core::wire::responses_turns;
/// let input = serde_json::json!([
///     {"role": "user", "content": "hi"},
///     {"type": "reasoning", "summary": []},
///     {"type": "function_call", "call_id": "c1", "name": "ls", "arguments": "{}"},
///     {"type": "function_call_output", "call_id": "c1", "output": "a.txt"},
///     {"type": "message", "role": "assistant", "content": "done"}
/// ]);
/// assert_eq!(responses_turns(input.as_array().unwrap()), vec![0..1, 1..3, 3..4, 4..5]);
/// ```
pub fn responses_turns(items: &[serde_json::Value]) -> Vec<std::ops::Range<usize>> {
    responses_turns_by_side(items.iter().map(is_user_side))
}

/// [`responses_turns`] from each item's side alone (`true`: the user's side, as
/// [`is_user_side_item`] says), for a shell that keeps the sides of items it has read before
/// and need not build the items again.
///
/// ```
/// use ctxkit_core::wire::responses_turns_by_side;
/// assert_eq!(responses_turns_by_side([true, false, false, true]), vec![0..1, 1..3, 3..4]);
/// ```
pub fn responses_turns_by_side(
    user_side: impl IntoIterator<Item = bool>,
) -> Vec<std::ops::Range<usize>> {
    let mut runs = Vec::new();
    let mut run_start = None;
    let mut count = 0;
    for (index, user) in user_side.into_iter().enumerate() {
        count = index + 1;
        if user {
            if let Some(start) = run_start.take() {
                runs.push(start..index);
            }
            runs.push(index..index + 1);
        } else if run_start.is_none() {
            run_start = Some(index);
        }
    }
    if let Some(start) = run_start {
        runs.push(start..count);
    }
    runs
}

/// The content part types of a Responses message (anything else in `content` is an error for
/// the API; in a model message, an opaque part of another type is an item of its own).
pub(crate) const CONTENT_PART_TYPES: [&str; 7] = [
    "input_text",
    "input_image",
    "output_text",
    "refusal",
    "input_file",
    "computer_screenshot",
    "summary_text",
];

/// True when a Responses item is on the user's side of the conversation (a user or system
/// message, a tool's output): what may not follow a `reasoning` item, which the API wants
/// followed by the item it led to.
pub(crate) fn is_user_side(item: &serde_json::Value) -> bool {
    let text = |key: &str| item.get(key).and_then(serde_json::Value::as_str);
    is_user_side_item(text("type"), text("role"))
}

/// Whether an item whose `type` is `kind` (`None`: a message) and whose `role` is `role` is on
/// the user's side of the conversation (a user, system or developer message, a tool's output).
pub fn is_user_side_item(kind: Option<&str>, role: Option<&str>) -> bool {
    match kind.unwrap_or("message") {
        "message" => role != Some("assistant"),
        "item_reference" | "compaction" => false,
        other => other.ends_with("_output") || other == "mcp_approval_response",
    }
}

/// True when an opaque Responses part is a content part of a message (not an item).
pub(crate) fn is_content_part(block: &serde_json::Value) -> bool {
    block
        .get("type")
        .and_then(serde_json::Value::as_str)
        .is_some_and(|kind| CONTENT_PART_TYPES.contains(&kind))
}
