//! The Google Gemini validator.
//!
//! Rules checked (wording as the API returns it, location as `contents[3].parts[0]`):
//! - `contents` is a non-empty array; each content has role `user` or `model` and at least one
//!   part;
//! - each part has exactly one data field (`text`, `inlineData`, `functionCall`...) and no
//!   field the API does not know;
//! - a function call turn comes right after a user turn or a function response turn;
//! - a function response turn comes right after a function call turn and answers each of its
//!   calls (as many responses as calls, with the calls' names).

use serde_json::Value;

use super::{str_field, violation, Violation};
use crate::wire::gemini::{PART_DATA_FIELDS, PART_META_FIELDS};

/// Lists every violation in a Gemini request (`{contents}`, or a bare array of contents).
///
/// ```
/// use ctxkit_core::wire::validate_gemini;
///
/// let contents = serde_json::json!([
///     {"role": "user", "parts": [{"functionResponse": {"name": "ls", "response": {}}}]}
/// ]);
/// assert_eq!(validate_gemini(&contents)[0].to_string(),
///     "contents[0]: Please ensure that function response turn comes immediately after a function call turn.");
/// ```
pub fn validate_gemini(request: &Value) -> Vec<Violation> {
    let contents = match contents_of(request) {
        Ok(contents) => contents,
        Err(refused) => return vec![refused],
    };
    let mut violations = Vec::new();
    if contents.is_empty() {
        violations.push(violation(
            "contents",
            "* GenerateContentRequest.contents: contents is not specified",
        ));
    }
    // The previous content's kind, and the names of its calls if it was a call turn.
    let mut previous: Option<Turn> = None;
    for (index, content) in contents.iter().enumerate() {
        previous = Some(check_content(
            content,
            index,
            previous.as_ref(),
            &mut violations,
        ));
    }
    if let Some(Turn::Calls(_)) = previous {
        violations.push(violation(
            format!("contents[{}]", contents.len().saturating_sub(1)),
            "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.",
        ));
    }
    violations
}

/// The request's contents, or the one violation that stops the check before them.
fn contents_of(request: &Value) -> Result<&Vec<Value>, Violation> {
    match request {
        Value::Array(contents) => Ok(contents),
        Value::Object(object) => match object.get("contents") {
            Some(Value::Array(contents)) => Ok(contents),
            _ => Err(violation(
                "contents",
                "* GenerateContentRequest.contents: contents is not specified",
            )),
        },
        _ => Err(violation(
            "contents",
            "Invalid JSON payload received. Expected an object.",
        )),
    }
}

/// Checks content `index` (its role, its parts, its calls and responses against the turn
/// before it); returns what kind of turn it is.
fn check_content(
    content: &Value,
    index: usize,
    previous: Option<&Turn>,
    violations: &mut Vec<Violation>,
) -> Turn {
    let at = format!("contents[{index}]");
    let role = str_field(content, "role").unwrap_or("user");
    if !matches!(role, "user" | "model" | "function") {
        violations.push(violation(
            format!("{at}.role"),
            "Please use a valid role: user, model.",
        ));
    }
    let parts = content
        .get("parts")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    if parts.is_empty() {
        violations.push(violation(
            format!("{at}.parts"),
            format!("* GenerateContentRequest.{at}.parts: contents.parts must not be empty."),
        ));
    }
    let mut calls = Vec::new();
    let mut responses = Vec::new();
    for (part_index, part) in parts.iter().enumerate() {
        let part_at = format!("{at}.parts[{part_index}]");
        check_part(part, &part_at, violations);
        if let Some(call) = part.get("functionCall") {
            calls.push(str_field(call, "name").unwrap_or_default().to_owned());
        }
        if let Some(response) = part.get("functionResponse") {
            responses.push(str_field(response, "name").unwrap_or_default().to_owned());
        }
    }
    if !calls.is_empty() && matches!(previous, Some(Turn::Model | Turn::Calls(_)) | None) {
        violations.push(violation(
            at.clone(),
            "Please ensure that function call turn comes immediately after a user turn or after a function response turn.",
        ));
    }
    check_responses(previous, &responses, &at, violations);
    if !calls.is_empty() {
        Turn::Calls(calls)
    } else if role == "model" {
        Turn::Model
    } else {
        Turn::User
    }
}

