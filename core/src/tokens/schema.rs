//! What the tool definitions sent with a request cost.
//!
//! Both providers render the tool list into the prompt: the definitions' JSON (names,
//! descriptions, parameter schemas) plus some structure per tool and, for Claude, a fixed
//! tool-use system prompt (Anthropic's pricing docs: 346 tokens with `tool_choice` auto or
//! none on Claude 4 models; 313 with any/tool, so 346 is the safe figure). The estimate is the
//! text cost of each definition's compact JSON, plus a per-tool overhead, plus that fixed part
//! when there is at least one tool. OpenAI renders definitions in a TypeScript-like form that
//! is usually shorter than their JSON, so for OpenAI this errs on the high side.
//!
//! Guarantees: accepts any JSON value (an array of tools in either provider's shape, a single
//! tool object, or `null`/anything else for "no tools" when empty); never panics.

use super::family::ModelFamily;
use super::text::estimate_text;
use serde_json::Value;

/// Tokens a family adds per tool definition beyond its JSON text.
pub const fn per_tool_overhead(family: ModelFamily) -> u64 {
    match family {
        ModelFamily::OpenAi => 8,
        ModelFamily::Claude | ModelFamily::Claude47 => 10,
    }
}

/// Tokens a family adds once when a request carries any tools: OpenAI's tool namespace
/// wrapper, Claude's tool-use system prompt.
pub const fn tools_preamble(family: ModelFamily) -> u64 {
    match family {
        ModelFamily::OpenAi => 12,
        ModelFamily::Claude | ModelFamily::Claude47 => 346,
    }
}

/// Estimated tokens of the tool definitions `tools` (an array of OpenAI `{type, function}` or
/// Anthropic `{name, description, input_schema}` objects, or one such object) for `family`.
/// An empty array, `null` or a scalar costs 0.
pub fn estimate_tool_schemas(tools: &Value, family: ModelFamily) -> u64 {
    let definitions: &[Value] = match tools {
        Value::Array(items) => items,
        Value::Object(_) => std::slice::from_ref(tools),
        _ => &[],
    };
    if definitions.is_empty() {
        return 0;
    }
    definitions
        .iter()
        .fold(tools_preamble(family), |sum, definition| {
            sum.saturating_add(per_tool_overhead(family))
                .saturating_add(estimate_text(&definition.to_string(), family))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn no_tools_cost_nothing() {
        for family in ModelFamily::ALL {
            assert_eq!(estimate_tool_schemas(&json!([]), family), 0);
            assert_eq!(estimate_tool_schemas(&Value::Null, family), 0);
            assert_eq!(estimate_tool_schemas(&json!(3), family), 0);
        }
    }

    #[test]
    fn each_tool_adds_its_json_and_overhead() {
        let tool = json!({"name": "get_weather", "description": "Weather for a city", "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}});
        for family in ModelFamily::ALL {
            let one = estimate_tool_schemas(&json!([tool.clone()]), family);
            let two = estimate_tool_schemas(&json!([tool.clone(), tool.clone()]), family);
            assert_eq!(estimate_tool_schemas(&tool, family), one);
            assert_eq!(
                two - one,
                per_tool_overhead(family) + estimate_text(&tool.to_string(), family)
            );
            assert_eq!(one, tools_preamble(family) + two - one);
        }
    }
}
