//! End-to-end tests of the `ctxkit` binary: every command, bad input of every kind (exit code
//! 2, one clear line, the database unchanged), every corpus file imported and its views valid
//! for both providers, and the replay report (colours off) as a snapshot.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::project::BIN;
use crate::common::project::{assert_ok, stderr, stdout};
use ctxkit::store::{SessionStore, SqliteStore};

struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    fn new() -> Project {
        Project {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn db(&self) -> PathBuf {
        self.path().join(".ctxkit").join("ctxkit.db")
    }

    fn file(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(BIN)
            .args(args)
            .current_dir(self.path())
            .env("NO_COLOR", "1")
            .output()
            .unwrap()
    }

    /// Everything stored: every session exported, in order.
    fn dump(&self) -> String {
        if !self.db().exists() {
            return String::new();
        }
        let store = SqliteStore::open(self.db()).unwrap();
        store
            .list_sessions()
            .unwrap()
            .iter()
            .map(|info| {
                format!(
                    "{}\n{:?}\n",
                    info.name,
                    store.export_session(&info.name).unwrap()
                )
            })
            .collect()
    }
}

#[test]
fn every_command_answers_help() {
    let project = Project::new();
    for command in [
        "replay",
        "import",
        "view",
        "compact-if-idle",
        "append",
        "sessions",
        "stats",
        "memory",
        "tokens",
        "validate",
    ] {
        let output = project.run(&[command, "--help"]);
        assert_ok(&output, command);
        assert!(stdout(&output).contains("Usage: ctxkit"), "{command}");
    }
    let version = project.run(&["--version"]);
    assert_ok(&version, "--version");
    assert!(stdout(&version).starts_with("ctxkit "));
    let usage = project.run(&["no-such-command"]);
    assert_eq!(usage.status.code(), Some(2));
}

#[test]
fn bad_input_exits_2_with_one_clear_line_and_leaves_the_database_alone() {
    let project = Project::new();
    let good = project.file(
        "good.jsonl",
        b"{\"role\":\"user\",\"content\":\"hello\"}\n{\"role\":\"assistant\",\"content\":\"hi\"}\n",
    );
    assert_ok(
        &project.run(&["import", good.to_str().unwrap(), "--session", "s"]),
        "import good",
    );
    let before = project.dump();
    assert!(before.contains("hello"));

    let malformed = project.file(
        "malformed.json",
        b"[{\"role\": \"user\", \"content\": \"x\"},",
    );
    let truncated = project.file(
        "truncated.jsonl",
        b"{\"role\":\"user\",\"content\":\"a\"}\n{\"role\":\"user\",\"con",
    );
    let garbage = project.file(
        "garbage.bin",
        &[0x00, 0xff, 0xfe, 0x13, 0x80, b'\n', 0xc3, 0x28],
    );
    let unknown = project.file("unknown.json", b"{\"hello\": [1, 2, 3]}");
    let no_role = project.file("norole.json", b"[{\"content\": \"x\"}]");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["import", malformed.to_str().unwrap()],
            "malformed.json: line 1",
        ),
        (
            vec!["import", truncated.to_str().unwrap(), "--format", "ctxkit"],
            "truncated.jsonl: line 2",
        ),
        (
            vec!["import", garbage.to_str().unwrap()],
            "garbage.bin: line 1: not UTF-8",
        ),
        (
            vec!["import", unknown.to_str().unwrap()],
            "unknown.json: input: JSON that no known transcript format matches",
        ),
        (
            vec!["import", no_role.to_str().unwrap(), "--format", "ctxkit"],
            "norole.json: messages[0]: missing field `role`",
        ),
        (
            vec!["import", "does-not-exist.json"],
            "does-not-exist.json: cannot read",
        ),
        (
            vec!["import", good.to_str().unwrap(), "--format", "yaml"],
            "invalid value 'yaml'",
        ),
        (
            vec!["import", good.to_str().unwrap(), "--session", "s"],
            "already exists",
        ),
        (vec!["view", "missing"], "no session named \"missing\""),
        (vec!["stats", "missing"], "no session named \"missing\""),
        (
            vec!["append", "missing", good.to_str().unwrap()],
            "no session named \"missing\"",
        ),
        (
            vec!["append", "s", truncated.to_str().unwrap()],
            "truncated.jsonl: line 2",
        ),
        (vec!["append", "s", garbage.to_str().unwrap()], "not UTF-8"),
        (vec!["tokens", garbage.to_str().unwrap()], "not UTF-8"),
        (
            vec![
                "validate",
                malformed.to_str().unwrap(),
                "--provider",
                "openai",
            ],
            "malformed.json: line 1",
        ),
        (vec!["validate", good.to_str().unwrap()], "--provider"),
        (vec!["memory", "rm", "999"], "no memory with id 999"),
        (vec!["memory", "add", "  "], "content: empty"),
        (
            vec!["replay", unknown.to_str().unwrap()],
            "unknown.json: input:",
        ),
        (
            vec!["replay", good.to_str().unwrap(), "--index", "3"],
            "--index 3: the file holds 1 conversation",
        ),
    ];
    for (args, expected) in cases {
        let output = project.run(&args);
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {message}");
        assert!(
            message.contains(expected),
            "{args:?}: expected {expected:?} in {message:?}"
        );
        if !args.contains(&"--provider") && !message.starts_with("error:") {
            assert_eq!(
                message.trim_end().lines().count(),
                1,
                "{args:?}: one line, got {message:?}"
            );
        }
        assert!(!message.contains("panicked"), "{args:?}");
        assert_eq!(project.dump(), before, "{args:?} changed the database");
    }
}

