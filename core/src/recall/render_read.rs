//! A read of the log as the tool result the model reads ([`render_read`]): the messages as the
//! summary transcript shows them (`core/src/text/transcript.rs`: role labels, tool calls as
//! `name(arguments)`, every further line indented), each block led by its `#<seq>`.
//!
//! ```text
//! [ctxkit: history read] seq 12 to 13 (the log has seq 1 to 240)
//!
//! #12 user: Fix the failing test.
//!
//! #13 assistant: Let me look.
//!   tool call: read_file({"path":"src/lib.rs"})
//!
//! The log goes on to seq 240: continue with read_history from=14.
//! ```
//!
//! Guarantees: the result starts with [`HISTORY_READ_HEADER`] (so searches skip it); each
//! message's text is cut head and tail to [`READ_MESSAGE_MAX_BYTES`] and each call's arguments
//! to [`READ_CALL_MAX_BYTES`] (marked `[… N bytes cut …]`); the messages together stay within
//! [`READ_TOTAL_MAX_BYTES`], the ones that do not fit are left for the next read; and the
//! result always ends saying what was left out and where to continue.

use super::limits::{
    READ_CALL_MAX_BYTES, READ_MAX_MESSAGES, READ_MESSAGE_MAX_BYTES, READ_TOTAL_MAX_BYTES,
};
use super::request::ReadRequest;
use super::search::HistoryMessage;
use super::searchable::HISTORY_READ_HEADER;
use super::tools::{READ_HISTORY, SEARCH_HISTORY};
use crate::text::transcript::render_block;
use crate::text::{head_bytes, TranscriptLimits};

/// Ends a message cut to what one read holds.
const BLOCK_CUT: &str = "\n[… the rest of this message is longer than a read holds …]";

/// The tool result for reading `messages` (the log's messages in `request`'s range, in order)
/// from a log whose last seq is `last_seq` (0 when it is empty).
pub fn render_read(request: &ReadRequest, messages: &[HistoryMessage], last_seq: u64) -> String {
    let limits = TranscriptLimits {
        per_tool_output_bytes: READ_MESSAGE_MAX_BYTES,
        per_tool_call_bytes: READ_CALL_MAX_BYTES,
        per_message_bytes: READ_MESSAGE_MAX_BYTES,
        total_bytes: READ_TOTAL_MAX_BYTES,
    };
    let in_range = messages
        .iter()
        .filter(|item| (request.from..=request.to).contains(&item.seq));
    let mut blocks: Vec<String> = Vec::new();
    let mut used = 0usize;
    let mut shown_to = None;
    let mut next_from = None;
    let mut cut = false;
    for item in in_range {
        let block = format!(
            "#{} {}",
            item.seq,
            render_block(&item.message, item.tool_name.as_deref(), &limits)
        );
        cut |= item.message.text_content().len() > READ_MESSAGE_MAX_BYTES
            || item
                .message
                .tool_calls
                .iter()
                .any(|call| call.arguments.len() > READ_CALL_MAX_BYTES);
        let needed = block.len().saturating_add(2);
        if used.saturating_add(needed) > READ_TOTAL_MAX_BYTES {
            if blocks.is_empty() {
                // A message too big for a read on its own (many long tool calls): its head.
                let room = READ_TOTAL_MAX_BYTES.saturating_sub(BLOCK_CUT.len());
                blocks.push(format!("{}{BLOCK_CUT}", head_bytes(&block, room)));
                shown_to = Some(item.seq);
                next_from = Some(item.seq.saturating_add(1)).filter(|next| *next <= request.to);
            } else {
                next_from = Some(item.seq);
            }
            break;
        }
        used = used.saturating_add(needed);
        blocks.push(block);
        shown_to = Some(item.seq);
    }
    let mut out = String::from(HISTORY_READ_HEADER);
    let Some(shown_to) = shown_to else {
        out.push(' ');
        out.push_str(&if last_seq == 0 {
            "The log is empty.".to_owned()
        } else if request.from > last_seq {
            format!(
                "No messages from seq {}: the log ends at seq {last_seq}.",
                request.from
            )
        } else {
            format!(
                "No messages in seq {} to {} (the log has seq 1 to {last_seq}).",
                request.from, request.to
            )
        });
        return out;
    };
    out.push_str(&format!(
        " seq {} to {shown_to} (the log has seq 1 to {last_seq})",
        request.from
    ));
    for block in &blocks {
        out.push_str("\n\n");
        out.push_str(block);
    }
    out.push_str("\n\n");
    out.push_str(&footer(request, shown_to, next_from, last_seq));
    if cut {
        out.push_str(&format!(
            "\nMessages marked [… N bytes cut …] were cut in the middle to fit; {SEARCH_HISTORY} \
             finds text anywhere in them."
        ));
    }
    out
}

