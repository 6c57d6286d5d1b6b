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
//! Pinned recall is sampled every [`RECALL_EVERY`] calls and at the last one (`recall.rs`); a
//! session of more than [`RECALL_EVERY`] × [`RECALL_SAMPLES`] calls is sampled at
//! [`RECALL_SAMPLES`] evenly spaced calls instead ([`recall_stride`]). A sample reads the whole
//! request and every fact of the log so far, so a fixed stride made a long session's report
//! grow with the square of its length (a strategy whose view is the whole log, or a log whose
//! facts keep growing); a bounded count of samples keeps it linear.
//!
//! A call is billed in proportion to what it changed: the replay reports the messages after
//! those it repeats ([`StrategyCall::kept`]), each message's blocks are rendered once while it
//! stays in the view, and the simulator keeps the fingerprints of the unchanged blocks. Calls
//! are billed as the replay makes them ([`strategy_cost`]), so no call's request is kept.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::blocks::{head_blocks, message_blocks, CacheProvider, ViewBlocks};
use super::cache::{Block, CacheRequest, CacheSimulator};
use super::needed::{needed_stride, NeededRecall, TranscriptFacts};
use super::prices::{CacheMode, ModelPricing};
use super::recall::Recall;
use super::report::{CostTotals, StrategyCost};
use super::strategies::{replay_strategy_with, Replay, ReplaySetup, Strategy, StrategyCall};
use ctxkit_core::compaction::working_directory;
use ctxkit_core::model::{Message, Role};
use ctxkit_core::text::fingerprint;
use ctxkit_core::wire::breakpoints::{openai_breakpoints, place_breakpoints};

/// Pinned recall is measured at every this many calls (and the last), in a session of up to
/// [`RECALL_EVERY`] × [`RECALL_SAMPLES`] calls.
pub const RECALL_EVERY: usize = 10;

/// The most samples of pinned recall a report takes (and the last call's).
pub const RECALL_SAMPLES: usize = 200;

/// Every how many calls pinned recall is sampled in a session of `calls` calls: every
/// [`RECALL_EVERY`], or evenly spaced so that at most [`RECALL_SAMPLES`] are taken.
///
/// ```
/// use ctxkit_lab::cost::recall_stride;
/// assert_eq!(recall_stride(150), 10);
/// assert_eq!(recall_stride(2_000), 10);
/// assert_eq!(recall_stride(2_001), 11);
/// assert_eq!(recall_stride(50_000), 250);
/// ```
pub fn recall_stride(calls: usize) -> usize {
    calls.div_ceil(RECALL_SAMPLES).max(RECALL_EVERY)
}

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

/// Every strategy of [`Strategy::ALL`] over `transcript`.
pub fn compare_strategies(transcript: &[Message], setup: &CostSetup) -> Vec<StrategyCost> {
    let facts = TranscriptFacts::new(transcript, working_directory(transcript));
    Strategy::ALL
        .iter()
        .map(|&strategy| cost_with(strategy, transcript, setup, &facts))
        .collect()
}

/// One strategy's row: its calls billed as the replay makes them (none is kept).
pub fn strategy_cost(
    strategy: Strategy,
    transcript: &[Message],
    setup: &CostSetup,
) -> StrategyCost {
    let facts = TranscriptFacts::new(transcript, working_directory(transcript));
    cost_with(strategy, transcript, setup, &facts)
}

/// [`strategy_cost`] with the transcript's needed-next facts read already.
fn cost_with(
    strategy: Strategy,
    transcript: &[Message],
    setup: &CostSetup,
    facts: &TranscriptFacts,
) -> StrategyCost {
    let calls = transcript
        .iter()
        .filter(|message| message.role == Role::Assistant)
        .count();
    let mut biller = Biller::new(setup, calls, transcript, facts);
    replay_strategy_with(strategy, transcript, &setup.replay, &mut |log, call| {
        biller.call(log, &call);
    });
    biller.finish(strategy.name())
}

/// Bills the calls of `replay` and measures their recall (needed-next recall reads the log as
/// the replay stored it in place of the transcript).
pub fn bill_replay(name: &str, replay: &Replay, setup: &CostSetup) -> StrategyCost {
    let source: Vec<Message> = replay.log.iter().map(|m| Message::clone(m)).collect();
    let facts = TranscriptFacts::new(&source, working_directory(&source));
    let mut biller = Biller::new(setup, replay.calls.len(), &source, &facts);
    for call in &replay.calls {
        biller.call(&replay.log, call);
    }
    biller.finish(name)
}

