//! The context strategies a cost report compares, each replayed over a transcript: one model
//! call before every assistant message, as the agent made them, and what each strategy would
//! have sent.
//!
//! - [`Strategy::Ctxkit`]: the turn driver with the default policy, big tool outputs
//!   offloaded (the references are what the view holds), extractive summaries;
//! - [`Strategy::CtxkitClearing`]: the same with old tool results cleared;
//! - [`Strategy::CtxkitNoColdTrigger`]: the defaults without the lower trigger taken when the
//!   cache has expired (a call more than the cache's lifetime after the one before);
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
//! tools and system prompt, which the transcript does not hold).

use serde::{Deserialize, Serialize};

use super::ctxkit_replay::{replay_ctxkit, SummaryCalls};

use crate::compaction::{
    extractive_summary, Budget, ClearPolicy, ExtractiveLimits, Policy, SummaryMode,
};
use crate::model::{Message, Role};
use crate::tokens::{estimate_message, estimate_text, ModelFamily};

/// A context strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
    pub const ALL: [Strategy; 9] = [
        Strategy::Ctxkit,
        Strategy::CtxkitClearing,
        Strategy::CtxkitLlmFresh,
        Strategy::CtxkitLlmCacheSafe,
        Strategy::CtxkitNoColdTrigger,
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
}

