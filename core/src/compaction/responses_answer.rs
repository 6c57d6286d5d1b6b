//! The answer to an OpenAI Responses compaction request (`{"type": "compaction_trigger"}` as
//! the last input item), read: the one opaque `compaction` item it returns, kept byte for byte
//! as a checkpoint's compaction block ([`super::checkpoint::responses_compaction_block`]), and
//! its usage. The native summarizer and the JS engine (a `summarize` callback that made the
//! call) read it here, so both keep the same bytes and give the same reasons.
//!
//! The answer's `output` must hold exactly one item, of type `compaction` with a non-empty
//! `encrypted_content` string (`{"type":"compaction","id":"...","encrypted_content":"..."}`, as
//! OpenAI's API reference and SDKs type it). Anything else is a [`CompactionProblem`] naming
//! what was wrong: a `refusal` output item or content part (refused), no `output` array, no
//! item or more than one, an item of another type, an item without `encrypted_content`
//! (malformed). The item is opaque, so the answer has no readable text: the checkpoint's
//! plaintext record is the extractive summary.

use serde_json::Value;

use super::checkpoint::responses_compaction_block;
use super::server_compaction::{quote, raw_item, CompactionAnswer, CompactionProblem};
use super::CompactionUsage;

/// The kept item of a Responses compaction answer `text` (the response body), or why there is
/// none (see the module doc). The answer's `text` is empty; its `block` is the item wrapped
/// for [`super::Checkpoint::compaction_block`].
pub fn parse_responses_compaction_answer(
    text: &str,
) -> std::result::Result<CompactionAnswer, CompactionProblem> {
    use CompactionProblem::Malformed;
    let answer: Value = serde_json::from_str(text)
        .map_err(|error| Malformed(format!("not a Responses answer ({error}): {}", quote(text))))?;
    let items = answer
        .get("output")
        .and_then(Value::as_array)
        .ok_or_else(|| Malformed(format!("no output array: {}", quote(text))))?;
    if let Some(refusal) = items.iter().find_map(refusal_of) {
        return Err(CompactionProblem::Refused(refusal));
    }
    let [item] = items.as_slice() else {
        return Err(Malformed(format!(
            "{} output items where one compaction item was expected",
            items.len()
        )));
    };
    let raw = raw_item(text, "output")
        .filter(|raw| serde_json::from_str::<Value>(raw).ok().as_ref() == Some(item))
        .ok_or_else(|| Malformed("the output item's text could not be found".to_owned()))?;
    let kind = item.get("type").and_then(Value::as_str);
    if kind != Some("compaction") {
        return Err(Malformed(format!(
            "an output item of type {} where a compaction item was expected: {}",
            kind.map_or("(none)".to_owned(), |kind| format!("{kind:?}")),
            quote(raw)
        )));
    }
    let content = item.get("encrypted_content").and_then(Value::as_str);
    if content.is_none_or(|content| content.trim().is_empty()) {
        return Err(Malformed(format!(
            "the compaction item has no \"encrypted_content\": {}",
            quote(raw)
        )));
    }
    let tokens = |usage: &Value, field: &str| usage.get(field).and_then(Value::as_u64);
    Ok(CompactionAnswer {
        text: String::new(),
        block: responses_compaction_block(raw),
        usage: answer.get("usage").map(|usage| CompactionUsage {
            input_tokens: tokens(usage, "input_tokens").unwrap_or(0),
            output_tokens: tokens(usage, "output_tokens").unwrap_or(0),
            iterations: 1,
        }),
    })
}

/// The model's words when `item` is a refusal: a `refusal` item, or a message with a
/// `refusal` content part.
fn refusal_of(item: &Value) -> Option<String> {
    let words = |value: &Value| {
        value
            .get("refusal")
            .and_then(Value::as_str)
            .unwrap_or("(no words)")
            .to_owned()
    };
    if item.get("type").and_then(Value::as_str) == Some("refusal") {
        return Some(words(item));
    }
    item.get("content")?
        .as_array()?
        .iter()
        .find(|part| part.get("type").and_then(Value::as_str) == Some("refusal"))
        .map(words)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compaction::RESPONSES_ITEM_PREFIX;

    #[test]
    fn the_item_is_kept_byte_for_byte_with_the_usage() {
        let item = r#"{"type":"compaction", "id":"cmp_1","encrypted_content":"gAAA=="}"#;
        let text =
            format!(r#"{{"output":[ {item} ],"usage":{{"input_tokens":120,"output_tokens":30}}}}"#);
        let answer = parse_responses_compaction_answer(&text).unwrap();
        assert_eq!(answer.text, "");
        assert_eq!(answer.block, format!("{RESPONSES_ITEM_PREFIX}{item}}}"));
        let usage = answer.usage.unwrap();
        assert_eq!((usage.input_tokens, usage.output_tokens), (120, 30));
    }

    #[test]
    fn refusals_and_malformed_answers_say_why() {
        let refusals = [
            r#"{"output":[{"type":"message","role":"assistant","content":[{"type":"refusal","refusal":"no"}]}]}"#,
            r#"{"output":[{"type":"refusal","refusal":"no"}]}"#,
        ];
        for text in refusals {
            let problem = parse_responses_compaction_answer(text).unwrap_err();
            assert_eq!(
                problem,
                CompactionProblem::Refused("no".to_owned()),
                "{text}"
            );
        }
        let cases = [
            (r#"{"output":[]}"#, "0 output items"),
            (r#"{"id":"resp_1"}"#, "no output array"),
            (
                r#"{"output":[{"type":"message","role":"assistant","content":[]}]}"#,
                "of type \"message\"",
            ),
            (
                r#"{"output":[{"type":"compaction","id":"cmp_1"}]}"#,
                "no \"encrypted_content\"",
            ),
            (
                r#"{"output":[{"type":"compaction","encrypted_content":"a"},{"type":"compaction","encrypted_content":"b"}]}"#,
                "2 output items",
            ),
            ("not json", "not a Responses answer"),
        ];
        for (text, expected) in cases {
            let problem = parse_responses_compaction_answer(text).unwrap_err();
            assert!(
                matches!(problem, CompactionProblem::Malformed(_)),
                "{text}: {problem}"
            );
            assert!(problem.to_string().contains(expected), "{text}: {problem}");
        }
    }
}
