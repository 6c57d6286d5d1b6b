//! What a Claude Code assistant line's `message.usage` records: the prompt size and the billed
//! parts of one API call. Read once per response id; errors name the field.

use serde_json::Value;

use super::RecordedUsage;
use crate::error::Result;
use crate::wire::{as_object, optional_u64, Object};

/// `input + cache_creation_input + cache_read_input` tokens of `message.usage`, if present.
pub(super) fn prompt_tokens(message: &Object) -> Result<Option<u64>> {
    let usage = match message.get("usage") {
        None | Some(Value::Null) => return Ok(None),
        Some(value) => as_object(value, "message.usage", "an object")?,
    };
    let mut total: u64 = 0;
    for key in [
        "input_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    ] {
        total = total.saturating_add(optional_u64(usage, "message.usage", key)?.unwrap_or(0));
    }
    Ok(Some(total))
}

/// The billed parts of `message.usage`, if present.
pub(super) fn recorded_usage(message: &Object) -> Result<Option<RecordedUsage>> {
    let usage = match message.get("usage") {
        None | Some(Value::Null) => return Ok(None),
        Some(value) => as_object(value, "message.usage", "an object")?,
    };
    let at = "message.usage";
    let number = |key| optional_u64(usage, at, key).map(Option::unwrap_or_default);
    let created = number("cache_creation_input_tokens")?;
    let (short, long) = match usage.get("cache_creation") {
        Some(Value::Object(split)) => {
            let at = "message.usage.cache_creation";
            (
                optional_u64(split, at, "ephemeral_5m_input_tokens")?.unwrap_or(0),
                optional_u64(split, at, "ephemeral_1h_input_tokens")?.unwrap_or(0),
            )
        }
        _ => (created, 0),
    };
    Ok(Some(RecordedUsage {
        input: number("input_tokens")?,
        cache_write: short,
        cache_write_long: long,
        cache_read: number("cache_read_input_tokens")?,
        output: number("output_tokens")?,
    }))
}
