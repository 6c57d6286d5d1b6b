//! The context strategies a cost report compares, each replayed over a transcript: one model
//! call before every assistant message, as the agent made them, and what each strategy would
//! have sent.
//!
//! - [`Strategy::Ctxkit`]: the turn driver with the default policy, big tool outputs
//!   offloaded (the references are what the view holds), extractive summaries;
//! - [`Strategy::CtxkitClearing`]: the same with old tool results cleared;
//! - [`Strategy::CtxkitNoColdTrigger`]: the defaults without the lower trigger taken when the
//!   cache has expired (a call more than the cache's lifetime after the one before);
//! - [`Strategy::CtxkitIdle`]: the defaults plus compaction ahead of the cache's expiry: where
//!   a recorded pause between two calls (waiting for the user, or for a tool) lasts into the
//!   margin before the cache's lifetime ends, the idle timer compacts in the pause
//!   ([`ctxkit_core::turn::idle_decision`]) and its summary call, a cache-safe request made while
//!   the prefix is still cached, is billed;
//! - [`Strategy::CtxkitLlmFresh`], [`Strategy::CtxkitLlmCacheSafe`]: the defaults with the
//!   call an LLM summarizer would make at each compaction billed, sent the fresh prompt or the
//!   cache-safe request (see `ctxkit_replay.rs`);
//! - [`Strategy::NoCompaction`]: the whole log every call (a call past the window overflows);
//! - [`Strategy::ClaudeCodeLike`]: the whole log until the view is nearly full (95% of the
//!   usable budget), then everything but the last few messages summarized (a summary call
//!   that re-sends the cached prefix and asks for a summary, as Claude Code's compaction does);
//! - [`Strategy::SlidingWindow`]: the newest messages that fit, by tokens (LangChain's
//!   `trimMessages` with `strategy: "last"`), starting at a message that is not a tool result;
//! - [`Strategy::ObservationMasking`]: every tool output but the newest ten replaced by a
//!   placeholder, the newest messages that fit when that is not enough.
//!
//! Every strategy gets the same budget, system prompt and reserved tokens (the real agent's
//! tools and system prompt, which the transcript does not hold). The baselines are replayed in
//! `baselines.rs`, ctxkit in `ctxkit_replay.rs`; each reports a call as what changed since the
//! call before ([`StrategyCall::kept`]).

use serde::{Deserialize, Serialize};

use std::sync::Arc;

use super::baselines::replay_baseline;
use super::ctxkit_replay::{replay_ctxkit, SummaryCalls};

use ctxkit_core::compaction::{Budget, ClearPolicy, Policy, SummaryMode};
use ctxkit_core::model::Message;
use ctxkit_core::tokens::ModelFamily;

/// A context strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Strategy {
    /// ctxkit's defaults.
    Ctxkit,
    /// ctxkit with tool-result clearing.
    CtxkitClearing,
    /// ctxkit with an LLM summarizer sent the fresh prompt (its call billed).
    CtxkitLlmFresh,
    /// ctxkit with an LLM summarizer sent the cache-safe request (its call billed).
    CtxkitLlmCacheSafe,
    /// ctxkit without the cold-cache trigger (`cold_trigger_percent: None`): the trigger is
    /// the same when the cache has expired.
    CtxkitNoColdTrigger,
    /// ctxkit's defaults plus idle compaction in the recorded gaps (its summary calls billed).
    CtxkitIdle,
    /// Everything, every call.
    NoCompaction,
    /// Summarize all but the last messages when nearly full.
    ClaudeCodeLike,
    /// A token sliding window.
    SlidingWindow,
    /// Old tool outputs replaced by a placeholder.
    ObservationMasking,
}

impl Strategy {
    /// Every strategy, in report order.
    pub const ALL: [Strategy; 10] = [
        Strategy::Ctxkit,
        Strategy::CtxkitClearing,
        Strategy::CtxkitLlmFresh,
        Strategy::CtxkitLlmCacheSafe,
        Strategy::CtxkitNoColdTrigger,
        Strategy::CtxkitIdle,
        Strategy::NoCompaction,
        Strategy::ClaudeCodeLike,
        Strategy::SlidingWindow,
        Strategy::ObservationMasking,
    ];

    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Ctxkit => "ctxkit",
            Strategy::CtxkitClearing => "ctxkit-clearing",
            Strategy::CtxkitLlmFresh => "ctxkit-llm-fresh",
            Strategy::CtxkitLlmCacheSafe => "ctxkit-llm-cache-safe",
            Strategy::CtxkitNoColdTrigger => "ctxkit-no-cold-trigger",
            Strategy::CtxkitIdle => "ctxkit-idle",
            Strategy::NoCompaction => "no-compaction",
            Strategy::ClaudeCodeLike => "claude-code-like",
            Strategy::SlidingWindow => "sliding-window",
            Strategy::ObservationMasking => "observation-masking",
        }
    }
}

