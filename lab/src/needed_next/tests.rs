//! The needed-next measure's unit tests: which later calls' facts count as needed, which the
//! summary holds (verbatim or relative to the working directory), and the transcript's own
//! compactions graded the same way.

use super::*;
use ctxkit_core::model::{Message, ToolCall};
use ctxkit_core::tokens::ModelFamily;

fn entries(messages: Vec<Message>) -> Vec<Entry> {
    messages
        .into_iter()
        .enumerate()
        .map(|(i, m)| Entry::new(i as u64 + 1, m, ModelFamily::Claude))
        .collect()
}

fn call(id: &str, arguments: &str) -> Message {
    Message::assistant("", vec![ToolCall::new(id, "Bash", arguments)])
}

fn summary(through_seq: u64, text: &str) -> GradedSummary {
    GradedSummary {
        through_seq,
        calls_after: through_seq,
        until_seq: u64::MAX,
        text: text.to_owned(),
    }
}

#[test]
fn only_facts_held_before_and_not_again_since_are_needed() {
    let log = entries(vec![
        Message::user("Fix `parse_args` in src/cli.rs"), // 1
        call("1", r#"{"command":"cat src/cli.rs src/old.rs"}"#), // 2
        Message::tool_result("1", "fn parse_args() {}\nfn load_config() {}", false), // 3
        // The summary stands for 1..=3.
        Message::user("now look at src/old.rs too"), // 4
        call(
            "2",
            r#"{"command":"grep -n load_config src/old.rs src/cli.rs new_thing_here"}"#,
        ), // 5
        call("3", r#"{"command":"grep parse_args src/cli.rs"}"#), // 6
    ]);
    let figure = &needed_next(
        &log,
        &[summary(3, "Goal: fix `parse_args` in `src/cli.rs`.")],
    )[0];
    // src/old.rs was said again at 4; new_thing_here was never held; src/cli.rs is counted
    // once (at its first use); load_config and parse_args were held at 3 and 1.
    assert_eq!((figure.held, figure.needed), (2, 3), "{figure:?}");
    assert_eq!(figure.missed.len(), 1);
    assert_eq!(figure.missed[0].text, "load_config");
    assert_eq!(
        (figure.missed[0].call_seq, figure.missed[0].last_held_seq),
        (5, 3)
    );
}

#[test]
fn a_path_is_held_relative_or_absolute_and_the_window_ends_at_the_next_summary() {
    let read = |id: &str, path: &str| {
        Message::assistant(
            "",
            vec![ToolCall::new(
                id,
                "Read",
                format!(r#"{{"file_path":"{path}"}}"#),
            )],
        )
    };
    let log = entries(vec![
        read("1", "/w/app/lib/a.ex"),
        read("2", "/w/app/test/b.ex"),
        read("3", "/w/app/mix.exs"),
        read("4", "/w/app/lib/a.ex"),
        read("5", "/w/app/test/b.ex"),
    ]);
    let mut first = summary(3, "Files: `lib/a.ex`, `/w/app/test/b.ex`");
    first.until_seq = 4;
    let figures = needed_next(&log, &[first, summary(4, "nothing")]);
    assert_eq!((figures[0].held, figures[0].needed), (1, 1), "{figures:?}");
    assert_eq!((figures[1].held, figures[1].needed), (0, 1), "{figures:?}");
    assert_eq!(figures[1].missed[0].text, "test/b.ex");
}

#[test]
fn a_continuation_message_is_graded_from_its_own_place() {
    let log = entries(vec![
        call("1", r#"{"command":"cat src/cli.rs"}"#),
        Message::user(
            "This session is being continued from a previous conversation that ran out of context. We edited src/cli.rs.",
        ),
        call("2", r#"{"command":"cargo test && cat src/cli.rs"}"#),
    ]);
    let anchors = transcript_summaries(&log);
    assert_eq!(anchors.len(), 1);
    assert_eq!((anchors[0].through_seq, anchors[0].calls_after), (1, 2));
    let figure = &needed_next(&log, &anchors)[0];
    assert_eq!((figure.held, figure.needed), (1, 1), "{figure:?}");
}

#[test]
fn a_checkpoint_s_restore_block_counts_as_held() {
    use ctxkit_core::compaction::{Checkpoint, SummaryMethod};
    let log = entries(vec![
        Message::user("Fix the parser"),              // 1
        call("1", r#"{"command":"cat src/cli.rs"}"#), // 2
        Message::tool_result("1", "fn parse_args() {}\nfn load_config() {}", false), // 3
        Message::user("go on"),                       // 4
        call("2", r#"{"command":"grep -n load_config src/cli.rs"}"#), // 5
    ]);
    let mut checkpoint = Checkpoint {
        through_seq: 3,
        summary: "## Goal\nFix the parser in `src/cli.rs`".to_owned(),
        method: SummaryMethod::Extractive,
        active_tasks: None,
        tokens: 10,
        made_at_turn: 1,
        pinned: Vec::new(),
        dropped_facts: Default::default(),
        compaction_block: None,
        restore: None,
    };
    let without = &needed_next(&log, &checkpoint_summaries(&[checkpoint.clone()]))[0];
    assert_eq!((without.held, without.needed), (1, 2), "{without:?}");
    checkpoint.restore =
        Some("### `src/cli.rs`\nfn parse_args() {}\nfn load_config() {}".to_owned());
    let with = &needed_next(&log, &checkpoint_summaries(&[checkpoint]))[0];
    assert_eq!((with.held, with.needed), (2, 2), "{with:?}");
}
