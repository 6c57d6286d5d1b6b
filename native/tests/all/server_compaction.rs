//! Anthropic's server compaction as a summarizer (`anthropic-compaction`), end to end against a
//! loopback server that speaks the documented shapes, on SQLite and PostgreSQL: the summary
//! call is the turn's own request with `compaction: {type: "summarize"}` and the beta header
//! (never `context_management`); the block's text becomes the checkpoint's summary, held to the
//! pinned facts; the signed block is stored beside the checkpoint byte for byte and sent first
//! in Anthropic views only; usage iterations are summed; a refusal, a malformed block or an
//! HTTP error falls back to the extractive summary with the reason. No test reaches a real
//! provider.

use crate::common;

use std::path::Path;

use crate::common::backends::Backend;
use crate::common::provider_compaction;
use crate::common::steady_dir::SteadyDir;
use crate::common::{
    anthropic_compaction_answer, turn_messages, until_compaction, LoopbackServer, Reply,
};
use ctxkit::core::compaction::{with_pinned, SummaryMethod};
use ctxkit::core::wire::{validate, WireFormat};
use ctxkit::llm::{Api, COMPACTION_BETA};
use ctxkit::{Engine, Event, TurnResult, WarningKind};
use serde_json::Value;

/// The server's summary: no path of the log in it, so the pinned facts are appended.
const TEXT: &str = "## Goal\nRead the files one by one.\n## Next Steps\nKeep reading.";
/// The block as the server sends it: its field order and spacing are its own.
const BLOCK: &str = r###"{"type":"compaction",  "content":"## Goal\nRead the files one by one.\n## Next Steps\nKeep reading.","signature":"EqQBCkgIARABGAIiQL+c0mp/sig=="}"###;

fn open(backend: &Backend, dir: &Path, server: &LoopbackServer) -> Engine {
    provider_compaction::open(backend, dir, server, Api::AnthropicCompaction)
}

/// The text of a request's `system` (a string, or text blocks with cache markers).
fn system_text(body: &Value) -> String {
    match &body["system"] {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|block| block["text"].as_str())
            .collect(),
        other => panic!("no system: {other}"),
    }
}

/// Checks the Anthropic view of `view` starts with the stored block, and every other format
/// carries the plaintext summary and nothing of the block; each passes its validator.
fn check_views(view: &TurnResult, what: &str) {
    let block: Value = serde_json::from_str(BLOCK).unwrap();
    assert_eq!(view.compaction_block(), Some(&block), "{what}");
    for anthropic in [
        view.render(WireFormat::Anthropic).unwrap(),
        view.render_cached(WireFormat::Anthropic).unwrap(),
    ] {
        let first = &anthropic["messages"][0];
        assert_eq!(first["role"], "user", "{what}: {first}");
        let mut sent = first["content"][0].clone();
        if let Some(fields) = sent.as_object_mut() {
            fields.remove("cache_control");
        }
        assert_eq!(sent, block, "{what}: the block first, as stored");
        let rest = first["content"][1]["text"].as_str().unwrap_or_default();
        // What the checkpoint adds: the log's Goal (the user's words; the block holds only
        // the server's account), none of the block's own text again.
        assert!(
            rest.starts_with("## Goal\n- step 0: look at src/file0.rs")
                && !rest.contains("Read the files one by one."),
            "{what}: what the checkpoint adds to the block, in a text block after it: {rest:?}"
        );
        let violations = validate(&anthropic, WireFormat::Anthropic).unwrap();
        assert!(violations.is_empty(), "{what}: {violations:?}");
    }
    for format in [
        WireFormat::Openai,
        WireFormat::Responses,
        WireFormat::Gemini,
        WireFormat::AiSdk,
        WireFormat::LangChain,
        WireFormat::Ctxkit,
    ] {
        let rendered = view.render(format).unwrap();
        let text = rendered.to_string();
        assert!(
            !text.contains("EqQBCkgIARABGAIiQL") && !text.contains("\"compaction\""),
            "{what}: {format:?} carries nothing of the block: {text}"
        );
        assert!(
            text.contains("Read the files one by one."),
            "{what}: {format:?} carries the plaintext summary"
        );
        // The four provider formats have validators; AI SDK, LangChain and ctxkit's own do not.
        let violations = validate(&rendered, format).unwrap_or_default();
        assert!(violations.is_empty(), "{what}: {format:?}: {violations:?}");
    }
}

