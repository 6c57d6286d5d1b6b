//! Anthropic (and OpenAI Responses: `responses_blocks`) requests billed by the lab's cache
//! simulator. An Anthropic request: each system block and each content
//! block of each message is one cache block (fingerprinted without its cache mark, so moving a
//! mark does not change the prefix), a `cache_control` mark is a breakpoint, and a block's
//! tokens are the core's estimate of what it says. The agent's own requests and the proxy's are
//! billed by this same reading, so their ratio does not depend on the estimate's error.

use ctxkit::core::text::fingerprint;
use ctxkit::core::tokens::{estimate_text, ModelFamily};
use ctxkit_lab::cost::{Block, CacheBill, CacheRequest, CacheSimulator, ModelPricing};
use serde_json::Value;

/// What a sequence of requests was billed.
#[derive(Default)]
pub struct Bill {
    /// Input cost in units of one uncached input token (writes at their multiplier, reads at
    /// theirs).
    pub units: f64,
    /// Input tokens, all kinds.
    pub tokens: u64,
    /// Tokens read from the cache.
    pub cache_read: u64,
    /// Requests that did not begin with the previous one (the prefix broke).
    pub prefix_breaks: usize,
}

/// Bills `requests` (with their send times) in order on a fresh cache; `warm_start`: the
/// system prompt (the first block) is already cached when the first request comes.
pub fn bill(requests: &[(&Value, Option<i64>)], pricing: &ModelPricing, warm_start: bool) -> Bill {
    let (write, read, _) = pricing.prices.units();
    let mut cache = CacheSimulator::new(pricing.cache);
    let mut total = Bill::default();
    for (index, (request, at)) in requests.iter().enumerate() {
        let mut cache_request = blocks(request);
        cache_request.at_seconds = *at;
        if index == 0 && warm_start {
            cache.prewarm(&cache_request, 0);
        }
        let billed: CacheBill = cache.bill(&cache_request);
        total.units += billed.uncached as f64
            + billed.cache_write as f64 * write
            + billed.cache_read as f64 * read;
        total.tokens += billed.input();
        total.cache_read += billed.cache_read;
        total.prefix_breaks += usize::from(billed.prefix_break);
    }
    total
}

/// The request's cache blocks and breakpoints.
fn blocks(request: &Value) -> CacheRequest {
    if let Some(input) = request.get("input") {
        return responses_blocks(request, input);
    }
    let mut out = CacheRequest::default();
    let mut push = |role: &str, block: &Value| {
        if block.get("cache_control").is_some() {
            out.breakpoints.push(out.blocks.len());
        }
        let mut unmarked = block.clone();
        if let Some(object) = unmarked.as_object_mut() {
            object.remove("cache_control");
        }
        out.blocks.push(Block {
            hash: fingerprint(&format!("{role}\u{0}{unmarked}")),
            tokens: block_tokens(block),
        });
    };
    for_each_block(request.get("system"), |block| push("system", block));
    for message in request
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let role = message.get("role").and_then(Value::as_str).unwrap_or("");
        for_each_block(message.get("content"), |block| push(role, block));
    }
    out.stable_blocks = out.blocks.len();
    out
}

/// A Responses request's cache blocks: its `instructions`, then each input item, with no
/// breakpoint (OpenAI caches the longest repeated prefix by itself). An item's tokens are the
/// estimate of its JSON without `encrypted_content` (the reasoning the API bills is not in the
/// rollout), the same reading for the agent's requests and the proxy's.
fn responses_blocks(request: &Value, input: &Value) -> CacheRequest {
    let mut out = CacheRequest::default();
    if let Some(text) = request.get("instructions").and_then(Value::as_str) {
        out.blocks.push(Block {
            hash: fingerprint(&format!("instructions\u{0}{text}")),
            tokens: estimate_text(text, ModelFamily::OpenAi) + 4,
        });
    }
    for item in input.as_array().into_iter().flatten() {
        let mut said = item.clone();
        if let Some(object) = said.as_object_mut() {
            object.remove("encrypted_content");
        }
        out.blocks.push(Block {
            hash: fingerprint(&item.to_string()),
            tokens: estimate_text(&said.to_string(), ModelFamily::OpenAi) + 4,
        });
    }
    out.stable_blocks = out.blocks.len();
    out
}

/// Calls `each` on every block of a `system` or `content` value (a string is one text block).
fn for_each_block(value: Option<&Value>, mut each: impl FnMut(&Value)) {
    match value {
        Some(Value::String(text)) => each(&serde_json::json!({"type": "text", "text": text})),
        Some(Value::Array(blocks)) => blocks.iter().for_each(each),
        _ => {}
    }
}

/// What a block says, estimated in tokens: its text, its call's name and input, its result's
/// content; the JSON of a block of another kind.
fn block_tokens(block: &Value) -> u64 {
    let text = match block.get("type").and_then(Value::as_str) {
        Some("text") => string(block, "text"),
        Some("thinking") => string(block, "thinking"),
        Some("tool_use") => format!(
            "{} {}",
            string(block, "name"),
            block.get("input").map(Value::to_string).unwrap_or_default()
        ),
        Some("tool_result") => match block.get("content") {
            Some(Value::String(text)) => text.clone(),
            Some(Value::Array(parts)) => parts
                .iter()
                .map(|part| string(part, "text"))
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        },
        _ => block.to_string(),
    };
    // A few tokens of framing per block (its type, ids), as the API counts them.
    estimate_text(&text, ModelFamily::Claude) + 4
}

fn string(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}
