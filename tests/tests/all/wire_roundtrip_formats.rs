//! Round-trip properties of the Responses, Gemini, AI SDK and LangChain converters, on
//! generated conversations in each format's normal form (the "representable" rules in each
//! converter's module documentation, which the generators below follow): format → model →
//! format is the identity on the model, `from_X(to_X(msgs)) == msgs`, at 10,000 cases each.
//! Conversations are built from turns (a user message, an assistant reply with 0..=3 parallel
//! calls, one result per call) so they are the shapes agents send.

use ctxkit_core::wire::{from_format, render_messages, WireFormat};
use ctxkit_core::{Content, ImageSource, Message, Part, Provider, Role, ToolCall};
use proptest::prelude::*;
use serde_json::{json, Value};

fn words() -> impl Strategy<Value = String> {
    "[a-z \"\\\\{}é日😀\n]{1,8}"
}

fn image(detail: bool) -> impl Strategy<Value = Part> {
    let source = prop_oneof![
        ("image/[a-z]{1,4}", "[A-Za-z0-9+/=]{1,8}")
            .prop_map(|(media_type, data)| ImageSource::Base64 { media_type, data }),
        "https://example\\.com/[a-z]{1,5}".prop_map(|url| ImageSource::Url { url }),
    ];
    let detail = if detail {
        prop::option::of(prop_oneof![Just("low".to_owned()), Just("high".to_owned())]).boxed()
    } else {
        Just(None).boxed()
    };
    (source, detail).prop_map(|(source, detail)| Part::Image { source, detail })
}

fn thinking() -> impl Strategy<Value = Part> {
    (words(), "[A-Za-z0-9+/=]{1,12}").prop_map(|(thinking, signature)| Part::Thinking {
        thinking,
        signature,
    })
}

/// Arguments as a JSON object's compact text, keys sorted (what readers of object-argument
/// formats store).
fn object_arguments() -> impl Strategy<Value = String> {
    prop::collection::btree_map(
        "[a-z]{1,3}",
        prop_oneof![
            any::<i32>().prop_map(Value::from),
            words().prop_map(Value::from),
            Just(json!([1, {"k": null}])),
        ],
        0..3,
    )
    .prop_map(|map| Value::Object(map.into_iter().collect()).to_string())
}

/// One turn: the user message, the assistant's reply and one result per call.
#[derive(Debug, Clone)]
struct Turn {
    user: Content,
    reply: Content,
    calls: Vec<(String, String)>,
    results: Vec<(Content, bool)>,
}

fn turn(
    user: BoxedStrategy<Content>,
    reply: BoxedStrategy<Content>,
    arguments: BoxedStrategy<String>,
    result: BoxedStrategy<(Content, bool)>,
) -> impl Strategy<Value = Turn> {
    (
        user,
        reply,
        prop::collection::vec(("[a-z_]{1,6}", arguments), 0..=3),
        prop::collection::vec(result, 3),
    )
        .prop_map(|(user, reply, calls, mut results)| {
            results.truncate(calls.len());
            Turn {
                user,
                reply,
                calls,
                results,
            }
        })
}

/// The turns as messages: call ids are unique over the conversation; `named` gives each result
/// its call's name (formats that name results by their tool).
fn conversation(system: Option<Content>, turns: Vec<Turn>, named: bool) -> Vec<Message> {
    let mut messages: Vec<Message> = system
        .map(|content| Message {
            content,
            ..Message::text(Role::System, "")
        })
        .into_iter()
        .collect();
    for (turn_index, turn) in turns.into_iter().enumerate() {
        messages.push(Message {
            content: turn.user,
            ..Message::text(Role::User, "")
        });
        let calls: Vec<ToolCall> = turn
            .calls
            .iter()
            .enumerate()
            .map(|(index, (name, arguments))| {
                ToolCall::new(format!("call_{turn_index}_{index}"), name, arguments)
            })
            .collect();
        let reply = match (&turn.reply, calls.is_empty()) {
            // Beside calls, content is text or several parts in every format's normal form.
            (Content::Parts(parts), false) if parts.len() < 2 => Content::Text(String::new()),
            (content, _) => content.clone(),
        };
        messages.push(Message {
            content: reply,
            tool_calls: calls.clone(),
            ..Message::text(Role::Assistant, "")
        });
        for (call, (content, is_error)) in calls.iter().zip(turn.results) {
            messages.push(Message {
                content,
                is_error,
                name: named.then(|| call.name.clone()),
                tool_call_id: Some(call.id.clone()),
                ..Message::text(Role::Tool, "")
            });
        }
    }
    messages
}

fn parts(part: BoxedStrategy<Part>, min: usize) -> BoxedStrategy<Content> {
    prop::collection::vec(part, min..4)
        .prop_map(Content::Parts)
        .boxed()
}

fn text_or(parts: BoxedStrategy<Content>) -> BoxedStrategy<Content> {
    prop_oneof![words().prop_map(Content::Text), parts].boxed()
}

fn round_trip(messages: &[Message], format: WireFormat) -> Result<(), TestCaseError> {
    let json = render_messages(messages, format).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let read =
        from_format(&json, format).map_err(|e| TestCaseError::fail(format!("{e}\n{json:#}")))?;
    prop_assert_eq!(read, messages.to_vec(), "{:#}", json);
    Ok(())
}