/// A message's blocks, kept while the message is in the view (or was lately).
struct Rendered {
    /// Held so the address that keys it is not reused.
    _message: Arc<Message>,
    blocks: Vec<Block>,
    /// How many times the message is in the current view.
    in_view: usize,
}

/// Bills a replay's calls one at a time. It keeps the current conversation and its blocks:
/// a call's messages past those it repeats are rendered (once per message: a message sent
/// again, even at another place, reuses its blocks), the cache simulator is told how many
/// blocks are unchanged, and the recall samples read each log message once.
struct Biller<'s> {
    setup: &'s CostSetup,
    /// The transcript replayed: the answer to each call, the facts needed-next recall reads.
    transcript: &'s [Message],
    provider: CacheProvider,
    cache: CacheSimulator,
    totals: CostTotals,
    breaks: usize,
    compactions: usize,
    idle_compactions: usize,
    overflows: usize,
    /// The reserve and system prompt's blocks (a warm reserve split in two).
    head: ViewBlocks,
    view: Vec<Arc<Message>>,
    blocks: Vec<Block>,
    message_ends: Vec<usize>,
    rendered: BTreeMap<usize, Rendered>,
    recall: Recall,
    /// The index of the next call.
    index: usize,
    /// Every how many calls recall is sampled ([`recall_stride`]).
    recall_stride: usize,
    /// Whether the last call's recall was sampled.
    sampled: bool,
    needed: NeededRecall<'s>,
    /// Every how many calls needed-next recall is measured ([`needed_stride`]).
    needed_stride: usize,
}

impl<'s> Biller<'s> {
    /// A biller for a replay of `calls` calls.
    fn new(
        setup: &'s CostSetup,
        calls: usize,
        transcript: &'s [Message],
        facts: &'s TranscriptFacts,
    ) -> Self {
        let replay = &setup.replay;
        let mut head = head_blocks(replay.reserve_tokens, &replay.system, replay.family);
        // A partly warm reserve is two blocks: the part already cached, then the rest.
        let warm = setup.warm_reserve_tokens.min(replay.reserve_tokens);
        if warm > 0 && warm < replay.reserve_tokens {
            if let Some(first) = head.blocks.first_mut() {
                first.tokens = warm;
            }
            head.blocks.insert(
                1,
                Block {
                    hash: fingerprint("reserved: the part not cached at the start"),
                    tokens: replay.reserve_tokens - warm,
                },
            );
            head.system_block = head.system_block.map(|at| at + 1);
        }
        Biller {
            setup,
            transcript,
            provider: match setup.pricing.cache.mode {
                CacheMode::Explicit { .. } => CacheProvider::Anthropic,
                CacheMode::Automatic { .. } | CacheMode::Exact { .. } => CacheProvider::OpenAi,
            },
            cache: CacheSimulator::new(setup.pricing.cache),
            totals: CostTotals::default(),
            breaks: 0,
            compactions: 0,
            idle_compactions: 0,
            overflows: 0,
            blocks: head.blocks.clone(),
            head,
            view: Vec::new(),
            message_ends: Vec::new(),
            rendered: BTreeMap::new(),
            recall: Recall::default(),
            index: 0,
            recall_stride: recall_stride(calls),
            sampled: false,
            needed: NeededRecall::new(facts),
            needed_stride: needed_stride(calls),
        }
    }

    /// Bills one call; `log`: the log as stored so far.
    fn call(&mut self, log: &[Arc<Message>], call: &StrategyCall) {
        let index = self.index;
        self.index += 1;
        let at_seconds = self.setup.call_times.get(index).copied().flatten();
        if let Some(summary) = call.summary_call {
            self.totals
                .add_summary_call(summary.new_input, summary.cached_input, summary.output);
        }
        let log_now = log.get(..call.log_len).unwrap_or(log);
        self.needed.read(self.transcript, log_now, call.log_len);
        let unchanged = self.update_view(call);
        let (breakpoints, stable_blocks) = self.request_shape(call);
        if index == 0 && self.setup.warm_reserve_tokens > 0 && self.setup.replay.reserve_tokens > 0
        {
            let request = CacheRequest {
                blocks: self.blocks.clone(),
                breakpoints: breakpoints.clone(),
                stable_blocks,
                at_seconds,
            };
            self.cache.prewarm(&request, 0);
        }
        let bill = self.cache.bill_blocks(
            &self.blocks,
            unchanged,
            &breakpoints,
            stable_blocks,
            at_seconds,
        );
        self.totals.add_call(
            bill.input(),
            bill.uncached,
            bill.cache_write,
            0,
            bill.cache_read,
        );
        self.breaks += usize::from(bill.prefix_break);
        self.compactions += usize::from(call.compacted);
        self.idle_compactions += usize::from(call.idle_compaction);
        self.overflows += usize::from(call.overflow);
        self.recall.read(log.get(..call.log_len).unwrap_or(log));
        self.sampled = index % self.recall_stride == 0;
        if self.sampled {
            self.recall.sample(&self.view);
        }
        if index % self.needed_stride == 0 {
            let rendered = &self.rendered;
            let in_view = |message: &Arc<Message>| {
                rendered
                    .get(&(Arc::as_ptr(message) as usize))
                    .is_some_and(|r| r.in_view > 0)
            };
            self.needed
                .sample(call.log_len, &self.view, log_now, &in_view);
        }
    }

