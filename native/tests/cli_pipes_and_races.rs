//! The CLI when another ctxkit writes at the same time: two `append`s to one session both land
//! whole, one after the other.

mod common;

use std::process::Stdio;

use common::project::{assert_ok, Project};
use ctxkit::store::{SessionStore, SqliteStore};

/// `pairs` tool calls, each followed by its result, with ids `<writer><index>`.
fn calls_and_results(writer: &str, pairs: usize) -> String {
    (0..pairs)
        .flat_map(|i| {
            [
                serde_json::json!({"role": "assistant", "content": "", "tool_calls": [{"id": format!("{writer}{i}"), "name": "bash", "arguments": "{}"}]}),
                serde_json::json!({"role": "tool", "tool_call_id": format!("{writer}{i}"), "content": format!("output {writer}{i}")}),
            ]
        })
        .map(|message| format!("{message}\n"))
        .collect()
}

#[test]
fn two_appends_to_one_session_at_once_both_land_whole_and_in_order() {
    const PAIRS: usize = 3_000;
    for round in 0..3 {
        let project = Project::new();
        let start = project.file("u.jsonl", b"{\"role\":\"user\",\"content\":\"go\"}\n");
        assert_ok(
            &project.run(&["append", "s", start.to_str().unwrap(), "--create"]),
            "append the first message",
        );
        let a = project.file("a.jsonl", calls_and_results("a", PAIRS).as_bytes());
        let b = project.file("b.jsonl", calls_and_results("b", PAIRS).as_bytes());
        let writers: Vec<_> = [a, b]
            .iter()
            .map(|file| {
                project
                    .command(&["append", "s", file.to_str().unwrap()])
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for writer in writers {
            let output = writer.wait_with_output().unwrap();
            assert_ok(&output, &format!("round {round}: a concurrent append"));
        }
        let store = SqliteStore::open(project.db()).unwrap();
        let entries = store.export_session("s").unwrap().entries;
        assert_eq!(entries.len(), 1 + 4 * PAIRS, "round {round}");
        assert!(entries.iter().zip(1..).all(|(entry, seq)| entry.seq == seq));
        // Each writer's messages are one run: calls and results never split.
        let writer_of = |entry: &ctxkit::core::model::Entry| {
            let id = entry
                .message
                .tool_calls
                .first()
                .map(|call| call.id.clone())
                .or_else(|| entry.message.tool_call_id.clone())
                .unwrap();
            id[..1].to_owned()
        };
        let order: Vec<String> = entries[1..].iter().map(writer_of).collect();
        let first = &order[0];
        assert!(
            order[..2 * PAIRS].iter().all(|w| w == first)
                && order[2 * PAIRS..].iter().all(|w| w != first),
            "round {round}: the two appends interleaved"
        );
        for pair in entries[1..].chunks(2) {
            assert_eq!(
                pair[0].message.tool_calls[0].id,
                pair[1].message.tool_call_id.clone().unwrap()
            );
        }
    }
}