#[test]
fn append_view_stats_tokens_validate_and_memory_work_end_to_end() {
    let project = Project::new();
    let messages = project.file(
        "turn.json",
        br#"[{"role":"user","content":"list the files"},
            {"role":"assistant","content":"","tool_calls":[{"id":"call_0","name":"bash","arguments":"{\"command\":\"ls\"}"}]},
            {"role":"tool","tool_call_id":"call_0","content":"a.rs\nb.rs"}]"#,
    );
    let output = project.run(&["append", "work", messages.to_str().unwrap(), "--create"]);
    assert_ok(&output, "append");
    assert!(stdout(&output).contains("appended 3 message(s) to work (seq 1–3)"));

    // A big output is offloaded to a private file.
    let big = serde_json::json!([
        {"role": "assistant", "content": "", "tool_calls": [{"id": "call_1", "name": "bash", "arguments": "{\"command\":\"cat log\"}"}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "line of log output\n".repeat(2_000)}
    ]);
    let big = project.file("big.json", big.to_string().as_bytes());
    let output = project.run(&["append", "work", big.to_str().unwrap()]);
    assert_ok(&output, "append big");
    assert!(
        stdout(&output).contains("offloaded seq 5 → .ctxkit/tool_results/work/"),
        "{}",
        stdout(&output)
    );

    for (format, provider) in [("openai", "openai"), ("anthropic", "anthropic")] {
        let view = project.run(&["view", "work", "--format", format]);
        assert_ok(&view, "view");
        assert!(stderr(&view).starts_with("view of work: "));
        let file = project.file(&format!("view-{format}.json"), &view.stdout);
        let valid = project.run(&["validate", file.to_str().unwrap(), "--provider", provider]);
        assert_ok(&valid, "validate");
        assert!(stdout(&valid).ends_with(": valid\n"));
    }
    let invalid = project.file(
        "invalid.json",
        br#"[{"role":"user","content":"x"},{"role":"tool","tool_call_id":"nope","content":"y"}]"#,
    );
    let output = project.run(&[
        "validate",
        invalid.to_str().unwrap(),
        "--provider",
        "openai",
    ]);
    assert_eq!(output.status.code(), Some(1));
    assert!(stdout(&output).contains(
        "messages with role 'tool' must be a response to a preceding message with 'tool_calls'"
    ));

    let stats = project.run(&["stats", "work", "--json"]);
    assert_ok(&stats, "stats");
    let stats: serde_json::Value = serde_json::from_slice(&stats.stdout).unwrap();
    assert_eq!(stats["messages"], 5);
    assert_eq!(stats["offloads"], 1);
    let sessions = project.run(&["sessions"]);
    assert!(stdout(&sessions).starts_with("work "));

    let tokens = project.run(&["tokens", messages.to_str().unwrap(), "--json"]);
    assert_ok(&tokens, "tokens");
    let tokens: serde_json::Value = serde_json::from_slice(&tokens.stdout).unwrap();
    assert_eq!(tokens["kind"], "3 messages");
    assert!(tokens["estimates"]["claude"].as_u64().unwrap() > 0);
    let text = project.file("text.txt", "纯文本，不是 JSON。".as_bytes());
    let output = project.run(&["tokens", text.to_str().unwrap(), "--model-family", "openai"]);
    assert!(stdout(&output).contains("plain text"));

    let add = project.run(&[
        "memory",
        "add",
        "使用持久化会话 to keep state",
        "--importance",
        "42",
        "--tags",
        "db,cn",
    ]);
    assert_ok(&add, "memory add");
    let found = project.run(&["memory", "search", "持久化", "--json"]);
    let found: serde_json::Value = serde_json::from_slice(&found.stdout).unwrap();
    assert_eq!(found[0]["importance"], 10, "clamped");
    for query in ["\"", "AND", "*", "NEAR(", "a\"b OR c"] {
        assert_ok(&project.run(&["memory", "search", query]), query);
    }
    let precis = project.run(&["memory", "precis"]);
    assert!(stdout(&precis).contains("使用持久化会话"));
    let id = found[0]["id"].to_string();
    assert_ok(&project.run(&["memory", "rm", &id]), "memory rm");
    assert_eq!(stdout(&project.run(&["memory", "list"])), "no memories\n");
}

