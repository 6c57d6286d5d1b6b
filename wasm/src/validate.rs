//! Provider validators: `validate`.
//!
//! What OpenAI or Anthropic would say about a request before it is sent, in the provider's own
//! words and location syntax (the rules are the core's: `ctxkit_core::wire`). Every
//! violation is listed, not only the first; an empty list means the request passes.

use ctxkit_core::model::Provider;
use ctxkit_core::wire::{validate_gemini, validate_responses};
use ctxkit_core::{validate_anthropic, validate_openai};
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsError, JsValue};

use crate::convert::{fail, read, read_json, to_js};

#[wasm_bindgen(typescript_custom_section)]
const VALIDATE_TYPES: &str = r#"
/** One rule a request breaks, as the provider would report it. */
export interface Violation {
  /** Where, in the provider's location syntax (`messages.3.content.1`, `messages.[3]`). */
  at: string;
  /** What the provider would say. */
  message: string;
}
"#;

/// Lists what `provider` would reject in `request`: for `"openai"` a Chat Completions
/// `messages` array or request body, for `"anthropic"` a Messages request or its `messages`,
/// for `"responses"` a Responses request or its `input`, for `"gemini"` a `generateContent`
/// request or its `contents`.
/// Any value is accepted (a value of the wrong shape is itself a violation).
#[wasm_bindgen(unchecked_return_type = "Violation[]")]
pub fn validate(
    #[wasm_bindgen(unchecked_param_type = "unknown")] request: JsValue,
    #[wasm_bindgen(unchecked_param_type = "Provider")] provider: JsValue,
) -> Result<JsValue, JsError> {
    (|| {
        let provider: Provider = read(&provider, "provider")?;
        let request = read_json(&request, "request")?;
        to_js(&match provider {
            Provider::OpenAi => validate_openai(&request),
            Provider::Anthropic => validate_anthropic(&request),
            Provider::Responses => validate_responses(&request),
            Provider::Gemini => validate_gemini(&request),
            Provider::AiSdk | Provider::LangChain => {
                return Err(ctxkit_core::CoreError::invalid(
                    "provider",
                    format!(
                        "{} is a library's message type, not a provider's API: nothing to validate (expected openai, anthropic, responses or gemini)",
                        provider.as_str()
                    ),
                )
                )
            }
        })
    })()
    .map_err(fail("validate"))
}