/// What every strategy is given.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplaySetup {
    /// The model's context window, in tokens.
    pub window: u64,
    /// The model family, for estimates.
    pub family: ModelFamily,
    /// Tokens of tools and system prompt the transcript does not show, sent every call.
    pub reserve_tokens: u64,
    /// The system prompt every strategy sends.
    pub system: String,
    /// For each call (one per assistant message), whether the provider's cache had expired
    /// since the call before (see [`super::expired_calls`]); missing entries: it had not.
    pub cache_expired: Vec<bool>,
    /// For each call, the seconds since the call before when both times are recorded (see
    /// [`super::call_gaps`]); missing or `None` entries: no pause (an idle timer never fires).
    pub call_gaps: Vec<Option<u64>>,
    /// The provider's cache lifetime, in seconds: an idle compaction runs in the margin before
    /// it ends.
    pub cache_ttl_seconds: u64,
    /// The cost marks ctxkit's strategies compact by (the baselines have none).
    pub marks: CostMarks,
    /// The directory the agent ran in, as the transcript records it
    /// ([`ctxkit_core::import::ImportedSession::working_directory`]): ctxkit's summaries name
    /// it ([`Policy::working_directory`]); the baselines do not use it.
    pub working_directory: Option<String>,
}

/// The cost marks of ctxkit's budget ([`Budget::cost_trigger_tokens`],
/// [`Budget::cost_low_water_tokens`]) a report replays ctxkit with: the defaults, other marks
/// to compare, or none (the window's percentages alone).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CostMarks {
    /// Compact above this many view tokens; `None`: the trigger percentage alone.
    pub trigger_tokens: Option<u64>,
    /// Compact down to at most this many; `None`: the low-water percentage alone.
    pub low_water_tokens: Option<u64>,
}

impl Default for CostMarks {
    /// The default budget's marks.
    fn default() -> Self {
        let budget = Budget::default();
        CostMarks {
            trigger_tokens: budget.cost_trigger_tokens,
            low_water_tokens: budget.cost_low_water_tokens,
        }
    }
}

impl ReplaySetup {
    /// The budget every strategy works in: the window with the reserve counted as tools.
    pub fn budget(&self) -> Budget {
        Budget {
            tool_schema_tokens: self.reserve_tokens,
            cost_trigger_tokens: self.marks.trigger_tokens,
            cost_low_water_tokens: self.marks.low_water_tokens,
            ..Budget::for_window(self.window)
        }
    }
}

/// A summary call a strategy made before a model call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SummaryCall {
    /// Input the provider has cached (the prefix re-sent unchanged).
    pub cached_input: u64,
    /// Input that is new (the instruction).
    pub new_input: u64,
    /// The summary written.
    pub output: u64,
}

/// What a strategy sent at one model call, as a change to the call before: the conversation
/// (the system prompt not included) is the previous call's first `kept` messages, then
/// `messages`. A replay reports only what changed, so the work of billing a call is in
/// proportion to it (a message left in place is not rendered again).
#[derive(Debug, Clone, PartialEq)]
pub struct StrategyCall {
    /// How many leading messages of the previous call's conversation this one repeats.
    pub kept: usize,
    /// The messages after those.
    pub messages: Vec<Arc<Message>>,
    /// True when `messages[0]` is a summary.
    pub has_summary: bool,
    /// Nudge messages at the end (not stored, dropped next call).
    pub trailing_nudges: usize,
    /// True when the strategy compacted before this call (a summary, or for ctxkit also a
    /// message cut or dropped to fit).
    pub compacted: bool,
    /// True when the request is larger than the budget allows.
    pub overflow: bool,
    /// A summary call made before this call.
    pub summary_call: Option<SummaryCall>,
    /// How many messages of the log had been sent when the call was made.
    pub log_len: usize,
    /// True when the compaction before this call was an idle one, made in the pause before it
    /// (its summary call is `summary_call`).
    pub idle_compaction: bool,
}

/// A strategy's replay: its calls, and the log as it stored it (ctxkit stores offload
/// references in place of big outputs; the others store the transcript as it is).
#[derive(Debug, Clone, PartialEq)]
pub struct Replay {
    /// The log, one message per transcript message.
    pub log: Vec<Arc<Message>>,
    /// One call per assistant message of the transcript.
    pub calls: Vec<StrategyCall>,
}

