//! Snapshots of the Anthropic converter on hand-written fixtures
//! (tests/fixtures/wire/anthropic_*).
//!
//! Each snapshot holds the model (`messages`, in the ctxkit serde form), what `to_anthropic`
//! writes back (`anthropic`), and the best-effort crossing to OpenAI (`openai`). Fixtures already
//! in normal form must come back identical; `anthropic_normalized` shows each normalization rule.

use ctxkit_core::wire::{from_anthropic, to_anthropic, to_openai};
use serde_json::{json, Value};

use crate::support::wire_fixture as fixture;

/// Reads a fixture and returns (snapshot, what to_anthropic wrote).
fn convert(name: &str) -> (Value, Value) {
    let input = fixture(name);
    let messages = from_anthropic(&input).unwrap_or_else(|error| panic!("{name}: {error}"));
    let back = to_anthropic(&messages).unwrap_or_else(|error| panic!("{name}: {error}"));
    assert_eq!(
        from_anthropic(&back).unwrap(),
        messages,
        "{name}: the model must survive a round trip"
    );
    let snapshot = json!({"messages": messages, "anthropic": back, "openai": to_openai(&messages)});
    (snapshot, back)
}

#[test]
fn parallel_tool_use_thinking_is_error_and_a_reminder() {
    let (snapshot, back) = convert("anthropic_parallel_tool_use.json");
    assert_eq!(back, fixture("anthropic_parallel_tool_use.json"));
    insta::assert_json_snapshot!("anthropic_parallel_tool_use", snapshot);
}

#[test]
fn images_documents_server_tools_and_cache_control() {
    let (snapshot, back) = convert("anthropic_blocks.json");
    assert_eq!(back, fixture("anthropic_blocks.json"));
    insta::assert_json_snapshot!("anthropic_blocks", snapshot);
}

#[test]
fn normalizations() {
    let (snapshot, _) = convert("anthropic_normalized.json");
    insta::assert_json_snapshot!("anthropic_normalized", snapshot);
}
