//! End-to-end tests of the `ctxkit` binary with the formats beyond OpenAI Chat and Anthropic:
//! `import --format codex` of a Codex CLI rollout, `view --format responses|gemini|ai-sdk|
//! langchain` (each view checked by the matching validator, or read back by the matching
//! reader), `validate --format responses|gemini` on good and bad requests, and the count of
//! provider-bound state a view drops on stderr.

use std::path::PathBuf;

use crate::common::project::{assert_ok, stderr, stdout, Project};
use ctxkit::core::wire::{from_format, validate_gemini, validate_responses, WireFormat};

/// The Codex rollout the core's importer tests read.
fn codex_rollout() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/import/codex_rollout.jsonl")
}

/// A project with the Codex rollout imported as session `cx`.
fn imported() -> Project {
    let project = Project::new();
    let rollout = codex_rollout();
    let output = project.run(&[
        "import",
        rollout.to_str().unwrap(),
        "--format",
        "codex",
        "--session",
        "cx",
        "--json",
    ]);
    assert_ok(&output, "import --format codex");
    let summary: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(summary["format"], "codex");
    assert_eq!(summary["sessions"][0]["session"], "cx");
    assert_eq!(summary["sessions"][0]["messages"], 11);
    assert_eq!(summary["sessions"][0]["compactions_in_source"], 1);
    project
}

fn view(project: &Project, format: &str) -> (serde_json::Value, String) {
    let output = project.run(&["view", "cx", "--format", format]);
    assert_ok(&output, &format!("view --format {format}"));
    let body = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("view --format {format}: not JSON: {e}"));
    (body, stderr(&output))
}

#[test]
fn a_codex_import_views_as_valid_responses_and_gemini_requests() {
    let project = imported();
    let (responses, note) = view(&project, "responses");
    assert!(note.starts_with("view of cx: "), "{note}");
    // The Responses view carries the rollout's own reasoning back: nothing dropped.
    assert!(!note.contains("dropped"), "{note}");
    assert_eq!(validate_responses(&responses), Vec::new());
    let items = responses["input"].as_array().unwrap();
    assert!(items.iter().any(|item| item["type"] == "reasoning"
        && item["encrypted_content"] == "gAAAAABpnDEMO1-opaque-reasoning-state=="));
    assert!(items.iter().any(|item| item["type"] == "function_call"));

    let (gemini, note) = view(&project, "gemini");
    assert_eq!(validate_gemini(&gemini), Vec::new());
    assert!(gemini["contents"]
        .as_array()
        .unwrap()
        .iter()
        .any(|content| content["parts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|part| part.get("functionCall").is_some())));
    // Gemini cannot take the encrypted reasoning: the stats say it was dropped.
    assert!(
        note.contains("of provider-bound state dropped (not sendable as gemini)"),
        "{note}"
    );

    // The CLI's own validator agrees, for each format, and refuses the other's request.
    for (format, body) in [("responses", &responses), ("gemini", &gemini)] {
        let file = project.file(&format!("{format}.json"), body.to_string().as_bytes());
        let valid = project.run(&["validate", file.to_str().unwrap(), "--format", format]);
        assert_ok(&valid, &format!("validate --format {format}"));
        assert!(stdout(&valid).ends_with(": valid\n"), "{}", stdout(&valid));
    }
}

#[test]
fn validate_reports_broken_responses_and_gemini_requests_in_their_words() {
    let project = Project::new();
    let responses = project.file(
        "responses.json",
        br#"{"input":[{"type":"function_call_output","call_id":"call_9","output":"x"}]}"#,
    );
    let output = project.run(&[
        "validate",
        responses.to_str().unwrap(),
        "--format",
        "responses",
    ]);
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    assert!(stdout(&output).contains("call_9"), "{}", stdout(&output));

    let gemini = project.file(
        "gemini.json",
        br#"{"contents":[{"role":"assistant","parts":[{"text":"hi"}]}]}"#,
    );
    let output = project.run(&[
        "validate",
        gemini.to_str().unwrap(),
        "--format",
        "gemini",
        "--json",
    ]);
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["valid"], false);
    assert!(report["violations"][0]["at"]
        .as_str()
        .unwrap()
        .contains("contents"));
}

#[test]
fn ai_sdk_and_langchain_views_read_back_as_the_same_conversation() {
    let project = imported();
    let (ctxkit, _) = view(&project, "ctxkit");
    let expected = from_format(&ctxkit, WireFormat::Ctxkit).unwrap();
    for (name, format) in [
        ("ai-sdk", WireFormat::AiSdk),
        ("langchain", WireFormat::LangChain),
    ] {
        let (body, note) = view(&project, name);
        assert!(note.starts_with("view of cx: "), "{note}");
        let messages = body
            .as_array()
            .unwrap_or_else(|| panic!("{name}: an array: {body}"));
        assert!(!messages.is_empty());
        let read = from_format(&body, format).unwrap();
        let roles =
            |list: &[ctxkit::core::Message]| list.iter().map(|m| m.role).collect::<Vec<_>>();
        let calls = |list: &[ctxkit::core::Message]| {
            list.iter()
                .flat_map(|m| {
                    m.tool_calls
                        .iter()
                        .map(|call| (call.id.clone(), call.name.clone()))
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(roles(&read), roles(&expected), "{name}");
        assert_eq!(calls(&read), calls(&expected), "{name}");
        let texts = |list: &[ctxkit::core::Message]| {
            list.iter()
                .map(|m| m.text_content().into_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(texts(&read), texts(&expected), "{name}");
    }
}
