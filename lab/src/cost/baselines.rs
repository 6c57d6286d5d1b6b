//! The baseline strategies a cost report compares ctxkit with, replayed over a transcript
//! (see [`super::Strategy`] for what each sends): no compaction, Claude-Code-like summaries,
//! a token sliding window and observation masking.
//!
//! Each call's work is in proportion to what it changes, not to the log: token sums come from
//! running sums over the transcript (a window's start is found by binary search), each
//! message is shared (`Arc`) between the calls that send it, a masked output is made once,
//! and a call reports only the messages after those it repeats from the call before
//! ([`super::StrategyCall::kept`]).

use std::sync::Arc;

use super::strategies::{ReplaySetup, Strategy, StrategyCall, SummaryCall};
use ctxkit_core::compaction::{extractive_summary, ExtractiveLimits};
use ctxkit_core::model::{Message, Role};
use ctxkit_core::tokens::{estimate_message, estimate_text};

/// How many tool outputs observation masking keeps.
pub const MASK_KEEP_OUTPUTS: usize = 10;
/// How many messages the Claude-Code-like strategy keeps after its summary.
pub const CLAUDE_CODE_KEEP_MESSAGES: usize = 4;
/// The instruction a summary call sends after the cached prefix, in tokens.
pub const SUMMARY_INSTRUCTION_TOKENS: u64 = 600;

/// The transcript as a baseline reads it: each message shared, its tokens, and running sums.
struct Log<'t> {
    transcript: &'t [Message],
    shared: Vec<Arc<Message>>,
    /// `sums[i]`: the tokens of messages `..i`.
    sums: Vec<u64>,
}

impl Log<'_> {
    /// The tokens of messages `start..end`.
    fn tokens(&self, start: usize, end: usize) -> u64 {
        let at = |i: usize| self.sums.get(i).copied().unwrap_or(0);
        at(end).saturating_sub(at(start))
    }

    fn slice(&self, start: usize, end: usize) -> Vec<Arc<Message>> {
        self.shared.get(start..end).unwrap_or_default().to_vec()
    }
}

pub(crate) fn replay_baseline(
    strategy: Strategy,
    transcript: &[Message],
    setup: &ReplaySetup,
    on_call: &mut dyn FnMut(&[Arc<Message>], StrategyCall),
) -> Vec<Arc<Message>> {
    let room = setup
        .budget()
        .usable()
        .saturating_sub(estimate_text(&setup.system, setup.family));
    let mut sums = Vec::with_capacity(transcript.len() + 1);
    sums.push(0u64);
    for message in transcript {
        let last = sums.last().copied().unwrap_or(0);
        sums.push(last + estimate_message(message, setup.family));
    }
    let log = Log {
        transcript,
        shared: transcript.iter().cloned().map(Arc::new).collect(),
        sums,
    };
    let masks = Masks::new(strategy == Strategy::ObservationMasking, &log, setup);
    // The Claude-Code-like strategy's state: its summary and where the kept tail starts.
    let mut state = ClaudeCodeState::default();
    // The previous call's conversation: the messages `start..end` of the log (no compaction,
    // the window), or the list itself (masking).
    let (mut start, mut end) = (0usize, 0usize);
    let mut previous: Vec<Arc<Message>> = Vec::new();
    for (index, message) in transcript.iter().enumerate() {
        if message.role != Role::Assistant {
            continue;
        }
        let mut call = match strategy {
            Strategy::NoCompaction => {
                let call = plain(end, log.slice(end, index), log.tokens(0, index) > room);
                end = index;
                call
            }
            Strategy::SlidingWindow => {
                let from = skip_results(
                    transcript,
                    index,
                    first_fit(index, room, |s| log.tokens(s, index)),
                );
                let kept = if from == start { end - start } else { 0 };
                let call = plain(kept, log.slice(from + kept, index), false);
                (start, end) = (from, index);
                call
            }
            Strategy::ObservationMasking => {
                let view = masks.view(&log, index, room);
                let kept = previous
                    .iter()
                    .zip(&view)
                    .take_while(|(a, b)| Arc::ptr_eq(a, b))
                    .count();
                let call = plain(kept, view.get(kept..).unwrap_or_default().to_vec(), false);
                previous = view;
                call
            }
            _ => state.call(&log, index, room, setup),
        };
        call.log_len = index;
        on_call(&log.shared, call);
    }
    log.shared
}

