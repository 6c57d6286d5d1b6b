//! `ctxkit probe` against fake OpenAI-compatible servers on loopback: one that answers from
//! the log (it echoes the conversation it was sent, so whatever the view holds it "knows"),
//! where the full log, the ceiling, must hold 100% of the keys; and bad ones (an error status,
//! junk, a refusal, a context too long, a stall), each reported with its probe while the run
//! goes on. The real local model is `local_llm.rs`'s.

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use crate::common::probe_rows::{check_row, probe_rows as rows};
use crate::common::project::BIN;
use crate::common::{corpus_dir, openai_answer, LoopbackServer, Received, Reply};
use serde_json::Value;

const CLAUDE_CODE: &str = "claude-code_marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl";

/// Everything the request's conversation says but its last message (the question): texts and
/// tool calls, as a model that read it all would repeat it.
pub(crate) fn echo_of_the_log(request: &Received) -> String {
    let body: Value = serde_json::from_str(&request.body).unwrap();
    let messages = body["messages"].as_array().unwrap();
    let mut said = Vec::new();
    for message in &messages[..messages.len() - 1] {
        match &message["content"] {
            Value::String(text) => said.push(text.clone()),
            Value::Array(parts) => said.extend(
                parts
                    .iter()
                    .filter_map(|p| p["text"].as_str().map(str::to_owned)),
            ),
            _ => {}
        }
        for call in message["tool_calls"].as_array().into_iter().flatten() {
            said.push(format!(
                "{} {}",
                call["function"]["name"].as_str().unwrap_or_default(),
                call["function"]["arguments"].as_str().unwrap_or_default()
            ));
        }
    }
    said.join("\n")
}

fn probe(server: &LoopbackServer, file: &str, args: &[&str]) -> Output {
    let dir = tempfile::tempdir().unwrap();
    probe_in(dir.path(), server, file, args)
}

/// [`probe`] run in `dir` (the system prompt names the working directory, so runs compared
/// byte for byte share one).
fn probe_in(dir: &Path, server: &LoopbackServer, file: &str, args: &[&str]) -> Output {
    Command::new(BIN)
        .current_dir(dir)
        .arg("probe")
        .arg(corpus_dir().join(file))
        .args(args)
        .env("OPENAI_BASE_URL", format!("{}/v1", server.base_url))
        .env("CTXKIT_MODEL", "fake")
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap()
}

#[test]
fn a_server_that_answers_from_the_log_holds_every_key_over_the_full_log() {
    let server =
        LoopbackServer::start(|request, _| Reply::ok(openai_answer(&echo_of_the_log(request))));
    let output = probe(&server, CLAUDE_CODE, &["--max-probes", "10", "--json"]);
    let (rows, totals) = rows(&output);
    assert_eq!(rows.len(), 30, "10 probes over 3 views");
    let kinds: std::collections::BTreeSet<&str> =
        rows.iter().map(|r| r["kind"].as_str().unwrap()).collect();
    assert!(kinds.len() >= 4, "spread over kinds: {kinds:?}");
    for row in &rows {
        // Answered, and the answer graded again by the core gives the same verdict.
        assert_eq!(check_row(row, &[]), "answered", "{row}");
        if row["strategy"] == "full" {
            assert_eq!(row["outcome"]["held"], true, "the ceiling: {row}");
        }
    }
    let mut full = (0, 0);
    for counts in totals["kinds"].as_object().unwrap().values() {
        full.0 += counts["full"]["asked"].as_u64().unwrap();
        full.1 += counts["full"]["held"].as_u64().unwrap();
    }
    assert_eq!(full, (10, 10), "{totals}");
    // The sliding window (the floor) misses what fell out of it.
    let floor_missed = rows
        .iter()
        .filter(|r| r["strategy"] == "sliding-window" && r["outcome"]["held"] == false)
        .count();
    assert!(floor_missed > 0);

    // What was sent: the view, then the question as a user message, greedy with a seed.
    let received = server.received();
    assert_eq!(received.len(), 30);
    for (request, row) in received.iter().zip(&rows) {
        assert_eq!(request.path, "/v1/chat/completions");
        let body: Value = serde_json::from_str(&request.body).unwrap();
        assert_eq!(body["model"], "fake");
        assert_eq!(body["temperature"], 0.0);
        assert_eq!(body["seed"], 7);
        assert_eq!(body["max_tokens"], 128);
        let messages = body["messages"].as_array().unwrap();
        assert_eq!(messages[0]["role"], "system");
        let last = messages.last().unwrap();
        assert_eq!(last["role"], "user");
        assert!(last["content"]
            .as_str()
            .unwrap()
            .starts_with(row["question"].as_str().unwrap()));
    }
}

