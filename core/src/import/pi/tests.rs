use serde_json::{json, Value};

use super::*;
use crate::model::{Content, Role};

fn jsonl(lines: &[Value]) -> String {
    lines
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

fn header() -> Value {
    json!({"type": "session", "version": 3, "id": "s", "timestamp": "2026-06-05T11:30:11.277Z", "cwd": "/home/u/app"})
}

fn message(id: &str, parent: Option<&str>, message: Value) -> Value {
    json!({"type": "message", "id": id, "parentId": parent, "timestamp": "2026-06-05T11:31:00.000Z", "message": message})
}

fn user(text: &str) -> Value {
    json!({"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1})
}

fn assistant_call(call: &str, command: &str) -> Value {
    json!({"role": "assistant", "content": [
        {"type": "thinking", "thinking": "let me look", "thinkingSignature": "reasoning"},
        {"type": "toolCall", "id": call, "name": "bash", "arguments": {"command": command}}
    ], "api": "openai-completions", "provider": "ollama", "model": "glm-5.1",
      "usage": {"input": 100, "output": 7, "cacheRead": 40, "cacheWrite": 3, "totalTokens": 150},
      "stopReason": "toolUse", "timestamp": 2, "responseId": "chatcmpl-1"})
}

fn result(call: &str, text: &str, error: bool) -> Value {
    json!({"role": "toolResult", "toolCallId": call, "toolName": "bash", "content": [{"type": "text", "text": text}], "isError": error, "timestamp": 3})
}

#[test]
fn a_linear_session_reads_as_its_messages_with_usage_and_model() {
    let text = jsonl(&[
        header(),
        json!({"type": "model_change", "id": "m", "parentId": null, "provider": "ollama", "modelId": "glm-5.1"}),
        json!({"type": "thinking_level_change", "id": "t", "parentId": "m", "thinkingLevel": "medium"}),
        message("a", Some("t"), user("fix the build")),
        message("b", Some("a"), assistant_call("c1", "cargo build")),
        message("c", Some("b"), result("c1", "error[E0425]", true)),
        message(
            "d",
            Some("c"),
            json!({"role": "assistant", "content": [{"type": "text", "text": "Fixed."}], "model": "glm-5.1", "stopReason": "stop"}),
        ),
    ]);
    let session = import_pi(&text).unwrap();
    assert_eq!(session.model.as_deref(), Some("glm-5.1"));
    assert_eq!(session.cwd.as_deref(), Some("/home/u/app"));
    let roles: Vec<Role> = session.messages.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [Role::User, Role::Assistant, Role::Tool, Role::Assistant]
    );
    assert_eq!(
        session.messages[0].content,
        Content::Text("fix the build".into())
    );
    let call = &session.messages[1].tool_calls[0];
    assert_eq!(
        (
            call.id.as_str(),
            call.name.as_str(),
            call.arguments.as_str()
        ),
        ("c1", "bash", r#"{"command":"cargo build"}"#)
    );
    // The thinking part is dropped: its signature is another provider's.
    assert_eq!(session.messages[1].content, Content::Text(String::new()));
    assert_eq!(session.messages[2].tool_call_id.as_deref(), Some("c1"));
    assert!(session.messages[2].is_error);
    assert_eq!(session.api_calls.len(), 1);
    let call = &session.api_calls[0];
    assert_eq!(call.message_id, "chatcmpl-1");
    assert_eq!(call.message_index, 1);
    assert_eq!(call.prompt_tokens, Some(143));
    assert_eq!(call.line, 5);
    let usage = call.usage.unwrap();
    assert_eq!(
        (
            usage.input,
            usage.cache_read,
            usage.cache_write,
            usage.output
        ),
        (100, 40, 3, 7)
    );
}

#[test]
fn only_the_active_branch_is_read() {
    // b was answered, then the user went back to a and asked again: the last entry's branch.
    let text = jsonl(&[
        header(),
        message("a", None, user("first question")),
        message(
            "b",
            Some("a"),
            json!({"role": "assistant", "content": [{"type": "text", "text": "abandoned answer"}]}),
        ),
        json!({"type": "branch_summary", "id": "s1", "parentId": "a", "fromId": "b", "summary": "tried approach A"}),
        message("c", Some("s1"), user("try B instead")),
    ]);
    let session = import_pi(&text).unwrap();
    let texts: Vec<String> = session
        .messages
        .iter()
        .map(|m| m.content.text().into_owned())
        .collect();
    assert_eq!(texts.len(), 3, "{texts:?}");
    assert_eq!(texts[0], "first question");
    assert!(texts[1].ends_with("tried approach A"), "{}", texts[1]);
    assert_eq!(texts[2], "try B instead");
    assert!(!texts.iter().any(|t| t.contains("abandoned")));
}

#[test]
fn compactions_bash_executions_and_custom_messages_are_context() {
    let text = jsonl(&[
        header(),
        message("a", None, user("start")),
        json!({"type": "compaction", "id": "k", "parentId": "a", "summary": "## Goal\nstart", "firstKeptEntryId": "a", "tokensBefore": 50000}),
        message(
            "b",
            Some("k"),
            json!({"role": "bashExecution", "command": "ls", "output": "src\n", "exitCode": 2, "cancelled": false, "truncated": false}),
        ),
        message(
            "c",
            Some("b"),
            json!({"role": "bashExecution", "command": "secret", "output": "x", "exitCode": 0, "excludeFromContext": true}),
        ),
        json!({"type": "custom_message", "id": "d", "parentId": "c", "customType": "ext", "content": "injected", "display": false}),
        json!({"type": "label", "id": "e", "parentId": "d", "targetId": "a", "label": "here"}),
    ]);
    let session = import_pi(&text).unwrap();
    let texts: Vec<String> = session
        .messages
        .iter()
        .map(|m| m.content.text().into_owned())
        .collect();
    assert_eq!(texts[0], "start");
    assert_eq!(texts[1], "## Goal\nstart");
    assert_eq!(
        texts[2],
        "Ran `ls`\n```\nsrc\n\n```\nCommand exited with code 2"
    );
    assert_eq!(texts[3], "injected");
    assert_eq!(texts.len(), 4, "{texts:?}");
    let marker = &session.compactions[0];
    assert_eq!(
        (
            marker.message_index,
            marker.summary_message_index,
            marker.pre_tokens,
            marker.line
        ),
        (1, Some(1), Some(50_000), 3)
    );
}

#[test]
fn version_one_files_without_ids_are_one_branch() {
    let text = jsonl(&[
        json!({"type": "session", "version": 1, "id": "s", "cwd": "/x"}),
        json!({"type": "message", "message": user("one")}),
        json!({"type": "message", "message": user("two")}),
    ]);
    let session = import_pi(&text).unwrap();
    assert_eq!(session.messages.len(), 2);
}

#[test]
fn a_cycle_or_a_dangling_parent_ends_the_branch_without_looping() {
    let text = jsonl(&[
        header(),
        message("a", Some("b"), user("a")),
        message("b", Some("a"), user("b")),
    ]);
    assert_eq!(import_pi(&text).unwrap().messages.len(), 2);
    let text = jsonl(&[header(), message("a", Some("gone"), user("only"))]);
    assert_eq!(import_pi(&text).unwrap().messages.len(), 1);
}

#[test]
fn errors_name_the_line_and_the_field() {
    let cases = [
        (
            jsonl(&[
                header(),
                message("a", None, json!({"role": "robot", "content": "x"})),
            ]),
            "line 2: message.role: unknown role \"robot\"",
        ),
        (
            jsonl(&[
                header(),
                message(
                    "a",
                    None,
                    json!({"role": "assistant", "content": [{"type": "toolCall", "id": "c", "name": "bash", "arguments": "ls"}]}),
                ),
            ]),
            "line 2: message.content[0].arguments: expected an object, found a string",
        ),
        (
            jsonl(&[
                header(),
                message("a", None, json!({"role": "toolResult", "content": []})),
            ]),
            "line 2: message.toolCallId: missing",
        ),
        (
            format!("{}\n{{\"type\":", header()),
            "line 2: truncated JSON",
        ),
        ("[1, 2]".to_owned(), "line 1: expected a JSON object"),
        (
            jsonl(&[
                header(),
                json!({"type": "compaction", "id": "k", "parentId": null}),
            ]),
            "line 2: summary: missing",
        ),
    ];
    for (text, expected) in cases {
        let error = import_pi(&text).unwrap_err().to_string();
        assert!(error.starts_with(expected), "{error} / {expected}");
    }
}
