//! Economics: what a session costs once prompt caching is counted, and what ctxkit does so
//! that it costs less.
//!
//! A long agent session is billed mostly for re-sending its prefix, and a provider bills a
//! re-sent prefix at a tenth of the price when it is cached, so a strategy that keeps its
//! prefix stable (ctxkit: the system prompt, then the checkpoint summary, then the log as it
//! was) pays a fraction of one that shifts it every call (a sliding window). This layer makes
//! that measurable (where the cache breakpoints go is the core's, with the wire formats:
//! `ctxkit_core::wire::breakpoints`):
//! - `prices`: prices and cache rules per model as data ([`pricing_for`]);
//! - `blocks`: a view as the blocks a cache sees;
//! - `cache`: the cache simulator ([`CacheSimulator`]);
//! - `strategies`: the strategies a report compares, replayed over a transcript (`baselines`,
//!   `ctxkit_replay`), each call reported as what changed since the call before;
//! - `recorded`: what the session really cost, from its recorded usage;
//! - `report`, `compare`, `recall`: a report's rows ([`compare_strategies`]), each call billed
//!   as the replay makes it; `needles`: the many-fact lookup a recall sample makes in one pass
//!   over a text; `needed`: needed-next recall, the facts the agent's answer to a call
//!   used that the request carried only in what stands in for the dropped log
//!   ([`needed_stride`]);
//! - `transcript`: the report of one transcript file ([`cost_report`]).
//!
//! Guarantees: pure and deterministic (times are inputs); every figure is computed from the
//! requests the strategies would send, billed by the rules in `prices`; a report's work and
//! memory grow in proportion to the transcript (a call costs what it changes; see
//! `docs/performance.md`, "The cost report").

pub(crate) mod baselines;
pub(crate) mod blocks;
pub(crate) mod cache;
pub(crate) mod call_times;
pub(crate) mod compare;
pub(crate) mod ctxkit_replay;
pub(crate) mod needed;
pub(crate) mod needles;
pub(crate) mod prices;
pub(crate) mod recall;
pub(crate) mod recorded;
pub(crate) mod report;
pub(crate) mod strategies;
pub(crate) mod transcript;

#[cfg(test)]
mod idle_tests;

pub use baselines::{CLAUDE_CODE_KEEP_MESSAGES, MASK_KEEP_OUTPUTS, SUMMARY_INSTRUCTION_TOKENS};
pub use blocks::{view_blocks, CacheProvider, ViewBlocks};
pub use cache::{Block, CacheBill, CacheRequest, CacheSimulator};
pub use call_times::{call_gaps, expired_calls};
pub use compare::{
    bill_replay, compare_strategies, recall_stride, strategy_cost, CostSetup, RECALL_EVERY,
    RECALL_SAMPLES,
};
pub use needed::{needed_stride, NEEDED_SAMPLES};
pub use prices::{
    anthropic_rules, default_prices, pricing_for, CacheMode, CacheRules, ModelPricing, Prices,
    OPENAI_EXACT_RULES, OPENAI_RULES,
};
pub use recall::request_text;
pub use recorded::{call_times, recorded_cost, recorded_reserve, utc_seconds};
pub use report::{CostTotals, StrategyCost};
pub use strategies::{
    replay_strategy, replay_strategy_with, CostMarks, Replay, ReplaySetup, Strategy, StrategyCall,
    SummaryCall,
};
pub use transcript::{
    cost_report, CostOptions, CostReport, DEFAULT_RESERVE_TOKENS, REPORT_SYSTEM_PROMPT,
};