fn plain(kept: usize, messages: Vec<Arc<Message>>, overflow: bool) -> StrategyCall {
    StrategyCall {
        kept,
        messages,
        has_summary: false,
        trailing_nudges: 0,
        compacted: false,
        overflow,
        summary_call: None,
        log_len: 0,
        idle_compaction: false,
    }
}

/// The first `start` in `0..=end` whose messages `start..end` fit in `room` by `tokens` (the
/// newest messages that fit: `tokens(start)` only falls as `start` grows).
fn first_fit(end: usize, room: u64, tokens: impl Fn(usize) -> u64) -> usize {
    let (mut low, mut high) = (0usize, end);
    while low < high {
        let middle = low + (high - low) / 2;
        if tokens(middle) <= room {
            high = middle;
        } else {
            low = middle + 1;
        }
    }
    low
}

/// `start` moved past tool results (so no result is cut from its call; an agent log has few
/// user messages, and starting only at one would often leave nothing), at most to `end`.
fn skip_results(transcript: &[Message], end: usize, mut start: usize) -> usize {
    while start < end && transcript.get(start).is_some_and(|m| m.role == Role::Tool) {
        start += 1;
    }
    start
}

/// Observation masking's log: every tool output's placeholder (made once) and the running
/// sums of the log with every output masked.
struct Masks {
    /// The indices of the tool outputs, in order.
    outputs: Vec<usize>,
    masked: Vec<Option<Arc<Message>>>,
    /// `sums[i]`: the tokens of messages `..i`, every output masked.
    sums: Vec<u64>,
}

impl Masks {
    fn new(used: bool, log: &Log<'_>, setup: &ReplaySetup) -> Self {
        let mut masks = Masks {
            outputs: Vec::new(),
            masked: Vec::new(),
            sums: vec![0],
        };
        if !used {
            return masks;
        }
        for (index, message) in log.transcript.iter().enumerate() {
            let masked = (message.role == Role::Tool).then(|| {
                masks.outputs.push(index);
                let mut masked = Message::tool_result(
                    message.tool_call_id.clone().unwrap_or_default(),
                    "[Old tool output omitted to save context.]",
                    message.is_error,
                );
                masked.name = message.name.clone();
                Arc::new(masked)
            });
            let tokens = match &masked {
                Some(masked) => estimate_message(masked, setup.family),
                None => log.tokens(index, index + 1),
            };
            let last = masks.sums.last().copied().unwrap_or(0);
            masks.sums.push(last + tokens);
            masks.masked.push(masked);
        }
        masks
    }

    /// The conversation before message `end`: every tool output but the newest
    /// [`MASK_KEEP_OUTPUTS`] masked, the newest messages that fit in `room`.
    fn view(&self, log: &Log<'_>, end: usize, room: u64) -> Vec<Arc<Message>> {
        let outputs = self.outputs.partition_point(|&at| at < end);
        // Outputs before `boundary` are masked.
        let boundary = outputs
            .checked_sub(MASK_KEEP_OUTPUTS + 1)
            .and_then(|last| self.outputs.get(last))
            .map_or(0, |at| at + 1);
        let masked_sum = |s: usize, e: usize| {
            let at = |i: usize| self.sums.get(i).copied().unwrap_or(0);
            at(e).saturating_sub(at(s))
        };
        let tokens = |s: usize| masked_sum(s, boundary.max(s)) + log.tokens(boundary.max(s), end);
        let start = skip_results(log.transcript, end, first_fit(end, room, tokens));
        (start..end)
            .filter_map(|at| match self.masked.get(at) {
                Some(Some(masked)) if at < boundary => Some(masked.clone()),
                _ => log.shared.get(at).cloned(),
            })
            .collect()
    }
}

/// The Claude-Code-like strategy between calls: its summary (and its tokens) and where the
/// kept tail starts.
#[derive(Default)]
struct ClaudeCodeState {
    summary: Option<(String, u64, Arc<Message>)>,
    tail_start: usize,
    /// Where the previous call's conversation ended in the log.
    end: usize,
}

impl ClaudeCodeState {
    fn summary_tokens(&self) -> u64 {
        self.summary.as_ref().map_or(0, |(_, tokens, _)| *tokens)
    }