/// (file, sessions, messages in all sessions, tool calls in all sessions)
const CORPUS: [(&str, usize, u64, u64); 8] = [
    ("claude-code_marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl", 1, 293, 150),
    ("claude-code_marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-a2898e3.jsonl", 1, 46, 33),
    ("claude-code_marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-acompact-e1f845.jsonl", 1, 5, 0),
    ("tau-bench/gpt-4o-airline.json", 200, 5308, 1164),
    ("swe-agent/marshmallow-1867__function_calling_replace_from_source.traj", 1, 28, 13),
    ("swe-agent/pydicom-1458__gpt4_default.traj", 1, 26, 12),
    ("openhands/multi_swe_bench_examples_output.jsonl", 3, 214, 103),
    ("openhands/runtime_trajs_basic.json", 1, 4, 1),
];

#[test]
fn every_corpus_file_imports_and_its_views_validate_for_both_providers() {
    let project = Project::new();
    for (index, (file, sessions, messages, calls)) in CORPUS.iter().enumerate() {
        let path = ctxkit_tests::corpus_dir().join(file);
        let name = format!("corpus{index}");
        let output = project.run(&[
            "import",
            path.to_str().unwrap(),
            "--session",
            &name,
            "--json",
        ]);
        assert_ok(&output, file);
        let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        let imported = report["sessions"].as_array().unwrap();
        assert_eq!(imported.len(), *sessions, "{file}");
        let total = |key: &str| {
            imported
                .iter()
                .map(|s| s[key].as_u64().unwrap())
                .sum::<u64>()
        };
        assert_eq!(
            (total("messages"), total("tool_calls")),
            (*messages, *calls),
            "{file}: messages, tool calls"
        );
        for session in imported.iter().take(3) {
            let session = session["session"].as_str().unwrap();
            for (format, provider) in [("openai", "openai"), ("anthropic", "anthropic")] {
                // A window small enough that the bigger sessions compact in the view.
                let view = project.run(&["view", session, "--format", format, "--window", "32000"]);
                assert_ok(&view, &format!("{file} {session} view"));
                let out = project.file("view.json", &view.stdout);
                let valid =
                    project.run(&["validate", out.to_str().unwrap(), "--provider", provider]);
                assert_ok(
                    &valid,
                    &format!("{file} {session} {provider}: {}", stdout(&valid)),
                );
            }
        }
    }
}

