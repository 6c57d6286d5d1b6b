//! The hand-written readers against serde's derived ones, input by input.

use super::*;
use serde_json::json;

/// Test support: `read` and the derived reader give the same value or the same error for
/// `input`.
pub(crate) fn same<T: DeserializeOwned + PartialEq + std::fmt::Debug>(
    read: fn(Value, &str) -> Result<T>,
    input: Value,
) {
    let hand = read(input.clone(), "x").map_err(|error| error.to_string());
    let derived = decode::<T>(input.clone(), "x").map_err(|error| error.to_string());
    assert_eq!(hand, derived, "{input}");
}

/// The keys of the object `value` (none for another value).
fn keys(value: &Value) -> Vec<String> {
    value
        .as_object()
        .map(|fields| fields.keys().cloned().collect())
        .unwrap_or_default()
}

fn stats() -> Value {
    serde_json::to_value(ViewStats::default()).unwrap_or_default()
}

/// `base` with `key` set to `value` (removed when `value` is `None`).
fn with(base: &Value, key: &str, value: Option<Value>) -> Value {
    let mut base = base.clone();
    if let Value::Object(fields) = &mut base {
        match value {
            Some(value) => fields.insert(key.to_owned(), value),
            None => fields.remove(key),
        };
    }
    base
}

#[test]
fn view_stats_reads_as_derived() {
    let base = stats();
    same(view_stats, base.clone());
    same(view_stats, json!({}));
    same(view_stats, json!({"fits": true, "system_tokens": "ten"}));
    same(
        view_stats,
        json!({"zeta": 1, "budget_tokens": -1, "fits": 3}),
    );
    for kind in [
        json!(7),
        json!(-2),
        json!(1.5),
        json!("s"),
        json!(null),
        json!(true),
    ] {
        same(view_stats, kind);
    }
    let keys = keys(&base);
    assert!(!keys.is_empty(), "{base}");
    for key in &keys {
        same(view_stats, with(&base, key, None));
        same(view_stats, with(&base, key, Some(json!("bad"))));
        same(view_stats, with(&base, key, Some(json!(null))));
        same(view_stats, with(&base, key, Some(json!({"nested": [1]}))));
    }
    let nested = with(&base, "repair", Some(json!({"dropped_results": "x"})));
    same(view_stats, with(&nested, "tier", Some(json!("fits"))));
    same(view_stats, with(&base, "tier", Some(json!("nope"))));
    same(view_stats, with(&base, "unknown", Some(json!(1))));
}

#[test]
fn summary_request_reads_as_derived() {
    let base = json!({
        "after_seq": 3, "through_seq": 9, "messages": 6, "covered_tokens": 900,
        "previous_summary": null, "system": "s", "prompt": "p", "max_summary_tokens": 100,
        "max_output_tokens": 200, "turn": 2, "active_tasks": "t", "restore": "r",
        "pinned": [], "answer_tag": "summary",
        "cache_safe_messages": [{"role": "user", "content": "hi"}]
    });
    same(summary_request, base.clone());
    same(summary_request, json!({}));
    // The one difference: an array is not read as the fields in declaration order.
    assert_eq!(
        summary_request(json!([]), "x").map_err(|error| error.to_string()),
        Err("x: invalid type: sequence, expected an object".to_owned())
    );
    let keys = keys(&base);
    assert!(!keys.is_empty(), "{base}");
    for key in &keys {
        same(summary_request, with(&base, key, None));
        same(summary_request, with(&base, key, Some(json!(-1))));
        same(summary_request, with(&base, key, Some(json!(null))));
    }
    same(
        summary_request,
        with(
            &base,
            "cache_safe_messages",
            Some(json!([{"role": "user"}])),
        ),
    );
    for messages in [
        json!([{"role": "usr"}]),
        json!([{"role": "user"}, {"content": 1}]),
        json!([3]),
        json!({"role": "user"}),
    ] {
        same(
            summary_request,
            with(&base, "cache_safe_messages", Some(messages)),
        );
    }
    same(
        summary_request,
        with(&base, "pinned", Some(json!([{"x": 1}]))),
    );
}

