//! Prices and cache rules as data: what a token costs per model, and how each provider's
//! prompt cache works. The defaults are the providers' published prices (USD per million
//! tokens; see `docs/reports/economics.md` for the pages and the date they were read); a caller with
//! other prices passes its own [`ModelPricing`].
//!
//! Two cache designs:
//! - **Explicit** (Anthropic): a request marks up to four breakpoints (`cache_control`); the
//!   prefix up to a breakpoint is written to the cache (at 1.25x the input price for five
//!   minutes, 2x for an hour) and read back by a later request with the same prefix (0.1x).
//!   A read is looked for at each breakpoint and at most 20 blocks before it.
//! - **Automatic** (OpenAI before GPT-5.6): every prompt's prefix is cached for free and a
//!   later prompt that starts the same way reads it at a discount, in steps of 128 tokens past
//!   the first 1,024.
//! - **Exact** (OpenAI GPT-5.6 and later): up to four `prompt_cache_breakpoint` markers on
//!   input parts; the prefix up to each is written (at 1.25x the input price, for thirty
//!   minutes) and a later request reads it only where one of its own breakpoints ends exactly
//!   the same prefix, with no fallback to a shorter one.
//!
//! Either way, a prefix shorter than the model's minimum is not cached.

use serde::{Deserialize, Serialize};

/// What a million tokens cost, in USD.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Prices {
    /// Uncached input.
    pub input: f64,
    /// Input written to the cache for its default lifetime (Anthropic: five minutes); equal to
    /// `input` where writes cost nothing extra (OpenAI).
    pub cache_write: f64,
    /// Input written to the cache for an hour (Anthropic's `ttl: "1h"`); `None` where there is
    /// no such option.
    pub cache_write_long: Option<f64>,
    /// Input read from the cache.
    pub cache_read: f64,
    /// Output.
    pub output: f64,
}

impl Prices {
    /// The multipliers of the base input price: (cache write, cache read, output). The report
    /// counts input cost in these units (one uncached input token = 1).
    pub fn units(&self) -> (f64, f64, f64) {
        if self.input <= 0.0 {
            return (1.0, 1.0, 1.0);
        }
        (
            self.cache_write / self.input,
            self.cache_read / self.input,
            self.output / self.input,
        )
    }
}

/// How a provider caches prompt prefixes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum CacheMode {
    /// Breakpoints marked in the request (Anthropic's `cache_control`).
    Explicit {
        /// The most breakpoints one request may carry (Anthropic: 4; a fifth is a 400).
        max_breakpoints: usize,
        /// How many blocks before a breakpoint a cache read is looked for (Anthropic: 20).
        lookback_blocks: usize,
    },
    /// Breakpoints marked on input parts, read back only at the exact prefix a breakpoint ends
    /// (OpenAI's `prompt_cache_breakpoint`, GPT-5.6 and later): no lookback, no fallback to a
    /// shorter prefix.
    Exact {
        /// The most breakpoints written per request (OpenAI: 4).
        max_breakpoints: usize,
    },
    /// Every prefix cached by the provider (OpenAI before GPT-5.6).
    Automatic {
        /// Cached reads come in steps of this many tokens past the minimum (OpenAI: 128).
        step_tokens: u64,
    },
}

/// The cache rules of a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheRules {
    /// Explicit breakpoints or automatic prefixes.
    pub mode: CacheMode,
    /// The shortest prefix the provider caches, in tokens.
    pub min_tokens: u64,
    /// How long an unused cache entry lives, in seconds (each read renews it). Anthropic: 300
    /// (five minutes, the default lifetime); OpenAI: 300 (five to ten minutes of inactivity),
    /// 1,800 for GPT-5.6 and later (thirty minutes).
    pub ttl_seconds: i64,
}

/// Anthropic's rules with a minimum cacheable length of `min_tokens`.
pub const fn anthropic_rules(min_tokens: u64) -> CacheRules {
    CacheRules {
        mode: CacheMode::Explicit {
            max_breakpoints: 4,
            lookback_blocks: 20,
        },
        min_tokens,
        ttl_seconds: 300,
    }
}

/// OpenAI's automatic prefix caching.
pub const OPENAI_RULES: CacheRules = CacheRules {
    mode: CacheMode::Automatic { step_tokens: 128 },
    min_tokens: 1_024,
    ttl_seconds: 300,
};

/// OpenAI's explicit breakpoints (GPT-5.6 and later): four per request, from 1,024 tokens,
/// thirty minutes, read only at the exact prefix a breakpoint ends.
pub const OPENAI_EXACT_RULES: CacheRules = CacheRules {
    mode: CacheMode::Exact { max_breakpoints: 4 },
    min_tokens: 1_024,
    ttl_seconds: 1_800,
};

