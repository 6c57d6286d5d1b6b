//! `ctxkit history search|read` end to end, on the corpus's Claude Code session: a path that
//! appears only in a tool call is found, reads go by seq, `--json` carries the hits and the text,
//! and bad input exits 2 with one clear line, leaving the database as it was.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::project::stdout;
use crate::common::project::BIN;
use ctxkit::store::{SessionStore, SqliteStore};

const SESSION_FILE: &str = "claude-code_marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl";
/// Read once, by a `Read` tool call of the session (its result holds the file, not the path).
const PATH_IN_A_CALL: &str = "deps/ash_computer/lib/ash_computer.ex";

fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

/// Everything stored: every session exported.
fn dump(dir: &Path) -> String {
    let db: PathBuf = dir.join(".ctxkit").join("ctxkit.db");
    let store = SqliteStore::open(db).unwrap();
    let sessions = store.list_sessions().unwrap();
    sessions
        .iter()
        .map(|info| {
            format!(
                "{info:?}\n{:?}\n",
                store.export_session(&info.name).unwrap()
            )
        })
        .collect()
}

#[test]
fn history_search_finds_a_path_of_a_tool_call_and_read_shows_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = ctxkit_tests::corpus_dir().join(SESSION_FILE);
    let import = run(
        dir.path(),
        &["import", file.to_str().unwrap(), "--session", "cc"],
    );
    assert!(import.status.success(), "{:?}", import);

    let search = run(dir.path(), &["history", "search", "cc", PATH_IN_A_CALL]);
    assert!(search.status.success(), "{search:?}");
    let text = stdout(&search);
    assert!(
        text.starts_with(&format!(
            "[ctxkit: history search] \"{PATH_IN_A_CALL}\"\n1 hit, newest first: 1 exact."
        )),
        "{text}"
    );
    assert!(text.contains("assistant:\n"), "{text}");
    assert!(text.contains("  tool call: Read\n"), "{text}");
    assert!(text.contains(PATH_IN_A_CALL), "{text}");
    let seq: u64 = text
        .split("\n#")
        .nth(1)
        .and_then(|hit| hit.split(' ').next())
        .and_then(|seq| seq.parse().ok())
        .unwrap();

    // Case-insensitive, and --json carries the hit with its message.
    let json = run(
        dir.path(),
        &[
            "history",
            "search",
            "cc",
            &PATH_IN_A_CALL.to_uppercase(),
            "--json",
            "--limit",
            "3",
        ],
    );
    assert!(json.status.success());
    let json: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    assert_eq!(json["limit"], 3);
    assert_eq!(json["hits"][0]["seq"], seq);
    assert_eq!(json["hits"][0]["exact"], true);
    assert_eq!(json["hits"][0]["message"]["tool_calls"][0]["name"], "Read");
    assert!(json["text"].as_str().unwrap().contains(PATH_IN_A_CALL));

    // The call and its result, by seq.
    let to = (seq + 1).to_string();
    let read = run(
        dir.path(),
        &["history", "read", "cc", &seq.to_string(), &to],
    );
    assert!(read.status.success(), "{read:?}");
    let text = stdout(&read);
    assert!(
        text.starts_with(&format!(
            "[ctxkit: history read] seq {seq} to {to} (the log has seq 1 to "
        )),
        "{text}"
    );
    assert!(text.contains(&format!("\n#{to} tool (Read): ")), "{text}");
    assert!(text.contains("defmodule AshComputer do"), "{text}");
    let json = run(
        dir.path(),
        &["history", "read", "cc", &seq.to_string(), "--json"],
    );
    let json: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    assert_eq!(json["messages"][0]["seq"], seq);
    assert_eq!(json["to"], seq + 9);
}

#[test]
fn bad_history_input_exits_2_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("chat.json");
    std::fs::write(&file, r#"[{"role":"user","content":"hello 世界"}]"#).unwrap();
    assert!(run(
        dir.path(),
        &["import", file.to_str().unwrap(), "--session", "s"]
    )
    .status
    .success());
    let before = dump(dir.path());
    for (args, expected) in [
        (
            vec!["history", "search", "s", " "],
            "search_history.query: empty",
        ),
        (
            vec!["history", "search", "nope", "x"],
            "no session named \"nope\"",
        ),
        (
            vec!["history", "read", "s", "5", "2"],
            "read_history.to: 2 is before from (5)",
        ),
        (
            vec!["history", "read", "nope", "1"],
            "no session named \"nope\"",
        ),
        (
            vec!["history", "read", "s", "9223372036854775808"],
            "read_history.from: 9223372036854775808 is past the last position",
        ),
        (
            vec!["history", "read", "s", "18446744073709551615"],
            "read_history.from: 18446744073709551615 is past the last position",
        ),
        (
            vec!["history", "read", "s", "1", "9223372036854775808"],
            "read_history.to: 9223372036854775808 is past the last position",
        ),
    ] {
        let output = run(dir.path(), &args);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    }
    assert_eq!(dump(dir.path()), before);
    // Short queries and search syntax are text.
    let found = run(dir.path(), &["history", "search", "s", "世"]);
    assert!(
        stdout(&found).contains("#1 user:\n  hello 世界"),
        "{}",
        stdout(&found)
    );
    let none = run(dir.path(), &["history", "search", "s", "--", "-\"NEAR(\""]);
    assert!(none.status.success());
    assert!(stdout(&none).contains("No message of the log holds this text."));
}