#[test]
fn policy_parts_read_as_derived() {
    same(nudge_policy, json!({"memory_every_turns": "ten"}));
    same(
        nudge_policy,
        json!({"agent_tools": null, "stall_text": "s", "x": 1}),
    );
    same(
        nudge_policy,
        json!({"agent_tools": ["a"], "progress_tools": [1]}),
    );
    same(
        clear_policy,
        json!({"keep_last_exchanges": 2, "exclude_tools": ["x"]}),
    );
    same(clear_policy, json!({"min_bytes": -1, "a": 1}));
    same(transcript_limits, json!({"total_bytes": 9, "b": 2}));
    same(restore_limits, json!({"share_percent": 300}));
    same(
        offload_policy,
        json!({"reference_root": "/r", "paging_command": "cat {path}"}),
    );
    same(offload_policy, json!({"paging_command": 5, "folder": "f"}));
    same(restore_limits, json!({"max_files": 1, "max_tokens": 5}));
    same(budget, json!({"context_window": "big"}));
    same(budget, json!(7));
    same(
        budget,
        json!({"context_window": 1000, "cost_trigger_tokens": null}),
    );
    same(budget, json!({"trigger_percent": 1.5, "zz": 0}));
    same(nudge_policy, json!({}));
    same(nudge_policy, json!(null));
    same(clear_policy, json!({}));
    same(transcript_limits, json!("x"));
    same(restore_limits, json!({}));
    same(budget, json!({}));
    same(session, json!({}));
    same(prompt_parts, json!({}));
    same(prompt_parts, json!({"offload_guidance": null, "date": 5}));
    same(
        prompt_parts,
        json!({"offload_guidance": {"folder": 1}, "zz": 1}),
    );
    same(
        prompt_parts,
        json!({"offload_guidance": {"zz": 1}, "base": "b"}),
    );
    same(
        prompt_parts,
        json!({"offload_guidance": {}, "skills": [{"name": 1}]}),
    );
    same(
        offload_guidance,
        json!({"paging_tool": "p", "limit_param": "l"}),
    );
    same(
        session,
        json!({"family": "anthropic", "entries": [], "zz": 1}),
    );
    same(session, json!({"entries": [{"seq": 1}], "checkpoints": 3}));
    same(
        session,
        json!({"nudge_state": {"x": 1}, "usage_anchor": null}),
    );
    same(
        session,
        json!({"entries": [{"seq": 1, "message": {"role": "user", "content": "hi"}, "tokens": 3}]}),
    );
    let nested = json!({"restore": {"max_files": "x"}, "transcript": {"total_bytes": -1}});
    same(policy, nested);
    same(policy, json!({"clear_tool_results": {"zz": 1}}));
    same(policy, json!({"clear_tool_results": {}, "restore": null}));
    same(
        policy,
        json!({"nudges": {"stall_text": 5}, "idle_margin_percent": 101}),
    );
}

#[test]
fn policy_reads_as_derived() {
    let base = serde_json::to_value(Policy::default()).unwrap_or_default();
    same(policy, base.clone());
    same(policy, json!({}));
    same(policy, json!(3));
    same(policy, json!({"nudges": {"memory_every_turns": "ten"}}));
    same(policy, json!({"zz": 1, "family": "nope"}));
    same(policy, json!({"aa": 1, "family": "nope"}));
    same(policy, json!({"background_percent": null, "restore": null}));
    let keys = keys(&base);
    assert!(!keys.is_empty(), "{base}");
    for key in &keys {
        same(policy, with(&base, key, None));
        same(policy, with(&base, key, Some(json!("bad"))));
        same(policy, with(&base, key, Some(json!(null))));
        same(policy, with(&base, key, Some(json!({"nested": 1}))));
    }
}

#[test]
fn memory_entries_and_checkpoints_read_as_derived() {
    same(memory_entry, json!({}));
    same(memory_entry, json!({"importance": "high", "zz": 1}));
    same(memory_entry, json!({"source": "nope", "tags": ["a"]}));
    let entries = |value: Value, at: &str| list(value, at, memory_entry);
    same::<Vec<MemoryEntry>>(entries, json!([{}, {"title": 3}]));
    same::<Vec<MemoryEntry>>(entries, json!({"a": 1}));
    same::<Vec<MemoryEntry>>(entries, json!(null));
    let good = json!({"through_seq": 4, "summary": "s", "method": "llm", "tokens": 9,
                      "made_at_turn": 2, "pinned": [], "restore": null, "zz": 1});
    same(checkpoint, good.clone());
    same(checkpoint, json!({}));
    same(
        checkpoint,
        json!({"through_seq": 4, "summary": "s", "tokens": 9, "made_at_turn": 2}),
    );
    same(checkpoint, json!({"method": "nope", "tokens": "x"}));
    same(checkpoint, json!({"pinned": [{"x": 1}], "summary": 1}));
    for key in keys(&good) {
        same(checkpoint, with(&good, &key, None));
        same(checkpoint, with(&good, &key, Some(json!(-1))));
    }
    same(
        session,
        json!({"checkpoints": [good.clone(), {"summary": 1}]}),
    );
    same(session, json!({"checkpoints": [good]}));
    same(session, json!({"checkpoints": "x"}));
}
