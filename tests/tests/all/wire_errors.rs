//! Bad input gets a clear error that names where it is, and never a panic.
//!
//! Each case pins the exact message a person would see. The property tests at the end throw
//! random JSON shaped like messages (the keys and values the readers look for, nested at random)
//! and random text at the readers, and check that they return instead of panicking.

use ctxkit_core::import::import_claude_code;
use ctxkit_core::wire::{from_anthropic, from_format, from_openai, to_anthropic, WireFormat};
use ctxkit_core::{Message, ToolCall};
use proptest::prelude::*;
use serde_json::{json, Value};

fn openai_error(input: Value) -> String {
    match from_openai(&input) {
        Ok(messages) => panic!("expected an error, got {messages:?}"),
        Err(error) => error.to_string(),
    }
}

fn anthropic_error(input: Value) -> String {
    match from_anthropic(&input) {
        Ok(messages) => panic!("expected an error, got {messages:?}"),
        Err(error) => error.to_string(),
    }
}

fn import_error(jsonl: &str) -> String {
    match import_claude_code(jsonl) {
        Ok(session) => panic!("expected an error, got {session:?}"),
        Err(error) => error.to_string(),
    }
}

#[test]
fn openai_errors_name_the_path() {
    assert_eq!(
        openai_error(json!(5)),
        "messages: expected an array of messages or an object with a `messages` array, found a number"
    );
    assert_eq!(
        openai_error(json!({"messages": "hi"})),
        "messages: expected an array of messages, found a string"
    );
    assert_eq!(
        openai_error(json!({"model": "gpt-4o"})),
        "messages: missing"
    );
    assert_eq!(
        openai_error(json!([{"content": "hi"}])),
        "messages[0].role: missing"
    );
    assert_eq!(
        openai_error(json!([42])),
        "messages[0]: expected an object (a message), found a number"
    );
    assert_eq!(
        openai_error(json!([{"role": "robot", "content": "hi"}])),
        "messages[0].role: unknown role \"robot\" (expected system, developer, user, assistant or tool)"
    );
    assert_eq!(
        openai_error(json!([{"role": "user"}])),
        "messages[0].content: missing"
    );
    assert_eq!(
        openai_error(json!([{"role": "user", "content": 7}])),
        "messages[0].content: expected a string, null or an array of content parts, found a number"
    );
    assert_eq!(
        openai_error(json!([{"role": "user", "content": [{"text": "no type"}]}])),
        "messages[0].content[0].type: missing"
    );
    assert_eq!(
        openai_error(json!([{"role": "user", "content": [{"type": "text", "text": 1}]}])),
        "messages[0].content[0].text: expected a string, found a number"
    );
    assert_eq!(
        openai_error(
            json!([{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}])
        ),
        "messages[0].content[0].image_url.url: missing"
    );
    let call = |call: Value| json!([{"role": "user", "content": "go"}, {"role": "assistant", "content": null, "tool_calls": [call]}]);
    assert_eq!(
        openai_error(call(
            json!({"type": "function", "function": {"name": "f", "arguments": "{}"}})
        )),
        "messages[1].tool_calls[0].id: missing"
    );
    assert_eq!(
        openai_error(call(
            json!({"id": "c", "type": "function", "function": {"arguments": "{}"}})
        )),
        "messages[1].tool_calls[0].function.name: missing"
    );
    assert_eq!(
        openai_error(call(
            json!({"id": "c", "type": "function", "function": {"name": "f", "arguments": {"a": 1}}})
        )),
        "messages[1].tool_calls[0].function.arguments: expected a string, found an object"
    );
    assert_eq!(
        openai_error(call(json!({"id": "c", "type": "custom", "custom": {"name": "f", "input": "x"}}))),
        "messages[1].tool_calls[0].type: unsupported tool call type \"custom\" (expected \"function\")"
    );
    assert_eq!(
        openai_error(json!([{"role": "tool", "content": "ok"}])),
        "messages[0].tool_call_id: missing"
    );
    assert_eq!(
        openai_error(json!([{"role": "user", "content": "x", "tool_calls": [{"id": "c"}]}])),
        "messages[0].tool_calls: only assistant messages carry tool calls"
    );
    assert_eq!(
        openai_error(json!([{"role": "function", "name": "f", "content": "{}"}])),
        "messages[0].role: the legacy \"function\" role is not supported: use \"tool\" messages with a `tool_call_id`"
    );
    assert_eq!(
        openai_error(json!([{"role": "assistant", "content": null, "function_call": {"name": "f", "arguments": "{}"}}])),
        "messages[0].function_call: legacy function calling is not supported: use `tool_calls` (they carry the id a result needs)"
    );
}