/// A model's prices and cache rules.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelPricing {
    /// The model ids this entry covers: every id that starts with this (`claude-opus-4-5`
    /// covers `claude-opus-4-5-20251101`).
    pub model_prefix: String,
    /// Its prices.
    pub prices: Prices,
    /// Its cache.
    pub cache: CacheRules,
}

/// One row of the default table, as plain constants.
struct Row {
    prefix: &'static str,
    input: f64,
    read: f64,
    output: f64,
    min_tokens: u64,
    cache: RowCache,
}

/// Which cache design a row's model has.
#[derive(Clone, Copy, PartialEq, Eq)]
enum RowCache {
    Anthropic,
    OpenAiAutomatic,
    OpenAiExact,
}

/// The defaults, longest prefixes first within a family so the most specific row wins.
/// Anthropic: writes are 1.25x input (5 minutes) and 2x (1 hour), reads 0.1x. OpenAI before
/// GPT-5.6: writes are free (billed as input), reads at the model's cached-input price.
/// GPT-5.6 and later: writes are 1.25x input, reads at the cached-input price (`gpt-5.6` is
/// the Sol tier's alias; `gpt-6` rows likewise).
const TABLE: &[Row] = &[
    row_a("claude-opus-4-1", 15.0, 75.0, 1_024),
    row_a("claude-opus-4-0", 15.0, 75.0, 1_024),
    row_a("claude-opus-4-2025", 15.0, 75.0, 1_024),
    row_a("claude-opus-4", 5.0, 25.0, 4_096),
    row_a("claude-sonnet-4", 3.0, 15.0, 1_024),
    row_a("claude-haiku-4", 1.0, 5.0, 4_096),
    row_a("claude-3-5-haiku", 0.8, 4.0, 2_048),
    row_a("claude", 3.0, 15.0, 1_024),
    row_x("gpt-5.6-luna", 0.2, 0.02, 1.2),
    row_x("gpt-5.6-terra", 2.0, 0.2, 12.0),
    row_x("gpt-5.6", 5.0, 0.5, 30.0),
    row_x("gpt-6.1-sol", 2.0, 0.1, 10.0),
    row_x("gpt-6-luna", 0.1, 0.01, 0.5),
    row_x("gpt-6-astra", 10.0, 1.0, 50.0),
    row_x("gpt-6", 2.0, 0.2, 10.0),
    row_o("gpt-5.5", 5.0, 0.5, 30.0),
    row_o("gpt-5.4-nano", 0.2, 0.02, 1.25),
    row_o("gpt-5.4-mini", 0.75, 0.075, 4.5),
    row_o("gpt-5.4", 2.5, 0.25, 15.0),
    row_o("gpt-5-mini", 0.25, 0.025, 2.0),
    row_o("gpt-5", 1.25, 0.125, 10.0),
    row_o("gpt-4.1-mini", 0.4, 0.1, 1.6),
    row_o("gpt-4.1", 2.0, 0.5, 8.0),
    row_o("gpt-4o-mini", 0.15, 0.075, 0.6),
    row_o("gpt-4o", 2.5, 1.25, 10.0),
];

const fn row_a(prefix: &'static str, input: f64, output: f64, min_tokens: u64) -> Row {
    Row {
        prefix,
        input,
        read: input / 10.0,
        output,
        min_tokens,
        cache: RowCache::Anthropic,
    }
}

const fn row_o(prefix: &'static str, input: f64, read: f64, output: f64) -> Row {
    Row {
        prefix,
        input,
        read,
        output,
        min_tokens: 1_024,
        cache: RowCache::OpenAiAutomatic,
    }
}

const fn row_x(prefix: &'static str, input: f64, read: f64, output: f64) -> Row {
    Row {
        prefix,
        input,
        read,
        output,
        min_tokens: 1_024,
        cache: RowCache::OpenAiExact,
    }
}

impl Row {
    fn pricing(&self) -> ModelPricing {
        let (cache_write, cache_write_long, cache) = match self.cache {
            RowCache::Anthropic => (
                self.input * 1.25,
                Some(self.input * 2.0),
                anthropic_rules(self.min_tokens),
            ),
            RowCache::OpenAiAutomatic => (self.input, None, OPENAI_RULES),
            RowCache::OpenAiExact => (self.input * 1.25, None, OPENAI_EXACT_RULES),
        };
        ModelPricing {
            model_prefix: self.prefix.to_owned(),
            prices: Prices {
                input: self.input,
                cache_write,
                cache_write_long,
                cache_read: self.read,
                output: self.output,
            },
            cache,
        }
    }
}