fn responses_messages() -> impl Strategy<Value = Vec<Message>> {
    let input_part = prop_oneof![words().prop_map(|text| Part::Text { text }), image(true)].boxed();
    let refusal = words().prop_map(|text| Part::Opaque {
        provider: Provider::Responses,
        block: json!({"type": "refusal", "refusal": text}),
    });
    let reasoning = ("[a-z0-9]{1,6}", "[A-Za-z0-9+/=]{1,16}").prop_map(|(id, secret)| Part::Opaque {
        provider: Provider::Responses,
        block: json!({"type": "reasoning", "id": format!("rs_{id}"), "summary": [], "encrypted_content": secret}),
    });
    // Reasoning items first, then the message's content parts (at least one).
    let reply = (
        prop::collection::vec(reasoning, 0..2),
        prop::collection::vec(
            prop_oneof![words().prop_map(|text| Part::Text { text }), refusal],
            1..3,
        ),
    )
        .prop_map(|(mut items, content)| {
            items.extend(content);
            Content::Parts(items)
        });
    let result = (text_or(parts(input_part.clone(), 0)), Just(false)).boxed();
    (
        prop::option::of(words().prop_map(Content::Text)),
        prop::collection::vec(
            turn(
                text_or(parts(input_part, 0)),
                text_or(reply.boxed()),
                "\\PC{0,8}".boxed(),
                result,
            ),
            0..4,
        ),
    )
        .prop_map(|(system, turns)| conversation(system, turns, false))
}

fn gemini_messages() -> impl Strategy<Value = Vec<Message>> {
    let part = prop_oneof![
        words().prop_map(|text| Part::Text { text }),
        ("image/[a-z]{1,4}", "[A-Za-z0-9+/=]{1,8}").prop_map(|(media_type, data)| Part::Image {
            source: ImageSource::Base64 { media_type, data },
            detail: None
        }),
        words().prop_map(|text| Part::Opaque {
            provider: Provider::Gemini,
            block: json!({"text": text, "thought": true}),
        }),
    ]
    .boxed();
    let result = (words().prop_map(Content::Text), any::<bool>()).boxed();
    (
        prop::option::of(words().prop_map(Content::Text)),
        prop::collection::vec(
            turn(
                text_or(parts(part.clone(), 2)),
                text_or(parts(part, 2)),
                object_arguments().boxed(),
                result,
            ),
            0..4,
        ),
    )
        .prop_map(|(system, turns)| conversation(system, turns, true))
}

fn ai_sdk_messages() -> impl Strategy<Value = Vec<Message>> {
    let part = prop_oneof![words().prop_map(|text| Part::Text { text }), image(false)].boxed();
    let reply_part = prop_oneof![
        words().prop_map(|text| Part::Text { text }),
        image(false),
        thinking()
    ]
    .boxed();
    let arguments = prop_oneof![
        object_arguments(),
        words().prop_map(|text| Value::String(text).to_string()),
        any::<i32>().prop_map(|n| n.to_string()),
    ];
    // A `content` output has no image address: only inline images.
    let output_part = prop_oneof![
        words().prop_map(|text| Part::Text { text }),
        ("image/[a-z]{1,4}", "[A-Za-z0-9+/=]{1,8}").prop_map(|(media_type, data)| Part::Image {
            source: ImageSource::Base64 { media_type, data },
            detail: None
        }),
    ]
    .boxed();
    let result = prop_oneof![
        (words().prop_map(Content::Text), any::<bool>()),
        (parts(output_part, 1), Just(false)),
        (object_arguments().prop_map(|json| Content::Parts(vec![Part::Opaque {
            provider: Provider::AiSdk,
            block: json!({"type": "json", "value": serde_json::from_str::<Value>(&json).unwrap_or_default()}),
        }])), Just(false)),
    ]
    .boxed();
    (
        prop::option::of(words().prop_map(Content::Text)),
        prop::collection::vec(
            turn(
                text_or(parts(part, 0)),
                text_or(parts(reply_part, 2)),
                arguments.boxed(),
                result,
            ),
            0..4,
        ),
    )
        .prop_map(|(system, turns)| conversation(system, turns, true))
}

fn langchain_messages() -> impl Strategy<Value = Vec<Message>> {
    let part = prop_oneof![
        words().prop_map(|text| Part::Text { text }),
        image(true),
        thinking()
    ]
    .boxed();
    let result = (text_or(parts(part.clone(), 0)), any::<bool>()).boxed();
    (
        prop::option::of(text_or(parts(part.clone(), 0))),
        prop::collection::vec(
            turn(
                text_or(parts(part.clone(), 0)),
                text_or(parts(part, 0)),
                object_arguments().boxed(),
                result,
            ),
            0..4,
        ),
    )
        .prop_map(|(system, turns)| conversation(system, turns, false))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10_000))]

    #[test]
    fn responses_round_trip_is_exact_on_the_model(messages in responses_messages()) {
        round_trip(&messages, WireFormat::Responses)?;
    }

    #[test]
    fn gemini_round_trip_is_exact_on_the_model(messages in gemini_messages()) {
        round_trip(&messages, WireFormat::Gemini)?;
    }

    #[test]
    fn ai_sdk_round_trip_is_exact_on_the_model(messages in ai_sdk_messages()) {
        round_trip(&messages, WireFormat::AiSdk)?;
    }

    #[test]
    fn langchain_round_trip_is_exact_on_the_model(messages in langchain_messages()) {
        round_trip(&messages, WireFormat::LangChain)?;
    }
}
