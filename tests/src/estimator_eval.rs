//! Measuring token estimators: error statistics over samples and the Claude usage intervals.
//! Shared by the report program and the accuracy test so both compute the same numbers.

use crate::claude_usage::ClaudeInterval;
use ctxkit_core::tokens::{bytes4_messages, estimate_messages, ModelFamily};
use ctxkit_core::{Content, Message, Part};

/// The `q` quantile (0..=1) of `values`, by linear interpolation between order statistics;
/// NaN for an empty slice.
pub fn quantile(values: &[f64], q: f64) -> f64 {
    let mut sorted: Vec<f64> = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    if sorted.is_empty() {
        return f64::NAN;
    }
    let position = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let (low, high) = (position.floor() as usize, position.ceil() as usize);
    let fraction = position - low as f64;
    sorted[low] * (1.0 - fraction) + sorted[high] * fraction
}

/// Error statistics of an estimator over samples.
#[derive(Debug, Clone, Copy)]
pub struct ErrorStats {
    /// Number of samples.
    pub count: usize,
    /// Median of |estimate / real − 1|.
    pub median_abs_error: f64,
    /// 90th percentile of |estimate / real − 1|.
    pub p90_abs_error: f64,
    /// Median of estimate / real.
    pub median_ratio: f64,
}

/// Statistics of `(estimate, real)` pairs; pairs with `real == 0` are skipped.
pub fn error_stats(pairs: &[(f64, f64)]) -> ErrorStats {
    let ratios: Vec<f64> = pairs
        .iter()
        .filter(|(_, real)| *real > 0.0)
        .map(|(estimate, real)| estimate / real)
        .collect();
    let errors: Vec<f64> = ratios.iter().map(|ratio| (ratio - 1.0).abs()).collect();
    ErrorStats {
        count: ratios.len(),
        median_abs_error: quantile(&errors, 0.5),
        p90_abs_error: quantile(&errors, 0.9),
        median_ratio: quantile(&ratios, 0.5),
    }
}

/// Characters (Unicode scalar values) / 4: the reference design's rule on characters.
pub fn chars4(text: &str) -> f64 {
    text.chars().count() as f64 / 4.0
}

/// The characters of what bytes/4 counts in messages (text, thinking, tool call id, name and
/// arguments, tool_call_id), for the chars/4 column of the interval table.
pub fn message_chars(messages: &[Message]) -> usize {
    let count = |text: &str| text.chars().count();
    messages
        .iter()
        .map(|message| {
            let content = match &message.content {
                Content::Text(text) => count(text),
                Content::Parts(parts) => parts
                    .iter()
                    .map(|part| match part {
                        Part::Text { text } => count(text),
                        Part::Thinking { thinking, .. } => count(thinking),
                        _ => 0,
                    })
                    .sum(),
            };
            let calls: usize = message
                .tool_calls
                .iter()
                .map(|call| count(&call.id) + count(&call.name) + count(&call.arguments))
                .sum();
            content + calls + message.tool_call_id.as_deref().map_or(0, count)
        })
        .sum()
}

/// The estimators compared on the Claude intervals, in table order.
pub const INTERVAL_ESTIMATORS: &[&str] = &[
    "ctxkit claude",
    "ctxkit claude-4.7",
    "ctxkit openai",
    "chars / 4",
    "bytes / 4 (reference)",
];

/// Estimate ÷ real growth for each measurable interval, per estimator of
/// [`INTERVAL_ESTIMATORS`].
pub fn interval_ratios(intervals: &[ClaudeInterval]) -> Vec<Vec<f64>> {
    let measurable: Vec<&ClaudeInterval> = intervals
        .iter()
        .filter(|interval| interval.is_measurable())
        .collect();
    let ratio = |estimate: f64, interval: &ClaudeInterval| estimate / interval.real_tokens as f64;
    vec![
        measurable
            .iter()
            .map(|i| {
                ratio(
                    estimate_messages(&i.appended, ModelFamily::Claude) as f64,
                    i,
                )
            })
            .collect(),
        measurable
            .iter()
            .map(|i| {
                ratio(
                    estimate_messages(&i.appended, ModelFamily::Claude47) as f64,
                    i,
                )
            })
            .collect(),
        measurable
            .iter()
            .map(|i| {
                ratio(
                    estimate_messages(&i.appended, ModelFamily::OpenAi) as f64,
                    i,
                )
            })
            .collect(),
        measurable
            .iter()
            .map(|i| ratio(message_chars(&i.appended) as f64 / 4.0, i))
            .collect(),
        measurable
            .iter()
            .map(|i| ratio(bytes4_messages(&i.appended) as f64, i))
            .collect(),
    ]
}