/// The calls `strategy` makes over `transcript`: one before each assistant message.
pub fn replay_strategy(strategy: Strategy, transcript: &[Message], setup: &ReplaySetup) -> Replay {
    let mut calls = Vec::new();
    let log = replay_strategy_with(strategy, transcript, setup, &mut |_, call| calls.push(call));
    Replay { log, calls }
}

/// The calls of [`replay_strategy`] handed to `on_call` one at a time, with the log as the
/// strategy has stored it so far (at least the call's `log_len` messages), instead of kept:
/// a cost report bills each call as it comes, so its memory is the view's and the log's, not
/// every call's. Returns the stored log.
pub fn replay_strategy_with(
    strategy: Strategy,
    transcript: &[Message],
    setup: &ReplaySetup,
    on_call: &mut dyn FnMut(&[Arc<Message>], StrategyCall),
) -> Vec<Arc<Message>> {
    let ctxkit =
        |policy: Policy, summaries, on_call: &mut dyn FnMut(&[Arc<Message>], StrategyCall)| {
            replay_ctxkit(transcript, setup, &policy, summaries, false, on_call)
        };
    match strategy {
        Strategy::Ctxkit => ctxkit(Policy::default(), SummaryCalls::None, on_call),
        Strategy::CtxkitClearing => ctxkit(
            Policy {
                clear_tool_results: Some(ClearPolicy::default()),
                ..Policy::default()
            },
            SummaryCalls::None,
            on_call,
        ),
        Strategy::CtxkitLlmFresh => ctxkit(
            Policy::default(),
            SummaryCalls::Llm(SummaryMode::Fresh),
            on_call,
        ),
        Strategy::CtxkitLlmCacheSafe => ctxkit(
            Policy::default(),
            SummaryCalls::Llm(SummaryMode::CacheSafe),
            on_call,
        ),
        Strategy::CtxkitNoColdTrigger => ctxkit(
            Policy {
                cold_trigger_percent: None,
                ..Policy::default()
            },
            SummaryCalls::None,
            on_call,
        ),
        Strategy::CtxkitIdle => replay_ctxkit(
            transcript,
            setup,
            &Policy::default(),
            SummaryCalls::None,
            true,
            on_call,
        ),
        other => replay_baseline(other, transcript, setup, on_call),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ctxkit_core::model::Message;
    use ctxkit_core::ToolCall;

    fn transcript(turns: usize, output_bytes: usize) -> Vec<Message> {
        let mut out = vec![Message::user("Fix the bug in `src/lib.rs`")];
        for turn in 0..turns {
            let id = format!("c{turn}");
            out.push(Message::assistant(
                "",
                vec![ToolCall::new(&id, "bash", r#"{"cmd":"cargo test"}"#)],
            ));
            out.push(Message::tool_result(&id, "x".repeat(output_bytes), false));
        }
        out.push(Message::assistant("done", vec![]));
        out
    }

    fn setup(window: u64) -> ReplaySetup {
        ReplaySetup {
            window,
            family: ModelFamily::Claude,
            reserve_tokens: 1_000,
            system: "You are a coding agent.".into(),
            cache_expired: Vec::new(),
            call_gaps: Vec::new(),
            cache_ttl_seconds: 300,
            marks: CostMarks::default(),
            working_directory: None,
        }
    }

    #[test]
    fn every_strategy_makes_one_call_per_assistant_message() {
        let log = transcript(30, 4_000);
        for strategy in Strategy::ALL {
            let replay = replay_strategy(strategy, &log, &setup(32_000));
            assert_eq!(replay.calls.len(), 31, "{strategy:?}");
            assert_eq!(replay.log.len(), log.len(), "{strategy:?}");
        }
    }

    #[test]
    fn only_no_compaction_overflows_and_the_window_strategies_fit() {
        let log = transcript(60, 4_000);
        let none = replay_strategy(Strategy::NoCompaction, &log, &setup(32_000)).calls;
        assert!(none.iter().any(|call| call.overflow));
        for strategy in [
            Strategy::Ctxkit,
            Strategy::ClaudeCodeLike,
            Strategy::SlidingWindow,
        ] {
            let calls = replay_strategy(strategy, &log, &setup(32_000)).calls;
            assert!(calls.iter().all(|call| !call.overflow), "{strategy:?}");
        }
        let claude = replay_strategy(Strategy::ClaudeCodeLike, &log, &setup(32_000)).calls;
        assert!(claude.iter().any(|call| call.summary_call.is_some()));
    }
}
