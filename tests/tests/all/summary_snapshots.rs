//! Golden snapshots of the extractive summary (issue 20, item 2), each read as a handoff note:
//! the main Claude Code corpus session replayed at a 32k window (its last checkpoint, which
//! merged the ones before), a SWE-agent and an OpenHands corpus transcript summarized whole,
//! the Codex rollout fixture, and the corpus's Codex rollout replayed at a 32k window (its
//! Goal and requests are the user's words, without Codex's `<environment_context>` and IDE
//! preamble: issue 32, item 2), a pi session replayed at a 32k window and a framework-style
//! session whose tools have made-up names, read by their arguments' shape (issue 32, items 1
//! and 5). The built-in session's summary is pinned by
//! `pipeline_snapshots__extractive_summary`.

use ctxkit_core::compaction::{extractive_summary, ExtractiveLimits};
use ctxkit_core::import::import_transcript;
use ctxkit_core::{Message, ModelFamily, ToolCall};
use ctxkit_tests::fidelity::replay;

fn corpus_session(file: &str, index: usize) -> Vec<Message> {
    let path = ctxkit_tests::corpus_dir().join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
    let imported = import_transcript(&text, None).unwrap_or_else(|e| panic!("{file}: {e}"));
    imported.sessions[index].messages.clone()
}

#[test]
fn claude_code_last_checkpoint_at_32k() {
    let messages = corpus_session(
        "claude-code_marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl",
        0,
    );
    let replayed = replay(&messages, 32_000, ModelFamily::Claude);
    let last = replayed
        .checkpoints
        .last()
        .expect("the session compacts at 32k");
    insta::assert_snapshot!("claude_code_32k_last_checkpoint", last.summary);
}

#[test]
fn swe_agent_and_openhands_whole_sessions() {
    let limits = ExtractiveLimits::default();
    let swe = corpus_session(
        "swe-agent/marshmallow-1867__function_calling_replace_from_source.traj",
        0,
    );
    insta::assert_snapshot!(
        "swe_agent_marshmallow",
        extractive_summary(&swe, None, &limits)
    );
    let openhands = corpus_session("openhands/multi_swe_bench_examples_output.jsonl", 0);
    insta::assert_snapshot!(
        "openhands_multi_swe_bench_0",
        extractive_summary(&openhands, None, &limits)
    );
}

#[test]
fn codex_rollout_fixture() {
    let path = ctxkit_tests::fixtures_dir().join("import/codex_rollout.jsonl");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
    let imported = import_transcript(&text, None).expect("the fixture imports");
    let summary = extractive_summary(
        &imported.sessions[0].messages,
        None,
        &ExtractiveLimits::default(),
    );
    insta::assert_snapshot!("codex_rollout", summary);
}

#[test]
fn codex_corpus_rollout_last_checkpoint_at_32k() {
    let messages = corpus_session(
        "codex_jnarowski-agentcmd/rollout-2025-09-24T19-22-20-01997e76-d124-7592-9cac-2ec05abbca08.jsonl",
        0,
    );
    let replayed = replay(&messages, 32_000, ModelFamily::OpenAi);
    let last = replayed
        .checkpoints
        .last()
        .expect("the rollout compacts at 32k");
    let goal = last
        .summary
        .lines()
        .skip_while(|line| *line != "## Goal")
        .nth(1)
        .unwrap_or_default();
    assert!(
        goal.starts_with("- Updating a team to assign a lead"),
        "the Goal is the user's first request: {goal}"
    );
    insta::assert_snapshot!("codex_corpus_32k_last_checkpoint", last.summary);
}

#[test]
fn pi_session_last_checkpoint_at_32k() {
    let messages = corpus_session(
        "pi_entelligentsia-tokbench/2026-06-05T11-35-05-276Z_019e9790-bb3c-76a6-b65a-512995c95692.jsonl",
        0,
    );
    let replayed = replay(&messages, 32_000, ModelFamily::OpenAi);
    let last = replayed
        .checkpoints
        .last()
        .expect("the session compacts at 32k");
    insta::assert_snapshot!("pi_32k_last_checkpoint", last.summary);
}

/// A framework agent's session (a pydantic-ai or LangChain agent with tools of its own
/// naming): every edit is known by its arguments, the failure the later run fixed is marked
/// resolved, the paths with route groups stay whole.
#[test]
fn framework_session_with_made_up_tool_names() {
    let call = |id: &str, name: &str, arguments: serde_json::Value| {
        Message::assistant("", vec![ToolCall::new(id, name, arguments.to_string())])
    };
    let page = "web/app/(dashboard)/reports/[reportId]/page.tsx";
    let log = vec![
        Message::user("The report page crashes when a report has no rows. Fix it and keep the checks green."),
        call("1", "lookup_docs", serde_json::json!({"query": "empty report rows"})),
        Message::tool_result("1", format!("Found in {page} and web/lib/rows.ts"), false),
        call("2", "open_document", serde_json::json!({"doc_path": page})),
        Message::tool_result("2", "export default function Page({ rows }) { return rows[0].title }", false),
        call("3", "run_checks", serde_json::json!({"cmd": "pnpm test reports", "cwd": "web"})),
        Message::tool_result(
            "3",
            "FAIL app/(dashboard)/reports/[reportId]/page.test.tsx\nTypeError: Cannot read properties of undefined (reading 'title')\nexit code 1",
            true,
        ),
        Message::assistant(
            "The page reads `rows[0]` without checking for an empty list; I'll render an empty state instead.",
            vec![ToolCall::new(
                "4",
                "patch_source",
                serde_json::json!({"target_file": page, "old": "return rows[0].title", "replacement": "return rows.length ? rows[0].title : <EmptyState />"}).to_string(),
            )],
        ),
        Message::tool_result("4", "patched", false),
        call("5", "save_file", serde_json::json!({"filename": "web/components/EmptyState.tsx", "contents": "export function EmptyState() { return null }"})),
        Message::tool_result("5", "saved", false),
        call("6", "run_checks", serde_json::json!({"cmd": "pnpm test reports", "cwd": "web"})),
        Message::tool_result("6", "PASS app/(dashboard)/reports/[reportId]/page.test.tsx\nexit code 0", false),
        Message::assistant("The empty report renders `EmptyState` now and the checks pass.", vec![]),
    ];
    let summary = extractive_summary(&log, None, &ExtractiveLimits::default());
    insta::assert_snapshot!("framework_made_up_tools", summary);
}
