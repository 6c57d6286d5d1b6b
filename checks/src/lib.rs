//! # ctxkit-fuzz-checks: what the fuzz targets check
//!
//! Each public `check_*` function takes the raw bytes a fuzzer made, feeds them to one entry
//! point of ctxkit, and panics when an invariant of that entry point does not hold (a crash
//! alone is not the only finding: a repaired view that a provider would reject is one too).
//! The same functions serve two callers:
//!
//! - the cargo-fuzz targets in `fuzz/fuzz_targets/` (nightly, coverage-guided; one target per
//!   function, named as in [`TARGETS`]);
//! - `tests/tests/all/fuzz_corpus_replay.rs` on stable Rust, which replays every file of
//!   `fuzz/corpus/<target>/` through the same function, so CI keeps every finding fixed.
//!
//! Bytes are read leniently (invalid UTF-8 replaced, JSON that does not parse skipped): a
//! fuzzer's input that is not even the right shape says nothing about the code under test.
//! The invariants, target by target, are listed in `docs/reliability.md`.
#![deny(missing_docs)]

pub mod import;
pub mod offload;
pub mod precis;
pub mod recall;
pub mod summary;
pub mod turn;
pub mod wire;

use ctxkit_core::{to_anthropic, to_openai, validate_anthropic, validate_openai, Message, Role};

/// A check: panics when an invariant does not hold for the input.
pub type Check = fn(&[u8]);

/// Every fuzz target: its name (the folder of its corpus, the file in `fuzz/fuzz_targets/`)
/// and its check.
pub const TARGETS: &[(&str, Check)] = &[
    ("import", import::check_import),
    ("wire_openai", wire::check_wire_openai),
    ("wire_anthropic", wire::check_wire_anthropic),
    ("wire_formats", wire::check_wire_formats),
    ("repair", wire::check_repair),
    ("turn", turn::check_turn),
    ("precis", precis::check_precis),
    ("offload", offload::check_offload),
    ("summary", summary::check_summary),
    ("history_call", recall::check_history_call),
    ("fts_query", recall::check_fts_query),
];

/// `data` as text, invalid UTF-8 replaced by U+FFFD.
pub fn text(data: &[u8]) -> String {
    String::from_utf8_lossy(data).into_owned()
}

/// `data` split at its first NUL byte into two texts (the second empty when there is none):
/// how a target that needs two strings reads one input.
pub fn two_texts(data: &[u8]) -> (String, String) {
    match data.iter().position(|&byte| byte == 0) {
        Some(at) => (
            text(data.get(..at).unwrap_or_default()),
            text(data.get(at + 1..).unwrap_or_default()),
        ),
        None => (text(data), String::new()),
    }
}

/// Panics unless `messages` (a repaired view or log, system prompt first if any) is a request
/// both providers accept. A view with nothing but a system prompt is no request at all, and is
/// not checked.
pub fn assert_valid_for_both(messages: &[Message], what: &str) {
    if !messages.iter().any(|message| message.role != Role::System) {
        return;
    }
    let openai = to_openai(messages);
    let violations = not_passthrough(validate_openai(&openai), messages);
    assert!(
        violations.is_empty(),
        "{what}: the OpenAI request is invalid: {violations:?}\nrequest: {openai:#}"
    );
    let anthropic = match to_anthropic(messages) {
        Ok(anthropic) => anthropic,
        // The one refusal by design: Anthropic's tool_use input is a JSON object, and a call
        // whose arguments are not one (a model's truncated JSON, kept as written for OpenAI)
        // cannot be written for it. Any other refusal is a finding.
        Err(error) if messages.iter().any(has_arguments_anthropic_refuses) => {
            assert!(
                error.to_string().contains("arguments"),
                "{what}: refused for Anthropic with an error that names no arguments: {error}"
            );
            return;
        }
        Err(error) => panic!("{what}: cannot be written for Anthropic: {error}"),
    };
    let violations = not_passthrough(validate_anthropic(&anthropic), messages);
    assert!(
        violations.is_empty(),
        "{what}: the Anthropic request is invalid: {violations:?}\nrequest: {anthropic:#}"
    );
}

/// The violations left once those about opaque parts the input itself carried are excused
/// ([`is_passthrough`]), with any violation inside such a part (its path under the excused
/// one's: Gemini reports a part it does not know, then the data field it lacks).
pub(crate) fn not_passthrough(
    violations: Vec<ctxkit_core::wire::Violation>,
    messages: &[Message],
) -> Vec<ctxkit_core::wire::Violation> {
    let excused: Vec<String> = violations
        .iter()
        .filter(|violation| is_passthrough(violation, messages))
        .map(|violation| violation.at.clone())
        .collect();
    violations
        .into_iter()
        .filter(|violation| {
            !excused
                .iter()
                .any(|at| violation.at == *at || violation.at.starts_with(&format!("{at}.")))
        })
        .collect()
}

/// Whether `violation` is the validator naming a part type that the input itself carried as an
/// opaque block (kept as received, never made by ctxkit): reporting it is the validator's job,
/// and the input was already invalid for that provider. Anything ctxkit writes must validate.
pub(crate) fn is_passthrough(
    violation: &ctxkit_core::wire::Violation,
    messages: &[Message],
) -> bool {
    // OpenAI: "Invalid value: 'x'. Supported values are ..."; Anthropic: "Input tag 'x' found
    // using 'type' does not match ...".
    let openai = violation
        .message
        .strip_prefix("Invalid value: '")
        .and_then(|rest| rest.split("'. Supported").next());
    let anthropic = violation
        .message
        .strip_prefix("Input tag '")
        .and_then(|rest| rest.split("' found using 'type'").next());
    // Gemini: "Invalid JSON payload received. Unknown name \"x\" at '...'": a part key Gemini
    // does not know.
    let gemini = violation
        .message
        .strip_prefix("Invalid JSON payload received. Unknown name \"")
        .and_then(|rest| rest.split('"').next());
    // The key came with the input (an opaque part, or a part's provider fields, which the
    // Gemini writer sends back as they came) when the input's own messages hold it as a key.
    if let Some(key) = gemini {
        let as_key = format!("{}:", serde_json::Value::String(key.to_owned()));
        return violation.at.contains("parts")
            && messages.iter().any(|message| {
                serde_json::to_string(message).is_ok_and(|json| json.contains(&as_key))
            });
    }
    let Some(kind) = openai.or(anthropic) else {
        return false;
    };
    // Responses keeps an unknown input item whole, so its `type` is reported at the item.
    (violation.at.contains("content") || violation.at.starts_with("input["))
        && messages.iter().any(|message| match &message.content {
            ctxkit_core::Content::Parts(parts) => parts.iter().any(|part| {
                matches!(part, ctxkit_core::Part::Opaque { block, .. }
                    if block.get("type").and_then(|t| t.as_str()) == Some(kind))
            }),
            ctxkit_core::Content::Text(_) => false,
        })
}

/// Whether `message` has a tool call whose arguments are neither blank nor a JSON object.
fn has_arguments_anthropic_refuses(message: &Message) -> bool {
    message.tool_calls.iter().any(|call| {
        !call.arguments.trim().is_empty()
            && !serde_json::from_str::<serde_json::Value>(&call.arguments)
                .is_ok_and(|value| value.is_object())
    })
}
