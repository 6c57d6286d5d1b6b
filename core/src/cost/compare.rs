//! A cost report: every strategy replayed over one transcript, each call's request billed by
//! the cache simulator, and the pinned facts each request still carries.
//!
//! Per call: the request's blocks ([`view_blocks`]: reserve, system prompt, messages), its
//! breakpoints ([`place_breakpoints`], for a provider with explicit breakpoints; every strategy
//! gets the same placement rule; for OpenAI's exact breakpoints moved onto eligible messages,
//! [`openai_breakpoints`]), the blocks the next call should repeat (all but trailing
//! nudges), and the time the agent made the call when the transcript records it. A strategy's
//! summary call is billed too: the cached prefix it re-sends, its instruction, its output.
//!
//! Pinned recall is sampled every [`RECALL_EVERY`] calls and at the last one: of the pinned
//! paths, user requests and error lines of the log so far (as the strategy stored it), the
//! share whose text (the head, for one pinned head and tail) the request holds.

use super::blocks::{view_blocks, CacheProvider};
use super::breakpoints::place_breakpoints;
use super::cache::{Block, CacheRequest, CacheSimulator};
use super::openai_breakpoints::openai_breakpoints;
use super::prices::{CacheMode, ModelPricing};
use super::report::{CostTotals, StrategyCost};
use super::strategies::{replay_strategy, Replay, ReplaySetup, Strategy, StrategyCall};
use crate::compaction::pinned::gather_pinned;
use crate::compaction::workdir::{declared_working_directory, relativize_text};
use crate::compaction::FactKind;
use crate::model::Message;
use crate::text::fingerprint;
use crate::turn::cache_expired;

/// Pinned recall is measured at every this many calls (and the last).
pub const RECALL_EVERY: usize = 10;

/// What a report is run with.
#[derive(Debug, Clone, PartialEq)]
pub struct CostSetup {
    /// The window, reserve and system prompt every strategy gets.
    pub replay: ReplaySetup,
    /// The model's prices and cache rules.
    pub pricing: ModelPricing,
    /// When each call was made (one per assistant message, in seconds); empty or `None`
    /// entries: right after the one before.
    pub call_times: Vec<Option<i64>>,
    /// How many of the reserved tokens are already cached when the session starts (what the
    /// recorded first call read from the cache: an earlier session, or a sub-agent's parent,
    /// wrote it); 0 for a cold start.
    pub warm_reserve_tokens: u64,
}

/// For each call of `call_times`, whether the cache had expired since the call before: a gap
/// of more than `ttl_seconds` (a call with no time is right after the one before).
pub fn expired_calls(call_times: &[Option<i64>], ttl_seconds: i64) -> Vec<bool> {
    let mut last = None;
    call_times
        .iter()
        .map(|time| {
            let expired = time.is_some_and(|now| cache_expired(last, now, ttl_seconds));
            if time.is_some() {
                last = *time;
            }
            expired
        })
        .collect()
}

/// Every strategy of [`Strategy::ALL`] over `transcript`.
pub fn compare_strategies(transcript: &[Message], setup: &CostSetup) -> Vec<StrategyCost> {
    Strategy::ALL
        .iter()
        .map(|&strategy| strategy_cost(strategy, transcript, setup))
        .collect()
}

/// One strategy's row.
pub fn strategy_cost(
    strategy: Strategy,
    transcript: &[Message],
    setup: &CostSetup,
) -> StrategyCost {
    let replay = replay_strategy(strategy, transcript, &setup.replay);
    bill_replay(strategy.name(), &replay, setup)
}

