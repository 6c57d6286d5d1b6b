//! What is new: which of the messages a framework hands over a session's log already holds.
//!
//! An agent framework hands its adapter the whole conversation at every model call (pydantic-ai's
//! message list, LangGraph's `messages` state, the Agents SDK's model input). The adapter must
//! append only what the log lacks, and it may be a new object for every request or after a
//! restart, so what is held is decided *by content*, from the log itself, never from object
//! identity or a set kept in memory.
//!
//! The rule assumes what the adapters guarantee: **the framework's own history is the log
//! followed by new messages** (a superset-prefix of the log). The adapters keep it so by
//! leaving the framework's history intact and shaping only the model's input (LangChain's
//! `wrap_model_call` overrides the request, pydantic-ai's history is never replaced by the
//! view, the Agents SDK's `call_model_input_filter` returns the view for one call): so the
//! history never holds ctxkit's summaries, system prompt or view-only reminders, and an adapter
//! rebuilt from the framework's persisted history hands over exactly what was logged, plus the
//! new messages.
//!
//! [`held_prefix`] checks that assumption from the end, at a cost that does not grow with the
//! conversation: the count (the framework's history is at least as long as the log), the first
//! message and the last held one (the one at the log's length minus one). Two messages and a
//! number are fingerprinted, whatever the conversation's length, so each call costs what its new
//! messages cost. When a check fails the history *diverged* (edited, truncated, or another
//! conversation under the same key): [`first_difference`] then finds where, reading the log from
//! its start only until the first differing message, and [`fork_name`] names the session the
//! diverging conversation continues in, the same name for every later call of that
//! conversation, so nothing of the old log is shown to it and nothing is appended twice.
//!
//! Guarantees: [`message_fingerprint`] depends on what a message says, never on fields only a
//! format keeps (ids, metadata: [`crate::model::ProviderFields`]), and a tool result's content
//! is left out (the log may hold an offload reference in its place; the call id names the
//! result); the same message gives the same fingerprint on every platform and run (FNV-1a). It
//! is not cryptographic: a collision between two different messages at the checked positions
//! would be taken as held.

use crate::model::{Content, Message, Part};
use crate::text::fingerprint;
use crate::Role;

/// What a session's log holds, as far as [`held_prefix`] needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeldEnds {
    /// How many messages the log holds.
    pub count: u64,
    /// The [`message_fingerprint`] of its first message (`None` for an empty log).
    pub first: Option<u64>,
    /// The [`message_fingerprint`] of its last message (`None` for an empty log).
    pub last: Option<u64>,
}

impl HeldEnds {
    /// An empty log.
    pub const EMPTY: HeldEnds = HeldEnds {
        count: 0,
        first: None,
        last: None,
    };

    /// The ends of `log` (a whole log, in order).
    pub fn of(log: &[Message]) -> HeldEnds {
        HeldEnds {
            count: log.len() as u64,
            first: log.first().map(message_fingerprint),
            last: log.last().map(message_fingerprint),
        }
    }
}

/// Why the messages handed over are not the log followed by new ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Divergence {
    /// Fewer messages than the log holds.
    Shorter,
    /// The first message differs from the log's.
    First,
    /// The message at the log's last position differs from the log's last.
    LastHeld,
}

impl Divergence {
    /// The reason in words, for errors and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Divergence::Shorter => "fewer messages than the log holds",
            Divergence::First => "the first message differs from the log's",
            Divergence::LastHeld => "the message at the log's last position differs from it",
        }
    }
}

/// What [`held_prefix`] decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeldPrefix {
    /// The first `held` messages are the log's; the ones after them are new.
    Held {
        /// How many of the messages the log holds (the log's length).
        held: usize,
    },
    /// The messages are not the log followed by new ones.
    Diverged(Divergence),
}

/// Decides which of `incoming` the log (`held`) already holds (see the module doc): the count,
/// the first message and the last held one are compared, nothing else.
///
/// ```
/// use ctxkit_core::turn::{held_prefix, HeldEnds, HeldPrefix};
/// use ctxkit_core::{Message, Role};
/// let log = vec![Message::text(Role::User, "hi"), Message::text(Role::Assistant, "hello")];
/// let mut incoming = log.clone();
/// incoming.push(Message::text(Role::User, "and then?"));
/// assert_eq!(held_prefix(&HeldEnds::of(&log), &incoming), HeldPrefix::Held { held: 2 });
/// ```
pub fn held_prefix(held: &HeldEnds, incoming: &[Message]) -> HeldPrefix {
    held_prefix_by(held, incoming.len(), |at| {
        incoming.get(at).map(message_fingerprint)
    })
}