    fn call(
        &mut self,
        log: &Log<'_>,
        index: usize,
        room: u64,
        setup: &ReplaySetup,
    ) -> StrategyCall {
        let transcript = log.transcript.get(..index).unwrap_or(log.transcript);
        let view_tokens = self.summary_tokens() + log.tokens(self.tail_start, index);
        let mut summary_call = None;
        if view_tokens > room * 95 / 100 {
            let mut keep_from = transcript
                .len()
                .saturating_sub(CLAUDE_CODE_KEEP_MESSAGES)
                .max(self.tail_start);
            // Never start the kept tail with a tool result cut from its call.
            while keep_from > self.tail_start
                && transcript
                    .get(keep_from)
                    .is_some_and(|m| m.role == Role::Tool)
            {
                keep_from -= 1;
            }
            let limits = ExtractiveLimits {
                max_bytes: 16_000,
                ..ExtractiveLimits::default()
            };
            let covered = transcript
                .get(self.tail_start..keep_from)
                .unwrap_or_default();
            let previous = self.summary.as_ref().map(|(text, _, _)| text.as_str());
            let written = extractive_summary(covered, previous, &limits);
            let tokens = estimate_text(&written, setup.family);
            summary_call = Some(SummaryCall {
                cached_input: setup.reserve_tokens
                    + estimate_text(&setup.system, setup.family)
                    + view_tokens,
                new_input: SUMMARY_INSTRUCTION_TOKENS,
                output: tokens,
            });
            let message = Arc::new(Message::user(format!(
                "This session is being continued from a previous conversation. Summary:\n{written}"
            )));
            self.summary = Some((written, tokens, message));
            self.tail_start = keep_from;
        }
        let (kept, messages) = if summary_call.is_some() {
            let mut messages: Vec<Arc<Message>> =
                self.summary.iter().map(|(_, _, m)| m.clone()).collect();
            messages.extend(log.slice(self.tail_start, index));
            (0, messages)
        } else {
            let kept = usize::from(self.summary.is_some()) + (self.end - self.tail_start);
            (kept, log.slice(self.end.max(self.tail_start), index))
        };
        self.end = index;
        let total = self.summary_tokens() + log.tokens(self.tail_start, index);
        StrategyCall {
            kept,
            messages,
            has_summary: self.summary.is_some(),
            trailing_nudges: 0,
            compacted: summary_call.is_some(),
            overflow: total > room,
            summary_call,
            log_len: 0,
            idle_compaction: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::replay_strategy;
    use ctxkit_core::tokens::ModelFamily;
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

    /// Each call's conversation, rebuilt from the changes the replay reports.
    fn views(calls: &[StrategyCall]) -> Vec<Vec<Arc<Message>>> {
        let mut view: Vec<Arc<Message>> = Vec::new();
        calls
            .iter()
            .map(|call| {
                view.truncate(call.kept);
                view.extend(call.messages.iter().cloned());
                view.clone()
            })
            .collect()
    }

    #[test]
    fn masking_keeps_the_newest_outputs_and_the_window_the_newest_messages() {
        let log = transcript(40, 1_000);
        let setup = ReplaySetup {
            window: 6_000,
            family: ModelFamily::Claude,
            reserve_tokens: 1_000,
            system: "You are a coding agent.".into(),
            cache_expired: Vec::new(),
            call_gaps: Vec::new(),
            cache_ttl_seconds: 300,
            marks: Default::default(),
            working_directory: None,
        };
        let masked = replay_strategy(Strategy::ObservationMasking, &log, &setup);
        let last = views(&masked.calls).pop().unwrap();
        let kept = last
            .iter()
            .filter(|m| m.role == Role::Tool && !m.text_content().contains("omitted"))
            .count();
        assert_eq!(kept, MASK_KEEP_OUTPUTS);
        let window = replay_strategy(Strategy::SlidingWindow, &log, &setup);
        for (view, call) in views(&window.calls).iter().zip(&window.calls) {
            // The newest messages, in order, ending just before the call's assistant message.
            let end = call.log_len;
            let start = end - view.len();
            assert!(view.iter().zip(&log[start..end]).all(|(a, b)| **a == *b));
            assert!(view.first().is_none_or(|m| m.role != Role::Tool));
        }
        assert!(window.calls.iter().any(|c| c.kept == 0 && c.log_len > 20));
    }
}
