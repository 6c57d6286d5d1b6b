use super::*;

#[test]
fn interleaved_parallel_calls_become_one_message_then_results_in_call_order() {
    let jsonl = [
        r#"{"type":"user","message":{"role":"user","content":"go"}}"#,
        r#"{"type":"assistant","message":{"id":"m1","model":"x","content":[{"type":"tool_use","id":"a","name":"f","input":{}}],"usage":{"input_tokens":1,"cache_creation_input_tokens":2,"cache_read_input_tokens":3}}}"#,
        r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"A"}]}}"#,
        r#"{"type":"assistant","message":{"id":"m1","model":"x","content":[{"type":"tool_use","id":"b","name":"f","input":{}}]}}"#,
        r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"b","content":"B","is_error":true}]}}"#,
    ]
    .join("\n");
    let session = import_claude_code(&jsonl).unwrap();
    let roles: Vec<Role> = session.messages.iter().map(|m| m.role).collect();
    assert_eq!(roles, [Role::User, Role::Assistant, Role::Tool, Role::Tool]);
    assert_eq!(session.messages[1].tool_calls.len(), 2);
    assert!(session.messages[3].is_error);
    assert_eq!(session.api_calls.len(), 1);
    assert_eq!(session.api_calls[0].prompt_tokens, Some(6));
}

#[test]
fn sidechain_lines_are_skipped_only_beside_main_thread_lines() {
    let side = r#"{"type":"user","isSidechain":true,"message":{"content":"explore"}}"#;
    let main = r#"{"type":"user","isSidechain":false,"message":{"content":"go"}}"#;
    let sub_agent_file = import_claude_code(side).unwrap();
    assert_eq!(sub_agent_file.messages, vec![Message::user("explore")]);
    let main_file = import_claude_code(&format!("{main}\n{side}")).unwrap();
    assert_eq!(main_file.messages, vec![Message::user("go")]);
}

#[test]
fn errors_name_the_line_and_the_field() {
    let error =
        import_claude_code("\n{\"type\":\"user\",\"message\":{\"content\":5}}").unwrap_err();
    assert_eq!(
        error.to_string(),
        "line 2: message.content: expected a string or an array of content blocks, found a number"
    );
    let truncated =
        import_claude_code("{\"type\":\"progress\"}\n{\"type\":\"user\",\"mess").unwrap_err();
    assert!(
        truncated.to_string().starts_with("line 2: truncated JSON"),
        "{truncated}"
    );
}
