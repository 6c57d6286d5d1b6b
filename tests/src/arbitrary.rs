//! proptest strategies for messages and for logs in the shapes that break providers.
//!
//! [`arb_log`] builds conversations from exchanges (a user turn, an assistant message with zero
//! to three parallel calls, their results), then damages them the way real logs get damaged:
//! results dropped (compaction, crashes), duplicated, reordered or interleaved with other
//! messages, orphans from elsewhere, ids reused across turns (`call_0` every turn) or invalid
//! for Anthropic (`fn.read:0`, `../../etc/x`), blank results, a trailing unanswered call.

use ctxkit_core::{Content, ImageSource, Message, Part, Provider, Role, ToolCall};
use proptest::prelude::*;
use proptest::sample::select;

/// Text of every kind the estimators and renderers must survive: ASCII words, code, JSON,
/// CJK, emoji, combining marks, blank.
pub fn arb_text() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[a-zA-Z ,.]{1,40}",
        1 => Just(String::new()),
        1 => Just("  \n".to_owned()),
        1 => "[\\u{4e00}-\\u{4e80}\\u{3040}-\\u{3090}]{1,12}",
        1 => "(e\\u{301}|\\u{1F600}|\\u{1F469}\\u{200D}\\u{1F4BB}|x){1,6}",
        1 => "\\{\"[a-z]{1,6}\": [0-9]{1,5}\\}",
    ]
}

/// A tool-call id, drawn from a small pool so duplicates and invalid ids are common.
pub fn arb_call_id() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => select(vec!["call_0", "call_1", "call_2", "toolu_01", "toolu_02", "a"]).prop_map(str::to_owned),
        1 => select(vec!["../../etc/x", "fn.read:0", "", "id with spaces"]).prop_map(str::to_owned),
        2 => "call_[a-f0-9]{6}",
    ]
}

/// A tool call with JSON-object arguments.
pub fn arb_tool_call() -> impl Strategy<Value = ToolCall> {
    (
        arb_call_id(),
        select(vec!["bash", "read_file", "edit_file", "grep"]),
        "[a-z./]{0,16}",
    )
        .prop_map(|(id, name, path)| {
            ToolCall::new(id, name, serde_json::json!({ "path": path }).to_string())
        })
}

/// A content part of any kind (text, image, thinking, opaque from either provider).
pub fn arb_part() -> impl Strategy<Value = Part> {
    prop_oneof![
        4 => arb_text().prop_map(|text| Part::Text { text }),
        1 => "[A-Za-z0-9+/]{4,16}".prop_map(|data| Part::Image {
            source: ImageSource::Base64 { media_type: "image/png".into(), data },
            detail: None,
        }),
        1 => "https://example\\.com/[a-z]{1,8}\\.png".prop_map(|url| Part::Image {
            source: ImageSource::Url { url },
            detail: None,
        }),
        1 => (arb_text(), "[A-Za-z0-9+/=]{8,24}").prop_map(|(thinking, signature)| Part::Thinking { thinking, signature }),
        1 => "[a-z]{1,10}".prop_map(|data| Part::Opaque {
            provider: Provider::Anthropic,
            block: serde_json::json!({"type": "redacted_thinking", "data": data}),
        }),
        1 => "[a-z]{1,10}".prop_map(|data| Part::Opaque {
            provider: Provider::OpenAi,
            block: serde_json::json!({"type": "input_audio", "input_audio": {"data": data, "format": "wav"}}),
        }),
    ]
}

/// Content as a string or as parts.
pub fn arb_content() -> impl Strategy<Value = Content> {
    prop_oneof![
        3 => arb_text().prop_map(Content::Text),
        1 => prop::collection::vec(arb_part(), 0..4).prop_map(Content::Parts),
    ]
}

