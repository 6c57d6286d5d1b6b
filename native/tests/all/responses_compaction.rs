//! OpenAI Responses compaction as a summarizer (`openai-responses-compaction`), end to end
//! against a loopback server that speaks the documented shapes, on SQLite and PostgreSQL: the
//! summary call is the turn's own Responses request with `{"type": "compaction_trigger"}` as
//! the last input item and `store: false`; the opaque `compaction` item is stored beside the
//! checkpoint byte for byte and sent first in Responses views only; the checkpoint's plaintext
//! summary, which every other view reads, is the extractive one (the same the fallback makes);
//! a refusal, a malformed answer or an HTTP error falls back with the reason and keeps no
//! item. No test reaches a real provider.

use std::path::Path;

use crate::common::backends::Backend;
use crate::common::provider_compaction;
use crate::common::steady_dir::SteadyDir;
use crate::common::{openai_answer, turn_messages, until_compaction, LoopbackServer, Reply};
use ctxkit::core::compaction::{responses_compaction_block, SummaryMethod, SUMMARY_HEADER};
use ctxkit::core::wire::{validate, WireFormat};
use ctxkit::llm::Api;
use ctxkit::{Engine, Event, TurnResult, WarningKind};
use serde_json::{json, Value};

/// The item as the server sends it: its field order and spacing are its own.
const ITEM: &str =
    r#"{"type":"compaction",  "id":"cmp_0123","encrypted_content":"gAAAAABpZ0xvcGFxdWUtc3RhdGU="}"#;
/// A piece of the item no plaintext view may carry.
const OPAQUE: &str = "gAAAAABpZ0xvcGFxdWUtc3RhdGU=";

/// A Responses answer whose `output` holds `items` (JSON texts, written byte for byte).
fn answer(items: &[&str]) -> String {
    format!(
        r#"{{"id":"resp_1","object":"response","status":"completed","output":[{}],"usage":{{"input_tokens":1500,"output_tokens":200,"total_tokens":1700}}}}"#,
        items.join(",")
    )
}

fn open(backend: &Backend, dir: &Path, server: &LoopbackServer) -> Engine {
    provider_compaction::open(backend, dir, server, Api::ResponsesCompaction)
}

/// Checks the Responses view of `view` starts with the stored item, and every other format
/// carries the plaintext summary and nothing of the item; each passes its validator.
fn check_views(view: &TurnResult, what: &str) {
    let item: Value = serde_json::from_str(ITEM).unwrap();
    assert_eq!(view.responses_compaction_item(), Some(&item), "{what}");
    assert_eq!(view.compaction_block(), None, "{what}: no Anthropic block");
    for responses in [
        view.render(WireFormat::Responses).unwrap(),
        view.render_cached(WireFormat::Responses).unwrap(),
    ] {
        assert_eq!(
            responses["input"][0], item,
            "{what}: the item first, as stored"
        );
        let text = responses.to_string();
        assert!(
            !text.contains(SUMMARY_HEADER),
            "{what}: no plaintext summary"
        );
        let violations = validate(&responses, WireFormat::Responses).unwrap();
        assert!(violations.is_empty(), "{what}: {violations:?}");
    }
    for format in [
        WireFormat::Anthropic,
        WireFormat::Openai,
        WireFormat::Gemini,
        WireFormat::AiSdk,
        WireFormat::LangChain,
        WireFormat::Ctxkit,
    ] {
        let rendered = view.render(format).unwrap();
        let text = rendered.to_string();
        assert!(
            !text.contains(OPAQUE) && !text.contains("cmp_0123"),
            "{what}: {format:?} carries nothing of the item: {text}"
        );
        assert!(
            text.contains("Context checkpoint"),
            "{what}: {format:?} carries the plaintext summary"
        );
        // The four provider formats have validators; AI SDK, LangChain and ctxkit's own do not.
        let violations = validate(&rendered, format).unwrap_or_default();
        assert!(violations.is_empty(), "{what}: {format:?}: {violations:?}");
    }
}

