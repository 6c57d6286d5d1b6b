//! Tool-pair repair: any message list in, a list both providers accept out.
//!
//! Anthropic and OpenAI reject a request in which a tool call lacks its result or a result
//! lacks its call. Logs get that way all the time: compaction cuts between a call and its
//! result, a process dies between the two, a proxy reuses `call_0` every turn, parallel results
//! arrive interleaved with other messages. [`repair_tool_pairs`] runs on every view and
//! guarantees, for both providers:
//!
//! - every assistant tool call has exactly one result, right after that assistant message, the
//!   results of parallel calls contiguous and in call order;
//! - every result answers a call of the immediately preceding assistant message: a result found
//!   later in the same exchange (before the next assistant message) is moved up to its call,
//!   any other result (orphaned, duplicated, or for an unknown id) is dropped;
//! - a call without a result gets [`MISSING_RESULT`], so the model knows history was compacted,
//!   not that the tool failed; a blank result gets [`EMPTY_RESULT`];
//! - tool-call ids are unique in the view and match `^[a-zA-Z0-9_-]+$` (Anthropic's pattern):
//!   an id that breaks either rule is rewritten deterministically, in the call and its result;
//! - messages with nothing to say (blank text, no calls) are dropped, since Anthropic rejects
//!   empty messages;
//! - the first non-system message is a user message ([`LEADING_USER`] is inserted if not).
//!
//! The repair is total (never fails), idempotent (`repair(repair(x)) == repair(x)`), never
//! touches its input, and borrows every message it does not change. A log with no non-system
//! message left after repair stays empty: repair never invents a conversation.

use crate::model::ViewMessage;
use crate::model::{Content, Message, Role};
use crate::wire::fields::StringSet;

/// Result text for a call whose result is not in the view.
pub const MISSING_RESULT: &str = "[Tool result unavailable: context was compacted]";
/// Result text for a call whose result was blank.
pub const EMPTY_RESULT: &str = "[Tool returned no output]";
/// User message inserted when the view would otherwise start with an assistant message.
pub const LEADING_USER: &str = "[Earlier conversation was compacted]";

/// What a repair changed, for the view's stats.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RepairReport {
    /// Results dropped: orphaned, duplicated, or answering an unknown id.
    pub dropped_results: usize,
    /// Results moved up to their call from later in the same exchange.
    pub moved_results: usize,
    /// Placeholder results inserted for calls without one.
    pub missing_results: usize,
    /// Blank results given [`EMPTY_RESULT`].
    pub empty_results: usize,
    /// Tool-call ids rewritten because they repeated or broke the id pattern.
    pub renamed_ids: usize,
    /// Blank messages dropped.
    pub dropped_blank: usize,
    /// Whether [`LEADING_USER`] was inserted.
    pub inserted_leading_user: bool,
}

/// Repairs `messages` into a list both providers accept (see the module doc).
///
/// ```
/// use ctxkit_core::{repair_tool_pairs, Message, ToolCall};
/// use ctxkit_core::wire::MISSING_RESULT;
///
/// let log = vec![
///     Message::user("list the files"),
///     Message::assistant("", vec![ToolCall::new("call_1", "ls", "{}")]),
///     // the result was lost, and an orphan from an older turn is here
///     Message::tool_result("call_0", "old output", false),
/// ];
/// let view = repair_tool_pairs(&log);
/// assert_eq!(view.len(), 3);
/// assert_eq!(view[2].tool_call_id.as_deref(), Some("call_1"));
/// assert_eq!(view[2].text_content(), MISSING_RESULT);
/// ```
pub fn repair_tool_pairs(messages: &[Message]) -> Vec<Message> {
    let (repaired, _) = repair_view(messages.iter().map(ViewMessage::borrowed).collect());
    repaired
        .into_iter()
        .map(|item| item.message.into_owned())
        .collect()
}