/// A content's function responses answer the calls of the turn right before it, all of them.
fn check_responses(
    previous: Option<&Turn>,
    responses: &[String],
    at: &str,
    violations: &mut Vec<Violation>,
) {
    match previous {
        Some(Turn::Calls(names)) => {
            let mut sorted_calls = names.clone();
            let mut sorted_responses = responses.to_vec();
            crate::wire::fields::sort_stable_by(&mut sorted_calls, Ord::cmp);
            crate::wire::fields::sort_stable_by(&mut sorted_responses, Ord::cmp);
            if sorted_calls != sorted_responses {
                violations.push(violation(
                    at,
                    "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.",
                ));
            }
        }
        _ if !responses.is_empty() => violations.push(violation(
            at,
            "Please ensure that function response turn comes immediately after a function call turn.",
        )),
        _ => {}
    }
}

enum Turn {
    User,
    Model,
    Calls(Vec<String>),
}

fn check_part(part: &Value, at: &str, violations: &mut Vec<Violation>) {
    let Some(object) = part.as_object() else {
        violations.push(violation(
            at,
            format!("Invalid JSON payload received. Expected an object at '{at}'."),
        ));
        return;
    };
    for key in object.keys() {
        if !PART_DATA_FIELDS.contains(&key.as_str()) && !PART_META_FIELDS.contains(&key.as_str()) {
            violations.push(violation(
                at,
                format!("Invalid JSON payload received. Unknown name \"{key}\" at '{at}': Cannot find field."),
            ));
        }
    }
    let data = object
        .keys()
        .filter(|key| PART_DATA_FIELDS.contains(&key.as_str()))
        .count();
    if data != 1 {
        violations.push(violation(
            format!("{at}.data"),
            format!("* GenerateContentRequest.{at}.data: required oneof field 'data' must have one initialized field"),
        ));
    }
    if object.get("text").and_then(Value::as_str) == Some("") && data == 1 {
        violations.push(violation(
            at,
            "Unable to submit request because it has an empty text parameter. Add a value to the parameter and try again.",
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parallel_calls_and_their_responses_pass() {
        let request = json!({"systemInstruction": {"parts": [{"text": "sys"}]}, "contents": [
            {"role": "user", "parts": [{"text": "weather in Paris and Rome?"}]},
            {"role": "model", "parts": [
                {"functionCall": {"name": "weather", "args": {"city": "Paris"}}, "thoughtSignature": "c2ln"},
                {"functionCall": {"name": "weather", "args": {"city": "Rome"}}}]},
            {"role": "user", "parts": [
                {"functionResponse": {"name": "weather", "response": {"output": "sun"}}},
                {"functionResponse": {"name": "weather", "response": {"output": "rain"}}}]},
            {"role": "model", "parts": [{"text": "Sun in Paris, rain in Rome."}]}
        ]});
        assert_eq!(validate_gemini(&request), Vec::new());
    }

    #[test]
    fn every_violation_is_listed_in_gemini_wording() {
        let contents = json!([
            {"role": "user", "parts": [{"functionResponse": {"name": "ls", "response": {}}}]},
            {"role": "model", "parts": [{"text": "x"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "ls", "args": {}}}, {"functionCall": {"name": "cat", "args": {}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "ls", "response": {}}}]},
            {"role": "assistant", "parts": []},
            {"role": "user", "parts": [{"type": "text", "text": "hi"}, {"text": ""}]}
        ]);
        let text: Vec<String> = validate_gemini(&contents)
            .iter()
            .map(ToString::to_string)
            .collect();
        insta::assert_snapshot!(text.join("\n"), @r#"
        contents[0]: Please ensure that function response turn comes immediately after a function call turn.
        contents[2]: Please ensure that function call turn comes immediately after a user turn or after a function response turn.
        contents[3]: Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.
        contents[4].role: Please use a valid role: user, model.
        contents[4].parts: * GenerateContentRequest.contents[4].parts: contents.parts must not be empty.
        contents[5].parts[0]: Invalid JSON payload received. Unknown name "type" at 'contents[5].parts[0]': Cannot find field.
        contents[5].parts[1]: Unable to submit request because it has an empty text parameter. Add a value to the parameter and try again.
        "#);
    }

    #[test]
    fn garbage_is_reported_not_panicked_on() {
        assert_eq!(validate_gemini(&json!(3)).len(), 1);
        assert_eq!(validate_gemini(&json!([])).len(), 1);
        assert!(!validate_gemini(&json!([1, null, {"role": 2, "parts": [3]}])).is_empty());
    }
}