#[test]
fn the_compaction_block_is_stored_and_sent_first_in_anthropic_views_only() {
    for backend in Backend::all("the_compaction_block_is_stored_and_sent_first") {
        let what = backend.name();
        let server = LoopbackServer::start(|_, _| {
            Reply::ok(anthropic_compaction_answer(
                BLOCK,
                &[(1_200, 300), (800, 90)],
            ))
        });
        let dir = SteadyDir::new("ctxkit-server-compaction");
        let mut engine = open(&backend, dir.path(), &server);
        engine.create_session("s").unwrap();
        let (before, compacted) = until_compaction(&mut engine);
        assert_eq!(
            compacted.compacted,
            Some(SummaryMethod::Llm),
            "{what}: {:?}",
            compacted.events
        );

        // The request: the turn's own, with the compaction parameter and the beta header.
        let received = server.received();
        assert_eq!(received.len(), 1, "{what}: one summary call");
        let request = &received[0];
        assert_eq!(request.path, "/v1/messages");
        assert_eq!(request.header("anthropic-beta"), Some(COMPACTION_BETA));
        let body: Value = serde_json::from_str(&request.body).unwrap();
        assert_eq!(body["compaction"], serde_json::json!({"type": "summarize"}));
        assert!(body.get("context_management").is_none(), "{what}: {body}");
        assert_eq!(system_text(&body), before.system_prompt(), "{what}");
        let sent = body["messages"].as_array().unwrap();
        let previous = before.render(WireFormat::Anthropic).unwrap();
        let previous = previous["messages"].as_array().unwrap();
        assert!(
            sent.len() > 1,
            "{what}: the conversation, not a fresh prompt"
        );
        assert_eq!(
            sent[0]["content"], previous[0]["content"],
            "{what}: the turn's own conversation first"
        );

        // Usage: the iterations summed, not the totals.
        let usage = compacted.events.iter().find_map(|event| match event {
            Event::SummarizerUsage {
                input_tokens,
                output_tokens,
                iterations,
                ..
            } => Some((*input_tokens, *output_tokens, *iterations)),
            _ => None,
        });
        assert_eq!(usage, Some((2_000, 390, 2)), "{what}");

        // The checkpoint: the block's text held to the pinned facts, the block byte for byte,
        // as a fresh handle on the database reads it.
        let stored = backend.open().export_session("s").unwrap();
        let checkpoint = stored.latest_checkpoint().unwrap();
        assert_eq!(checkpoint.method, SummaryMethod::Llm);
        assert!(!checkpoint.pinned.is_empty(), "{what}: facts to hold it to");
        // The log's Goal first (the user's words), then the block's text as the server's own
        // account, held to the pinned facts.
        let goal = ctxkit::core::compaction::goal_section(&checkpoint.summary).unwrap_or_default();
        assert!(
            goal.starts_with("- step 0: look at src/file0.rs"),
            "{what}: {}",
            checkpoint.summary
        );
        assert_eq!(
            checkpoint.summary,
            with_pinned(
                &ctxkit::core::compaction::owned_summary(goal, TEXT),
                &checkpoint.pinned
            )
        );
        assert_eq!(
            checkpoint.compaction_block.as_deref(),
            Some(BLOCK),
            "{what}"
        );

        check_views(&compacted, &format!("{what}, the compacting turn"));
        // The next turn (from the cached session) and a new engine (from the database).
        engine.record("s", turn_messages(1_000)).unwrap();
        let next = engine.prepare_turn("s").unwrap();
        assert_eq!(next.compacted, None, "{what}");
        check_views(&next, &format!("{what}, the next turn"));
        let mut reopened = open(&backend, dir.path(), &server);
        let preview = reopened.preview_turn("s").unwrap();
        check_views(&preview, &format!("{what}, a new engine"));
        assert_eq!(server.received().len(), 1, "{what}: no other call");

        // The next compaction sends the conversation as the Anthropic views sent it: the
        // block first, where the agent's requests had it, not the summary's text.
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
        let mut first = body["messages"][0]["content"][0].clone();
        if let Some(fields) = first.as_object_mut() {
            fields.remove("cache_control");
        }
        assert_eq!(
            first,
            serde_json::from_str::<Value>(BLOCK).unwrap(),
            "{what}"
        );
        let violations = validate(&body, WireFormat::Anthropic).unwrap();
        assert!(violations.is_empty(), "{what}: {violations:?}");
    }
}

