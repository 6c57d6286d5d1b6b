//! The records' hand-written readers against serde's derived ones, input by input.

use super::*;
use crate::readers::tests::same;
use serde_json::json;

/// Inputs for a reader of an object whose valid form is `base`: `base`, each field removed,
/// given a bad value of each kind, an unknown field, and values that are not objects.
fn inputs(base: Value) -> Vec<Value> {
    let mut inputs = vec![base.clone(), json!({}), json!({"zz": 1})];
    for kind in [
        json!(7),
        json!(-2),
        json!(1.5),
        json!("s"),
        json!(null),
        json!(true),
        json!([1]),
    ] {
        // Not an array: the derived readers read one as the fields' values in order, which
        // the hand-written ones refuse on purpose (`crate::readers`).
        if !kind.is_array() {
            inputs.push(kind.clone());
        }
        let Value::Object(fields) = &base else {
            continue;
        };
        for key in fields.keys() {
            let mut without = fields.clone();
            without.remove(key);
            inputs.push(Value::Object(without.clone()));
            // A struct field given an array: the documented difference again.
            if kind.is_array() && fields[key].is_object() {
                continue;
            }
            let mut bad = fields.clone();
            bad.insert(key.clone(), kind.clone());
            inputs.push(Value::Object(bad.clone()));
            bad.insert("aa".to_owned(), json!(1));
            inputs.push(Value::Object(bad));
        }
    }
    let mut extra = base;
    if let Value::Object(fields) = &mut extra {
        fields.insert("extra".to_owned(), json!(1));
    }
    inputs.push(extra);
    inputs
}

#[test]
fn records_read_as_derived() {
    for input in inputs(
        json!({"dropped_results": 1, "moved_results": 2, "missing_results": 3,
        "empty_results": 4, "renamed_ids": 5, "dropped_blank": 6, "inserted_leading_user": true}),
    ) {
        same(repair_report, input);
    }
    for input in inputs(json!({"paths": 1, "errors": 2, "requests": 3, "identifiers": 4})) {
        same(dropped_facts, input);
    }
    for input in inputs(json!({"kind": "path", "text": "src/a.rs"})) {
        same(pinned_fact, input);
    }
    same(pinned_fact, json!({"kind": "nope", "text": "x"}));
    for input in inputs(json!({"call": "summary", "kind": "timeout", "reason": "slow"})) {
        same(fallback, input);
    }
    for input in inputs(json!({"reason": "system", "after_message": 3})) {
        same(cache_breakpoint, input);
    }
    for input in inputs(json!({"content": "write tests", "status": "in_progress"})) {
        same(todo_item, input);
    }
    same(todo_item, json!({"content": "x", "status": "done?"}));
    for input in inputs(json!({"input_tokens": 1, "estimated_tokens": 2,
        "lowest_plausible": 3, "highest_plausible": 4}))
    {
        same(refused_usage, input);
    }
    for input in inputs(
        json!({"checkpoint_through": 3, "last_seq": 9, "input_tokens": 1,
        "estimated_tokens": 2}),
    ) {
        same(usage_anchor, input);
    }
    for input in inputs(json!({"turn": 3, "last_seq": 9, "turns_without_progress": 2})) {
        same(nudge_state, input);
    }
    same(
        nudge_state,
        json!({"turns_without_progress": 5_000_000_000_u64}),
    );
    for input in inputs(json!({"checkpoint_through": 3, "date": "2026-01-02",
        "agents_md": "a", "memory_precis": null}))
    {
        same(frozen_parts, input);
    }
    for input in inputs(json!({"max_entries": 3, "max_bytes": 100})) {
        same(precis_options, input);
    }
    let message = json!({"role": "user", "content": "hi"});
    for input in inputs(json!({"seq": 1, "message": message, "tokens": 3})) {
        same(entry, input);
    }
    same(
        entry,
        json!({"seq": 1, "tokens": 3, "message": {"role": "usr"}}),
    );
    same(
        entry,
        json!({"seq": 1, "tokens": 3, "message": {"role": "user", "content": [{"type": "txt"}]}}),
    );
    for input in inputs(json!({"name": "n", "description": "d"})) {
        same(skill, input);
    }
    for input in inputs(json!({"consecutive_failures": 2, "skip_compactions": 3})) {
        same(summarizer_breaker, input);
    }
    for input in [
        json!({"consecutive_timeouts": 2}),
        json!({"consecutive_timeouts": 2, "consecutive_failures": 1}),
        json!({"consecutive_timeouts": "x", "consecutive_failures": 1}),
        json!({"consecutive_timeouts": 1, "consecutive_failures": "x"}),
        json!({"consecutive_timeouts": 1, "consecutive_failures": 1, "aa": 1}),
        json!({"consecutive_timeouts": 1, "consecutive_failures": 1, "consecutive_g": 1}),
        json!({"consecutive_timeouts": 1, "consecutive_failures": 1, "zz": 1}),
        json!({"consecutive_timeouts": -1, "skip_compactions": 5_000_000_000_u64}),
    ] {
        same(summarizer_breaker, input);
    }
}

#[test]
fn messages_read_as_derived() {
    let call = json!({"id": "c1", "name": "ls", "arguments": "{}",
        "provider_fields": {"provider": "gemini", "fields": {"thoughtSignature": "s"}}});
    let full = json!({"role": "assistant", "content": [{"type": "text", "text": "hi"}],
        "tool_calls": [call], "tool_call_id": "c0", "is_error": true, "name": "n",
        "provider_fields": {"provider": "responses", "fields": {"id": "x"}}});
    for input in inputs(full) {
        same(message, input);
    }
    for input in inputs(call) {
        same(tool_call, input);
    }
    for input in inputs(json!({"provider": "langchain", "fields": {"id": 1}})) {
        same(provider_fields, input);
    }
    for input in [
        json!({"role": "user", "content": null}),
        json!({"role": "user", "content": "text"}),
        json!({"role": "usr"}),
        json!({"role": 2}),
        json!({"content": 3, "role": "user"}),
        json!({"role": "user", "content": [{"type": "txt"}]}),
        json!({"role": "assistant", "tool_calls": [{"id": "c", "name": "ls"}]}),
        json!({"role": "assistant", "tool_calls": [{"id": 1, "nme": "ls"}]}),
        json!({"role": "assistant", "tool_calls": null}),
        json!({"role": "assistant", "tool_calls": [null]}),
        json!({"role": "tool", "provider_fields": {"provider": "x", "fields": []}}),
        json!({"role": "tool", "provider_fields": {"fields": {}}}),
    ] {
        same(message, input);
    }
    // Below a part's tag, errors name the field (`crate::readers::tagged`).
    assert_eq!(
        message(
            json!({"role": "user", "content": [{"type": "image", "source": {"type": "url"}}]}),
            "x"
        )
        .map_err(|e| e.to_string()),
        Err("x.content[0].source.url: missing".to_owned())
    );
    assert_eq!(
        read_messages(json!(3), "messages").map_err(|e| e.to_string()),
        Err("messages: expected an array of messages, found a number".to_owned())
    );
    assert_eq!(
        read_messages(json!([{"role": "user"}, {"content": "hi"}]), "messages")
            .map_err(|e| e.to_string()),
        Err("messages[1].role: missing".to_owned())
    );
}
