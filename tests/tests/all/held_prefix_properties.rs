//! The "what is new" rule (`ctxkit_core::turn::held_prefix`, issue 33 item 1) over generated
//! logs:
//!
//! - a log followed by any new messages is held up to the log's length, also when the log holds
//!   offload references where the framework keeps the whole tool output;
//! - a history shorter than the log, or whose first or last held message differs, diverged;
//! - paging [`first_difference`] over the log in any page size finds the first index where the
//!   fingerprints differ (the naive scan's answer), and a diverged conversation keeps its fork
//!   name when it grows, so every later call of it reaches the same session.
//!
//! The cases are random; `PROPTEST_RNG_SEED=<seed>` replays a run.

use ctxkit_core::turn::{
    first_difference, fork_name, held_prefix, message_fingerprint, Divergence, HeldEnds, HeldPrefix,
};
use ctxkit_core::{Content, Message, Role};
use ctxkit_tests::arbitrary::{arb_log, arb_message};
use proptest::prelude::*;

/// The log as a store keeps it: every tool result's output replaced by a reference.
fn offloaded(log: &[Message]) -> Vec<Message> {
    log.iter()
        .map(|message| {
            let mut message = message.clone();
            if message.role == Role::Tool {
                message.content = Content::Text("[output offloaded to .ctxkit/x.txt]".into());
            }
            message
        })
        .collect()
}

/// The first index where the fingerprints of `log` and `incoming` differ, or the shorter length.
fn naive_difference(log: &[Message], incoming: &[Message]) -> usize {
    log.iter()
        .zip(incoming)
        .position(|(a, b)| message_fingerprint(a) != message_fingerprint(b))
        .unwrap_or(log.len().min(incoming.len()))
}

/// [`first_difference`] as a shell calls it, one page of `page` messages at a time.
fn paged_difference(log: &[Message], incoming: &[Message], page: usize) -> usize {
    let mut offset = 0;
    for chunk in log.chunks(page) {
        if let Some(at) = first_difference(chunk, offset, incoming) {
            return at;
        }
        offset += chunk.len();
    }
    log.len()
}

/// A message that says something other than `message`.
fn other_than(message: &Message) -> Message {
    let text = format!("not {}", message_fingerprint(message));
    match message.role {
        Role::Tool => {
            let mut other = message.clone();
            other.tool_call_id = Some(text);
            other
        }
        role => Message::text(role, text),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn the_log_then_new_messages_is_held_to_the_logs_length(
        log in arb_log(),
        new in prop::collection::vec(arb_message(), 0..6),
    ) {
        let mut incoming = log.clone();
        incoming.extend(new);
        let expected = HeldPrefix::Held { held: log.len() };
        prop_assert_eq!(held_prefix(&HeldEnds::of(&log), &incoming), expected);
        prop_assert_eq!(held_prefix(&HeldEnds::of(&offloaded(&log)), &incoming), expected);
    }

    #[test]
    fn a_shorter_or_changed_history_diverged(
        log in arb_log().prop_filter("a log", |log| !log.is_empty()),
        cut in 1usize..4,
        new in prop::collection::vec(arb_message(), 0..3),
    ) {
        let ends = HeldEnds::of(&log);
        let shorter = &log[..log.len().saturating_sub(cut)];
        prop_assert_eq!(held_prefix(&ends, shorter), HeldPrefix::Diverged(Divergence::Shorter));

        let mut first = log.clone();
        first[0] = other_than(&log[0]);
        first.extend(new.iter().cloned());
        prop_assert!(matches!(held_prefix(&ends, &first), HeldPrefix::Diverged(_)));

        let mut last = log.clone();
        let at = log.len() - 1;
        last[at] = other_than(&log[at]);
        last.extend(new);
        prop_assert!(matches!(held_prefix(&ends, &last), HeldPrefix::Diverged(_)));
    }

    #[test]
    fn paging_finds_the_first_difference_and_the_fork_name_stays(
        log in arb_log(),
        keep in 0usize..10,
        new in prop::collection::vec(arb_message(), 1..6),
        later in prop::collection::vec(arb_message(), 0..6),
        page in 1usize..5,
    ) {
        let mut incoming: Vec<Message> = log.iter().take(keep).cloned().collect();
        incoming.extend(new);
        let at = naive_difference(&log, &incoming);
        prop_assert_eq!(paged_difference(&log, &incoming, page), at);

        // The conversation grows; while it differs from the log inside its own length, the
        // difference and so the fork are the same.
        let name = fork_name("chat", at, incoming.get(at));
        let mut grown = incoming.clone();
        grown.extend(later);
        if at < incoming.len() {
            let grown_at = paged_difference(&log, &grown, page);
            prop_assert_eq!(grown_at, at);
            prop_assert_eq!(fork_name("chat", grown_at, grown.get(grown_at)), name);
        }
    }
}
