//! The wire converters in both directions (`to_*`/`from_*` for OpenAI and Anthropic, and for
//! Responses, Gemini, AI SDK and LangChain), and tool pair repair followed by both validators.

use ctxkit_core::import::ctxkit_messages;
use ctxkit_core::wire::{
    from_format, to_ai_sdk, to_gemini, to_langchain, to_responses, validate, WireFormat,
};
use ctxkit_core::{
    from_anthropic, from_openai, repair_tool_pairs, to_anthropic, to_openai, Message, Role,
};
use serde_json::Value;

use crate::{assert_valid_for_both, not_passthrough, text};

/// The bytes as JSON, or `None` (nothing to check) when they are not.
fn json(data: &[u8]) -> Option<Value> {
    serde_json::from_slice(data).ok()
}

/// The bytes as ctxkit messages (a JSON array or JSONL), or `None`.
fn messages(data: &[u8]) -> Option<Vec<Message>> {
    ctxkit_messages(&text(data)).ok()
}

/// OpenAI in, and ctxkit messages out to OpenAI and back.
///
/// Invariants: what `from_openai` reads, `to_openai` writes in a form `from_openai` reads back
/// to the same messages' OpenAI form (a round trip is stable after one pass); repaired, it is
/// valid for both providers. Messages given in the ctxkit form are written by `to_openai` in a
/// form `from_openai` reads.
pub fn check_wire_openai(data: &[u8]) {
    if let Some(request) = json(data) {
        if let Ok(read) = from_openai(&request) {
            let written = to_openai(&read);
            let again = match from_openai(&written) {
                Ok(again) => again,
                Err(error) => {
                    panic!("from_openai refuses what to_openai wrote: {error}\n{written:#}")
                }
            };
            assert_eq!(
                to_openai(&again),
                written,
                "the OpenAI round trip is not stable"
            );
            assert_valid_for_both(&repair_tool_pairs(&read), "from_openai, repaired");
        }
    }
    if let Some(messages) = messages(data) {
        let written = to_openai(&messages);
        if let Err(error) = from_openai(&written) {
            // A tool message that names no call is malformed (`to_anthropic` refuses it too);
            // `to_openai` writes what it is given and `from_openai` rightly refuses that, by
            // name. Views never hold one: repair drops a result without its call.
            let nameless = messages
                .iter()
                .any(|m| m.role == Role::Tool && m.tool_call_id.is_none());
            let message = error.to_string();
            assert!(
                nameless && message.contains("tool_call_id: missing"),
                "from_openai refuses what to_openai wrote from ctxkit messages: {message}\n{written:#}"
            );
        }
    }
}

/// Anthropic in, and ctxkit messages out to Anthropic and back.
///
/// Invariants: as for OpenAI: what `from_anthropic` reads, `to_anthropic` writes, and
/// `from_anthropic` reads that back to the same Anthropic form; repaired, it is valid for both
/// providers; `to_anthropic` of ctxkit messages either fails with an error or writes what
/// `from_anthropic` reads.
pub fn check_wire_anthropic(data: &[u8]) {
    if let Some(request) = json(data) {
        if let Ok(read) = from_anthropic(&request) {
            if let Ok(written) = to_anthropic(&read) {
                let again = match from_anthropic(&written) {
                    Ok(again) => again,
                    Err(error) => panic!(
                        "from_anthropic refuses what to_anthropic wrote: {error}\n{written:#}"
                    ),
                };
                assert_eq!(
                    to_anthropic(&again).ok(),
                    Some(written),
                    "the Anthropic round trip is not stable"
                );
            }
            assert_valid_for_both(&repair_tool_pairs(&read), "from_anthropic, repaired");
        }
    }
    if let Some(messages) = messages(data) {
        if let Ok(written) = to_anthropic(&messages) {
            if let Err(error) = from_anthropic(&written) {
                panic!("from_anthropic refuses what to_anthropic wrote from ctxkit messages: {error}\n{written:#}");
            }
        }
    }
}

/// Tool-pair repair on any log.
///
/// Invariants: the repaired log is a request both providers accept (OpenAI and Anthropic
/// validators report nothing), and repair is idempotent (repairing a repaired log changes
/// nothing).
pub fn check_repair(data: &[u8]) {
    let Some(log) = messages(data) else { return };
    let repaired = repair_tool_pairs(&log);
    assert_valid_for_both(&repaired, "repair_tool_pairs");
    assert_eq!(
        repair_tool_pairs(&repaired),
        repaired,
        "repairing a repaired log changed it"
    );
}

/// The four other wire formats (OpenAI Responses, Gemini, AI SDK, LangChain), one per input: its
/// first byte picks the format, the rest is the request.
///
/// Invariants, for each: what the reader reads, the writer writes in a form the reader reads
/// back, and the round trip is stable after one pass; the read messages, repaired, validate for
/// OpenAI and Anthropic, and for the format itself where it has a validator (Responses,
/// Gemini); ctxkit messages, repaired, written in the format are read back.
pub fn check_wire_formats(data: &[u8]) {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let formats = [
        WireFormat::Responses,
        WireFormat::Gemini,
        WireFormat::AiSdk,
        WireFormat::LangChain,
    ];
    let format = formats[usize::from(selector) % formats.len()];
    if let Some(request) = json(rest) {
        if let Ok(read) = from_format(&request, format) {
            let written = write(&read, format);
            let again = match from_format(&written, format) {
                Ok(again) => again,
                Err(error) => {
                    panic!("{format:?}: the reader refuses what the writer wrote: {error}\n{written:#}")
                }
            };
            assert_eq!(
                write(&again, format),
                written,
                "{format:?}: the round trip is not stable"
            );
            let repaired = repair_tool_pairs(&read);
            assert_valid_for_both(&repaired, "read and repaired");
            assert_valid_for(&repaired, format);
        }
    }
    // Repaired first, as every view ctxkit renders is: Gemini pairs a functionResponse with its
    // call by name, so an orphaned result has no faithful Gemini form, and its reader refuses it.
    if let Some(messages) = messages(rest) {
        let written = write(&repair_tool_pairs(&messages), format);
        if let Err(error) = from_format(&written, format) {
            panic!("{format:?}: the reader refuses what the writer wrote from repaired ctxkit messages: {error}\n{written:#}");
        }
    }
}

/// `messages` in `format` (one of the four of [`check_wire_formats`]).
fn write(messages: &[Message], format: WireFormat) -> Value {
    match format {
        WireFormat::Responses => to_responses(messages),
        WireFormat::Gemini => to_gemini(messages),
        WireFormat::AiSdk => to_ai_sdk(messages),
        _ => to_langchain(messages),
    }
}

/// Panics when `format` has a validator and it reports anything for `messages` (a repaired
/// log) written in that format.
fn assert_valid_for(messages: &[Message], format: WireFormat) {
    if !messages.iter().any(|message| message.role != Role::System) {
        return;
    }
    let request = write(messages, format);
    if let Some(violations) = validate(&request, format) {
        let violations = not_passthrough(violations, messages);
        assert!(
            violations.is_empty(),
            "{format:?}: the repaired request is invalid: {violations:?}\nrequest: {request:#}"
        );
    }
}