#[test]
fn the_compaction_item_is_stored_and_sent_first_in_responses_views_only() {
    for backend in Backend::all("the_compaction_item_is_stored_and_sent_first") {
        let what = backend.name();
        let server = LoopbackServer::start(|_, _| Reply::ok(answer(&[ITEM])));
        let dir = SteadyDir::new("ctxkit-responses-compaction");
        let mut engine = open(&backend, dir.path(), &server);
        engine.create_session("s").unwrap();
        let (before, compacted) = until_compaction(&mut engine);
        assert_eq!(
            compacted.compacted,
            Some(SummaryMethod::Extractive),
            "{what}: the plaintext is the extractive summary: {:?}",
            compacted.events
        );
        let warned = compacted
            .events
            .iter()
            .any(|event| matches!(event, Event::Warning { .. }));
        assert!(!warned, "{what}: no fallback: {:?}", compacted.events);

        // The request: the turn's own items, the trigger last, nothing stored server-side.
        let received = server.received();
        assert_eq!(received.len(), 1, "{what}: one summary call");
        let request = &received[0];
        assert_eq!(request.path, "/responses");
        assert_eq!(request.header("authorization"), Some("Bearer test-key"));
        let body: Value = serde_json::from_str(&request.body).unwrap();
        assert_eq!(body["store"], json!(false), "{what}");
        assert_eq!(body["model"], json!("agent-model"), "{what}");
        assert_eq!(
            body["instructions"],
            json!(before.system_prompt()),
            "{what}"
        );
        let input = body["input"].as_array().unwrap();
        assert_eq!(
            input.last(),
            Some(&json!({"type": "compaction_trigger"})),
            "{what}: the trigger last"
        );
        assert_eq!(
            input
                .iter()
                .filter(|item| item["type"] == "compaction_trigger")
                .count(),
            1,
            "{what}"
        );
        let previous = before.render(WireFormat::Responses).unwrap();
        let previous = previous["input"].as_array().unwrap();
        assert!(
            input.len() > 2,
            "{what}: the conversation, not a fresh prompt"
        );
        assert_eq!(input[0], previous[0], "{what}: the turn's own items first");
        assert_eq!(input[1], previous[1], "{what}: the turn's own items first");
        assert!(
            !request.body.contains("[Context compaction]"),
            "{what}: ctxkit's summary instruction is not sent: {}",
            request.body
        );

        // Usage is reported.
        let usage = compacted.events.iter().find_map(|event| match event {
            Event::SummarizerUsage {
                input_tokens,
                output_tokens,
                ..
            } => Some((*input_tokens, *output_tokens)),
            _ => None,
        });
        assert_eq!(usage, Some((1_500, 200)), "{what}");

        // The checkpoint: the extractive summary, the item byte for byte, as a fresh handle on
        // the database reads it.
        let stored = backend.open().export_session("s").unwrap();
        let checkpoint = stored.latest_checkpoint().unwrap();
        assert_eq!(checkpoint.method, SummaryMethod::Extractive);
        assert!(!checkpoint.summary.contains(OPAQUE), "{what}");
        assert_eq!(
            checkpoint.compaction_block,
            Some(responses_compaction_block(ITEM)),
            "{what}"
        );
        assert_eq!(
            ctxkit::core::compaction::responses_compaction_item(checkpoint),
            Some(ITEM),
            "{what}: byte for byte"
        );

        check_views(&compacted, &format!("{what}, the compacting turn"));
        engine.record("s", turn_messages(1_000)).unwrap();
        let next = engine.prepare_turn("s").unwrap();
        assert_eq!(next.compacted, None, "{what}");
        check_views(&next, &format!("{what}, the next turn"));
        let mut reopened = open(&backend, dir.path(), &server);
        let preview = reopened.preview_turn("s").unwrap();
        check_views(&preview, &format!("{what}, a new engine"));
        assert_eq!(server.received().len(), 1, "{what}: no other call");

        // The next compaction sends the conversation as the Responses views sent it: the item
        // first, where the agent's requests had it.
        let mut turn = 1_001;
        loop {
            engine.record("s", turn_messages(turn)).unwrap();
            if engine.prepare_turn("s").unwrap().compacted.is_some() {
                break;
            }
            turn += 1;
            assert!(turn < 1_200, "{what}: no second compaction");
        }
        let received = server.received();
        assert_eq!(received.len(), 2, "{what}");
        let body: Value = serde_json::from_str(&received[1].body).unwrap();
        assert_eq!(
            body["input"][0],
            serde_json::from_str::<Value>(ITEM).unwrap(),
            "{what}"
        );
        assert!(!received[1].body.contains(SUMMARY_HEADER), "{what}");
    }
}

/// Runs a session to its first compaction with the server answering `reply`; returns the
/// compacting turn and the stored checkpoint's summary and block.
fn run_with(backend: &Backend, reply: Reply) -> (TurnResult, String, Option<String>) {
    let server = LoopbackServer::start(move |_, _| reply.clone());
    let dir = SteadyDir::new("ctxkit-responses-compaction");
    let mut engine = open(backend, dir.path(), &server);
    engine.create_session("s").unwrap();
    let (_, compacted) = until_compaction(&mut engine);
    let stored = backend.open().export_session("s").unwrap();
    let checkpoint = stored.latest_checkpoint().unwrap();
    (
        compacted,
        checkpoint.summary.clone(),
        checkpoint.compaction_block.clone(),
    )
}

