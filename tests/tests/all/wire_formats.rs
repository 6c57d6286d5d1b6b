//! Snapshots of the Responses, Gemini, AI SDK and LangChain converters on fixtures written
//! from each format's documentation (tests/fixtures/wire/README.md names the pages).
//!
//! Each snapshot holds the model (`messages`, in the ctxkit serde form), what the format's
//! writer gives back (`back`), the model rendered in every other format, what each provider's
//! validator says about those renderings (all must be empty: the fixtures are valid
//! conversations), and how much provider-bound state each rendering dropped.

use ctxkit_core::wire::{dropped_state, from_format, render_messages, validate, WireFormat};
use serde_json::{json, Map, Value};

use crate::support::wire_fixture as fixture;

/// Reads `name` as `format` and returns the snapshot and what the writer gave back.
fn convert(name: &str, format: WireFormat) -> (Value, Value) {
    let input = fixture(name);
    let messages = from_format(&input, format).unwrap_or_else(|error| panic!("{name}: {error}"));
    let back = render_messages(&messages, format).unwrap();
    assert_eq!(
        from_format(&back, format).unwrap(),
        messages,
        "{name}: the model must survive a round trip"
    );
    let mut snapshot = Map::new();
    snapshot.insert("messages".into(), serde_json::to_value(&messages).unwrap());
    snapshot.insert("back".into(), back.clone());
    let mut dropped = Map::new();
    for other in WireFormat::ALL {
        let rendered = render_messages(&messages, other).unwrap();
        if let Some(violations) = validate(&rendered, other) {
            assert_eq!(
                violations,
                Vec::new(),
                "{name} as {}: {rendered:#}",
                other.as_str()
            );
        }
        dropped.insert(
            other.as_str().into(),
            json!(dropped_state(&messages, other)),
        );
        if other != format && other != WireFormat::Ctxkit {
            snapshot.insert(other.as_str().into(), rendered);
        }
    }
    snapshot.insert("dropped_state".into(), Value::Object(dropped));
    (Value::Object(snapshot), back)
}

#[test]
fn responses_reasoning_parallel_calls_images_refusal_custom_tool() {
    let (snapshot, back) = convert("responses_items.json", WireFormat::Responses);
    // In normal form already: the items come back as they are, `encrypted_content` included.
    assert_eq!(back, fixture("responses_items.json"));
    insta::assert_json_snapshot!("responses_items", snapshot);
}

#[test]
fn gemini_thoughts_signatures_parallel_calls_errors_images() {
    let (snapshot, back) = convert("gemini_contents.json", WireFormat::Gemini);
    assert_eq!(back, fixture("gemini_contents.json"));
    insta::assert_json_snapshot!("gemini_contents", snapshot);
}

#[test]
fn ai_sdk_reasoning_parallel_calls_outputs_images_provider_options() {
    let (snapshot, back) = convert("ai_sdk_messages.json", WireFormat::AiSdk);
    assert_eq!(back, fixture("ai_sdk_messages.json"));
    insta::assert_json_snapshot!("ai_sdk_messages", snapshot);
}

#[test]
fn langchain_every_form_tool_calls_invalid_calls_errors() {
    let (snapshot, _) = convert("langchain_messages.json", WireFormat::LangChain);
    insta::assert_json_snapshot!("langchain_messages", snapshot);
}

#[test]
fn a_responses_reasoning_item_without_its_following_item_is_left_out() {
    // What repair leaves when the output after a reasoning item was an orphan (the
    // wire_formats fuzz target's input regression-responses-lone-reasoning): the API refuses a
    // reasoning item followed by nothing or by the user's side.
    use ctxkit_core::wire::{to_responses, validate_responses};
    use ctxkit_core::{Content, Message, Part, Provider};
    let reasoning = |id: &str| Message {
        content: Content::Parts(vec![Part::Opaque {
            provider: Provider::Responses,
            block: serde_json::json!({"type": "reasoning", "id": id, "summary": []}),
        }]),
        ..Message::assistant("", vec![])
    };
    let lone = to_responses(&[
        Message::user("hi"),
        reasoning("rs_1"),
        reasoning("rs_2"),
        Message::user("again"),
        reasoning("rs_3"),
    ]);
    let kinds: Vec<&str> = lone["input"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| {
            item["role"]
                .as_str()
                .unwrap_or_else(|| item["type"].as_str().unwrap())
        })
        .collect();
    assert_eq!(kinds, ["user", "user"], "{lone}");
    assert_eq!(validate_responses(&lone), Vec::new());
    // Followed by the message it led to, it stays.
    let kept = to_responses(&[
        Message::user("hi"),
        reasoning("rs_1"),
        Message::assistant("ok", vec![]),
    ]);
    assert_eq!(kept["input"][1]["id"], "rs_1", "{kept}");
    assert_eq!(validate_responses(&kept), Vec::new());
}