    /// The row, the last call's recall sampled if it was not.
    fn finish(mut self, name: &str) -> StrategyCost {
        if self.index > 0 && !self.sampled {
            self.recall.sample(&self.view);
        }
        let recall = self.recall.share();
        let mut row = self.totals.finish(
            name,
            &self.setup.pricing.prices,
            self.breaks,
            self.compactions,
            recall,
        );
        row.overflow_calls = self.overflows;
        row.idle_compactions = self.idle_compactions;
        (
            row.needed_next,
            row.needed_next_held,
            row.needed_next_needed,
        ) = self.needed.figure();
        row
    }

    /// Makes the conversation the call's; returns how many blocks are as they were.
    fn update_view(&mut self, call: &StrategyCall) -> usize {
        let kept = call.kept.min(self.view.len());
        for message in self.view.get(kept..).unwrap_or_default() {
            if let Some(rendered) = self.rendered.get_mut(&(Arc::as_ptr(message) as usize)) {
                rendered.in_view = rendered.in_view.saturating_sub(1);
            }
        }
        self.view.truncate(kept);
        self.message_ends.truncate(kept);
        let head_len = self.head.blocks.len();
        self.blocks
            .truncate(self.message_ends.last().copied().unwrap_or(head_len));
        let unchanged = self.blocks.len();
        let (provider, family) = (self.provider, self.setup.replay.family);
        for message in &call.messages {
            let key = Arc::as_ptr(message) as usize;
            let rendered = self.rendered.entry(key).or_insert_with(|| Rendered {
                _message: message.clone(),
                blocks: message_blocks(message, provider, family),
                in_view: 0,
            });
            rendered.in_view += 1;
            self.blocks.extend_from_slice(&rendered.blocks);
            self.message_ends.push(self.blocks.len());
            self.view.push(message.clone());
        }
        // Forget the messages no longer in the view once they outnumber it.
        if self.rendered.len() > 2 * self.view.len() + 1_024 {
            let live: BTreeSet<usize> = self.view.iter().map(|m| Arc::as_ptr(m) as usize).collect();
            self.rendered.retain(|key, _| live.contains(key));
        }
        unchanged
    }

    /// The call's breakpoint blocks and how many blocks the next call should repeat.
    fn request_shape(&self, call: &StrategyCall) -> (Vec<usize>, usize) {
        let head_end = self
            .head
            .system_block
            .map_or(self.blocks.len().min(1), |at| at + 1);
        let mut placed = place_breakpoints(
            &self.view,
            head_end > 0,
            call.has_summary,
            call.trailing_nudges,
        );
        // Exact-match caching (GPT-5.6 and later) marks only eligible parts.
        if matches!(self.setup.pricing.cache.mode, CacheMode::Exact { .. }) {
            placed = openai_breakpoints(&self.view, &placed);
        }
        let breakpoints = placed
            .iter()
            .filter_map(|breakpoint| match breakpoint.after_message {
                None => head_end.checked_sub(1),
                Some(index) => self
                    .message_ends
                    .get(index)
                    .and_then(|end| end.checked_sub(1)),
            })
            .collect();
        let stable_messages = self.view.len().saturating_sub(call.trailing_nudges);
        let stable_blocks = stable_messages
            .checked_sub(1)
            .and_then(|last| self.message_ends.get(last).copied())
            .unwrap_or(head_end);
        (breakpoints, stable_blocks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::pricing_for;
    use ctxkit_core::tokens::ModelFamily;
    use ctxkit_core::ToolCall;

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
                call_gaps: Vec::new(),
                cache_ttl_seconds: 300,
                marks: Default::default(),
                working_directory: None,
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
