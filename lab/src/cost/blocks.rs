//! A view as the blocks a provider's cache sees: each block's fingerprint and tokens, in the
//! order the provider reads them, and where each view message ends.
//!
//! - Anthropic caches per content block: the system prompt is one block (after the reserved
//!   tools and system prompt of the real agent, one more block), and each message renders to
//!   its content blocks (as `wire::breakpoints::anthropic_block_counts` counts them: a tool
//!   result is one block, and the user message after a run of results continues it, as
//!   `to_anthropic` writes it).
//! - OpenAI caches token prefixes: each message is one block (a finer grain would only move a
//!   read by part of a message).
//!
//! A message's tokens are the core's estimate of the message, shared among its blocks by
//! their rendered length, so the blocks of a view add up to what the view's stats say.

use serde_json::Value;

use super::cache::Block;
use ctxkit_core::model::{Message, Role};
use ctxkit_core::text::fingerprint;
use ctxkit_core::tokens::{estimate_message, estimate_text, ModelFamily};
use ctxkit_core::wire::{to_anthropic, to_openai};

/// Which provider's cache a request is billed by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheProvider {
    /// Explicit breakpoints over content blocks.
    Anthropic,
    /// Automatic prefixes over messages.
    OpenAi,
}

/// A view's blocks, and for each view message the index one past its last block.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ViewBlocks {
    /// Every block: the reserve (when not zero), the system prompt (when not empty), then the
    /// messages'.
    pub blocks: Vec<Block>,
    /// The index of the system prompt's block, when there is one.
    pub system_block: Option<usize>,
    /// `message_ends[i]`: one past the last block of view message `i`.
    pub message_ends: Vec<usize>,
}

/// The blocks of a request holding `reserve_tokens` of tools and system prompt the transcript
/// does not show, then `system`, then `messages`.
pub fn view_blocks(
    reserve_tokens: u64,
    system: &str,
    messages: &[Message],
    provider: CacheProvider,
    family: ModelFamily,
) -> ViewBlocks {
    let mut out = head_blocks(reserve_tokens, system, family);
    for message in messages {
        out.blocks.extend(message_blocks(message, provider, family));
        out.message_ends.push(out.blocks.len());
    }
    out
}

/// The blocks of a request before its messages: the reserve (when not zero) and the system
/// prompt (when not empty).
pub(crate) fn head_blocks(reserve_tokens: u64, system: &str, family: ModelFamily) -> ViewBlocks {
    let mut out = ViewBlocks::default();
    if reserve_tokens > 0 {
        out.blocks.push(Block {
            hash: fingerprint("reserved: tools and the agent's own system prompt"),
            tokens: reserve_tokens,
        });
    }
    if !system.is_empty() {
        out.system_block = Some(out.blocks.len());
        out.blocks.push(Block {
            hash: fingerprint(&format!("system\u{0}{system}")),
            tokens: estimate_text(system, family),
        });
    }
    out
}

/// The blocks of one message, wherever it is in a view (a message's blocks depend on it
/// alone, so a replay computes them once per message).
pub(crate) fn message_blocks(
    message: &Message,
    provider: CacheProvider,
    family: ModelFamily,
) -> Vec<Block> {
    let rendered = rendered_blocks(message, provider);
    share_tokens(&rendered, estimate_message(message, family))
}

/// The JSON text of each block `message` renders to, alone.
fn rendered_blocks(message: &Message, provider: CacheProvider) -> Vec<String> {
    match provider {
        CacheProvider::OpenAi => {
            let rendered = to_openai(std::slice::from_ref(message));
            vec![format!("{}\u{0}{rendered}", role_tag(message.role))]
        }
        CacheProvider::Anthropic => {
            // A system message inside the conversation is sent as a user turn.
            let alone = if message.role == Role::System {
                Message {
                    role: Role::User,
                    ..message.clone()
                }
            } else {
                message.clone()
            };
            let content = to_anthropic(std::slice::from_ref(&alone))
                .ok()
                .and_then(|request| request.get("messages")?.get(0)?.get("content").cloned());
            let role = role_tag(alone.role);
            match content {
                Some(Value::Array(blocks)) if !blocks.is_empty() => blocks
                    .iter()
                    .map(|block| format!("{role}\u{0}{block}"))
                    .collect(),
                Some(other) => vec![format!("{role}\u{0}{other}")],
                None => vec![format!("{role}\u{0}{}", message.text_content())],
            }
        }
    }
}

fn role_tag(role: Role) -> &'static str {
    match role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    }
}

/// `tokens` shared among `rendered` blocks by length; the last block takes the remainder.
fn share_tokens(rendered: &[String], tokens: u64) -> Vec<Block> {
    let total_len: u64 = rendered
        .iter()
        .map(|text| text.len() as u64)
        .sum::<u64>()
        .max(1);
    let mut given = 0u64;
    rendered
        .iter()
        .enumerate()
        .map(|(index, text)| {
            let share = if index + 1 == rendered.len() {
                tokens.saturating_sub(given)
            } else {
                tokens.saturating_mul(text.len() as u64) / total_len
            };
            given = given.saturating_add(share);
            Block {
                hash: fingerprint(text),
                tokens: share,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ctxkit_core::wire::breakpoints::anthropic_block_counts;
    use ctxkit_core::ToolCall;

    #[test]
    fn blocks_add_up_to_the_estimates_and_end_where_messages_end() {
        let family = ModelFamily::Claude;
        let messages = [
            Message::user("hello there"),
            Message::assistant("let me look", vec![ToolCall::new("c1", "ls", "{}")]),
            Message::tool_result("c1", "a.txt\nb.txt", false),
        ];
        let blocks = view_blocks(1_000, "sys", &messages, CacheProvider::Anthropic, family);
        assert_eq!(blocks.system_block, Some(1));
        // user: 1 block, assistant: text + tool_use, tool: 1.
        assert_eq!(blocks.message_ends, [3, 5, 6]);
        let message_tokens: u64 = blocks.blocks[2..].iter().map(|b| b.tokens).sum();
        let estimated: u64 = messages.iter().map(|m| estimate_message(m, family)).sum();
        assert_eq!(message_tokens, estimated);
        assert_eq!(anthropic_block_counts(&messages), [1, 2, 1]);
        let openai = view_blocks(0, "", &messages, CacheProvider::OpenAi, family);
        assert_eq!(openai.message_ends, [1, 2, 3]);
    }

    #[test]
    fn the_same_message_has_the_same_blocks_wherever_it_is() {
        let message = Message::user("same");
        let a = view_blocks(
            0,
            "x",
            std::slice::from_ref(&message),
            CacheProvider::Anthropic,
            ModelFamily::Claude,
        );
        let b = view_blocks(
            0,
            "x",
            &[Message::user("other"), message],
            CacheProvider::Anthropic,
            ModelFamily::Claude,
        );
        assert_eq!(a.blocks[1], b.blocks[2]);
    }
}
