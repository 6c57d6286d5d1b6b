//! Round-trip properties of the wire formats, on generated messages.
//!
//! - Exact on the model: `from_X(to_X(msgs)) == msgs` for every list provider X can represent
//!   (the "representable" rules of `ctxkit_core::wire`, which the generators below follow).
//! - Stable on the JSON: for any list (parts of both providers, names, `is_error`, system
//!   messages anywhere), writing, reading and writing again gives the same JSON: the
//!   normalizations are applied once and for all.
//!
//! The generators are small on purpose (a few messages of a few parts) so 10,000 cases stay fast.

use std::collections::BTreeMap;

use ctxkit_core::wire::{from_anthropic, from_openai, to_anthropic, to_openai};
use ctxkit_core::{Content, ImageSource, Message, Part, Provider, Role, ToolCall};
use proptest::prelude::*;
use serde_json::{json, Value};

/// Which provider's parts a generator may produce.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Flavor {
    OpenAi,
    Anthropic,
    Either,
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![Just(String::new()), "[a-z \"\\\\{}é日😀\n]{1,6}"]
}

fn id() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9_]{1,8}"
}

fn image_source() -> impl Strategy<Value = ImageSource> {
    prop_oneof![
        ("image/[a-z]{1,4}", "[A-Za-z0-9+/=]{0,8}")
            .prop_map(|(media_type, data)| ImageSource::Base64 { media_type, data }),
        "https://example\\.com/[a-z]{0,5}".prop_map(|url| ImageSource::Url { url }),
    ]
}

/// A provider block ctxkit does not model: an unknown type, or a text block with extra fields.
fn opaque(provider: Provider) -> impl Strategy<Value = Part> {
    prop_oneof![
        ("x_[a-z]{1,5}", text())
            .prop_map(|(kind, payload)| json!({"type": kind, "payload": payload})),
        text().prop_map(
            |text| json!({"type": "text", "text": text, "cache_control": {"type": "ephemeral"}})
        ),
    ]
    .prop_map(move |block| Part::Opaque { provider, block })
}

/// A Chat Completions part ctxkit does not model, of a type the API takes (one of another type
/// cannot be represented: it is written as text, see `core/src/wire/openai.rs`).
fn openai_opaque() -> impl Strategy<Value = Part> {
    prop_oneof![
        text().prop_map(
            |data| json!({"type": "input_audio", "input_audio": {"data": data, "format": "wav"}})
        ),
        text().prop_map(
            |name| json!({"type": "file", "file": {"filename": name, "file_data": "AAAA"}})
        ),
        text().prop_map(
            |text| json!({"type": "text", "text": text, "cache_control": {"type": "ephemeral"}})
        ),
    ]
    .prop_map(|block| Part::Opaque {
        provider: Provider::OpenAi,
        block,
    })
}

fn part(flavor: Flavor) -> BoxedStrategy<Part> {
    let plain = prop_oneof![
        text().prop_map(|text| Part::Text { text }),
        image_source().prop_map(|source| Part::Image {
            source,
            detail: None
        }),
    ];
    let openai = prop_oneof![
        (
            image_source(),
            prop_oneof![Just("low"), Just("high"), Just("auto")]
        )
            .prop_map(|(source, detail)| Part::Image {
                source,
                detail: Some(detail.to_owned())
            }),
        openai_opaque(),
    ];
    let anthropic = prop_oneof![
        (text(), "[A-Za-z0-9+/=]{0,12}").prop_map(|(thinking, signature)| Part::Thinking {
            thinking,
            signature
        }),
        opaque(Provider::Anthropic),
    ];
    match flavor {
        Flavor::OpenAi => prop_oneof![3 => plain, 2 => openai].boxed(),
        Flavor::Anthropic => prop_oneof![3 => plain, 2 => anthropic].boxed(),
        Flavor::Either => prop_oneof![2 => plain, 1 => openai, 1 => anthropic].boxed(),
    }
}

fn content(flavor: Flavor) -> impl Strategy<Value = Content> {
    prop_oneof![
        text().prop_map(Content::Text),
        prop::collection::vec(part(flavor), 0..4).prop_map(Content::Parts),
    ]
}