/// [`held_prefix`] over `incoming` messages known only by their fingerprints, each asked of
/// `fingerprint_at(index)` when needed (at most twice: the first and the last held), so a
/// caller that holds messages in another form (a proxy's raw wire messages, where one wire
/// message may be several model messages) reads and fingerprints only those two. The
/// fingerprints must be of the kind `held` was made with; `None` (unreadable) differs from
/// every held one.
///
/// ```
/// use ctxkit_core::turn::{held_prefix_by, HeldEnds, HeldPrefix};
/// let held = HeldEnds { count: 2, first: Some(7), last: Some(9) };
/// let incoming = [7, 9, 4];
/// let found = held_prefix_by(&held, incoming.len(), |at| incoming.get(at).copied());
/// assert_eq!(found, HeldPrefix::Held { held: 2 });
/// ```
pub fn held_prefix_by(
    held: &HeldEnds,
    incoming: usize,
    fingerprint_at: impl FnMut(usize) -> Option<u64>,
) -> HeldPrefix {
    let mut fingerprint_at = fingerprint_at;
    let Ok(count) = usize::try_from(held.count) else {
        return HeldPrefix::Diverged(Divergence::Shorter);
    };
    if count == 0 {
        return HeldPrefix::Held { held: 0 };
    }
    if incoming < count {
        return HeldPrefix::Diverged(Divergence::Shorter);
    }
    let first = fingerprint_at(0);
    if first.is_none() || first != held.first {
        return HeldPrefix::Diverged(Divergence::First);
    }
    let last = count.checked_sub(1).and_then(&mut fingerprint_at);
    if last.is_none() || last != held.last {
        return HeldPrefix::Diverged(Divergence::LastHeld);
    }
    HeldPrefix::Held { held: count }
}

/// Where `incoming` first differs from `log` (a run of the log from its first message): the
/// index of the first message whose fingerprint differs, or the shorter length when one is a
/// prefix of the other. The shell reads the log in pages and calls this per page with `offset`
/// (the page's first index), stopping at the first `Some`; `None` means the page matched.
pub fn first_difference(
    log_page: &[Message],
    offset: usize,
    incoming: &[Message],
) -> Option<usize> {
    for (index, held) in log_page.iter().enumerate() {
        let at = offset.saturating_add(index);
        match incoming.get(at) {
            Some(message) if message_fingerprint(message) == message_fingerprint(held) => {}
            _ => return Some(at),
        }
    }
    None
}

/// The session a conversation that diverged from `session`'s log at `at` continues in: named
/// after the diverging message (or, when the conversation is a prefix of the log, its length),
/// so every later call of that conversation, which still begins with the same messages, finds
/// the same session.
///
/// ```
/// use ctxkit_core::turn::fork_name;
/// use ctxkit_core::{Message, Role};
/// let answer = Message::text(Role::Assistant, "hello, B");
/// assert_eq!(fork_name("chat", 1, Some(&answer)), fork_name("chat", 1, Some(&answer)));
/// assert_ne!(fork_name("chat", 1, Some(&answer)), fork_name("chat", 1, None));
/// assert_eq!(fork_name("chat", 1, None), "chat~1");
/// ```
pub fn fork_name(session: &str, at: usize, diverging: Option<&Message>) -> String {
    match diverging {
        Some(message) => format!("{session}~{at}-{:016x}", message_fingerprint(message)),
        None => format!("{session}~{at}"),
    }
}

/// A message's content fingerprint (see the module doc for what it covers).
pub fn message_fingerprint(message: &Message) -> u64 {
    let mut canonical = String::new();
    canonical.push_str(message.role.as_str());
    canonical.push('\u{0}');
    if message.role != Role::Tool {
        push_content(&mut canonical, &message.content);
        if let Some(name) = &message.name {
            push_field(&mut canonical, "name", name);
        }
    }
    for call in &message.tool_calls {
        push_field(&mut canonical, "call", &call.id);
        push_field(&mut canonical, "tool", &call.name);
        push_field(&mut canonical, "arguments", &call.arguments);
    }
    if let Some(id) = &message.tool_call_id {
        push_field(&mut canonical, "result", id);
    }
    if message.is_error {
        push_field(&mut canonical, "error", "");
    }
    fingerprint(&canonical)
}

