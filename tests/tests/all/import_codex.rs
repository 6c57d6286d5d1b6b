//! The Codex rollout importer on tests/fixtures/import/codex_rollout.jsonl (its README names
//! the public rollouts it was written after), and format detection for every added format.

use ctxkit_core::import::{detect_format, import_codex, import_transcript, TranscriptFormat};
use ctxkit_core::wire::{render_messages, validate_responses, WireFormat};
use ctxkit_core::{Part, Provider, Role};

fn fixture(name: &str) -> String {
    let path = ctxkit_tests::fixtures_dir().join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

#[test]
fn a_rollout_imports_with_its_usage_reasoning_and_compaction() {
    let text = fixture("import/codex_rollout.jsonl");
    assert_eq!(detect_format(&text).unwrap(), TranscriptFormat::Codex);
    let session = import_codex(&text).unwrap();
    let roles: Vec<Role> = session.messages.iter().map(|m| m.role).collect();
    use Role::*;
    assert_eq!(
        roles,
        [System, System, User, Assistant, Tool, Tool, Assistant, User, User, Assistant, Tool]
    );
    // The first response: its reasoning kept byte for byte, then its text, then two calls.
    let first = &session.messages[3];
    assert_eq!(first.tool_calls.len(), 2);
    let ctxkit_core::Content::Parts(parts) = &first.content else {
        panic!("parts expected: {first:?}")
    };
    assert!(
        matches!(&parts[0], Part::Opaque { provider: Provider::Responses, block }
        if block["encrypted_content"] == "gAAAAABpnDEMO1-opaque-reasoning-state==")
    );
    // One call per distinct usage total (the repeated count is not a call), with its model.
    let calls: Vec<(usize, Option<u64>, &str)> = session
        .api_calls
        .iter()
        .map(|c| (c.message_index, c.prompt_tokens, c.model.as_str()))
        .collect();
    assert_eq!(
        calls,
        [
            (3, Some(17102), "gpt-5.3-codex"),
            (6, Some(18084), "gpt-5.3-codex"),
            (9, Some(4814), "gpt-5.3-codex")
        ]
    );
    // The billed parts: OpenAI's input_tokens include the cached ones; the line's timestamp.
    let first_call = &session.api_calls[0];
    let usage = first_call.usage.expect("usage of the first call");
    assert_eq!(
        (
            usage.input,
            usage.cache_read,
            usage.cache_write,
            usage.output
        ),
        (17102 - 3456, 3456, 0, 281)
    );
    assert_eq!(
        first_call.timestamp.as_deref(),
        Some("2026-02-23T11:41:38.914Z")
    );
    assert_eq!(session.api_calls[2].usage.map(|u| u.cache_read), Some(0));
    assert_eq!(session.compactions.len(), 1);
    assert_eq!(session.compactions[0].message_index, 7);
    assert!(session.messages[7]
        .text_content()
        .starts_with("The user asked"));
    // The custom tool call and its output stay custom; the view is a valid Responses request.
    let input = render_messages(&session.messages, WireFormat::Responses).unwrap();
    assert_eq!(validate_responses(&input), Vec::new());
    let items = input["input"].as_array().unwrap();
    assert!(items
        .iter()
        .any(|item| item["type"] == "custom_tool_call_output"));
    assert!(items.iter().any(|item| item["phase"] == "final_answer"));
    let imported = import_transcript(&text, None).unwrap();
    assert_eq!(imported.sessions[0].compactions, vec![7]);
}

#[test]
fn a_bad_line_is_named() {
    let error = import_codex("{\"type\":\"response_item\",\"payload\":{\"type\":\"function_call\",\"name\":\"x\",\"arguments\":\"{}\"}}\n")
        .unwrap_err()
        .to_string();
    assert_eq!(error, "line 1 and after: input[0].call_id: missing");
    assert!(import_codex("{\"type\":")
        .unwrap_err()
        .to_string()
        .starts_with("line 1: not valid JSON"));
}

#[test]
fn every_added_format_is_detected() {
    let cases = [
        (
            r#"{"instructions":"s","input":[{"role":"user","content":"hi"}]}"#,
            TranscriptFormat::Responses,
        ),
        (
            r#"[{"type":"function_call","call_id":"a","name":"n","arguments":"{}"}]"#,
            TranscriptFormat::Responses,
        ),
        (
            r#"[{"role":"user","content":[{"type":"input_text","text":"hi"}]}]"#,
            TranscriptFormat::Responses,
        ),
        (
            r#"{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}"#,
            TranscriptFormat::Gemini,
        ),
        (
            r#"[{"role":"user","parts":[{"text":"hi"}]}]"#,
            TranscriptFormat::Gemini,
        ),
        (
            r#"[{"role":"assistant","content":[{"type":"tool-call","toolCallId":"a","toolName":"n","input":{}}]}]"#,
            TranscriptFormat::AiSdk,
        ),
        (
            r#"[{"lc":1,"type":"constructor","id":["langchain_core","messages","HumanMessage"],"kwargs":{"content":"hi"}}]"#,
            TranscriptFormat::LangChain,
        ),
        (
            r#"[{"type":"human","content":"hi"}]"#,
            TranscriptFormat::LangChain,
        ),
        (
            r#"[{"type":"ai","data":{"content":"hi"}}]"#,
            TranscriptFormat::LangChain,
        ),
    ];
    for (text, format) in cases {
        assert_eq!(detect_format(text).unwrap(), format, "{text}");
        import_transcript(text, None).unwrap_or_else(|e| panic!("{text}: {e}"));
    }
    for (name, format) in [
        ("wire/responses_items.json", TranscriptFormat::Responses),
        ("wire/gemini_contents.json", TranscriptFormat::Gemini),
        ("wire/ai_sdk_messages.json", TranscriptFormat::AiSdk),
        ("wire/langchain_messages.json", TranscriptFormat::LangChain),
    ] {
        assert_eq!(detect_format(&fixture(name)).unwrap(), format, "{name}");
    }
}
