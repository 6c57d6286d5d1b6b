//! Properties of the token estimators over arbitrary input: they never panic (arbitrary
//! strings with CJK, emoji and combining marks, arbitrary bytes as images, arbitrary JSON as
//! tool schemas), `estimate_messages` is additive over concatenation, and more text never
//! costs fewer tokens.

use ctxkit_core::tokens::{
    bytes4_message, bytes4_messages, estimate_message, estimate_messages, estimate_text,
    estimate_tool_schemas, sniff_base64_image_size, sniff_image_size, ModelFamily,
};
use ctxkit_core::{Content, ImageSource, Message, Part, Provider, Role, ToolCall};
use proptest::prelude::*;

/// Text mixing ASCII, Latin accents, Cyrillic, CJK, Hangul, emoji (with ZWJ and skin tones)
/// and combining marks, plus fully arbitrary strings.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[a-zA-Z0-9 ,.{}\":\\n]{0,200}",
        "[äöüßжщЖ中文日本語のかカ한국어\u{0301}\u{0308}\u{200d}😀👍🏽→─ a1]{0,120}",
    ]
}

fn family() -> impl Strategy<Value = ModelFamily> {
    prop_oneof![
        Just(ModelFamily::OpenAi),
        Just(ModelFamily::Claude),
        Just(ModelFamily::Claude47)
    ]
}

fn message() -> impl Strategy<Value = Message> {
    (
        text(),
        text(),
        text(),
        prop::collection::vec(any::<u8>(), 0..64),
        0..6u8,
    )
        .prop_map(|(first, second, third, image, shape)| match shape {
            0 => Message::user(first),
            1 => Message::assistant(first, vec![ToolCall::new(second, third, "{}")]),
            2 => Message::tool_result(first, second, true),
            3 => Message {
                content: Content::Parts(vec![
                    Part::Text { text: first },
                    Part::Thinking {
                        thinking: second,
                        signature: third.clone(),
                    },
                    Part::Opaque {
                        provider: Provider::Anthropic,
                        block: serde_json::json!({ "x": third }),
                    },
                ]),
                ..Message::text(Role::Assistant, "")
            },
            4 => Message {
                content: Content::Parts(vec![Part::Image {
                    source: ImageSource::Base64 {
                        media_type: "image/png".into(),
                        data: first,
                    },
                    detail: Some(second),
                }]),
                ..Message::user("")
            },
            _ => Message {
                content: Content::Parts(vec![Part::Image {
                    source: ImageSource::Base64 {
                        media_type: "image/jpeg".into(),
                        data: image
                            .iter()
                            .map(|byte| char::from(b'A' + byte % 26))
                            .collect(),
                    },
                    detail: None,
                }]),
                name: Some(third),
                ..Message::user("")
            },
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10_000))]

    #[test]
    fn estimators_never_panic(messages in prop::collection::vec(message(), 0..6), family in family()) {
        let total = estimate_messages(&messages, family);
        let by_message: u64 = messages.iter().map(|message| estimate_message(message, family)).sum();
        prop_assert_eq!(total, by_message);
        let reference: u64 = messages.iter().map(bytes4_message).sum();
        prop_assert!(bytes4_messages(&messages) >= reference);
    }

    #[test]
    fn image_sniffing_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..256), data in text()) {
        let _ = sniff_image_size(&bytes);
        let _ = sniff_base64_image_size(&data);
        for prefix in [&b"\x89PNG\r\n\x1a\n"[..], b"GIF89a", &[0xff, 0xd8]] {
            let mut framed = prefix.to_vec();
            framed.extend_from_slice(&bytes);
            let _ = sniff_image_size(&framed);
        }
    }

    #[test]
    fn tool_schemas_never_panic(name in text(), description in text(), family in family()) {
        let tools = serde_json::json!([{ "name": name, "description": description, "input_schema": { "type": "object" } }]);
        prop_assert!(estimate_tool_schemas(&tools, family) > 0);
        let _ = estimate_tool_schemas(&serde_json::Value::String(name), family);
    }

    #[test]
    fn additive_over_concatenation(
        first in prop::collection::vec(message(), 0..4),
        second in prop::collection::vec(message(), 0..4),
        family in family(),
    ) {
        let joined: Vec<Message> = first.iter().chain(&second).cloned().collect();
        prop_assert_eq!(
            estimate_messages(&joined, family),
            estimate_messages(&first, family) + estimate_messages(&second, family)
        );
    }

    #[test]
    fn more_text_never_costs_fewer_tokens(head in text(), tail in text(), family in family()) {
        let joined = format!("{head}{tail}");
        prop_assert!(estimate_text(&joined, family) >= estimate_text(&head, family));
        prop_assert!(estimate_text(&joined.repeat(2), family) >= estimate_text(&joined, family));
        prop_assert_eq!(estimate_text(&head, family) == 0, head.is_empty());
    }
}