#[test]
fn a_refused_malformed_or_failed_compaction_falls_back_with_the_reason() {
    let refusal = r#"{"type":"message","role":"assistant","content":[{"type":"refusal","refusal":"I can't help with that."}]}"#;
    let message = r#"{"type":"message","role":"assistant","content":[{"type":"output_text","text":"a summary","annotations":[]}]}"#;
    let no_content = r#"{"type":"compaction","id":"cmp_1"}"#;
    let cases = [
        (
            Reply::ok(answer(&[refusal])),
            "refused: I can't help with that.",
        ),
        (
            Reply::ok(answer(&[message])),
            "an output item of type \"message\" where a compaction item was expected",
        ),
        (
            Reply::ok(answer(&[no_content])),
            "the compaction item has no \"encrypted_content\"",
        ),
        (
            Reply::ok(answer(&[ITEM, ITEM])),
            "2 output items where one compaction item was expected",
        ),
        (
            Reply::status(500, r#"{"error":{"type":"server_error"}}"#),
            "HTTP 500",
        ),
    ];
    for backend in Backend::all("a_refused_malformed_or_failed_responses_compaction") {
        let (_, kept_summary, _) = run_with(&backend.fresh(), Reply::ok(answer(&[ITEM])));
        for (reply, reason) in cases.clone() {
            let what = format!("{}: {reason}", backend.name());
            let (compacted, summary, block) = run_with(&backend.fresh(), reply);
            assert_eq!(
                compacted.compacted,
                Some(SummaryMethod::Extractive),
                "{what}"
            );
            let warned = compacted.events.iter().any(|event| {
                matches!(event, Event::Warning { kind, message, .. }
                    if *kind == WarningKind::SummarizerFailed && message.contains(reason))
            });
            assert!(warned, "{what}: {:?}", compacted.events);
            assert_eq!(block, None, "{what}: no item kept");
            assert_eq!(compacted.responses_compaction_item(), None, "{what}");
            assert_eq!(
                summary, kept_summary,
                "{what}: the plaintext is the summary the item's checkpoint has"
            );
            let responses = compacted.render(WireFormat::Responses).unwrap();
            assert!(
                !responses.to_string().contains("\"compaction\""),
                "{what}: {responses}"
            );
            assert!(
                responses.to_string().contains("Context checkpoint"),
                "{what}"
            );
        }
    }
}

#[test]
fn the_cli_replays_with_responses_compaction_and_views_the_item_first() {
    let server = LoopbackServer::start(|request, _| {
        if request.is_extraction() {
            Reply::ok(openai_answer("[]"))
        } else {
            Reply::ok(answer(&[ITEM]))
        }
    });
    let dir = SteadyDir::new("ctxkit-responses-compaction");
    let run = |args: &[&str]| {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_ctxkit"))
            .args(args)
            .current_dir(dir.path())
            .env("NO_COLOR", "1")
            .env("OPENAI_BASE_URL", &server.base_url)
            .env("OPENAI_API_KEY", "test-key")
            .env("CTXKIT_MODEL", "agent-model")
            .env_remove("CTXKIT_DATABASE_URL")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(output.status.success(), "{args:?}: {stderr}");
        String::from_utf8(output.stdout).unwrap()
    };
    run(&[
        "replay",
        "--window",
        "3000",
        "--summarizer",
        "openai-responses-compaction",
    ]);
    let received = server.received();
    let summaries: Vec<_> = received
        .iter()
        .filter(|request| !request.is_extraction())
        .collect();
    assert!(!summaries.is_empty(), "{received:?}");
    for request in &summaries {
        assert_eq!(request.path, "/responses");
        assert!(request.body.contains(r#"{"type":"compaction_trigger"}]"#));
    }
    for request in received.iter().filter(|request| request.is_extraction()) {
        assert_eq!(request.path, "/chat/completions", "extraction is plain");
    }
    let view: Value =
        serde_json::from_str(&run(&["view", "replay-demo", "--format", "responses"])).unwrap();
    let item: Value = serde_json::from_str(ITEM).unwrap();
    assert_eq!(view["input"][0], item, "{view}");
    for format in ["anthropic", "openai"] {
        let other = run(&["view", "replay-demo", "--format", format]);
        assert!(!other.contains(OPAQUE), "{format}: {other}");
    }
}