#[test]
fn anthropic_errors_name_the_path() {
    assert_eq!(
        anthropic_error(json!(5)),
        "messages: expected an array of messages or an object with a `messages` array, found a number"
    );
    assert_eq!(
        anthropic_error(json!({"system": 1, "messages": []})),
        "system: expected a string or an array of text blocks, found a number"
    );
    assert_eq!(
        anthropic_error(json!([{"content": "hi"}])),
        "messages[0].role: missing"
    );
    assert_eq!(
        anthropic_error(json!([{"role": "system", "content": "hi"}])),
        "messages[0].role: \"system\" is not a message role in Anthropic Messages: use the top-level `system`"
    );
    assert_eq!(
        anthropic_error(json!([{"role": "user"}])),
        "messages[0].content: missing"
    );
    assert_eq!(
        anthropic_error(json!([{"role": "user", "content": [null]}])),
        "messages[0].content[0]: expected an object (a content block), found null"
    );
    assert_eq!(
        anthropic_error(
            json!([{"role": "assistant", "content": [{"type": "tool_use", "name": "f", "input": {}}]}])
        ),
        "messages[0].content[0].id: missing"
    );
    assert_eq!(
        anthropic_error(
            json!([{"role": "user", "content": [{"type": "tool_result", "content": "ok"}]}])
        ),
        "messages[0].content[0].tool_use_id: missing"
    );
    assert_eq!(
        anthropic_error(
            json!([{"role": "user", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}]}])
        ),
        "messages[0].content[0].type: a tool_use block belongs in an assistant message"
    );
    assert_eq!(
        anthropic_error(
            json!([{"role": "assistant", "content": [{"type": "tool_result", "tool_use_id": "t"}]}])
        ),
        "messages[0].content[0].type: a tool_result block belongs in a user message"
    );
    assert_eq!(
        anthropic_error(json!([{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": [{"type": "tool_use", "id": "x", "name": "f", "input": {}}]}]}])),
        "messages[0].content[0].content[0].type: tool_use and tool_result blocks are not allowed here"
    );
    assert_eq!(
        anthropic_error(
            json!([{"role": "assistant", "content": [{"type": "thinking", "thinking": "hm"}]}])
        ),
        "messages[0].content[0].signature: missing"
    );
    assert_eq!(
        anthropic_error(
            json!([{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "is_error": "yes"}]}])
        ),
        "messages[0].content[0].is_error: expected a boolean, found a string"
    );
}

#[test]
fn unknown_block_types_are_kept_not_rejected() {
    let block = json!({"type": "brand_new_block", "payload": [1, 2]});
    let messages = from_anthropic(&json!([{"role": "user", "content": [block.clone()]}])).unwrap();
    let back = to_anthropic(&messages).unwrap();
    assert_eq!(back["messages"][0]["content"][0], block);
    // Chat Completions refuses a part type it does not take, so one is read (kept in the log
    // as it came) but written as a text part naming it: the view stays valid.
    let part = json!({"type": "brand_new_part", "payload": {}});
    let messages = from_openai(&json!([{"role": "user", "content": [part.clone()]}])).unwrap();
    let written = ctxkit_core::wire::to_openai(&messages);
    assert_eq!(written[0]["content"][0]["type"], "text");
    assert!(written[0]["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("\"brand_new_part\""));
    assert!(ctxkit_core::validate_openai(&written).is_empty());
    let supported =
        json!({"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}});
    let messages = from_openai(&json!([{"role": "user", "content": [supported.clone()]}])).unwrap();
    assert_eq!(
        ctxkit_core::wire::to_openai(&messages)[0]["content"][0],
        supported
    );
}

/// Arguments that are not a JSON object never make a view fail: they reach Anthropic as
/// `{"raw_arguments": text}` (what every format whose calls take an object does).
#[test]
fn to_anthropic_carries_bad_arguments_and_names_a_result_without_its_call() {
    let bad_json = [
        Message::user("go"),
        Message::assistant("", vec![ToolCall::new("call_9", "f", "{\"a\":")]),
    ];
    let request = to_anthropic(&bad_json).unwrap();
    assert_eq!(
        request["messages"][1]["content"][0]["input"],
        json!({"raw_arguments": "{\"a\":"})
    );
    let not_object = [Message::assistant(
        "",
        vec![ToolCall::new("call_1", "f", "\"text\"")],
    )];
    assert_eq!(
        to_anthropic(&not_object).unwrap()["messages"][0]["content"][0]["input"],
        json!({"raw_arguments": "\"text\""})
    );
    let mut orphan = Message::tool_result("x", "out", false);
    orphan.tool_call_id = None;
    assert_eq!(
        to_anthropic(&[Message::user("go"), orphan])
            .unwrap_err()
            .to_string(),
        "messages[1].tool_call_id: missing: a tool result must name the call it answers"
    );
}

#[test]
fn a_responses_content_part_typed_as_an_item_is_refused() {
    // Kept, it would be written back as an item of its own (an assistant's unknown parts are)
    // and read again as that item: a part could become a message or a call (found by the
    // wire_formats fuzz target, input regression-responses-part-typed-as-item).
    for kind in [
        "message",
        "function_call",
        "function_call_output",
        "custom_tool_call",
    ] {
        let input = json!({"input": [
            {"type": "message", "role": "user", "content": "hi"},
            {"type": "message", "role": "assistant", "content": [
                {"type": "output_text", "text": "ok"},
                {"type": kind, "id": "x"}
            ]}
        ]});
        let error = from_format(&input, WireFormat::Responses)
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            format!("input[1].content[1].type: \"{kind}\" is an item type, not a content part")
        );
    }
    // A part of a type Responses does not have is still kept.
    let kept = json!({"input": [
        {"type": "message", "role": "user", "content": [{"type": "input_audio", "data": "AA"}]}
    ]});
    assert!(from_format(&kept, WireFormat::Responses).is_ok());
}

#[test]
fn claude_code_errors_name_the_line_and_the_field() {
    assert!(import_error("garbage").starts_with("line 1: not valid JSON ("));
    assert_eq!(
        import_error("[1, 2]"),
        "line 1: expected a JSON object, found an array"
    );
    assert_eq!(import_error("{}\n"), "line 1: type: missing");
    assert_eq!(
        import_error("{\"type\":\"progress\"}\n\n{\"type\":\"assistant\",\"message\":{\"model\":\"m\",\"content\":[]}}"),
        "line 3: message.id: missing"
    );
    assert_eq!(
        import_error("{\"type\":\"assistant\",\"message\":{\"id\":\"m1\",\"model\":\"m\",\"content\":[{\"type\":\"text\"}]}}"),
        "line 1: message.content[0].text: missing"
    );
    assert_eq!(
        import_error("{\"type\":\"user\",\"message\":{\"content\":[{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"f\",\"input\":{}}]}}"),
        "line 1: message.content[0].type: a tool_use block belongs in an assistant line"
    );
    assert_eq!(
        import_error("{\"type\":\"assistant\",\"message\":{\"id\":\"m1\",\"model\":\"m\",\"content\":[],\"usage\":{\"input_tokens\":-1}}}"),
        "line 1: message.usage.input_tokens: expected a non-negative integer, found a number"
    );
    assert_eq!(
        import_error("{\"type\":\"user\",\"isSidechain\":\"no\",\"message\":{\"content\":\"x\"}}"),
        "line 1: isSidechain: expected a boolean, found a string"
    );
}

/// A session cut at any byte (a file still being written) imports, or fails on its last line
/// saying it is truncated; it never panics.
#[test]
fn every_prefix_of_a_session_imports_or_names_its_truncated_last_line() {
    let path = ctxkit_tests::fixtures_dir().join("wire/claude_code_session.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    for cut in (0..=text.len()).filter(|&cut| text.is_char_boundary(cut)) {
        let prefix = &text[..cut];
        match import_claude_code(prefix) {
            Ok(_) => {}
            Err(error) => {
                let last_line = prefix.lines().count();
                let expected = format!("line {last_line}: truncated JSON");
                assert!(
                    error.to_string().starts_with(&expected),
                    "cut at {cut}: {error}"
                );
            }
        }
    }
}

/// JSON shaped like messages: the keys and string values the readers look for, nested at random.
fn message_like_json() -> impl Strategy<Value = Value> {
    let words = prop_oneof![
        Just("user"),
        Just("assistant"),
        Just("tool"),
        Just("system"),
        Just("developer"),
        Just("text"),
        Just("image"),
        Just("image_url"),
        Just("thinking"),
        Just("tool_use"),
        Just("tool_result"),
        Just("function"),
        Just("base64"),
        Just("url"),
        Just("data:a;base64,x"),
        Just("compact_boundary"),
        Just(""),
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|n| json!(n)),
        words.prop_map(Value::from),
        "\\PC{0,6}".prop_map(Value::from),
    ];
    let keys = prop_oneof![
        Just("role"),
        Just("content"),
        Just("type"),
        Just("text"),
        Just("tool_calls"),
        Just("id"),
        Just("function"),
        Just("name"),
        Just("arguments"),
        Just("tool_call_id"),
        Just("tool_use_id"),
        Just("input"),
        Just("is_error"),
        Just("messages"),
        Just("system"),
        Just("source"),
        Just("image_url"),
        Just("detail"),
        Just("thinking"),
        Just("signature"),
        Just("media_type"),
        Just("data"),
        Just("url"),
        Just("refusal"),
        Just("function_call"),
        Just("message"),
        Just("usage"),
        Just("isSidechain"),
        Just("subtype"),
        Just("compactMetadata"),
        Just("model"),
    ];
    leaf.prop_recursive(5, 48, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map(keys.clone().prop_map(String::from), inner, 0..6)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10_000))]

    #[test]
    fn readers_never_panic_on_message_like_json(value in message_like_json()) {
        let _ = from_openai(&value);
        let _ = from_anthropic(&value);
        let wrapped = json!([value.clone()]);
        let _ = from_openai(&wrapped);
        let _ = from_anthropic(&wrapped);
        // Whatever reads must write, and write something that reads again.
        if let Ok(messages) = from_anthropic(&wrapped) {
            let request = to_anthropic(&messages).unwrap();
            prop_assert!(from_anthropic(&request).is_ok());
        }
        if let Ok(messages) = from_openai(&wrapped) {
            prop_assert!(from_openai(&ctxkit_core::wire::to_openai(&messages)).is_ok());
        }
        let _ = import_claude_code(&value.to_string());
        let _ = import_claude_code(&format!("{}\n{}", json!({"type": "assistant", "message": value}), json!({"type": "user", "message": value})));
    }

    #[test]
    fn importer_never_panics_on_any_text(text in "\\PC{0,64}") {
        let _ = import_claude_code(&text);
    }
}