/// What was left out, and where to continue.
fn footer(request: &ReadRequest, shown_to: u64, next_from: Option<u64>, last_seq: u64) -> String {
    if let Some(next) = next_from {
        return format!(
            "Seq {next} to {} not shown: a read holds at most {READ_TOTAL_MAX_BYTES} bytes. \
             Continue with {READ_HISTORY} from={next}.",
            request.to.min(last_seq).max(next)
        );
    }
    if shown_to >= last_seq {
        return format!("This is the end of the log (seq {last_seq}).");
    }
    let next = shown_to.saturating_add(1);
    match request.asked_to {
        Some(asked) => format!(
            "A read holds at most {READ_MAX_MESSAGES} messages (asked to seq {asked}): continue \
             with {READ_HISTORY} from={next}."
        ),
        None => {
            format!("The log goes on to seq {last_seq}: continue with {READ_HISTORY} from={next}.")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Entry, Message, ToolCall};
    use crate::recall::read_entries;
    use crate::tokens::ModelFamily;

    fn log() -> Vec<Entry> {
        Entry::number(
            [
                Message::user("Fix the failing test in `core/`."),
                Message::assistant(
                    "Let me look.",
                    vec![ToolCall::new(
                        "c1",
                        "read_file",
                        r#"{"path":"core/src/lib.rs"}"#,
                    )],
                ),
                Message::tool_result(
                    "c1",
                    format!("HEAD {} TAIL\nuser: not a message", "x".repeat(9_000)),
                    false,
                ),
                Message::assistant("Found it.", vec![]),
            ],
            1,
            ModelFamily::OpenAi,
        )
    }

    fn read(from: i128, to: Option<i128>, log: &[Entry]) -> String {
        let request = ReadRequest::new(from, to).unwrap();
        let last = log.last().map_or(0, |entry| entry.seq);
        render_read(&request, &read_entries(log, &request), last)
    }

    #[test]
    fn read_snapshot() {
        let rendered = [
            read(1, Some(3), &log()),
            read(4, None, &log()),
            read(9, None, &log()),
            read(1, None, &[]),
        ];
        let rendered = rendered
            .join("\n\n=====\n\n")
            .replace(&"x".repeat(100), "x…");
        insta::assert_snapshot!(rendered);
    }

    #[test]
    fn reads_stay_bounded_and_say_where_to_continue() {
        let log = Entry::number(
            (0..100).map(|n| Message::user(format!("{n} {}", "word ".repeat(1_000)))),
            1,
            ModelFamily::OpenAi,
        );
        let page = read(1, Some(100), &log);
        assert!(page.len() <= READ_TOTAL_MAX_BYTES + 1_000, "{}", page.len());
        assert!(page.contains("Seq 6 to 40 not shown"), "{page}");
        assert!(
            page.contains("Continue with read_history from=6."),
            "{page}"
        );
        let small = Entry::number(
            (0..100).map(|n| Message::user(format!("message {n}"))),
            1,
            ModelFamily::OpenAi,
        );
        assert!(read(1, Some(100), &small).ends_with(
            "A read holds at most 40 messages (asked to seq 100): continue with read_history from=41."
        ));
        assert!(read(95, Some(99), &small).ends_with("continue with read_history from=100."));
        assert!(read(95, Some(100), &small).ends_with("This is the end of the log (seq 100)."));
        let calls: Vec<ToolCall> = (0..40)
            .map(|n| ToolCall::new(format!("c{n}"), "write", "x".repeat(3_000)))
            .collect();
        let huge = Entry::number([Message::assistant("", calls)], 1, ModelFamily::OpenAi);
        let page = read(1, None, &huge);
        assert!(page.len() <= READ_TOTAL_MAX_BYTES + 1_000, "{}", page.len());
        assert!(page.contains(BLOCK_CUT));
    }
}
