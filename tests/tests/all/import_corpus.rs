//! The real transcripts of the corpus go through the converters and the importer.
//!
//! tau-bench (200 GPT-4o airline dialogs, Chat Completions format) must read with `from_openai`
//! and write back to the very same JSON. The Claude Code session 4d5611e5 (marot/spotter) must
//! import with the counts measured independently from the raw file (python, one pass over the
//! lines), with every tool call followed right away by its result, and must survive a trip
//! through both providers' formats.

use std::collections::BTreeMap;

use ctxkit_core::import::import_claude_code;
use ctxkit_core::wire::{from_anthropic, from_openai, to_anthropic, to_openai};
use ctxkit_core::{validate_anthropic, Content, Message, Part, Role};
use serde_json::Value;

fn read_corpus(relative: &str) -> String {
    let path = ctxkit_tests::corpus_dir().join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

fn count_roles(messages: &[Message]) -> BTreeMap<&'static str, usize> {
    let mut counts = BTreeMap::new();
    for message in messages {
        *counts.entry(message.role.as_str()).or_insert(0) += 1;
    }
    counts
}

/// Each assistant message with calls is followed by exactly one result per call, in call order.
fn assert_calls_answered_right_after(messages: &[Message]) {
    for (index, message) in messages.iter().enumerate() {
        if message.tool_calls.is_empty() {
            continue;
        }
        let results = &messages[index + 1..index + 1 + message.tool_calls.len()];
        for (call, result) in message.tool_calls.iter().zip(results) {
            assert_eq!(
                result.role,
                Role::Tool,
                "message {index}: call {} not answered",
                call.id
            );
            assert_eq!(
                result.tool_call_id.as_deref(),
                Some(call.id.as_str()),
                "message {index}"
            );
        }
        if let Some(next) = messages.get(index + 1 + message.tool_calls.len()) {
            assert_ne!(
                next.role,
                Role::Tool,
                "message {index}: a result beyond its calls"
            );
        }
    }
}

#[test]
fn tau_bench_reads_and_writes_back_exactly() {
    let corpus: Value =
        serde_json::from_str(&read_corpus("tau-bench/gpt-4o-airline.json")).unwrap();
    let trajectories = corpus.as_array().unwrap();
    assert_eq!(trajectories.len(), 200);

    let mut roles = BTreeMap::new();
    let (mut messages_total, mut tool_calls, mut tool_results) = (0, 0, 0);
    for (index, trajectory) in trajectories.iter().enumerate() {
        let traj = &trajectory["traj"];
        let messages =
            from_openai(traj).unwrap_or_else(|error| panic!("trajectory {index}: {error}"));
        for (role, count) in count_roles(&messages) {
            *roles.entry(role).or_insert(0) += count;
        }
        messages_total += messages.len();
        tool_calls += messages.iter().map(|m| m.tool_calls.len()).sum::<usize>();
        tool_results += messages.iter().filter(|m| m.tool_call_id.is_some()).count();
        assert_calls_answered_right_after(&messages);
        // No normalization applies to this file: the JSON comes back identical.
        assert_eq!(&to_openai(&messages), traj, "trajectory {index}");
    }
    assert_eq!(messages_total, 5308);
    assert_eq!(
        roles,
        BTreeMap::from([
            ("assistant", 2454),
            ("system", 200),
            ("tool", 1164),
            ("user", 1490)
        ])
    );
    assert_eq!(tool_calls, 1164);
    assert_eq!(tool_results, 1164);
}

const CLAUDE_CODE_SESSION: &str =
    "claude-code_marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl";

/// Text blocks as the transcript had them: plain text is one block, parts count their own.
fn text_blocks(content: &Content) -> usize {
    match content {
        Content::Text(text) => usize::from(!text.is_empty()),
        Content::Parts(parts) => parts
            .iter()
            .filter(|p| matches!(p, Part::Text { .. }))
            .count(),
    }
}

fn thinking_blocks(content: &Content) -> usize {
    match content {
        Content::Text(_) => 0,
        Content::Parts(parts) => parts
            .iter()
            .filter(|p| matches!(p, Part::Thinking { .. }))
            .count(),
    }
}

#[test]
fn claude_code_session_imports_with_the_measured_counts() {
    let session = import_claude_code(&read_corpus(CLAUDE_CODE_SESSION)).unwrap();
    let messages = &session.messages;

    // 139 API responses (distinct message.id over 254 assistant lines), 150 tool_use and 150
    // tool_result blocks, 4 user lines with string content, no user text blocks.
    assert_eq!(
        count_roles(messages),
        BTreeMap::from([("assistant", 139), ("tool", 150), ("user", 4)])
    );
    assert_eq!(
        messages.iter().map(|m| m.tool_calls.len()).sum::<usize>(),
        150
    );
    assert_eq!(
        messages.iter().filter(|m| m.tool_call_id.is_some()).count(),
        150
    );
    assert_eq!(messages.iter().filter(|m| m.is_error).count(), 5);
    assert_eq!(
        messages
            .iter()
            .map(|m| thinking_blocks(&m.content))
            .sum::<usize>(),
        14
    );
    let assistant_text: usize = messages
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .map(|m| text_blocks(&m.content))
        .sum();
    assert_eq!(assistant_text, 90);
    assert_calls_answered_right_after(messages);

    assert_eq!(session.api_calls.len(), 139);
    let first = &session.api_calls[0];
    assert_eq!(first.message_id, "msg_01PdWvcjJ6E9BgscDveYt9YV");
    assert_eq!(first.model, "claude-opus-4-6");
    assert_eq!(first.prompt_tokens, Some(3 + 15005 + 11442));
    assert_eq!(first.line, 8);
    for call in &session.api_calls {
        assert_eq!(messages[call.message_index].role, Role::Assistant);
        assert!(call.prompt_tokens.is_some(), "{}", call.message_id);
    }

    assert_eq!(session.compactions.len(), 1);
    let compaction = &session.compactions[0];
    assert_eq!(compaction.trigger.as_deref(), Some("auto"));
    assert_eq!(compaction.pre_tokens, Some(170251));
    assert_eq!(
        compaction.summary_message_index,
        Some(compaction.message_index)
    );
    let summary = &messages[compaction.message_index];
    assert_eq!(summary.role, Role::User);
    assert!(summary
        .text_content()
        .starts_with("This session is being continued from a previous conversation"));
    // The last response before the boundary was the largest prompt, just under preTokens.
    let before: Vec<_> = session
        .api_calls
        .iter()
        .filter(|c| c.message_index < compaction.message_index)
        .collect();
    let after: Vec<_> = session
        .api_calls
        .iter()
        .filter(|c| c.message_index > compaction.message_index)
        .collect();
    assert!(before.last().and_then(|c| c.prompt_tokens).unwrap() > 160_000);
    assert!(after.first().and_then(|c| c.prompt_tokens).unwrap() < 60_000);
}

