//! Clearing old tool results: the cheapest tier, before any summary (as Anthropic's
//! `clear_tool_uses`).
//!
//! Tool outputs dominate agent context, and old ones are rarely needed again verbatim. With a
//! [`ClearPolicy`], results of all but the last N exchanges are replaced by a short placeholder
//! that names the tool and its key argument (so the model can call it again), except results
//! of excluded tools and results that are already offload references (small, and they say
//! where the full output is). Clearing moves in batches of exchanges, so the view's prefix
//! changes once per batch, not every turn, and the provider's prompt cache keeps hitting.

use serde::{Deserialize, Serialize};

use crate::model::ViewMessage;
use crate::model::{Content, Role};
use crate::offload::is_offload_reference;

/// Which old tool results to clear.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default, deny_unknown_fields)]
pub struct ClearPolicy {
    /// Exchanges (assistant messages with tool calls) whose results are always kept, newest.
    pub keep_last_exchanges: usize,
    /// Clear in steps of this many exchanges.
    pub batch_exchanges: usize,
    /// Results of these tools are never cleared.
    pub exclude_tools: Vec<String>,
    /// Results shorter than this many bytes are not worth clearing.
    pub min_bytes: usize,
}

impl Default for ClearPolicy {
    fn default() -> Self {
        ClearPolicy {
            keep_last_exchanges: 5,
            batch_exchanges: 5,
            exclude_tools: Vec::new(),
            min_bytes: 400,
        }
    }
}

/// The placeholder for a cleared result of `tool`.
pub fn cleared_placeholder(tool: &str) -> String {
    format!("[Old tool result cleared to save context. Call `{tool}` again if you need it.]")
}

/// Clears old results in `items` (a view's messages, before repair); returns how many.
pub fn clear_old_tool_results(items: &mut [ViewMessage<'_>], policy: &ClearPolicy) -> usize {
    let exchanges = items
        .iter()
        .filter(|item| item.role == Role::Assistant && !item.tool_calls.is_empty())
        .count();
    let batch = policy.batch_exchanges.max(1);
    let clearable = exchanges.saturating_sub(policy.keep_last_exchanges) / batch * batch;
    if clearable == 0 {
        return 0;
    }
    let mut cleared = 0;
    let mut exchange = 0;
    let mut tools: Vec<(String, String)> = Vec::new();
    for item in items.iter_mut() {
        match item.role {
            Role::Assistant if !item.tool_calls.is_empty() => {
                exchange += 1;
                if exchange > clearable {
                    break;
                }
                tools = item
                    .tool_calls
                    .iter()
                    .map(|call| (call.id.clone(), call.name.clone()))
                    .collect();
            }
            Role::Tool if exchange > 0 => {
                let id = item.tool_call_id.as_deref().unwrap_or_default();
                let tool = tools
                    .iter()
                    .find(|(call, _)| call == id)
                    .map(|(_, name)| name.as_str())
                    .unwrap_or("the tool");
                let big = item.text_content().len() >= policy.min_bytes;
                if big
                    && !policy.exclude_tools.iter().any(|t| t == tool)
                    && !is_offload_reference(item)
                {
                    let placeholder = cleared_placeholder(tool);
                    item.to_mut().content = Content::Text(placeholder);
                    cleared += 1;
                }
            }
            _ => {}
        }
    }
    cleared
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Message, ToolCall};

    fn exchange(i: usize) -> [Message; 2] {
        [
            Message::assistant(
                "",
                vec![ToolCall::new(
                    format!("c{i}"),
                    if i == 0 { "keep_me" } else { "bash" },
                    "{}",
                )],
            ),
            Message::tool_result(format!("c{i}"), "x".repeat(500), false),
        ]
    }

    #[test]
    fn clears_in_batches_keeping_recent_and_excluded() {
        let policy = ClearPolicy {
            keep_last_exchanges: 2,
            batch_exchanges: 3,
            exclude_tools: vec!["keep_me".into()],
            min_bytes: 100,
        };
        let cleared_for = |n: usize| {
            let log: Vec<Message> = (0..n).flat_map(exchange).collect();
            let mut items: Vec<ViewMessage> = log.iter().map(ViewMessage::borrowed).collect();
            let count = clear_old_tool_results(&mut items, &policy);
            let flags: Vec<bool> = items
                .iter()
                .filter(|m| m.role == Role::Tool)
                .map(|m| m.text_content().starts_with("[Old tool"))
                .collect();
            (count, flags)
        };
        assert_eq!(
            cleared_for(4).0,
            0,
            "2 clearable exchanges are less than one batch"
        );
        let (count, flags) = cleared_for(6);
        assert_eq!(count, 2, "exchanges 0..3 clearable, exchange 0 excluded");
        assert_eq!(flags, vec![false, true, true, false, false, false]);
        assert_eq!(
            cleared_for(7).0,
            2,
            "the prefix does not move until the next batch"
        );
    }
}