/// Arguments as Anthropic stores them: the compact JSON of an object, keys sorted; sometimes
/// empty (read as `{}`, so only for the JSON-stability properties).
fn object_arguments() -> impl Strategy<Value = String> {
    let value = prop_oneof![
        any::<i32>().prop_map(Value::from),
        any::<bool>().prop_map(Value::from),
        text().prop_map(Value::from),
        Just(json!([1, {"k": null}])),
    ];
    prop::collection::btree_map("[a-z]{1,3}", value, 0..3).prop_map(|map| {
        Value::Object(map.into_iter().collect::<serde_json::Map<_, _>>()).to_string()
    })
}

/// Arguments as OpenAI carries them: any text, JSON or not.
fn any_arguments() -> impl Strategy<Value = String> {
    prop_oneof![object_arguments(), Just(String::new()), "\\PC{0,8}"]
}

fn calls(arguments: BoxedStrategy<String>) -> impl Strategy<Value = Vec<ToolCall>> {
    prop::collection::vec(
        (id(), "[a-z_]{1,6}", arguments)
            .prop_map(|(id, name, arguments)| ToolCall::new(id, name, arguments)),
        0..3,
    )
}

fn message(role: Role, content: Content) -> Message {
    Message {
        content,
        ..Message::text(role, "")
    }
}

/// Messages OpenAI can represent: any role anywhere, `name` anywhere, no `is_error`.
fn openai_message() -> impl Strategy<Value = Message> {
    let name = || prop::option::of("[a-z]{1,5}");
    prop_oneof![
        (
            prop_oneof![Just(Role::System), Just(Role::User)],
            content(Flavor::OpenAi),
            name()
        )
            .prop_map(|(role, content, name)| Message {
                name,
                ..message(role, content)
            }),
        (
            content(Flavor::OpenAi),
            calls(any_arguments().boxed()),
            name()
        )
            .prop_map(|(content, tool_calls, name)| {
                Message {
                    tool_calls,
                    name,
                    ..message(Role::Assistant, content)
                }
            }),
        (content(Flavor::OpenAi), id(), name()).prop_map(|(content, id, name)| Message {
            tool_call_id: Some(id),
            name,
            ..message(Role::Tool, content)
        }),
    ]
}

/// One non-system message Anthropic can represent (before the content-shape rule is applied).
fn anthropic_message() -> impl Strategy<Value = Message> {
    prop_oneof![
        content(Flavor::Anthropic).prop_map(|content| message(Role::User, content)),
        (
            content(Flavor::Anthropic),
            calls(object_arguments().boxed())
        )
            .prop_map(|(content, tool_calls)| Message {
                tool_calls,
                ..message(Role::Assistant, content)
            }),
        (content(Flavor::Anthropic), id(), any::<bool>()).prop_map(|(content, id, is_error)| {
            Message {
                tool_call_id: Some(id),
                is_error,
                ..message(Role::Tool, content)
            }
        }),
    ]
}

/// The one content shape with two model forms (see `ctxkit_core::wire`): next to tool blocks, a
/// block list of one non-empty text block (and, for an assistant with calls, of none) is text;
/// and blank text parts are not representable in a block list.
fn apply_content_shape_rule(messages: &mut [Message]) {
    let mut previous_is_tool = false;
    for message in messages.iter_mut() {
        let with_calls = message.role == Role::Assistant && !message.tool_calls.is_empty();
        let after_results =
            message.role != Role::Tool && message.role != Role::Assistant && previous_is_tool;
        // Anthropic rejects blank text blocks: the writer leaves them out of block lists.
        if let Content::Parts(parts) = &mut message.content {
            parts.retain(|part| !matches!(part, Part::Text { text } if text.trim().is_empty()));
        }
        if with_calls || after_results {
            if let Content::Text(text) = &mut message.content {
                if with_calls && text.trim().is_empty() {
                    text.clear();
                }
            }
            let as_text = match &message.content {
                Content::Parts(parts) => match parts.as_slice() {
                    [] if with_calls => Some(String::new()),
                    [Part::Text { text }] if !text.is_empty() => Some(text.clone()),
                    _ => None,
                },
                Content::Text(_) => None,
            };
            if let Some(text) = as_text {
                message.content = Content::Text(text);
            }
        }
        previous_is_tool = message.role == Role::Tool;
    }
}