/// A message of any role with any fields set, including combinations no provider would send.
pub fn arb_message() -> impl Strategy<Value = Message> {
    (
        select(vec![Role::System, Role::User, Role::Assistant, Role::Tool]),
        arb_content(),
        prop::collection::vec(arb_tool_call(), 0..3),
        prop::option::of(arb_call_id()),
        any::<bool>(),
    )
        .prop_map(
            |(role, content, tool_calls, tool_call_id, is_error)| Message {
                role,
                content,
                tool_calls: if role == Role::Assistant {
                    tool_calls
                } else {
                    Vec::new()
                },
                tool_call_id: if role == Role::Tool {
                    tool_call_id
                } else {
                    None
                },
                is_error: role == Role::Tool && is_error,
                name: None,
                provider_fields: None,
            },
        )
}

/// One exchange: a user turn, an assistant reply with 0..=3 calls and their results (sometimes
/// a big prompt or output), damaged.
fn arb_exchange() -> impl Strategy<Value = Vec<Message>> {
    (
        arb_text(),
        arb_text(),
        prop::collection::vec(arb_tool_call(), 0..=3),
        prop::collection::vec(
            select(vec![
                Damage::None,
                Damage::None,
                Damage::None,
                Damage::Drop,
                Damage::Duplicate,
                Damage::Blank,
                Damage::Late,
            ]),
            3,
        ),
        any::<bool>(),
        any::<bool>(),
        prop::option::of(arb_call_id()),
        prop_oneof![4 => Just(0usize), 1 => 1usize..2_000],
    )
        .prop_map(
            |(prompt, reply, calls, damages, reverse, interleave, orphan, big)| {
                // Sometimes a big prompt or output (up to ~60 KB), as real tool results are.
                let prompt = if big > 1_000 {
                    format!("{prompt} {}", "please ".repeat(big))
                } else {
                    prompt
                };
                let mut exchange = vec![
                    Message::user(prompt),
                    Message::assistant(reply, calls.clone()),
                ];
                let mut results = Vec::new();
                let mut late = Vec::new();
                for (index, (call, damage)) in calls.iter().zip(damages).enumerate() {
                    let output = if index == 0 && big > 0 {
                        "line of output ".repeat(big * 2)
                    } else {
                        format!("output of {}", call.name)
                    };
                    let result = Message::tool_result(call.id.clone(), output, call.name == "grep");
                    match damage {
                        Damage::None => results.push(result),
                        Damage::Drop => {}
                        Damage::Duplicate => {
                            results.push(result.clone());
                            results.push(result);
                        }
                        Damage::Blank => {
                            results.push(Message::tool_result(call.id.clone(), "", false))
                        }
                        Damage::Late => late.push(result),
                    }
                }
                if reverse {
                    results.reverse();
                }
                if interleave && !results.is_empty() {
                    results.insert(
                        results.len() / 2,
                        Message::user("a reminder between results"),
                    );
                }
                if let Some(id) = orphan {
                    results.push(Message::tool_result(id, "orphan from elsewhere", false));
                }
                exchange.extend(results);
                exchange.push(Message::assistant("follow-up", Vec::new()));
                exchange.extend(late);
                exchange
            },
        )
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Damage {
    None,
    Drop,
    Duplicate,
    Blank,
    Late,
}

/// A damaged log: 0..8 exchanges, sometimes a system message first or in the middle, sometimes
/// starting mid-exchange (as after a compaction cut), sometimes a trailing unanswered call.
pub fn arb_log() -> impl Strategy<Value = Vec<Message>> {
    (
        prop::collection::vec(arb_exchange(), 0..8),
        any::<bool>(),
        0usize..3,
        prop::option::of(arb_tool_call()),
        prop::option::of(arb_message()),
    )
        .prop_map(|(exchanges, system_first, cut, trailing_call, stray)| {
            let mut log: Vec<Message> = Vec::new();
            if system_first {
                log.push(Message::text(Role::System, "system notes"));
            }
            log.extend(exchanges.into_iter().flatten().skip(cut));
            if let Some(stray) = stray {
                let at = log.len() / 2;
                log.insert(at, stray);
            }
            if let Some(call) = trailing_call {
                log.push(Message::assistant("", vec![call]));
            }
            log
        })
}
