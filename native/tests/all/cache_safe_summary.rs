//! The cache-safe summary request end to end (`Policy::summary_mode = CacheSafe`), against a
//! loopback server speaking both APIs: the summary call sends the session's own request (the
//! turn's system prompt, then the conversation the previous turn sent, byte for byte) and one
//! instruction message last; Anthropic's carries cache breakpoints; the answer becomes an LLM
//! checkpoint as with the fresh prompt. The fresh mode still sends `system` + `prompt`.

use crate::common::provider_compaction;
use crate::common::{anthropic_answer, openai_answer, until_compaction, LoopbackServer, Reply};
use ctxkit::core::compaction::{SummaryMethod, SummaryMode, SUMMARIZER_SYSTEM};
use ctxkit::llm::{Api, SummarizerConfig};
use ctxkit::{Engine, EngineConfig, TurnResult};
use serde_json::Value;

const SUMMARY: &str = "<summary>\n## Goal\nRead the files.\n## Progress\nRead src/file0.rs onwards.\n## Key Decisions\nNone.\n## Next Steps\nKeep reading.\n## Critical Context\nsrc/file0.rs\n</summary>";

/// The provider-compaction tests' config ([`provider_compaction::config`]) with `mode`, and
/// OpenAI's base URL under `/v1`.
fn config(api: Api, server: &LoopbackServer, mode: SummaryMode) -> EngineConfig {
    let mut config = provider_compaction::config(server, api);
    if let (Api::OpenAiChat, SummarizerConfig::Llm(endpoint)) = (api, &mut config.summarizer) {
        endpoint.base_url = format!("{}/v1", server.base_url);
    }
    config.policy.summary_mode = mode;
    // No restore block: with one, the cut covers more of this 6k window and the answer plus the
    // pinned facts it leaves out no longer fits the 300-token cap; this test is about the
    // request's shape (the restore block's own tests: restore_block.rs).
    config.policy.restore = None;
    config
}

fn run(api: Api, mode: SummaryMode) -> (TurnResult, TurnResult, Value) {
    let server = LoopbackServer::start(move |_, _| {
        Reply::ok(match api {
            Api::OpenAiChat => openai_answer(SUMMARY),
            _ => anthropic_answer(SUMMARY),
        })
    });
    let dir = tempfile::tempdir().unwrap();
    let mut engine = Engine::open(
        dir.path().join("ctxkit.db"),
        dir.path(),
        config(api, &server, mode),
    )
    .unwrap();
    engine.create_session("s").unwrap();
    let (before, compacted) = until_compaction(&mut engine);
    assert_eq!(
        compacted.compacted,
        Some(SummaryMethod::Llm),
        "{:?}",
        compacted.events
    );
    let received = server.received();
    assert_eq!(received.len(), 1, "one summary call");
    let body = serde_json::from_str(&received[0].body).unwrap();
    (before, compacted, body)
}

/// The previous turn's OpenAI messages without its trailing nudges.
fn sent_before(before: &TurnResult) -> Vec<Value> {
    let messages = before.to_openai();
    let all = messages.as_array().unwrap();
    all[..all.len() - before.stats.nudges.len()].to_vec()
}

#[test]
fn an_openai_cache_safe_summary_call_resends_the_previous_request() {
    let (before, _, body) = run(Api::OpenAiChat, SummaryMode::CacheSafe);
    let messages = body["messages"].as_array().unwrap();
    let previous = sent_before(&before);
    assert!(messages.len() > previous.len(), "the history, then more");
    assert_eq!(
        messages[..previous.len()],
        previous[..],
        "the previous request is the prefix"
    );
    assert_ne!(
        messages[0]["content"], SUMMARIZER_SYSTEM,
        "the agent's own system prompt"
    );
    let instruction = messages.last().unwrap();
    assert_eq!(instruction["role"], "user");
    let text = instruction["content"].as_str().unwrap();
    assert!(text.starts_with("[Context compaction]"), "{text}");
    assert!(
        text.contains("## Goal") && text.contains("<summary-"),
        "{text}"
    );
    assert_eq!(body["model"], "agent-model");
}

#[test]
fn an_anthropic_cache_safe_summary_call_carries_breakpoints() {
    let (_, _, body) = run(Api::AnthropicMessages, SummaryMode::CacheSafe);
    assert_eq!(
        body["system"].as_array().unwrap().last().unwrap()["cache_control"]["type"],
        "ephemeral"
    );
    let messages = body["messages"].as_array().unwrap();
    let marked = messages
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|block| block.get("cache_control").is_some())
        .count();
    assert!(
        (1..=3).contains(&marked),
        "{marked} markers in the messages"
    );
    let last = messages.last().unwrap();
    let text = match &last["content"] {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks.last().unwrap()["text"].as_str().unwrap().to_owned(),
        other => panic!("{other}"),
    };
    assert!(text.starts_with("[Context compaction]") || text.contains("[Context compaction]"));
    assert!(
        last["content"].as_array().is_none_or(|blocks| blocks
            .last()
            .unwrap()
            .get("cache_control")
            .is_none()),
        "the instruction itself is not cached"
    );
}

#[test]
fn the_fresh_mode_sends_the_fenced_transcript() {
    let (_, _, body) = run(Api::OpenAiChat, SummaryMode::Fresh);
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[0]["content"], SUMMARIZER_SYSTEM);
    assert!(messages[1]["content"]
        .as_str()
        .unwrap()
        .contains("<transcript"));
}
