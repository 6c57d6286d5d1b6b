//! Token estimates: `estimateTokens`.
//!
//! The core's default estimator (script- and content-aware, with a model-family factor; its
//! accuracy is in `docs/reports/estimator.md`) for a text, one message or a list of messages. A list
//! costs exactly the sum of its messages (no per-request constant).

use ctxkit_core::tokens::{estimate_message, estimate_messages, estimate_text, ModelFamily};
use serde_json::Value;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsError, JsValue};

use crate::convert::{expected, fail, read_json, read_or_default, Result};
use crate::readers::read_messages;

#[wasm_bindgen(typescript_custom_section)]
const TOKEN_TYPES: &str = r#"
/**
 * A group of models that tokenize alike: `"openai"` (o200k models, and the nearest guess for
 * OpenAI-compatible servers), `"claude"` (Claude 3 to Opus 4.6, Sonnet 4.x, Haiku 4.5),
 * `"claude-4.7"` (Opus 4.7 and later).
 */
export type ModelFamily = "openai" | "claude" | "claude-4.7";
"#;

/// Estimated tokens of a text, a message, or a list of messages, for a model family (default
/// `"openai"`).
#[wasm_bindgen(js_name = estimateTokens)]
pub fn estimate_tokens(
    #[wasm_bindgen(unchecked_param_type = "string | Message | Message[]")] input: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "ModelFamily")] family: JsValue,
) -> Result<f64, JsError> {
    (|| {
        let family: ModelFamily = read_or_default(&family, "family")?;
        let tokens = if let Some(text) = input.as_string() {
            estimate_text(&text, family)
        } else {
            match read_json(&input, "input")? {
                list @ Value::Array(_) => estimate_messages(&read_messages(list, "input")?, family),
                object @ Value::Object(_) => {
                    estimate_message(&crate::readers::message(object, "input")?, family)
                }
                other => {
                    return Err(expected(
                        "input",
                        "a string, a message or an array of messages",
                        &other,
                    ))
                }
            }
        };
        // Exact: estimates are far below 2^53.
        Ok(tokens as f64)
    })()
    .map_err(fail("estimateTokens"))
}
