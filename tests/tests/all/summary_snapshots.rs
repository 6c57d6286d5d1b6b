//! Golden snapshots of the extractive summary (issue 20, item 2), each read as a handoff note:
//! the main Claude Code corpus session replayed at a 32k window (its last checkpoint, which
//! merged the ones before), a SWE-agent and an OpenHands corpus transcript summarized whole,
//! the Codex rollout fixture, and the corpus's Codex rollout replayed at a 32k window (its
//! Goal and requests are the user's words, without Codex's `<environment_context>` and IDE
//! preamble: issue 32, item 2). The built-in session's summary is pinned by
//! `pipeline_snapshots__extractive_summary`.

use ctxkit_core::compaction::{extractive_summary, ExtractiveLimits};
use ctxkit_core::import::import_transcript;
use ctxkit_core::{Message, ModelFamily};
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