#[test]
fn claude_code_session_survives_both_wire_formats() {
    let session = import_claude_code(&read_corpus(CLAUDE_CODE_SESSION)).unwrap();
    let messages = &session.messages;

    // Anthropic can hold everything the importer produces: the round trip is exact, except
    // for whitespace-only text blocks beside tool calls (Claude writes "\n\n" before a call;
    // Anthropic rejects blank text blocks in a request, so the writer leaves them out).
    let request = to_anthropic(messages).unwrap();
    assert!(request.get("system").is_none());
    let without_blank_text: Vec<Message> = messages
        .iter()
        .map(|message| {
            let mut message = message.clone();
            if let Content::Parts(parts) = &mut message.content {
                if !message.tool_calls.is_empty() {
                    parts.retain(|p| !matches!(p, Part::Text { text } if text.trim().is_empty()));
                    if parts.is_empty() {
                        message.content = Content::Text(String::new());
                    }
                }
            }
            message
        })
        .collect();
    let blank_dropped = messages
        .iter()
        .zip(&without_blank_text)
        .filter(|(a, b)| a != b)
        .count();
    assert!(blank_dropped > 0 && blank_dropped < 40, "{blank_dropped}");
    assert_eq!(from_anthropic(&request).unwrap(), without_blank_text);
    assert!(
        validate_anthropic(&request).is_empty(),
        "{:?}",
        validate_anthropic(&request)
    );
    // Results of one turn share one user message, results first: 139 assistant turns, and the
    // 4 user prompts either stand alone or ride after a turn's results.
    let wire_messages = request["messages"].as_array().unwrap();
    let tool_result_messages = wire_messages
        .iter()
        .filter(|m| {
            m["content"]
                .as_array()
                .is_some_and(|blocks| blocks.first().is_some_and(|b| b["type"] == "tool_result"))
        })
        .count();
    let assistant_turns_with_calls = messages.iter().filter(|m| !m.tool_calls.is_empty()).count();
    assert_eq!(tool_result_messages, assistant_turns_with_calls);

    // OpenAI has no place for thinking or is_error: those go, everything else stays.
    let back = from_openai(&to_openai(messages)).unwrap();
    assert_eq!(back.len(), messages.len());
    for (index, (original, back)) in messages.iter().zip(&back).enumerate() {
        assert_eq!(back.role, original.role, "message {index}");
        assert_eq!(back.tool_calls, original.tool_calls, "message {index}");
        assert_eq!(back.tool_call_id, original.tool_call_id, "message {index}");
        assert_eq!(
            back.text_content(),
            original.text_content(),
            "message {index}"
        );
        assert_eq!(thinking_blocks(&back.content), 0);
        assert!(!back.is_error);
    }
}

/// Sub-agent files hold only sidechain lines: they are a sub-agent's own session, read whole
/// (counts measured from the raw files as above).
#[test]
fn claude_code_subagent_files_import_whole() {
    let folder = "claude-code_marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569/subagents";
    let explorer =
        import_claude_code(&read_corpus(&format!("{folder}/agent-a2898e3.jsonl"))).unwrap();
    assert_eq!(
        count_roles(&explorer.messages),
        BTreeMap::from([("assistant", 12), ("tool", 33), ("user", 1)])
    );
    assert_eq!(
        explorer
            .messages
            .iter()
            .map(|m| m.tool_calls.len())
            .sum::<usize>(),
        33
    );
    assert_eq!(explorer.messages.iter().filter(|m| m.is_error).count(), 8);
    assert_eq!(explorer.api_calls.len(), 12);
    assert!(explorer
        .api_calls
        .iter()
        .all(|call| call.model == "claude-sonnet-4-5-20250929"));
    assert_calls_answered_right_after(&explorer.messages);

    let compaction = import_claude_code(&read_corpus(&format!(
        "{folder}/agent-acompact-e1f845.jsonl"
    )))
    .unwrap();
    assert_eq!(
        count_roles(&compaction.messages),
        BTreeMap::from([("assistant", 1), ("user", 4)])
    );
    assert_eq!(compaction.api_calls.len(), 1);
    let summary = compaction.messages.last().unwrap();
    assert_eq!(summary.role, Role::Assistant);
    assert!(
        summary.text_content().contains("<analysis>"),
        "the compaction call's summary"
    );
}