/// Lists Anthropic can represent: at most one system message, first, of text and blocks.
fn anthropic_messages() -> impl Strategy<Value = Vec<Message>> {
    let system = prop::option::of(prop_oneof![
        text().prop_map(Content::Text),
        prop::collection::vec(
            prop_oneof![
                text().prop_map(|text| Part::Text { text }),
                opaque(Provider::Anthropic)
            ],
            0..3
        )
        .prop_map(Content::Parts),
    ]);
    (system, prop::collection::vec(anthropic_message(), 0..6)).prop_map(|(system, rest)| {
        let mut messages: Vec<Message> = system
            .map(|content| message(Role::System, content))
            .into_iter()
            .collect();
        messages.extend(rest);
        apply_content_shape_rule(&mut messages);
        messages
    })
}

/// Anything the model can hold that both writers accept: parts of both providers, names,
/// `is_error`, system messages anywhere; tool messages always name their call and arguments are
/// JSON objects (or empty).
fn any_messages() -> impl Strategy<Value = Vec<Message>> {
    let any_message = (
        prop_oneof![
            Just(Role::System),
            Just(Role::User),
            Just(Role::Assistant),
            Just(Role::Tool)
        ],
        content(Flavor::Either),
        calls(prop_oneof![object_arguments(), Just(String::new())].boxed()),
        id(),
        any::<bool>(),
        prop::option::of("[a-z]{1,5}"),
    )
        .prop_map(|(role, content, tool_calls, id, is_error, name)| Message {
            role,
            content,
            tool_calls: if role == Role::Assistant {
                tool_calls
            } else {
                Vec::new()
            },
            tool_call_id: (role == Role::Tool).then_some(id),
            is_error,
            name,
            provider_fields: None,
        });
    prop::collection::vec(any_message, 0..7)
}

fn counts_by_role(messages: &[Message]) -> BTreeMap<Role, usize> {
    let mut counts = BTreeMap::new();
    for message in messages {
        *counts.entry(message.role).or_insert(0) += 1;
    }
    counts
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10_000))]

    #[test]
    fn openai_round_trip_is_exact_on_the_model(messages in prop::collection::vec(openai_message(), 0..6)) {
        let json = to_openai(&messages);
        prop_assert_eq!(from_openai(&json).unwrap(), messages);
    }

    #[test]
    fn anthropic_round_trip_is_exact_on_the_model(messages in anthropic_messages()) {
        let json = to_anthropic(&messages).unwrap();
        prop_assert_eq!(from_anthropic(&json).unwrap(), messages);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10_000))]

    #[test]
    fn openai_json_is_stable_after_one_trip(messages in any_messages()) {
        let first = to_openai(&messages);
        let read = from_openai(&first).unwrap();
        prop_assert_eq!(read.len(), messages.len());
        prop_assert_eq!(to_openai(&read), first);
    }

    #[test]
    fn anthropic_json_is_stable_after_one_trip(messages in any_messages()) {
        let first = to_anthropic(&messages).unwrap();
        let read = from_anthropic(&first).unwrap();
        // Only system messages change role (a later one is sent as a user turn); tool results
        // and tool calls are all kept.
        let (before, after) = (counts_by_role(&messages), counts_by_role(&read));
        prop_assert_eq!(before.get(&Role::Tool), after.get(&Role::Tool));
        prop_assert_eq!(before.get(&Role::Assistant), after.get(&Role::Assistant));
        prop_assert_eq!(to_anthropic(&read).unwrap(), first);
    }

    #[test]
    fn crossing_providers_keeps_the_tool_structure(messages in anthropic_messages()) {
        let via_openai = from_openai(&to_openai(&messages)).unwrap();
        let via_both = from_anthropic(&to_anthropic(&via_openai).unwrap()).unwrap();
        for crossed in [&via_openai, &via_both] {
            prop_assert_eq!(crossed.len(), messages.len());
            for (original, crossed) in messages.iter().zip(crossed.iter()) {
                prop_assert_eq!(original.role, crossed.role);
                prop_assert_eq!(&original.tool_calls, &crossed.tool_calls);
                prop_assert_eq!(&original.tool_call_id, &crossed.tool_call_id);
            }
        }
    }
}
