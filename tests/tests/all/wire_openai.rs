//! Snapshots of the OpenAI converter on hand-written fixtures (tests/fixtures/wire/openai_*).
//!
//! Each snapshot holds the model (`messages`, in the ctxkit serde form), what `to_openai` writes
//! back (`openai`), and the best-effort crossing to Anthropic (`anthropic`). Fixtures already in
//! normal form must come back identical; `openai_normalized` shows each normalization rule.

use ctxkit_core::wire::{from_openai, to_anthropic, to_openai};
use serde_json::{json, Value};

use crate::support::wire_fixture as fixture;

/// Reads a fixture and returns (snapshot, what to_openai wrote).
fn convert(name: &str) -> (Value, Value) {
    let input = fixture(name);
    let messages = from_openai(&input).unwrap_or_else(|error| panic!("{name}: {error}"));
    let back = to_openai(&messages);
    assert_eq!(
        from_openai(&back).unwrap(),
        messages,
        "{name}: the model must survive a round trip"
    );
    let anthropic =
        to_anthropic(&messages).unwrap_or_else(|error| json!({"error": error.to_string()}));
    (
        json!({"messages": messages, "openai": back, "anthropic": anthropic}),
        back,
    )
}

#[test]
fn parallel_calls_names_and_results() {
    let (snapshot, back) = convert("openai_parallel_calls.json");
    assert_eq!(back, fixture("openai_parallel_calls.json"));
    insta::assert_json_snapshot!("openai_parallel_calls", snapshot);
}

#[test]
fn images_audio_files_and_refusals() {
    let (snapshot, back) = convert("openai_parts.json");
    assert_eq!(back, fixture("openai_parts.json"));
    insta::assert_json_snapshot!("openai_parts", snapshot);
}

#[test]
fn normalizations() {
    let (snapshot, _) = convert("openai_normalized.json");
    insta::assert_json_snapshot!("openai_normalized", snapshot);
}