/// Every default entry, most specific first.
pub fn default_prices() -> Vec<ModelPricing> {
    TABLE.iter().map(Row::pricing).collect()
}

/// The default entry for `model`: the first whose prefix the id starts with (case-insensitive).
/// `None` for a model the table does not know.
///
/// ```
/// use ctxkit_lab::cost::{pricing_for, CacheMode};
/// let opus = pricing_for("claude-opus-4-6").unwrap();
/// assert_eq!(opus.prices.input, 5.0);
/// assert_eq!(opus.prices.cache_read, 0.5);
/// assert_eq!(opus.cache.min_tokens, 4_096);
/// assert!(matches!(opus.cache.mode, CacheMode::Explicit { max_breakpoints: 4, .. }));
/// assert_eq!(pricing_for("claude-opus-4-1-20250805").unwrap().prices.input, 15.0);
/// assert_eq!(pricing_for("gpt-4o-mini").unwrap().prices.cache_read, 0.075);
/// let sol = pricing_for("gpt-5.6").unwrap();
/// assert_eq!((sol.prices.input, sol.prices.cache_write), (5.0, 6.25));
/// assert!(matches!(sol.cache.mode, CacheMode::Exact { max_breakpoints: 4 }));
/// assert_eq!(sol.cache.ttl_seconds, 1_800);
/// assert!(pricing_for("llama-3").is_none());
/// ```
pub fn pricing_for(model: &str) -> Option<ModelPricing> {
    let model = model.to_ascii_lowercase();
    TABLE
        .iter()
        .find(|row| model.starts_with(row.prefix))
        .map(Row::pricing)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anthropic_multipliers_are_the_published_ones() {
        for pricing in default_prices() {
            let (write, read, _) = pricing.prices.units();
            if pricing.model_prefix.starts_with("claude") || exact(&pricing) {
                assert!((write - 1.25).abs() < 1e-9, "{}", pricing.model_prefix);
                assert!(read <= 0.1 + 1e-9, "{}", pricing.model_prefix);
                if exact(&pricing) {
                    assert_eq!(pricing.prices.cache_write_long, None);
                    assert_eq!(pricing.cache, OPENAI_EXACT_RULES);
                } else {
                    assert!((read - 0.1).abs() < 1e-9, "{}", pricing.model_prefix);
                    assert_eq!(
                        pricing.prices.cache_write_long,
                        Some(pricing.prices.input * 2.0)
                    );
                }
            } else {
                assert!((write - 1.0).abs() < 1e-9, "{}", pricing.model_prefix);
                assert!(read < 1.0 && read > 0.0, "{}", pricing.model_prefix);
                assert_eq!(pricing.cache, OPENAI_RULES);
            }
        }
    }

    fn exact(pricing: &ModelPricing) -> bool {
        matches!(pricing.cache.mode, CacheMode::Exact { .. })
    }

    #[test]
    fn gpt_5_6_and_later_have_exact_breakpoints_and_older_models_automatic_caching() {
        for model in [
            "gpt-5.6",
            "gpt-5.6-sol",
            "gpt-5.6-terra-2026-07-09",
            "gpt-6-luna",
            "gpt-6.1-sol",
        ] {
            let pricing = pricing_for(model).unwrap();
            assert_eq!(pricing.cache, OPENAI_EXACT_RULES, "{model}");
            let (write, _, _) = pricing.prices.units();
            assert!((write - 1.25).abs() < 1e-9, "{model}");
        }
        assert_eq!(pricing_for("gpt-5.6-terra").unwrap().prices.input, 2.0);
        for model in ["gpt-5.5", "gpt-5", "gpt-5.4-mini", "gpt-4o"] {
            let pricing = pricing_for(model).unwrap();
            assert_eq!(pricing.cache, OPENAI_RULES, "{model}");
            assert_eq!(pricing.prices.cache_write, pricing.prices.input, "{model}");
        }
    }

    #[test]
    fn a_more_specific_prefix_wins() {
        assert_eq!(
            pricing_for("gpt-4o-mini-2024").unwrap().model_prefix,
            "gpt-4o-mini"
        );
        assert_eq!(
            pricing_for("gpt-5.4-mini").unwrap().model_prefix,
            "gpt-5.4-mini"
        );
        assert_eq!(pricing_for("CLAUDE-SONNET-4-5").unwrap().prices.input, 3.0);
    }
}