/// The repair over view messages, with a report of what changed. Messages that need no change
/// stay as they came (borrowed stay borrowed, with their seq and cached estimate); a changed or
/// inserted message is owned and has no cached estimate.
pub fn repair_view<'a>(messages: Vec<ViewMessage<'a>>) -> (Vec<ViewMessage<'a>>, RepairReport) {
    let mut report = RepairReport::default();
    let mut out: Vec<ViewMessage<'a>> = Vec::with_capacity(messages.len() + 1);
    let mut used_ids = StringSet::default();
    let mut rest = messages.into_iter().peekable();

    while let Some(message) = rest.next() {
        match message.role {
            Role::Tool => report.dropped_results += 1,
            Role::Assistant if !message.tool_calls.is_empty() => {
                // The exchange: everything up to the next assistant message.
                let mut exchange = Vec::new();
                while let Some(next) = rest.next_if(|next| next.role != Role::Assistant) {
                    exchange.push(next);
                }
                repair_exchange(message, exchange, &mut used_ids, &mut out, &mut report);
            }
            _ if is_blank(&message) => report.dropped_blank += 1,
            _ => out.push(message),
        }
    }

    let first_turn = out.iter().position(|message| message.role != Role::System);
    if let Some(index) = first_turn {
        if out
            .get(index)
            .is_some_and(|message| message.role != Role::User)
        {
            out.insert(index, ViewMessage::owned(Message::user(LEADING_USER)));
            report.inserted_leading_user = true;
        }
    }
    (out, report)
}

/// Emits one assistant message with calls, then exactly one result per call, then the other
/// messages of its exchange.
fn repair_exchange<'a>(
    assistant: ViewMessage<'a>,
    exchange: Vec<ViewMessage<'a>>,
    used_ids: &mut StringSet,
    out: &mut Vec<ViewMessage<'a>>,
    report: &mut RepairReport,
) {
    let final_ids: Vec<String> = assistant
        .tool_calls
        .iter()
        .map(|call| unique_id(&call.id, used_ids))
        .collect();

    let mut results: Vec<Option<ViewMessage<'a>>> = vec![None; final_ids.len()];
    let mut others = Vec::new();
    let mut seen_other = false;
    for message in exchange {
        if message.role != Role::Tool {
            seen_other |= !is_blank(&message);
            others.push(message);
            continue;
        }
        // The first call with this original id still waiting for a result (ids may repeat):
        // found by a scan of the message's calls rather than a map of them, one B-tree type
        // fewer in the .wasm (docs/performance.md, "Size").
        let call_index = message.tool_call_id.as_deref().and_then(|id| {
            let mut calls = assistant.tool_calls.iter().zip(&results);
            calls.position(|(call, result)| call.id == id && result.is_none())
        });
        match call_index.and_then(|index| results.get_mut(index)) {
            Some(slot) => {
                report.moved_results += usize::from(seen_other);
                *slot = Some(message);
            }
            None => report.dropped_results += 1,
        }
    }

    let renamed = assistant
        .tool_calls
        .iter()
        .zip(&final_ids)
        .filter(|(call, id)| call.id != **id)
        .count();
    report.renamed_ids += renamed;
    let mut assistant = assistant;
    if renamed > 0 {
        for (call, id) in assistant.to_mut().tool_calls.iter_mut().zip(&final_ids) {
            call.id.clone_from(id);
        }
    }
    out.push(assistant);

    for (result, id) in results.into_iter().zip(final_ids) {
        out.push(match result {
            None => {
                report.missing_results += 1;
                ViewMessage::owned(Message::tool_result(id, MISSING_RESULT, false))
            }
            Some(result) => fix_result(result, id, report),
        });
    }
    for message in others {
        if is_blank(&message) {
            report.dropped_blank += 1;
        } else {
            out.push(message);
        }
    }
}

/// A result with its final id and non-blank content.
fn fix_result<'a>(
    mut result: ViewMessage<'a>,
    id: String,
    report: &mut RepairReport,
) -> ViewMessage<'a> {
    let blank = result.content.is_blank();
    if !blank && result.tool_call_id.as_deref() == Some(id.as_str()) {
        return result;
    }
    let owned = result.to_mut();
    owned.tool_call_id = Some(id);
    if blank {
        report.empty_results += 1;
        owned.content = Content::Text(EMPTY_RESULT.to_owned());
    }
    result
}

/// Nothing to say: blank text and no calls. Only an assistant's calls count: a call on any
/// other role is not sendable in any format (no writer emits it), so it says nothing either.
fn is_blank(message: &Message) -> bool {
    message.content.is_blank() && (message.role != Role::Assistant || message.tool_calls.is_empty())
}