impl ReplaySetup {
    /// The budget every strategy works in: the window with the reserve counted as tools.
    pub fn budget(&self) -> Budget {
        Budget {
            tool_schema_tokens: self.reserve_tokens,
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

/// What a strategy sent at one model call.
#[derive(Debug, Clone, PartialEq)]
pub struct StrategyCall {
    /// The conversation (the system prompt not included).
    pub messages: Vec<Message>,
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
}

/// A strategy's replay: its calls, and the log as it stored it (ctxkit stores offload
/// references in place of big outputs; the others store the transcript as it is).
#[derive(Debug, Clone, PartialEq)]
pub struct Replay {
    /// The log, one message per transcript message.
    pub log: Vec<Message>,
    /// One call per assistant message of the transcript.
    pub calls: Vec<StrategyCall>,
}

/// The calls `strategy` makes over `transcript`: one before each assistant message.
pub fn replay_strategy(strategy: Strategy, transcript: &[Message], setup: &ReplaySetup) -> Replay {
    match strategy {
        Strategy::Ctxkit => {
            replay_ctxkit(transcript, setup, &Policy::default(), SummaryCalls::None)
        }
        Strategy::CtxkitClearing => replay_ctxkit(
            transcript,
            setup,
            &Policy {
                clear_tool_results: Some(ClearPolicy::default()),
                ..Policy::default()
            },
            SummaryCalls::None,
        ),
        Strategy::CtxkitLlmFresh => replay_ctxkit(
            transcript,
            setup,
            &Policy::default(),
            SummaryCalls::Llm(SummaryMode::Fresh),
        ),
        Strategy::CtxkitLlmCacheSafe => replay_ctxkit(
            transcript,
            setup,
            &Policy::default(),
            SummaryCalls::Llm(SummaryMode::CacheSafe),
        ),
        Strategy::CtxkitNoColdTrigger => replay_ctxkit(
            transcript,
            setup,
            &Policy {
                cold_trigger_percent: None,
                ..Policy::default()
            },
            SummaryCalls::None,
        ),
        other => Replay {
            log: transcript.to_vec(),
            calls: replay_baseline(other, transcript, setup),
        },
    }
}

/// How many tool outputs observation masking keeps.
pub const MASK_KEEP_OUTPUTS: usize = 10;
/// How many messages the Claude-Code-like strategy keeps after its summary.
pub const CLAUDE_CODE_KEEP_MESSAGES: usize = 4;
/// The instruction a summary call sends after the cached prefix, in tokens.
pub const SUMMARY_INSTRUCTION_TOKENS: u64 = 600;

fn replay_baseline(
    strategy: Strategy,
    transcript: &[Message],
    setup: &ReplaySetup,
) -> Vec<StrategyCall> {
    let budget = setup.budget();
    let room = budget
        .usable()
        .saturating_sub(estimate_text(&setup.system, setup.family));
    let tokens: Vec<u64> = transcript
        .iter()
        .map(|message| estimate_message(message, setup.family))
        .collect();
    // The Claude-Code-like strategy's state: its summary and where the kept tail starts.
    let mut state = ClaudeCodeState::default();
    let mut calls = Vec::new();
    for (index, message) in transcript.iter().enumerate() {
        if message.role != Role::Assistant {
            continue;
        }
        let log = upto(transcript, index);
        let log_tokens = upto(&tokens, index);
        let mut call = match strategy {
            Strategy::NoCompaction => plain(log.to_vec(), log_tokens.iter().sum::<u64>() > room),
            Strategy::SlidingWindow => plain(newest_that_fit(log, log_tokens, room), false),
            Strategy::ObservationMasking => {
                let masked = mask_outputs(log);
                let masked_tokens: Vec<u64> = masked
                    .iter()
                    .map(|m| estimate_message(m, setup.family))
                    .collect();
                plain(newest_that_fit(&masked, &masked_tokens, room), false)
            }
            _ => state.call(log, log_tokens, room, setup),
        };
        call.log_len = index;
        calls.push(call);
    }
    calls
}

/// `items[..end]`, or all of them.
fn upto<T>(items: &[T], end: usize) -> &[T] {
    items.get(..end).unwrap_or(items)
}

/// `items[start..]`, or nothing.
fn from<T>(items: &[T], start: usize) -> &[T] {
    items.get(start..).unwrap_or_default()
}

fn plain(messages: Vec<Message>, overflow: bool) -> StrategyCall {
    StrategyCall {
        messages,
        has_summary: false,
        trailing_nudges: 0,
        compacted: false,
        overflow,
        summary_call: None,
        log_len: 0,
    }
}

/// The Claude-Code-like strategy between calls: its summary and where the kept tail starts.
#[derive(Default)]
struct ClaudeCodeState {
    summary: Option<String>,
    tail_start: usize,
}

impl ClaudeCodeState {
    fn summary_tokens(&self, family: ModelFamily) -> u64 {
        self.summary
            .as_deref()
            .map_or(0, |text| estimate_text(text, family))
    }

    fn call(
        &mut self,
        log: &[Message],
        tokens: &[u64],
        room: u64,
        setup: &ReplaySetup,
    ) -> StrategyCall {
        let view_tokens =
            self.summary_tokens(setup.family) + from(tokens, self.tail_start).iter().sum::<u64>();
        let mut summary_call = None;
        if view_tokens > room * 95 / 100 {
            let mut keep_from = log
                .len()
                .saturating_sub(CLAUDE_CODE_KEEP_MESSAGES)
                .max(self.tail_start);
            // Never start the kept tail with a tool result cut from its call.
            while keep_from > self.tail_start
                && log.get(keep_from).is_some_and(|m| m.role == Role::Tool)
            {
                keep_from -= 1;
            }
            let limits = ExtractiveLimits {
                max_bytes: 16_000,
                ..ExtractiveLimits::default()
            };
            let covered = upto(from(log, self.tail_start), keep_from - self.tail_start);
            let written = extractive_summary(covered, self.summary.as_deref(), &limits);
            summary_call = Some(SummaryCall {
                cached_input: setup.reserve_tokens
                    + estimate_text(&setup.system, setup.family)
                    + view_tokens,
                new_input: SUMMARY_INSTRUCTION_TOKENS,
                output: estimate_text(&written, setup.family),
            });
            self.summary = Some(written);
            self.tail_start = keep_from;
        }
        let mut messages: Vec<Message> = self
            .summary
            .iter()
            .map(|text| {
                Message::user(format!(
                    "This session is being continued from a previous conversation. Summary:\n{text}"
                ))
            })
            .collect();
        let has_summary = !messages.is_empty();
        messages.extend(from(log, self.tail_start).iter().cloned());
        let total =
            self.summary_tokens(setup.family) + from(tokens, self.tail_start).iter().sum::<u64>();
        StrategyCall {
            messages,
            has_summary,
            trailing_nudges: 0,
            compacted: summary_call.is_some(),
            overflow: total > room,
            summary_call,
            log_len: 0,
        }
    }
}

/// The newest messages of `log` whose tokens fit in `room`, starting at the first that is not
/// a tool result (so no result is cut from its call; an agent log has few user messages, and
/// starting only at one would often leave nothing).
fn newest_that_fit(log: &[Message], tokens: &[u64], room: u64) -> Vec<Message> {
    let mut start = log.len().min(tokens.len());
    let mut used = 0u64;
    while let Some(&size) = start.checked_sub(1).and_then(|at| tokens.get(at)) {
        if used + size > room {
            break;
        }
        start -= 1;
        used += size;
    }
    while log.get(start).is_some_and(|m| m.role == Role::Tool) {
        start += 1;
    }
    from(log, start).to_vec()
}

/// `log` with every tool output but the newest [`MASK_KEEP_OUTPUTS`] replaced.
fn mask_outputs(log: &[Message]) -> Vec<Message> {
    let outputs = log.iter().filter(|m| m.role == Role::Tool).count();
    let mut seen = 0usize;
    log.iter()
        .map(|message| {
            if message.role != Role::Tool {
                return message.clone();
            }
            seen += 1;
            if seen + MASK_KEEP_OUTPUTS > outputs {
                return message.clone();
            }
            let mut masked = Message::tool_result(
                message.tool_call_id.clone().unwrap_or_default(),
                "[Old tool output omitted to save context.]",
                message.is_error,
            );
            masked.name = message.name.clone();
            masked
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ToolCall;

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

    #[test]
    fn masking_keeps_the_newest_outputs() {
        let masked = mask_outputs(&transcript(15, 10));
        let kept = masked
            .iter()
            .filter(|m| m.role == Role::Tool && !m.text_content().contains("omitted"))
            .count();
        assert_eq!(kept, MASK_KEEP_OUTPUTS);
    }
}
