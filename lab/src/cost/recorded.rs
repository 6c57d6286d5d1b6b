//! What a session really cost, from the usage its transcript records (Claude Code writes the
//! API's `usage` of every call): the anchor every simulated figure is compared with.
//!
//! Also read from the record: when each call was made (the cache's lifetime is five minutes, so
//! an agent that paused pays for its prefix again) and how big the prompt was that the
//! transcript does not show (the agent's own system prompt and tool schemas: the first call's
//! prompt minus the messages before it).

use super::prices::Prices;
use super::report::{CostTotals, StrategyCost};
use ctxkit_core::import::{ApiCall, ClaudeCodeSession};
use ctxkit_core::tokens::{estimate_message, ModelFamily};

/// Seconds since 1970 of an ISO 8601 UTC timestamp (`2026-02-12T16:02:27.718Z`; fractions
/// dropped). `None` for anything else.
///
/// ```
/// use ctxkit_lab::cost::utc_seconds;
/// assert_eq!(utc_seconds("1970-01-02T00:00:01Z"), Some(86_401));
/// assert_eq!(utc_seconds("2026-02-12T16:02:27.718Z"), Some(1_770_912_147));
/// assert_eq!(utc_seconds("yesterday"), None);
/// ```
pub fn utc_seconds(text: &str) -> Option<i64> {
    let bytes = text.as_bytes();
    if bytes.len() < 20 || bytes.get(4) != Some(&b'-') || bytes.get(10) != Some(&b'T') {
        return None;
    }
    let number = |range: std::ops::Range<usize>| text.get(range)?.parse::<i64>().ok();
    let (year, month, day) = (number(0..4)?, number(5..7)?, number(8..10)?);
    let (hour, minute, second) = (number(11..13)?, number(14..16)?, number(17..19)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
        return None;
    }
    if !text.ends_with('Z') {
        return None;
    }
    Some(days_from_civil(year, month, day) * 86_400 + hour * 3_600 + minute * 60 + second)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month_index = (month + 9) % 12;
    let day_of_year = (153 * month_index + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The tokens of the first recorded call's prompt that its messages do not account for: the
/// agent's system prompt and tool schemas. `None` without a recorded call.
pub fn recorded_reserve(session: &ClaudeCodeSession, family: ModelFamily) -> Option<u64> {
    let first = session
        .api_calls
        .iter()
        .find(|call| call.prompt_tokens.is_some())?;
    let shown: u64 = session
        .messages
        .iter()
        .take(first.message_index)
        .map(|message| estimate_message(message, family))
        .sum();
    Some(first.prompt_tokens?.saturating_sub(shown))
}

/// When each call was made, in seconds, for the calls of `session` in order (one per
/// assistant message); `None` where the record has no timestamp.
pub fn call_times(session: &ClaudeCodeSession) -> Vec<Option<i64>> {
    session
        .api_calls
        .iter()
        .map(|call| call.timestamp.as_deref().and_then(utc_seconds))
        .collect()
}

/// The `recorded` row: what the calls cost by their own usage, priced with `prices`.
/// `None` when no call recorded usage.
pub fn recorded_cost(calls: &[ApiCall], prices: &Prices) -> Option<StrategyCost> {
    let mut totals = CostTotals::default();
    let mut any = false;
    for call in calls {
        let Some(usage) = call.usage else { continue };
        any = true;
        let input = usage.input + usage.cache_write + usage.cache_write_long + usage.cache_read;
        totals.add_call(
            input,
            usage.input,
            usage.cache_write,
            usage.cache_write_long,
            usage.cache_read,
        );
    }
    any.then(|| totals.finish("recorded", prices, 0, 0, None))
}