#[test]
fn replay_of_the_built_in_session_compacts_twice_and_offloads() {
    let project = Project::new();
    let output = project.run(&["replay"]);
    assert_ok(&output, "replay");
    let report = stdout(&output);
    assert!(!report.contains('\x1b'), "no colours with NO_COLOR");
    insta::assert_snapshot!("replay_report", report);

    let json = project.run(&["replay", "--json"]);
    assert_ok(&json, "replay --json");
    let lines: Vec<serde_json::Value> = stdout(&json)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let summary = lines.last().unwrap();
    assert_eq!(summary["type"], "summary");
    assert!(summary["compactions"].as_array().unwrap().len() >= 2);
    assert!(summary["offloads"].as_u64().unwrap() >= 1);
    assert_eq!(lines.len() - 1, summary["turns"].as_u64().unwrap() as usize);
    // The second replay went into a session of its own.
    assert!(stdout(&project.run(&["sessions"])).contains("replay-demo-2"));
}

#[test]
fn replay_of_a_real_claude_code_session_compacts_and_offloads() {
    let project = Project::new();
    let session = ctxkit_tests::corpus_dir().join(CORPUS[0].0);
    let output = project.run(&[
        "replay",
        session.to_str().unwrap(),
        "--window",
        "100000",
        "--json",
    ]);
    assert_ok(&output, "replay of the corpus session");
    let lines: Vec<serde_json::Value> = stdout(&output)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let summary = lines.last().unwrap();
    assert_eq!(
        summary["turns"], 139,
        "one turn per API response of the session"
    );
    assert_eq!(summary["messages_logged"], 293);
    assert!(!summary["compactions"].as_array().unwrap().is_empty());
    assert!(summary["offloads"].as_u64().unwrap() >= 1);
    let turns = &lines[..lines.len() - 1];
    assert!(
        turns
            .iter()
            .all(|turn| turn["tokens"].as_u64() <= turn["budget"].as_u64()),
        "every view fits"
    );
}

#[test]
fn replay_shows_the_latest_summary_the_model_reads() {
    let project = Project::new();
    let output = project.run(&["replay", "--show-summary"]);
    assert_ok(&output, "replay --show-summary");
    let report = stdout(&output);
    let (_, shown) = report
        .split_once("latest summary (checkpoint through seq ")
        .expect("the summary is shown after the report");
    let (_, shown) = shown.split_once("\n\n").unwrap();
    assert!(shown.starts_with("## Goal\n- "), "{shown}");
    for section in ["## Files\n", "## Commands\n", "## Next Steps\n"] {
        assert!(shown.contains(section), "{section} in {shown}");
    }

    // The same text, as data, is what the next view sends in place of the turns it covers.
    let json = project.run(&["replay", "--show-summary", "--json", "--session", "shown"]);
    assert_ok(&json, "replay --show-summary --json");
    let last: serde_json::Value =
        serde_json::from_str(stdout(&json).lines().last().unwrap()).unwrap();
    let summary = last["latest_summary"]["summary"].as_str().unwrap();
    assert_eq!(last["latest_summary"]["method"], "extractive");
    // The same session played under another name: only the offload folder differs.
    assert_eq!(
        shown.trim_end().replace("/replay-demo/", "/shown/"),
        summary,
        "text and JSON show the same summary"
    );
    let view = project.run(&["view", "shown", "--format", "ctxkit"]);
    assert_ok(&view, "view");
    let escaped = serde_json::to_string(summary).unwrap();
    assert!(
        stdout(&view).contains(escaped.trim_matches('"')),
        "the view sends the summary"
    );
}
