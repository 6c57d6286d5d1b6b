//! A provider's usage object read as the whole input of the request: what calibration must be
//! given. Each provider splits the input differently once prompt caching is on, and passing one
//! field (Anthropic's `input_tokens`) leaves the cached part out, so a view looks far smaller
//! than it is. [`full_input_tokens`] adds the parts for each shape:
//!
//! - `anthropic` (Messages API `usage`): `input_tokens` (uncached) + `cache_read_input_tokens`
//!   + `cache_creation_input_tokens`.
//! - `openai`: Chat Completions' `prompt_tokens` or the Responses API's `input_tokens`, which
//!   already include the cached tokens (`*_tokens_details.cached_tokens` is a part of them).
//! - `ai-sdk`: the provider-level usage (`inputTokens: { total, noCache, cacheRead, cacheWrite }`,
//!   what a middleware sees), or the call-level one (`inputTokens` a number, the total in AI SDK
//!   6; in AI SDK 5 it is what the provider counted, which for AI SDK 5's Anthropic provider
//!   leaves cache reads out: there, record the provider-level usage through the middleware).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{CoreError, Result};

/// The usage object shapes [`full_input_tokens`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum UsageShape {
    /// Anthropic's Messages API `usage`.
    Anthropic,
    /// OpenAI's Chat Completions or Responses `usage`.
    Openai,
    /// The Vercel AI SDK's usage (provider level or call level).
    AiSdk,
}

impl UsageShape {
    /// The shape named `name` (`anthropic`, `openai`, `ai-sdk`).
    pub fn parse(name: &str) -> Result<UsageShape> {
        match name {
            "anthropic" => Ok(UsageShape::Anthropic),
            "openai" => Ok(UsageShape::Openai),
            "ai-sdk" => Ok(UsageShape::AiSdk),
            other => Err(CoreError::invalid(
                "shape",
                format!("unknown usage shape {other:?} (expected \"anthropic\", \"openai\" or \"ai-sdk\")"),
            )),
        }
    }
}

/// A count field: absent or null is `None`; anything but a non-negative integer is an error.
fn count(usage: &Value, field: &str) -> Result<Option<u64>> {
    match usage.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => value.as_u64().map(Some).ok_or_else(|| {
            CoreError::invalid(
                format!("usage.{field}"),
                format!("expected a non-negative integer, found {value}"),
            )
        }),
    }
}

/// A count field that must be there.
fn required(usage: &Value, field: &str, shape: &str) -> Result<u64> {
    count(usage, field)?.ok_or_else(|| {
        CoreError::invalid(
            format!("usage.{field}"),
            format!("missing: a {shape} usage object has it"),
        )
    })
}

/// The whole input of the request `usage` describes: uncached + cache reads + cache writes.
///
/// ```
/// use ctxkit_core::tokens::{full_input_tokens, UsageShape};
/// use serde_json::json;
///
/// let anthropic = json!({ "input_tokens": 12, "cache_read_input_tokens": 20_000, "cache_creation_input_tokens": 1_500, "output_tokens": 300 });
/// assert_eq!(full_input_tokens(UsageShape::Anthropic, &anthropic).unwrap(), 21_512);
/// let openai = json!({ "prompt_tokens": 21_512, "prompt_tokens_details": { "cached_tokens": 20_000 } });
/// assert_eq!(full_input_tokens(UsageShape::Openai, &openai).unwrap(), 21_512);
/// let ai_sdk = json!({ "inputTokens": { "total": null, "noCache": 12, "cacheRead": 20_000, "cacheWrite": 1_500 } });
/// assert_eq!(full_input_tokens(UsageShape::AiSdk, &ai_sdk).unwrap(), 21_512);
/// ```
pub fn full_input_tokens(shape: UsageShape, usage: &Value) -> Result<u64> {
    if !usage.is_object() {
        return Err(CoreError::invalid(
            "usage",
            format!("expected the provider's usage object, found {usage}"),
        ));
    }
    match shape {
        UsageShape::Anthropic => {
            let uncached = required(usage, "input_tokens", "Anthropic")?;
            let reads = count(usage, "cache_read_input_tokens")?.unwrap_or(0);
            let writes = count(usage, "cache_creation_input_tokens")?.unwrap_or(0);
            Ok(uncached.saturating_add(reads).saturating_add(writes))
        }
        UsageShape::Openai => match count(usage, "prompt_tokens")? {
            Some(prompt) => Ok(prompt),
            None => required(
                usage,
                "input_tokens",
                "OpenAI (prompt_tokens or input_tokens)",
            ),
        },
        UsageShape::AiSdk => match usage.get("inputTokens") {
            Some(parts @ Value::Object(_)) => {
                if let Some(total) = count(parts, "total")? {
                    return Ok(total);
                }
                let uncached = count(parts, "noCache")?.unwrap_or(0);
                let reads = count(parts, "cacheRead")?.unwrap_or(0);
                let writes = count(parts, "cacheWrite")?.unwrap_or(0);
                Ok(uncached.saturating_add(reads).saturating_add(writes))
            }
            _ => required(usage, "inputTokens", "AI SDK"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn cached_tokens_count_for_every_shape() {
        let anthropic = json!({ "input_tokens": 3, "cache_read_input_tokens": 9_000 });
        assert_eq!(
            full_input_tokens(UsageShape::Anthropic, &anthropic).unwrap(),
            9_003
        );
        let responses =
            json!({ "input_tokens": 9_003, "input_tokens_details": { "cached_tokens": 9_000 } });
        assert_eq!(
            full_input_tokens(UsageShape::Openai, &responses).unwrap(),
            9_003
        );
        let v6 = json!({ "inputTokens": 9_003, "inputTokenDetails": { "cacheReadTokens": 9_000 } });
        assert_eq!(full_input_tokens(UsageShape::AiSdk, &v6).unwrap(), 9_003);
        let provider =
            json!({ "inputTokens": { "total": 9_003, "noCache": 3, "cacheRead": 9_000 } });
        assert_eq!(
            full_input_tokens(UsageShape::AiSdk, &provider).unwrap(),
            9_003
        );
    }

    #[test]
    fn bad_usage_names_the_field() {
        let error =
            full_input_tokens(UsageShape::Anthropic, &json!({ "input_tokens": -1 })).unwrap_err();
        assert!(error.to_string().contains("usage.input_tokens"), "{error}");
        let error = full_input_tokens(UsageShape::Openai, &json!({})).unwrap_err();
        assert!(error.to_string().contains("usage.input_tokens"), "{error}");
        assert!(full_input_tokens(UsageShape::AiSdk, &json!(12)).is_err());
        assert!(UsageShape::parse("gemini")
            .unwrap_err()
            .to_string()
            .contains("gemini"));
    }
}
