//! One row of a cost report, and the running totals it is made from.
//!
//! Input cost is counted in **base-input-token units**: an uncached input token is 1, a cache
//! write its price over the input price (Anthropic 1.25, or 2 for the one-hour lifetime), a
//! cache read likewise (Anthropic 0.1). Dollars are the units times the model's input price.
//! A summary call's input is part of a strategy's input cost; its output is reported apart.

use serde::{Deserialize, Serialize};

use super::prices::Prices;

/// What one strategy (or the recorded session) cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StrategyCost {
    /// The strategy's name (`ctxkit`, `sliding-window`, ..., or `recorded`).
    pub strategy: String,
    /// Model calls (summary calls not counted).
    pub calls: usize,
    /// Every input token sent, summary calls included.
    pub input_tokens: u64,
    /// The billed input, in base-input-token units.
    pub input_cost_units: f64,
    /// The billed input in USD at the model's prices.
    pub input_cost_dollars: f64,
    /// The share of input tokens read from the cache.
    pub cache_read_share: f64,
    /// Calls that did not begin with the previous call's stable prefix.
    pub prefix_breaks: usize,
    /// Prefix breaks per 100 calls.
    pub prefix_breaks_per_100: f64,
    /// The mean size of a model call's request, in tokens.
    pub mean_tokens: u64,
    /// The largest request, in tokens.
    pub peak_tokens: u64,
    /// Compactions (summaries written).
    pub compactions: usize,
    /// Of those, the ones an idle timer made in a pause, ahead of the cache's expiry
    /// (`ctxkit-idle` only).
    #[serde(default)]
    pub idle_compactions: usize,
    /// Calls larger than the budget (the provider would refuse them).
    pub overflow_calls: usize,
    /// Output tokens of summary calls, in base-input-token units (at the output price).
    pub summary_output_units: f64,
    /// The share of pinned facts (paths, user requests, error lines) of the log so far that
    /// the request carries, over the sampled calls; `None` for the recorded row.
    pub pinned_recall: Option<f64>,
    /// Needed-next recall: of the facts (paths, identifiers) in the agent's tool calls that
    /// the log held earlier only in messages the request no longer carried verbatim, the share
    /// the request still held (`needed.rs`); `None` when no call needed one (a strategy that
    /// sends the whole log) and for the recorded row.
    #[serde(default)]
    pub needed_next: Option<f64>,
    /// Of the needed facts, those the requests held (summed over the measured calls).
    #[serde(default)]
    pub needed_next_held: usize,
    /// The needed facts (summed over the measured calls).
    #[serde(default)]
    pub needed_next_needed: usize,
}

/// Running totals of a strategy's calls.
#[derive(Debug, Clone, Copy, Default)]
pub struct CostTotals {
    calls: usize,
    call_tokens: u64,
    input_tokens: u64,
    uncached: u64,
    cache_write: u64,
    cache_write_long: u64,
    cache_read: u64,
    peak: u64,
    summary_output: u64,
}

impl CostTotals {
    /// Counts a model call of `input` tokens billed as the given parts.
    pub fn add_call(
        &mut self,
        input: u64,
        uncached: u64,
        cache_write: u64,
        cache_write_long: u64,
        cache_read: u64,
    ) {
        self.calls += 1;
        self.call_tokens += input;
        self.peak = self.peak.max(input);
        self.add_input(input, uncached, cache_write, cache_write_long, cache_read);
    }

    /// Counts a summary call: its input billed as the given parts, its output apart.
    pub fn add_summary_call(&mut self, uncached: u64, cache_read: u64, output: u64) {
        self.add_input(uncached + cache_read, uncached, 0, 0, cache_read);
        self.summary_output += output;
    }

    fn add_input(&mut self, input: u64, uncached: u64, write: u64, write_long: u64, read: u64) {
        self.input_tokens += input;
        self.uncached += uncached;
        self.cache_write += write;
        self.cache_write_long += write_long;
        self.cache_read += read;
    }

    /// The row, priced with `prices`.
    pub fn finish(
        &self,
        strategy: &str,
        prices: &Prices,
        prefix_breaks: usize,
        compactions: usize,
        pinned_recall: Option<f64>,
    ) -> StrategyCost {
        let (write, read, output) = prices.units();
        let long = prices.cache_write_long.map_or(write, |price| {
            if prices.input > 0.0 {
                price / prices.input
            } else {
                1.0
            }
        });
        let units = self.uncached as f64
            + self.cache_write as f64 * write
            + self.cache_write_long as f64 * long
            + self.cache_read as f64 * read;
        let calls = self.calls.max(1) as f64;
        StrategyCost {
            strategy: strategy.to_owned(),
            calls: self.calls,
            input_tokens: self.input_tokens,
            input_cost_units: units,
            input_cost_dollars: units * prices.input / 1_000_000.0,
            cache_read_share: if self.input_tokens == 0 {
                0.0
            } else {
                self.cache_read as f64 / self.input_tokens as f64
            },
            prefix_breaks,
            prefix_breaks_per_100: prefix_breaks as f64 * 100.0 / calls,
            mean_tokens: (self.call_tokens as f64 / calls) as u64,
            peak_tokens: self.peak,
            compactions,
            idle_compactions: 0,
            overflow_calls: 0,
            summary_output_units: self.summary_output as f64 * output,
            pinned_recall,
            needed_next: None,
            needed_next_held: 0,
            needed_next_needed: 0,
        }
    }
}
