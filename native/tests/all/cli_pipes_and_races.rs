//! The CLI when its output goes away or another ctxkit writes at the same time: a closed
//! standard output is a normal end (exit 0, no panic), an interrupted replay stores nothing,
//! and two `append`s to one session both land whole, one after the other.

use std::io::{BufRead, BufReader};
use std::process::Stdio;

use crate::common::project::{assert_ok, stderr, stdout, Project};
use ctxkit::store::{SessionStore, SqliteStore};

/// Every file under `dir` (none when it does not exist).
fn files_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flat_map(|entry| {
            let path = entry.unwrap().path();
            if path.is_dir() {
                files_under(&path)
            } else {
                vec![path]
            }
        })
        .collect()
}

#[test]
fn a_closed_stdout_ends_every_command_quietly() {
    let project = Project::new();
    let file = project.file(
        "s.jsonl",
        b"{\"role\":\"user\",\"content\":\"hello\"}\n{\"role\":\"assistant\",\"content\":\"hi\"}\n",
    );
    let file = file.to_str().unwrap();
    assert_ok(&project.run(&["import", file, "--session", "s"]), "import");
    assert_ok(&project.run(&["memory", "add", "a fact"]), "memory add");
    let commands: [&[&str]; 14] = [
        &["history", "search", "s", "hello"],
        &["history", "search", "s", "hello", "--json"],
        &["history", "read", "s", "1"],
        &["view", "s"],
        &["sessions"],
        &["sessions", "--json"],
        &["stats", "s"],
        &["memory", "list"],
        &["memory", "search", "fact"],
        &["tokens", file],
        &["replay"],
        &["replay", "--json"],
        &["import", file, "--session", "t"],
        &["append", "s", file],
    ];
    for args in commands {
        let output = project.run_with_closed_stdout(args);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{args:?}: {}",
            stderr(&output)
        );
        assert_eq!(stderr(&output), "", "{args:?}");
    }
}

#[test]
fn a_replay_whose_output_is_closed_midway_stores_nothing() {
    let project = Project::new();
    let session = ctxkit_tests::corpus_dir()
        .join("claude-code_marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl");
    let mut child = project
        .command(&[
            "replay",
            session.to_str().unwrap(),
            "--window",
            "100000",
            "--json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The first turn's line, then the reader goes away (as `| head -n1` does) while the
    // replay still has over a hundred turns to play.
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(first.starts_with('{'), "{first}");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stderr(&output), "");
    assert_eq!(project.dump(), "", "no half-made session");
    let offloaded = files_under(&project.path().join(".ctxkit/tool_results"));
    assert!(offloaded.is_empty(), "{offloaded:?}");

    // The whole replay stores its session, under the name the interrupted one did not keep.
    let output = project.run(&["replay", session.to_str().unwrap(), "--window", "100000"]);
    assert_ok(&output, "replay");
    let listing = stdout(&project.run(&["sessions"]));
    assert!(listing.starts_with("replay-4d5611e5-"), "{listing}");
    assert_eq!(listing.lines().count(), 1, "{listing}");
    assert!(!files_under(&project.path().join(".ctxkit/tool_results")).is_empty());
}

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
