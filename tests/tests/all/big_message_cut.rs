//! A big message is cut to fill what is free, whatever its size (issue 36, item 4).
//!
//! One message alone at a 32k window (27,500-token budget) used to keep less the bigger it
//! was: 10,750 tokens at 84 KB, 197 at 10 MB, because the cut was sized from the whole text's
//! bytes per token with a margin that grew with the excess. Now the cut is searched with the
//! estimator on the kept text. Checked on texts of mixed ASCII words, code, CJK and emoji of
//! 84 KB, 312 KB, 1.35 MB and 10 MB, each alone at a 32k window: the view keeps at least 90%
//! of what is free (the budget's ceiling less the system prompt) and stays within the budget;
//! the marker says what was cut; the head and the tail are the message's own start and end.
//! A message of several text parts, and a tool result inside a conversation, fill their room
//! the same way.
//!
//! The mixes are random; `PROPTEST_RNG_SEED=<seed>` replays a run. Few cases: the inputs are
//! megabytes.

use ctxkit_core::compaction::{Budget, Policy, ViewStats};
use ctxkit_core::model::{Content, Part};
use ctxkit_core::text::head_bytes;
use ctxkit_core::tokens::estimate_message;
use ctxkit_core::{Message, Session, ToolCall, TurnInputs};
use proptest::prelude::*;

const SIZES: [usize; 4] = [84_000, 312_000, 1_350_000, 10_000_000];
const SYSTEM: &str = "You are a coding agent. Answer briefly and cite the files you read.";
const MARKER_START: &str = "\n[… ";
const MARKER_END: &str = " bytes cut to fit the context window …]\n";

/// The kinds of text mixed into a message.
fn piece(kind: u8, n: usize) -> String {
    match kind % 4 {
        0 => format!("the quick brown fox {n} jumps over the lazy dog. "),
        1 => format!(
            "fn item_{n}(x: &[u8]) -> Option<u32> {{ x.get({n}).map(|b| u32::from(*b)) }}\n"
        ),
        2 => format!("我们今天在公园里散步，天气很好，第{n}次。"),
        _ => format!("🚀 ok 👍🏽 {n} ✨ "),
    }
}

/// A text of at least `size` bytes cycling through `kinds`.
fn mixed_text(kinds: &[u8], size: usize) -> String {
    let mut text = String::with_capacity(size + 128);
    let mut n = 0;
    while text.len() < size {
        let kind = kinds.get(n % kinds.len().max(1)).copied().unwrap_or(0);
        text.push_str(&piece(kind, n));
        n += 1;
    }
    text
}

/// Plans one turn of `log` at a 32k window; returns the view's messages (no system) and stats.
fn plan(log: Vec<Message>) -> (Vec<Message>, ViewStats) {
    let policy = Policy::default();
    let mut session = Session::new(policy.family);
    session.append(log);
    let inputs = TurnInputs::new(SYSTEM, Budget::for_window(32_000), &policy);
    let (mut messages, stats) = session.prepare_offline(&inputs).expect("a view");
    messages.retain(|m| m.role != ctxkit_core::Role::System);
    (messages, stats)
}

/// Checks that `kept` is `original`'s head, the marker, and `original`'s tail.
fn assert_head_and_tail(original: &str, kept: &str) {
    let said = |what: &str| format!("{what}: {:?}", head_bytes(kept, 200));
    let (head, rest) = kept
        .split_once(MARKER_START)
        .unwrap_or_else(|| panic!("{}", said("the cut is said in the text")));
    let (count, tail) = rest
        .split_once(MARKER_END)
        .unwrap_or_else(|| panic!("{}", said("the marker is whole")));
    let omitted: usize = count.parse().expect("a byte count");
    assert!(
        original.starts_with(head),
        "the head is the message's start"
    );
    assert!(original.ends_with(tail), "the tail is the message's end");
    assert_eq!(head.len() + omitted + tail.len(), original.len());
}