/// Bills the calls of `replay` and measures their recall.
pub fn bill_replay(name: &str, replay: &Replay, setup: &CostSetup) -> StrategyCost {
    let provider = match setup.pricing.cache.mode {
        CacheMode::Explicit { .. } => CacheProvider::Anthropic,
        CacheMode::Automatic { .. } | CacheMode::Exact { .. } => CacheProvider::OpenAi,
    };
    let mut cache = CacheSimulator::new(setup.pricing.cache);
    let mut totals = CostTotals::default();
    let (mut breaks, mut compactions, mut overflows) = (0, 0, 0);
    let (mut expected, mut kept) = (0usize, 0usize);
    let last = replay.calls.len().saturating_sub(1);
    for (index, call) in replay.calls.iter().enumerate() {
        let at_seconds = setup.call_times.get(index).copied().flatten();
        if let Some(summary) = call.summary_call {
            totals.add_summary_call(summary.new_input, summary.cached_input, summary.output);
        }
        let request = cache_request(call, setup, provider, at_seconds);
        if index == 0 && setup.warm_reserve_tokens > 0 && setup.replay.reserve_tokens > 0 {
            cache.prewarm(&request, 0);
        }
        let bill = cache.bill(&request);
        totals.add_call(
            bill.input(),
            bill.uncached,
            bill.cache_write,
            0,
            bill.cache_read,
        );
        breaks += usize::from(bill.prefix_break);
        compactions += usize::from(call.compacted);
        overflows += usize::from(call.overflow);
        if index % RECALL_EVERY == 0 || index == last {
            let log = replay.log.get(..call.log_len).unwrap_or(&replay.log);
            let (e, k) = recall_at(log, call);
            expected += e;
            kept += k;
        }
    }
    let recall = (expected > 0).then(|| kept as f64 / expected as f64);
    let mut row = totals.finish(name, &setup.pricing.prices, breaks, compactions, recall);
    row.overflow_calls = overflows;
    row
}

fn cache_request(
    call: &StrategyCall,
    cost: &CostSetup,
    provider: CacheProvider,
    at_seconds: Option<i64>,
) -> CacheRequest {
    let setup = &cost.replay;
    let mut blocks = view_blocks(
        setup.reserve_tokens,
        &setup.system,
        &call.messages,
        provider,
        setup.family,
    );
    // A partly warm reserve is two blocks: the part already cached, then the rest.
    let warm = cost.warm_reserve_tokens.min(setup.reserve_tokens);
    if warm > 0 && warm < setup.reserve_tokens {
        if let Some(first) = blocks.blocks.first_mut() {
            first.tokens = warm;
        }
        blocks.blocks.insert(
            1,
            Block {
                hash: fingerprint("reserved: the part not cached at the start"),
                tokens: setup.reserve_tokens - warm,
            },
        );
        blocks.system_block = blocks.system_block.map(|at| at + 1);
        blocks.message_ends.iter_mut().for_each(|end| *end += 1);
    }
    let head_end = blocks
        .system_block
        .map_or(blocks.blocks.len().min(1), |at| at + 1);
    let mut placed = place_breakpoints(
        &call.messages,
        head_end > 0,
        call.has_summary,
        call.trailing_nudges,
    );
    if matches!(cost.pricing.cache.mode, CacheMode::Exact { .. }) {
        placed = openai_breakpoints(&call.messages, &placed);
    }
    let breakpoints = placed
        .iter()
        .filter_map(|breakpoint| match breakpoint.after_message {
            None => head_end.checked_sub(1),
            Some(index) => blocks
                .message_ends
                .get(index)
                .and_then(|end| end.checked_sub(1)),
        })
        .collect();
    let stable_messages = call.messages.len().saturating_sub(call.trailing_nudges);
    let stable_blocks = stable_messages
        .checked_sub(1)
        .and_then(|last| blocks.message_ends.get(last).copied())
        .unwrap_or(head_end);
    CacheRequest {
        blocks: blocks.blocks,
        breakpoints,
        stable_blocks,
        at_seconds,
    }
}

/// (expected, kept) pinned facts of `log` in `call`'s request. A fact is kept when the
/// request holds it as written, or relative to the working directory a summary in the request
/// states (the summary writes paths under it relative: the pinned check's rule,
/// `pinned::summary_holds`).
fn recall_at(log: &[Message], call: &StrategyCall) -> (usize, usize) {
    let facts = gather_pinned(log, &[], &[]);
    let text = request_text(&call.messages);
    let workdir = declared_working_directory(&text);
    let shown = flat(&text);
    let held = |head: &str| {
        shown.contains(&flat(head))
            || workdir.is_some_and(|dir| {
                let relative = relativize_text(head, Some(dir));
                relative != head && shown.contains(&flat(&relative))
            })
    };
    let mut counts = (0, 0);
    for fact in facts.iter().filter(|fact| {
        matches!(
            fact.kind,
            FactKind::Path | FactKind::Request | FactKind::Error
        )
    }) {
        counts.0 += 1;
        if held(fact.verbatim_head()) {
            counts.1 += 1;
        }
    }
    counts
}