/// Runs a session to its first compaction with the server answering `reply`; returns the
/// compacting turn and the stored checkpoint's block.
fn fallback_with(backend: &Backend, reply: Reply) -> (TurnResult, Option<String>) {
    let server = LoopbackServer::start(move |_, _| reply.clone());
    let dir = SteadyDir::new("ctxkit-server-compaction");
    let mut engine = open(backend, dir.path(), &server);
    engine.create_session("s").unwrap();
    let (_, compacted) = until_compaction(&mut engine);
    let stored = backend.open().export_session("s").unwrap();
    let block = stored.latest_checkpoint().unwrap().compaction_block.clone();
    (compacted, block)
}

#[test]
fn a_refused_malformed_or_failed_compaction_falls_back_with_the_reason() {
    let refusal = r#"{"type":"message","role":"assistant","content":[],"stop_reason":"refusal","usage":{"input_tokens":5,"output_tokens":0}}"#;
    let text_block = anthropic_compaction_answer(r#"{"type":"text","text":"a summary"}"#, &[]);
    let no_text = anthropic_compaction_answer(r#"{"type":"compaction","signature":"c2ln"}"#, &[]);
    let cases = [
        (Reply::ok(refusal), "refused", WarningKind::SummarizerFailed),
        (
            Reply::ok(text_block),
            "a content block of type \"text\" where a compaction block was expected",
            WarningKind::SummarizerFailed,
        ),
        (
            Reply::ok(no_text),
            "the compaction block has no text in \"content\"",
            WarningKind::SummarizerFailed,
        ),
        (
            Reply::status(500, r#"{"type":"error","error":{"type":"api_error"}}"#),
            "HTTP 500",
            WarningKind::SummarizerFailed,
        ),
    ];
    for backend in Backend::all("a_refused_malformed_or_failed_compaction_falls_back") {
        for (reply, reason, kind) in cases.clone() {
            let what = format!("{}: {reason}", backend.name());
            let backend = backend.fresh();
            let (compacted, block) = fallback_with(&backend, reply);
            assert_eq!(
                compacted.compacted,
                Some(SummaryMethod::Extractive),
                "{what}"
            );
            let warned = compacted.events.iter().any(|event| {
                matches!(event, Event::Warning { kind: k, message, .. }
                    if *k == kind && message.contains(reason))
            });
            assert!(warned, "{what}: {:?}", compacted.events);
            assert_eq!(block, None, "{what}: no block kept");
            assert_eq!(compacted.compaction_block(), None, "{what}");
            let anthropic = compacted.render(WireFormat::Anthropic).unwrap();
            assert!(
                !anthropic.to_string().contains("\"compaction\""),
                "{what}: {anthropic}"
            );
        }
    }
}

#[test]
fn the_cli_replays_with_anthropic_compaction_and_views_the_block_first() {
    let server = LoopbackServer::start(|request, _| {
        if request.is_extraction() {
            Reply::ok(common::anthropic_answer("[]"))
        } else {
            Reply::ok(anthropic_compaction_answer(BLOCK, &[(10, 2)]))
        }
    });
    let dir = SteadyDir::new("ctxkit-server-compaction");
    let run = |args: &[&str]| {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_ctxkit"))
            .args(args)
            .current_dir(dir.path())
            .env("NO_COLOR", "1")
            .env("ANTHROPIC_BASE_URL", &server.base_url)
            .env("ANTHROPIC_API_KEY", "test-key")
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
        "anthropic-compaction",
    ]);
    let received = server.received();
    let summaries: Vec<_> = received
        .iter()
        .filter(|request| !request.is_extraction())
        .collect();
    assert!(!summaries.is_empty(), "{received:?}");
    for request in &summaries {
        assert_eq!(request.header("anthropic-beta"), Some(COMPACTION_BETA));
        assert!(request
            .body
            .contains(r#""compaction":{"type":"summarize"}"#));
    }
    for request in received.iter().filter(|request| request.is_extraction()) {
        assert_eq!(
            request.header("anthropic-beta"),
            None,
            "extraction is plain"
        );
    }
    let view: Value =
        serde_json::from_str(&run(&["view", "replay-demo", "--format", "anthropic"])).unwrap();
    let block: Value = serde_json::from_str(BLOCK).unwrap();
    assert_eq!(view["messages"][0]["content"][0], block, "{view}");
    let openai = run(&["view", "replay-demo", "--format", "openai"]);
    assert!(!openai.contains("EqQBCkgIARABGAIiQL"), "{openai}");
}