/// One message alone: the tokens its view keeps and the most it could keep (what is free, or
/// the whole message when it fits), after checking the cut.
fn lone_message(text: &str) -> (u64, u64, ViewStats) {
    let (messages, stats) = plan(vec![Message::user(text)]);
    assert_eq!(messages.len(), 1, "{stats:?}");
    let kept = messages[0].text_content();
    let budget = Budget::for_window(32_000);
    let free = budget.ceiling() - stats.system_tokens;
    let whole = estimate_message(&Message::user(text), Policy::default().family);
    if whole <= free {
        // It fits: nothing is cut.
        assert_eq!(kept, text);
    } else {
        assert_head_and_tail(text, &kept);
    }
    assert!(stats.total_tokens <= budget.usable(), "{stats:?}");
    // What it can keep at most: all of it, or what is free.
    (stats.message_tokens, free.min(whole), stats)
}

#[test]
fn one_big_message_alone_fills_what_is_free_at_every_size() {
    // All sizes first, then the check: a failure shows every figure.
    let figures: Vec<(usize, u64, u64)> = SIZES
        .iter()
        .map(|&size| {
            let (kept, free, _) = lone_message(&mixed_text(&[0, 1, 2, 3], size));
            eprintln!("{size} bytes: kept {kept} of {free} free tokens");
            (size, kept, free)
        })
        .collect();
    for (size, kept, free) in figures {
        assert!(kept * 10 >= free * 9, "{size} bytes kept {kept} of {free}");
    }
}

#[test]
fn several_parts_share_the_room_and_each_keeps_its_ends() {
    let small = "look at these two logs:".to_owned();
    let (first, second) = (mixed_text(&[1, 0], 600_000), mixed_text(&[2, 3], 200_000));
    let message = Message {
        content: Content::Parts(vec![
            Part::Text {
                text: small.clone(),
            },
            Part::Text {
                text: first.clone(),
            },
            Part::Text {
                text: second.clone(),
            },
        ]),
        ..Message::user("")
    };
    let (messages, stats) = plan(vec![message]);
    let free = Budget::for_window(32_000).ceiling() - stats.system_tokens;
    assert!(stats.message_tokens * 10 >= free * 9, "{stats:?}");
    let Content::Parts(parts) = &messages[0].content else {
        panic!("parts stay parts");
    };
    let texts: Vec<&str> = parts
        .iter()
        .filter_map(|p| match p {
            Part::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(texts[0], small, "a short part is kept whole");
    assert_head_and_tail(&first, texts[1]);
    assert_head_and_tail(&second, texts[2]);
}

#[test]
fn a_big_tool_result_in_a_conversation_fills_its_stable_cut() {
    let output = mixed_text(&[1, 0, 3], 1_350_000);
    let log = vec![
        Message::user("run the tests"),
        Message::assistant(
            "",
            vec![ToolCall::new("c1", "bash", r#"{"cmd":"cargo test"}"#)],
        ),
        Message::tool_result("c1", output.clone(), false),
    ];
    let (messages, stats) = plan(log);
    let result = messages
        .iter()
        .find(|m| m.tool_call_id.is_some())
        .expect("the result");
    assert_head_and_tail(&output, &result.text_content());
    // Not alone, the result is cut the same way every turn: to half the trigger, filled.
    let cap = Budget::for_window(32_000).trigger() / 2;
    let tokens = estimate_message(result, Policy::default().family);
    assert!(
        tokens <= cap && tokens * 100 >= cap * 95,
        "{tokens} of {cap}: {stats:?}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]

    #[test]
    fn any_mix_alone_keeps_at_least_ninety_percent(
        kinds in prop::collection::vec(0u8..4, 1..6),
        size in prop::sample::select(SIZES.to_vec()),
    ) {
        let (kept, free, stats) = lone_message(&mixed_text(&kinds, size));
        prop_assert!(kept * 10 >= free * 9, "{size} bytes of {kinds:?}: kept {kept} of {free}: {stats:?}");
    }
}
