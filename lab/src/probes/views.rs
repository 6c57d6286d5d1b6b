//! The floor a probe run compares against: a sliding window over the log, the newest messages
//! that fit, as an agent with no compaction but a trim would send.

use ctxkit_core::model::{Entry, Message, Role};

/// The newest entries of `entries` with `seq <= through` whose estimated tokens fit in `room`,
/// starting at the first that is not a tool result (no result is cut from its call), as
/// messages.
///
/// ```
/// use ctxkit_lab::probes::sliding_window;
/// use ctxkit_core::model::Entry;
/// use ctxkit_core::{Message, ModelFamily};
/// let entries: Vec<Entry> = (1..=4).map(|i| Entry::new(i, Message::user(format!("message {i}")), ModelFamily::Claude)).collect();
/// let room = entries[1].tokens + entries[2].tokens;
/// let view = sliding_window(&entries, 3, room);
/// assert_eq!(view.len(), 2);
/// assert_eq!(view[1].text_content(), "message 3");
/// ```
pub fn sliding_window(entries: &[Entry], through: u64, room: u64) -> Vec<Message> {
    let upto: Vec<&Entry> = entries.iter().filter(|e| e.seq <= through).collect();
    let mut start = upto.len();
    let mut used = 0u64;
    while let Some(entry) = start.checked_sub(1).and_then(|at| upto.get(at)) {
        if used + entry.tokens > room {
            break;
        }
        start -= 1;
        used += entry.tokens;
    }
    upto.iter()
        .skip(start)
        .skip_while(|entry| entry.message.role == Role::Tool)
        .map(|entry| entry.message.clone())
        .collect()
}

/// `messages` for a server that takes no tool calls (a small local model's chat template):
/// each call written into its assistant message as a `[tool call NAME ARGUMENTS]` line, and
/// each result as a user message `[tool result]` then its text. Other messages are kept, as
/// their text.
///
/// ```
/// use ctxkit_lab::probes::tools_as_text;
/// use ctxkit_core::{Message, Role, ToolCall};
/// let flat = tools_as_text(&[
///     Message::assistant("Reading.", vec![ToolCall::new("c1", "Read", r#"{"path":"a.rs"}"#)]),
///     Message::tool_result("c1", "fn main() {}", false),
/// ]);
/// assert_eq!(flat[0].text_content(), "Reading.\n[tool call Read {\"path\":\"a.rs\"}]");
/// assert_eq!((flat[1].role, flat[1].text_content().as_ref()), (Role::User, "[tool result]\nfn main() {}"));
/// ```
pub fn tools_as_text(messages: &[Message]) -> Vec<Message> {
    messages
        .iter()
        .map(|message| {
            let text = message.text_content();
            match message.role {
                Role::Tool => Message::user(format!("[tool result]\n{text}")),
                Role::Assistant => {
                    let mut lines: Vec<String> = Vec::new();
                    if !text.trim().is_empty() {
                        lines.push(text.into_owned());
                    }
                    lines.extend(
                        message
                            .tool_calls
                            .iter()
                            .map(|call| format!("[tool call {} {}]", call.name, call.arguments)),
                    );
                    Message::assistant(lines.join("\n"), Vec::new())
                }
                role => Message::text(role, text.into_owned()),
            }
        })
        .collect()
}