/// `id` made valid for Anthropic (`^[a-zA-Z0-9_-]+$`) and unique among `used`; records it.
fn unique_id(id: &str, used: &mut StringSet) -> String {
    let mut base: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if base.is_empty() {
        base.push_str("call");
    }
    let mut candidate = base.clone();
    let mut suffix = 2u64;
    while used.contains(&candidate) {
        candidate = format!("{base}_{suffix}");
        suffix = suffix.saturating_add(1);
    }
    used.insert(candidate.clone());
    candidate
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ToolCall;

    fn call(id: &str) -> ToolCall {
        ToolCall::new(id, "run", "{}")
    }

    #[test]
    fn interleaved_parallel_results_are_regrouped_in_call_order() {
        let log = [
            Message::user("go"),
            Message::assistant("", vec![call("a"), call("b")]),
            Message::tool_result("b", "B", false),
            Message::user("note"),
            Message::tool_result("a", "A", false),
        ];
        let (view, report) = repair_view(log.iter().map(ViewMessage::borrowed).collect());
        let shape: Vec<_> = view
            .iter()
            .map(|m| {
                (
                    m.role,
                    m.tool_call_id.clone().unwrap_or_default(),
                    m.text_content().into_owned(),
                )
            })
            .collect();
        assert_eq!(
            shape,
            vec![
                (Role::User, String::new(), "go".to_owned()),
                (Role::Assistant, String::new(), String::new()),
                (Role::Tool, "a".to_owned(), "A".to_owned()),
                (Role::Tool, "b".to_owned(), "B".to_owned()),
                (Role::User, String::new(), "note".to_owned()),
            ]
        );
        assert_eq!(report.moved_results, 1);
        assert!(view[0].is_borrowed(), "unchanged messages stay borrowed");
    }

    #[test]
    fn repeated_and_invalid_ids_are_renamed_with_their_results() {
        let log = vec![
            Message::user("go"),
            Message::assistant("", vec![call("call_0"), call("call_0")]),
            Message::tool_result("call_0", "first", false),
            Message::tool_result("call_0", "second", false),
            Message::assistant("", vec![call("call_0"), call("fn.read:0")]),
            Message::tool_result("fn.read:0", "", false),
        ];
        let view = repair_tool_pairs(&log);
        let ids: Vec<_> = view.iter().filter_map(|m| m.tool_call_id.clone()).collect();
        assert_eq!(ids, vec!["call_0", "call_0_2", "call_0_3", "fn_read_0"]);
        let texts: Vec<_> = view
            .iter()
            .filter(|m| m.role == Role::Tool)
            .map(|m| m.text_content().into_owned())
            .collect();
        assert_eq!(texts, vec!["first", "second", MISSING_RESULT, EMPTY_RESULT]);
        assert_eq!(repair_tool_pairs(&view), view, "idempotent");
    }

    #[test]
    fn leading_assistant_gets_a_user_before_it_and_orphans_go() {
        let log = [
            Message::text(Role::System, "sys"),
            Message::tool_result("x", "orphan", false),
            Message::assistant("hello", vec![]),
            Message::user("   "),
        ];
        let (view, report) = repair_view(log.iter().map(ViewMessage::borrowed).collect());
        let roles: Vec<_> = view.iter().map(|m| m.role).collect();
        assert_eq!(roles, vec![Role::System, Role::User, Role::Assistant]);
        assert_eq!(report.dropped_results, 1);
        assert_eq!(report.dropped_blank, 1);
        assert!(report.inserted_leading_user);
    }

    #[test]
    fn a_blank_user_message_with_calls_is_dropped() {
        // Calls on a user message (a malformed input) are written by no format: the message
        // says nothing, and Anthropic rejects its empty content.
        let odd = Message {
            tool_calls: vec![crate::ToolCall::new("c1", "bash", "{}")],
            ..Message::user("")
        };
        let repaired = repair_tool_pairs(&[odd, Message::user("hi")]);
        assert_eq!(repaired, vec![Message::user("hi")]);
    }

    #[test]
    fn a_log_with_nothing_to_say_stays_empty() {
        let log = vec![
            Message::tool_result("x", "orphan", false),
            Message::user(""),
        ];
        assert!(repair_tool_pairs(&log).is_empty());
        assert!(repair_tool_pairs(&[]).is_empty());
    }
}