fn request_text(messages: &[Message]) -> String {
    let mut text = String::new();
    for message in messages {
        text.push_str(&message.text_content());
        text.push('\n');
        for call in &message.tool_calls {
            text.push_str(&call.arguments);
            text.push('\n');
            // Paths in arguments are JSON strings: the decoded form is what facts hold.
            if let Ok(value) = serde_json::from_str::<serde_json::Value>(&call.arguments) {
                push_strings(&value, &mut text);
            }
        }
    }
    text
}

fn push_strings(value: &serde_json::Value, out: &mut String) {
    match value {
        serde_json::Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| push_strings(v, out)),
        serde_json::Value::Object(map) => map.values().for_each(|v| push_strings(v, out)),
        _ => {}
    }
}

fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::pricing_for;
    use crate::tokens::ModelFamily;
    use crate::ToolCall;

    fn transcript(turns: usize) -> Vec<Message> {
        let mut out = vec![Message::user("Fix the failing test in `src/parser.rs`")];
        for turn in 0..turns {
            let id = format!("c{turn}");
            let path = format!("src/module_{turn}.rs");
            out.push(Message::assistant(
                "",
                vec![ToolCall::new(
                    &id,
                    "read",
                    format!(r#"{{"file_path":"{path}"}}"#),
                )],
            ));
            out.push(Message::tool_result(
                &id,
                format!("{path}\n{}", "fn x() {}\n".repeat(300)),
                false,
            ));
        }
        out.push(Message::assistant("done", vec![]));
        out
    }

    fn setup(window: u64) -> CostSetup {
        CostSetup {
            replay: ReplaySetup {
                window,
                family: ModelFamily::Claude,
                reserve_tokens: 12_000,
                system: "You are a coding agent.".into(),
                cache_expired: Vec::new(),
            },
            pricing: pricing_for("claude-sonnet-4-5").unwrap(),
            call_times: Vec::new(),
            warm_reserve_tokens: 0,
        }
    }

    #[test]
    fn ctxkit_keeps_its_facts_and_breaks_the_prefix_only_when_it_compacts() {
        let rows = compare_strategies(&transcript(80), &setup(40_000));
        let ctxkit = rows.iter().find(|r| r.strategy == "ctxkit").unwrap();
        assert!(ctxkit.compactions > 0, "{ctxkit:?}");
        assert!(ctxkit.prefix_breaks <= ctxkit.compactions, "{ctxkit:?}");
        assert_eq!(ctxkit.pinned_recall, Some(1.0), "{ctxkit:?}");
        assert!(ctxkit.cache_read_share > 0.5, "{ctxkit:?}");
        let sliding = rows
            .iter()
            .find(|r| r.strategy == "sliding-window")
            .unwrap();
        assert!(sliding.prefix_breaks > ctxkit.prefix_breaks, "{sliding:?}");
        assert!(sliding.pinned_recall.unwrap() < 1.0, "{sliding:?}");
        let none = rows.iter().find(|r| r.strategy == "no-compaction").unwrap();
        assert!(none.overflow_calls > 0);
        assert_eq!(none.prefix_breaks, 0);
    }

    #[test]
    fn a_pause_past_the_cache_lifetime_costs_a_rewrite() {
        let log = transcript(10);
        let quick = strategy_cost(Strategy::Ctxkit, &log, &setup(200_000));
        let mut paused = setup(200_000);
        paused.call_times = (0..11)
            .map(|i| Some(i * 60 + if i >= 5 { 3_600 } else { 0 }))
            .collect();
        let slow = strategy_cost(Strategy::Ctxkit, &log, &paused);
        assert!(slow.input_cost_units > quick.input_cost_units);
        assert_eq!(slow.input_tokens, quick.input_tokens);
    }

    #[test]
    fn a_warm_reserve_is_read_on_the_first_call() {
        let log = transcript(3);
        let cold = strategy_cost(Strategy::Ctxkit, &log, &setup(200_000));
        let mut warm_setup = setup(200_000);
        warm_setup.warm_reserve_tokens = 12_000;
        let warm = strategy_cost(Strategy::Ctxkit, &log, &warm_setup);
        // 12,000 reserved tokens read (0.1) instead of written (1.25) once.
        let saved = cold.input_cost_units - warm.input_cost_units;
        assert!((saved - 12_000.0 * 1.15).abs() < 1.0, "{saved}");
    }
}