/// Text content as its text (a string and a list of text parts say the same), any other part
/// by its serde form.
fn push_content(canonical: &mut String, content: &Content) {
    let text_only = match content {
        Content::Text(_) => true,
        Content::Parts(parts) => parts.iter().all(|p| matches!(p, Part::Text { .. })),
    };
    if text_only {
        push_field(canonical, "text", &content.text());
        return;
    }
    if let Content::Parts(parts) = content {
        for part in parts {
            let form = serde_json::to_string(part).unwrap_or_default();
            push_field(canonical, "part", &form);
        }
    }
}

/// One field, length-prefixed so that no two sequences of fields encode alike.
fn push_field(canonical: &mut String, label: &str, value: &str) {
    canonical.push_str(label);
    canonical.push(':');
    canonical.push_str(&value.len().to_string());
    canonical.push(':');
    canonical.push_str(value);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ToolCall;

    fn user(text: &str) -> Message {
        Message::text(Role::User, text)
    }

    fn tool_result(id: &str, text: &str) -> Message {
        let mut message = Message::text(Role::Tool, text);
        message.tool_call_id = Some(id.to_owned());
        message
    }

    #[test]
    fn an_empty_log_holds_nothing_and_everything_is_new() {
        assert_eq!(
            held_prefix(&HeldEnds::EMPTY, &[user("a")]),
            HeldPrefix::Held { held: 0 }
        );
    }

    #[test]
    fn each_check_finds_its_divergence() {
        let log = vec![user("a"), user("b"), user("c")];
        let ends = HeldEnds::of(&log);
        let shorter = HeldPrefix::Diverged(Divergence::Shorter);
        assert_eq!(held_prefix(&ends, &log[..2]), shorter);
        let first = vec![user("x"), user("b"), user("c")];
        assert_eq!(
            held_prefix(&ends, &first),
            HeldPrefix::Diverged(Divergence::First)
        );
        let last = vec![user("a"), user("b"), user("x"), user("d")];
        assert_eq!(
            held_prefix(&ends, &last),
            HeldPrefix::Diverged(Divergence::LastHeld)
        );
    }

    #[test]
    fn by_fingerprints_only_the_first_and_the_last_held_are_asked() {
        let ends = HeldEnds {
            count: 3,
            first: Some(10),
            last: Some(12),
        };
        let mut asked = Vec::new();
        let found = held_prefix_by(&ends, 1_000, |at| {
            asked.push(at);
            Some(10 + at as u64)
        });
        assert_eq!(found, HeldPrefix::Held { held: 3 });
        assert_eq!(asked, [0, 2]);
        // An unreadable message is never held.
        let unreadable = held_prefix_by(&ends, 5, |at| (at == 0).then_some(10));
        assert_eq!(unreadable, HeldPrefix::Diverged(Divergence::LastHeld));
    }

    #[test]
    fn a_tool_result_is_known_by_its_call_not_its_content() {
        // The log holds an offload reference where the framework keeps the whole output.
        let held = tool_result("call_1", "[offloaded to .ctxkit/...]");
        assert_eq!(
            message_fingerprint(&held),
            message_fingerprint(&tool_result("call_1", "the whole output"))
        );
        assert_ne!(
            message_fingerprint(&held),
            message_fingerprint(&tool_result("call_2", "the whole output"))
        );
    }

    #[test]
    fn text_parts_and_text_say_the_same_and_calls_count() {
        let parts = Message {
            content: Content::Parts(vec![Part::Text { text: "hi".into() }]),
            ..user("")
        };
        assert_eq!(
            message_fingerprint(&parts),
            message_fingerprint(&user("hi"))
        );
        let mut call = Message::text(Role::Assistant, "");
        call.tool_calls.push(ToolCall {
            id: "c".into(),
            name: "ls".into(),
            arguments: "{}".into(),
            provider_fields: None,
        });
        assert_ne!(
            message_fingerprint(&call),
            message_fingerprint(&Message::text(Role::Assistant, ""))
        );
    }

    #[test]
    fn the_first_difference_is_found_page_by_page() {
        let log = vec![user("a"), user("b"), user("c")];
        let incoming = vec![user("a"), user("b"), user("x")];
        assert_eq!(first_difference(&log[..2], 0, &incoming), None);
        assert_eq!(first_difference(&log[2..], 2, &incoming), Some(2));
        assert_eq!(first_difference(&log, 0, &incoming[..1]), Some(1));
    }
}