#[test]
fn bad_servers_are_reported_per_probe_and_the_run_goes_on() {
    // Each bad answer is followed by a good one: two failures in a row would stop the run
    // (its circuit breaker, tested in llm_deadlines.rs).
    let server = LoopbackServer::start(|request, index| {
        match index {
        0 => Reply::status(500, r#"{"error":"boom"}"#),
        2 => Reply::ok("this is not json"),
        4 => Reply::ok(
            serde_json::json!({"choices": [{"message": {"role": "assistant", "content": null, "refusal": "I can't help with that"}}]})
                .to_string(),
        ),
        6 => Reply::status(
            400,
            r#"{"error":{"message":"the prompt is 9000 tokens; it does not fit the context of 8192 tokens","code":"context_length_exceeded"}}"#,
        ),
        8 => Reply::Stall(Duration::from_secs(4)),
        _ => Reply::ok(openai_answer(&echo_of_the_log(request))),
    }
    });
    let output = probe(
        &server,
        CLAUDE_CODE,
        &[
            "--strategy",
            "full",
            "--max-probes",
            "10",
            "--timeout",
            "1",
            "--json",
        ],
    );
    let (rows, _) = rows(&output);
    assert_eq!(rows.len(), 10);
    let outcomes: Vec<String> = rows
        .iter()
        .map(|r| {
            let outcome = &r["outcome"];
            outcome["error"]
                .as_str()
                .unwrap_or(outcome["status"].as_str().unwrap())
                .to_owned()
        })
        .collect();
    assert_eq!(
        outcomes,
        vec![
            "http",
            "answered",
            "junk",
            "answered",
            "refused",
            "answered",
            "context_too_long",
            "answered",
            "timeout",
            "answered"
        ]
    );
    assert!(rows[0]["outcome"]["message"]
        .as_str()
        .unwrap()
        .contains("HTTP 500"));
    assert_eq!(rows[9]["outcome"]["held"], true);

    // The text report lists each request without an answer with its probe.
    let server = LoopbackServer::start(|_, _| Reply::status(503, "overloaded"));
    let output = probe(
        &server,
        CLAUDE_CODE,
        &["--strategy", "ctxkit", "--max-probes", "2"],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    assert!(
        stdout.contains("requests without an answer (2):"),
        "{stdout}"
    );
    assert!(stdout.contains("ctxkit, sample 1: http: "), "{stdout}");
    assert!(stdout.contains("0/2 (0%)"), "{stdout}");
}

#[test]
fn bad_flags_and_a_missing_model_are_usage_errors() {
    let server = LoopbackServer::start(|_, _| Reply::status(500, "never asked"));
    for (args, says) in [
        (vec!["--samples", "0"], "--samples 0"),
        (vec!["--max-probes", "0"], "--max-probes 0"),
        (vec!["--timeout", "0"], "--timeout 0"),
        (vec!["--strategy", "nearest"], "invalid value 'nearest'"),
        (
            vec!["--samples", "4", "--max-requests", "3"],
            "--max-requests 3",
        ),
    ] {
        let output = probe(&server, CLAUDE_CODE, &args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
    let output = Command::new(BIN)
        .arg("probe")
        .arg(corpus_dir().join(CLAUDE_CODE))
        .env_remove("CTXKIT_MODEL")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("CTXKIT_MODEL"));
    assert!(server.received().is_empty());
}

/// `--resume FILE`: a run stopped by `--max-requests`, then resumed, prints what one
/// uninterrupted run prints, asks each request once, and a third run asks nothing.
#[test]
fn a_stopped_run_resumed_equals_an_uninterrupted_one() {
    let server =
        LoopbackServer::start(|request, _| Reply::ok(openai_answer(&echo_of_the_log(request))));
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path();
    let whole = probe_in(work, &server, CLAUDE_CODE, &["--max-probes", "4", "--json"]);
    let (whole_rows, _) = rows(&whole);
    assert_eq!(whole_rows.len(), 12, "4 probes over 3 views");
    assert_eq!(server.received().len(), 12);

    let file = dir.path().join("run.jsonl");
    let resume = file.to_str().unwrap();
    let first = probe_in(
        work,
        &server,
        CLAUDE_CODE,
        &[
            "--max-probes",
            "4",
            "--json",
            "--resume",
            resume,
            "--max-requests",
            "7",
        ],
    );
    let (first_rows, first_totals) = rows(&first);
    assert_eq!(first_rows.len(), 7);
    assert_eq!(first_totals["left"], 5, "{first_totals}");
    assert_eq!(first_rows[..], whole_rows[..7]);
    assert!(String::from_utf8_lossy(&first.stderr).contains("5 request(s) left"));
    assert_eq!(server.received().len(), 12 + 7);
    let kept = std::fs::read_to_string(&file).unwrap();
    assert_eq!(
        kept.lines().count(),
        1 + 7,
        "the header, then one line per request"
    );
    let header: Value = serde_json::from_str(kept.lines().next().unwrap()).unwrap();
    assert_eq!(header["options"]["window"], 32_000, "{header}");
    assert!(header["transcript"]["fingerprint"]
        .as_str()
        .unwrap()
        .starts_with("fnv1a64:"));

    let second = probe_in(
        work,
        &server,
        CLAUDE_CODE,
        &["--max-probes", "4", "--json", "--resume", resume],
    );
    assert_eq!(
        server.received().len(),
        12 + 7 + 5,
        "only the rest is asked"
    );
    assert_eq!(
        String::from_utf8_lossy(&second.stdout),
        String::from_utf8_lossy(&whole.stdout)
    );
    let complete = std::fs::read(&file).unwrap();
    assert_eq!(String::from_utf8_lossy(&complete).lines().count(), 1 + 12);

    // Everything is in the file: nothing is asked, the table is the same (text too).
    let text = |args: &[&str]| {
        let output = probe_in(work, &server, CLAUDE_CODE, args);
        assert!(output.status.success());
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let resumed_text = text(&["--max-probes", "4", "--resume", resume]);
    assert_eq!(server.received().len(), 12 + 7 + 5);
    assert_eq!(resumed_text, text(&["--max-probes", "4"]));
    assert_eq!(std::fs::read(&file).unwrap(), complete);

    // Grades flipped by hand in the file: the answers are graded again, the table is the
    // uninterrupted run's, nothing is asked, the run says so, and the file is left as it was.
    let flipped = String::from_utf8_lossy(&complete)
        .replace("\"held\":true", "\"held\":TRUE")
        .replace("\"held\":false", "\"held\":true")
        .replace("\"held\":TRUE", "\"held\":false");
    assert_ne!(
        flipped.as_bytes(),
        &complete[..],
        "the file holds grades to flip"
    );
    std::fs::write(&file, &flipped).unwrap();
    let asked_before = server.received().len();
    let output = probe_in(
        work,
        &server,
        CLAUDE_CODE,
        &["--max-probes", "4", "--json", "--resume", resume],
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(server.received().len(), asked_before, "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&whole.stdout)
    );
    assert!(
        stderr.contains("12 request(s) in") && stderr.contains("graded again"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), flipped);
}

/// A resume with other options or another transcript is refused, naming the mismatch, and
/// leaves the file byte for byte; a torn last line is dropped and its request asked again.
#[test]
fn a_mismatched_resume_is_refused_and_a_torn_line_is_redone() {
    let server =
        LoopbackServer::start(|request, _| Reply::ok(openai_answer(&echo_of_the_log(request))));
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path();
    let file = dir.path().join("run.jsonl");
    let resume = file.to_str().unwrap();
    let args = ["--max-probes", "2", "--json", "--resume", resume];
    let whole = probe_in(work, &server, CLAUDE_CODE, &args);
    let (whole_rows, _) = rows(&whole);
    assert_eq!(whole_rows.len(), 6);
    let complete = std::fs::read(&file).unwrap();
    let asked = server.received().len();

    for (extra, file_name, says) in [
        (
            vec!["--window", "6000"],
            CLAUDE_CODE,
            "window 32000 in the file, 6000 now",
        ),
        (vec!["--strategy", "ctxkit"], CLAUDE_CODE, "strategies"),
        (
            vec!["--samples", "2"],
            CLAUDE_CODE,
            "samples 1 in the file, 2 now",
        ),
        (
            vec![],
            "swe-agent/pydicom-1458__gpt4_default.traj",
            "the transcript: ",
        ),
    ] {
        let mut all = args.to_vec();
        all.extend(extra.iter().copied());
        let output = probe_in(work, &server, file_name, &all);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{extra:?}: {stderr}");
        assert!(stderr.contains(says), "{extra:?}: {stderr}");
        assert!(stderr.contains("left as it was"), "{stderr}");
        assert_eq!(std::fs::read(&file).unwrap(), complete, "{extra:?}");
    }
    assert_eq!(server.received().len(), asked, "a refused run asks nothing");

    // Not a resume file at all: refused, untouched.
    let other = dir.path().join("notes.txt");
    std::fs::write(&other, "my notes\n").unwrap();
    let output = probe_in(
        work,
        &server,
        CLAUDE_CODE,
        &["--max-probes", "2", "--resume", other.to_str().unwrap()],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("not a ctxkit probe resume file"));
    assert_eq!(std::fs::read_to_string(&other).unwrap(), "my notes\n");

    // Killed while writing the last line: the torn line is dropped and asked again.
    let last_line_start = complete[..complete.len() - 1]
        .iter()
        .rposition(|b| *b == b'\n')
        .unwrap()
        + 1;
    let torn_at = last_line_start + (complete.len() - last_line_start) / 2;
    std::fs::write(&file, &complete[..torn_at]).unwrap();
    let again = probe_in(work, &server, CLAUDE_CODE, &args);
    assert_eq!(server.received().len(), asked + 1, "only the torn request");
    assert_eq!(again.stdout, whole.stdout);
    assert_eq!(std::fs::read(&file).unwrap(), complete);
}
