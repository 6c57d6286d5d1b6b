//! `plan_turn`: the per-turn pipeline, composed from the layers.
//!
//! Given the log, the latest checkpoint, the system prompt, the budget, the policy, the nudge
//! state and the last real usage, [`plan_turn`] returns either a ready view (with its stats, the
//! next nudge state, and possibly a truncation checkpoint to store) or a [`SummaryRequest`]. The
//! caller answers a request (an LLM, or the extractive summarizer), stores the checkpoint, and
//! plans again with it; that second plan is always ready, because a turn compacts at most once
//! (a checkpoint records the turn that made it).
//!
//! The tiers, in order, each tried only if the view is still over the trigger:
//! 1. the view as it is: the latest checkpoint's summary, then the log after it;
//! 2. clearing old tool results (when the policy enables it);
//! 3. the strategy: a summary request (default), or a pair-safe sliding window;
//! 4. truncation: drop the oldest whole units into a truncation checkpoint, then cut oversized
//!    messages head + tail, then (only if the budget is tiny) drop units from the view.
//!
//! Then every view is repaired (tool pairs, ids, leading user) and nudges are appended.
//!
//! Cost: proportional to the view, not the log. The checkpoint is found by binary search, new
//! entries for the nudges likewise, and estimates come cached with the entries.

use serde::{Deserialize, Serialize};

use crate::budget::Budget;
use crate::checkpoint::{summary_message, Checkpoint, SummaryMethod, SUMMARY_HEADER};
use crate::clearing::{clear_old_tool_results, ClearPolicy};
use crate::error::{CoreError, Result};
use crate::extractive::ExtractiveLimits;
use crate::log::{first_after, safe_cut_points, window_start, Entry};
use crate::message::{Message, Role};
use crate::nudge::{advance_nudges, NudgeKind, NudgePolicy, NudgeState};
use crate::offload::is_offload_reference;
use crate::repair::{repair_view, RepairReport};
use crate::summary_request::{summary_request, SummaryRequest};
use crate::todo::{render_active_tasks, TodoItem};
use crate::tokens::{calibrated_tokens, estimate_message, ModelFamily, UsageAnchor};
use crate::transcript::TranscriptLimits;
use crate::truncation::{cut_to_fit, truncation_summary};
use crate::view::{View, ViewMessage};

/// How to bring an over-budget view down.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Strategy {
    /// Summarize the oldest turns into a checkpoint (LLM or extractive), then truncate if
    /// that is not enough.
    Summarize,
    /// Keep only the last messages (pair-safe), then truncate if that is not enough.
    SlidingWindow {
        /// How many messages to keep.
        keep_last: usize,
    },
    /// Truncate only: no summary.
    Truncate,
    /// Never compact (the view may exceed the budget; stats say so).
    Off,
}

/// Everything configurable about planning.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Policy {
    /// Which tokenizer to estimate for.
    pub family: ModelFamily,
    /// How to compact.
    pub strategy: Strategy,
    /// A summary never covers the last this-many messages.
    pub keep_last_messages: usize,
    /// Summaries estimated above this are rejected (and a request asks for less).
    pub max_summary_tokens: u64,
    /// Bounds of the transcript inside a summary request.
    pub transcript: TranscriptLimits,
    /// Bounds of the extractive summarizer.
    pub extractive: ExtractiveLimits,
    /// Clear old tool results before compacting (off by default).
    pub clear_tool_results: Option<ClearPolicy>,
    /// Reminders.
    pub nudges: NudgePolicy,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            family: ModelFamily::default(),
            strategy: Strategy::Summarize,
            keep_last_messages: 6,
            max_summary_tokens: 6_000,
            transcript: TranscriptLimits::default(),
            extractive: ExtractiveLimits::default(),
            clear_tool_results: None,
            nudges: NudgePolicy::default(),
        }
    }
}

/// The inputs of one turn. Everything the pipeline knows arrives here. The view borrows from
/// the log (`'log`) only; the other inputs (`'x`) may be short-lived.
#[derive(Debug, Clone, Copy)]
pub struct TurnInput<'log, 'x> {
    /// The session's log, in `seq` order. It may start anywhere at or before the latest
    /// checkpoint's `through_seq + 1` (a store may load only the tail).
    pub log: &'log [Entry],
    /// The latest checkpoint, if any.
    pub checkpoint: Option<&'x Checkpoint>,
    /// The system prompt of this turn (see [`crate::system_prompt`]).
    pub system_prompt: &'x str,
    /// The token budget.
    pub budget: Budget,
    /// The policy.
    pub policy: &'x Policy,
    /// The session's nudge state from the previous turn.
    pub nudge_state: NudgeState,
    /// The last real usage the API reported, if any.
    pub usage_anchor: Option<&'x UsageAnchor>,
    /// The agent's todo list (its active items are frozen into a new checkpoint).
    pub todos: &'x [TodoItem],
}

/// What planning a turn decided.
#[derive(Debug, Clone, PartialEq)]
pub enum Plan<'a> {
    /// The view is ready to send.
    Ready(Box<ReadyView<'a>>),
    /// Answer this request, store the checkpoint, and plan again.
    Summarize(Box<SummaryRequest>),
}

/// A view ready to send, and what the caller must keep.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadyView<'a> {
    /// What to send.
    pub view: View<'a>,
    /// How it was made.
    pub stats: ViewStats,
    /// Pass this as `nudge_state` next turn.
    pub next_nudge_state: NudgeState,
    /// A truncation checkpoint the caller must store (the view already uses it).
    pub new_checkpoint: Option<Checkpoint>,
}

/// Which tier produced the view.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// The view fit as it was.
    #[default]
    Fits,
    /// Old tool results were cleared.
    Cleared,
    /// A checkpoint made this turn (LLM or extractive summary) shaped the view.
    Summarized,
    /// A sliding window.
    Window,
    /// Truncation: units dropped and/or messages cut.
    Truncated,
    /// Compaction is off and the view is over the trigger.
    Uncompacted,
}

/// Where a view's tokens went and what the pipeline did to make it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ViewStats {
    /// The tier that produced the view.
    pub tier: Option<Tier>,
    /// Estimated tokens of the system prompt.
    pub system_tokens: u64,
    /// Estimated tokens of the checkpoint's summary message.
    pub summary_tokens: u64,
    /// Estimated tokens of the conversation messages.
    pub message_tokens: u64,
    /// Estimated tokens of the nudges.
    pub nudge_tokens: u64,
    /// The sum of the above.
    pub total_tokens: u64,
    /// The total corrected by the last real usage, when an anchor applied.
    pub calibrated_tokens: Option<u64>,
    /// The usable budget, the trigger and the low-water mark.
    pub budget_tokens: u64,
    /// See [`Budget::trigger`].
    pub trigger_tokens: u64,
    /// See [`Budget::low_water`].
    pub low_water_tokens: u64,
    /// Whether the view fits the usable budget.
    pub fits: bool,
    /// Messages in the view (summary and nudges included).
    pub messages: usize,
    /// The checkpoint the view starts from.
    pub checkpoint_through: Option<u64>,
    /// How that checkpoint was made.
    pub checkpoint_method: Option<SummaryMethod>,
    /// The last log `seq` in the view (for a usage anchor).
    pub last_seq: Option<u64>,
    /// Log messages dropped this turn by a sliding window or by truncation (messages covered
    /// by a summary are not counted here).
    pub dropped_messages: usize,
    /// Tool results cleared this turn.
    pub cleared_results: usize,
    /// Messages cut head + tail this turn.
    pub cut_messages: usize,
    /// Offload references in the view.
    pub offload_references: usize,
    /// Nudges appended.
    pub nudges: Vec<NudgeKind>,
    /// What tool-pair repair changed.
    pub repair: RepairReport,
}

impl ViewStats {
    /// The anchor to store once the API reports `input_tokens` for this view.
    pub fn usage_anchor(&self, input_tokens: u64) -> UsageAnchor {
        UsageAnchor {
            checkpoint_through: self.checkpoint_through,
            last_seq: self.last_seq,
            input_tokens,
            estimated_tokens: self.total_tokens,
        }
    }
}

/// Plans one turn (see the module doc).
pub fn plan_turn<'a>(input: &TurnInput<'a, '_>) -> Result<Plan<'a>> {
    input.budget.validate()?;
    let policy = input.policy;
    let family = policy.family;
    let budget = input.budget;
    let through = input.checkpoint.map(|c| c.through_seq);
    let tail = input
        .log
        .get(first_after(input.log, through)..)
        .unwrap_or_default();
    check_order(tail)?;
    let this_turn = input.nudge_state.turn.saturating_add(1);
    let compacted_this_turn = input
        .checkpoint
        .is_some_and(|c| c.made_at_turn == this_turn);

    let system = Message::text(Role::System, input.system_prompt);
    let system_tokens = if input.system_prompt.is_empty() {
        0
    } else {
        estimate_message(&system, family)
    };
    let nudges = advance_nudges(&input.nudge_state, input.log, &policy.nudges);
    let nudge_tokens: u64 = nudges
        .messages
        .iter()
        .map(|m| estimate_message(m, family))
        .sum();
    let mut checkpoint = input.checkpoint.cloned();
    let summary_tokens = checkpoint.as_ref().map_or(0, |c| c.tokens);
    let mut items: Vec<ViewMessage<'a>> = tail.iter().map(ViewMessage::from_entry).collect();
    let raw_total =
        system_tokens + summary_tokens + nudge_tokens + tail.iter().map(|e| e.tokens).sum::<u64>();
    let last_seq = tail.last().map(|e| e.seq).or(through);
    // Calibration: what the API said about this view's prefix corrects every estimate of it
    // by the same difference.
    let delta: i128 = input
        .usage_anchor
        .and_then(|anchor| calibrated_tokens(anchor, through, last_seq, raw_total))
        .map_or(0, |calibrated| {
            i128::from(calibrated) - i128::from(raw_total)
        });
    let correction = |raw: u64| u64::try_from((i128::from(raw) + delta).max(0)).unwrap_or(u64::MAX);
    let low_water =
        u64::try_from((i128::from(budget.low_water()) - delta.max(0)).max(0)).unwrap_or(0);

    let mut outcome = Outcome {
        tier: if compacted_this_turn {
            Tier::Summarized
        } else {
            Tier::Fits
        },
        ..Outcome::default()
    };
    let fixed = system_tokens + summary_tokens + nudge_tokens;
    if correction(raw_total) > budget.trigger() {
        if let Some(clear) = &policy.clear_tool_results {
            outcome.cleared = clear_old_tool_results(&mut items, clear);
            if outcome.cleared > 0
                && correction(fixed + sum_tokens(&items, family)) <= budget.trigger()
            {
                outcome.tier = Tier::Cleared;
            }
        }
    }
    if correction(fixed + sum_tokens(&items, family)) > budget.trigger() {
        let allowed_to_compact = !compacted_this_turn;
        match &policy.strategy {
            Strategy::Off => outcome.tier = Tier::Uncompacted,
            Strategy::Summarize if allowed_to_compact => {
                // What the summary will likely cost: half its limit, but never most of the
                // low-water mark (a small window gets a small summary).
                let expected_summary = (policy.max_summary_tokens / 2).min(low_water / 3);
                let target_fixed = system_tokens + expected_summary + nudge_tokens;
                // The new summary replaces the old one too: it must cost less than both.
                let replacement = expected_summary.saturating_sub(summary_tokens);
                if let Some(cut) = choose_cut(
                    tail,
                    policy.keep_last_messages,
                    target_fixed,
                    low_water,
                    replacement,
                ) {
                    let covered = tail.get(..cut).unwrap_or_default();
                    let active_tasks = render_active_tasks(input.todos);
                    let request = summary_request(
                        covered,
                        input.checkpoint,
                        active_tasks,
                        this_turn,
                        policy.max_summary_tokens,
                        &policy.transcript,
                    );
                    return Ok(Plan::Summarize(Box::new(request)));
                }
            }
            Strategy::SlidingWindow { keep_last } => {
                let start = window_start(tail, *keep_last);
                items.drain(..start.min(items.len()));
                outcome.dropped = start;
                outcome.tier = Tier::Window;
            }
            Strategy::Summarize | Strategy::Truncate => {}
        }
        let over = correction(fixed + sum_tokens(&items, family)) > budget.trigger();
        if over && policy.strategy != Strategy::Off {
            outcome.tier = Tier::Truncated;
            if allowed_to_compact && outcome.dropped == 0 {
                if let Some(new) = truncation_checkpoint(
                    input,
                    tail,
                    this_turn,
                    system_tokens + nudge_tokens,
                    low_water,
                ) {
                    let cut = first_after(tail, Some(new.through_seq));
                    items.drain(..cut.min(items.len()));
                    outcome.dropped += cut;
                    checkpoint = Some(new.clone());
                    outcome.new_checkpoint = Some(new);
                }
            }
        }
    }

    let mut all = Vec::with_capacity(items.len() + 1);
    all.extend(checkpoint.as_ref().map(|c| {
        let mut summary = ViewMessage::owned(summary_message(c));
        summary.tokens = Some(c.tokens);
        summary
    }));
    all.extend(items);
    let (mut all, repair) = repair_view(all);

    // Repair can add messages (placeholder results, a leading user message), so a view that was
    // under the trigger before it may be over after it: every compacting strategy checks again.
    if outcome.tier == Tier::Truncated
        || policy.strategy != Strategy::Off
            && correction(system_tokens + nudge_tokens + sum_tokens(&all, family))
                > budget.trigger()
    {
        outcome.tier = Tier::Truncated;
        fit_view(
            &mut all,
            system_tokens + nudge_tokens,
            &budget,
            family,
            &mut outcome,
        );
    }

    let message_tokens = sum_tokens(&all, family);
    let summary_in_view = match all.first() {
        Some(first) if first.seq.is_none() && first.text_content().starts_with(SUMMARY_HEADER) => {
            sum_tokens(all.get(..1).unwrap_or_default(), family)
        }
        _ => 0,
    };
    let offload_references = all.iter().filter(|m| is_offload_reference(m)).count();
    // Nudges are reminders: they never push a view over its budget.
    let nudges_fit = system_tokens + message_tokens + nudge_tokens <= budget.usable();
    let (nudge_kinds, nudge_tokens) = if nudges_fit {
        (nudges.kinds, nudge_tokens)
    } else {
        (Vec::new(), 0)
    };
    if nudges_fit {
        all.extend(nudges.messages.into_iter().map(ViewMessage::owned));
    }
    let total = system_tokens + message_tokens + nudge_tokens;
    let calibrated = input.usage_anchor.and_then(|anchor| {
        calibrated_tokens(
            anchor,
            checkpoint.as_ref().map(|c| c.through_seq),
            last_seq,
            total,
        )
    });
    let stats = ViewStats {
        tier: Some(outcome.tier),
        system_tokens,
        summary_tokens: summary_in_view,
        message_tokens: message_tokens - summary_in_view,
        nudge_tokens,
        total_tokens: total,
        calibrated_tokens: calibrated,
        budget_tokens: budget.usable(),
        trigger_tokens: budget.trigger(),
        low_water_tokens: budget.low_water(),
        fits: calibrated.unwrap_or(total) <= budget.usable(),
        messages: all.len(),
        checkpoint_through: checkpoint.as_ref().map(|c| c.through_seq),
        checkpoint_method: checkpoint.as_ref().map(|c| c.method),
        last_seq,
        dropped_messages: outcome.dropped,
        cleared_results: outcome.cleared,
        cut_messages: outcome.cut,
        offload_references,
        nudges: nudge_kinds,
        repair,
    };
    Ok(Plan::Ready(Box::new(ReadyView {
        view: View {
            system: input.system_prompt.to_owned(),
            messages: all,
        },
        stats,
        next_nudge_state: nudges.next,
        new_checkpoint: outcome.new_checkpoint,
    })))
}

/// What the tiers did, gathered for the stats.
#[derive(Default)]
struct Outcome {
    tier: Tier,
    dropped: usize,
    cleared: usize,
    cut: usize,
    new_checkpoint: Option<Checkpoint>,
}

fn sum_tokens(items: &[ViewMessage<'_>], family: ModelFamily) -> u64 {
    items
        .iter()
        .map(|item| {
            item.tokens
                .unwrap_or_else(|| estimate_message(item, family))
        })
        .sum()
}

fn check_order(tail: &[Entry]) -> Result<()> {
    for pair in tail.windows(2) {
        if let [before, after] = pair {
            if after.seq <= before.seq {
                return Err(CoreError::invalid(
                    format!("log[seq {}]", after.seq),
                    format!("entries must be in strictly increasing seq order, but seq {} follows seq {}", after.seq, before.seq),
                ));
            }
        }
    }
    Ok(())
}

/// The smallest safe cut index `c` (keeping at least `keep_last` messages) such that
/// `fixed + tokens(tail[c..]) <= target`; the largest allowed one if none reaches the target;
/// `None` when no cut above 0 is allowed, or when the cut would cover no more than
/// `replacement` tokens (a summary as big as what it replaces saves nothing).
fn choose_cut(
    tail: &[Entry],
    keep_last: usize,
    fixed: u64,
    target: u64,
    replacement: u64,
) -> Option<usize> {
    let latest = tail.len().checked_sub(keep_last)?;
    let points: Vec<usize> = safe_cut_points(tail)
        .into_iter()
        .filter(|p| *p > 0 && *p <= latest)
        .collect();
    // suffix[i] = tokens of tail[i..]
    let mut suffix: Vec<u64> = tail
        .iter()
        .rev()
        .scan(0u64, |sum, entry| {
            *sum += entry.tokens;
            Some(*sum)
        })
        .collect();
    suffix.reverse();
    suffix.push(0);
    let fits = |point: &usize| {
        suffix
            .get(*point)
            .is_some_and(|rest| fixed + rest <= target)
    };
    let cut = points
        .iter()
        .copied()
        .find(|p| fits(p))
        .or_else(|| points.last().copied())?;
    let covered = suffix
        .first()
        .copied()
        .unwrap_or(0)
        .saturating_sub(suffix.get(cut).copied().unwrap_or(0));
    (covered > replacement).then_some(cut)
}

/// A truncation checkpoint dropping the oldest units of `tail` down to the low-water mark, or
/// `None` when nothing can be dropped.
fn truncation_checkpoint(
    input: &TurnInput<'_, '_>,
    tail: &[Entry],
    this_turn: u64,
    fixed: u64,
    low_water: u64,
) -> Option<Checkpoint> {
    let policy = input.policy;
    let max_bytes =
        usize::try_from(policy.max_summary_tokens.saturating_mul(2)).unwrap_or(usize::MAX);
    let first_request = if input.checkpoint.is_none() {
        input
            .log
            .iter()
            .take(1_000)
            .find(|e| e.message.role == Role::User)
            .map(|e| e.message.text_content().into_owned())
    } else {
        None
    };
    let previous = input.checkpoint.map(|c| c.summary.as_str());
    let mut checkpoint = Checkpoint {
        through_seq: 0,
        // Sized with the largest count it could state, to choose the cut.
        summary: truncation_summary(tail.len(), first_request.as_deref(), previous, max_bytes),
        method: SummaryMethod::Truncation,
        active_tasks: render_active_tasks(input.todos),
        tokens: 0,
        made_at_turn: this_turn,
    };
    let summary_tokens = estimate_message(&summary_message(&checkpoint), policy.family);
    let previous_tokens = input.checkpoint.map_or(0, |c| c.tokens);
    let cut = choose_cut(
        tail,
        policy.keep_last_messages,
        fixed + summary_tokens,
        low_water,
        summary_tokens.saturating_sub(previous_tokens),
    )?;
    checkpoint.through_seq = tail.get(cut.checked_sub(1)?)?.seq;
    checkpoint.summary = truncation_summary(cut, first_request.as_deref(), previous, max_bytes);
    checkpoint.tokens = estimate_message(&summary_message(&checkpoint), policy.family);
    Some(checkpoint)
}

/// Makes a repaired view fit under the trigger: cut oversized messages, then (only for a tiny
/// budget) drop the oldest units of the view. Dropping whole units, and never leaving a
/// non-user message first, keeps the view repaired.
fn fit_view(
    all: &mut Vec<ViewMessage<'_>>,
    fixed: u64,
    budget: &Budget,
    family: ModelFamily,
    outcome: &mut Outcome,
) {
    let allowance = budget.trigger().saturating_sub(fixed);
    outcome.cut += cut_to_fit(all, allowance, family);
    while !all.is_empty()
        && (sum_tokens(all, family) > allowance
            || all.first().is_some_and(|m| m.role != Role::User))
    {
        // The first unit: a message and the tool results right after it.
        let unit = 1 + all
            .iter()
            .skip(1)
            .take_while(|m| m.role == Role::Tool)
            .count();
        outcome.dropped += all
            .drain(..unit.min(all.len()))
            .filter(|m| m.seq.is_some())
            .count();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::ToolCall;

    /// Found by `plan_properties`: a log that fits under the trigger as it is, but whose repair
    /// adds placeholder results that push it over. The view must still fit.
    #[test]
    fn a_view_that_repair_pushes_over_the_trigger_is_fitted() {
        let family = ModelFamily::OpenAi;
        let calls = (0..6)
            .map(|n| ToolCall::new(format!("call_{n}"), "bash", "{}"))
            .collect();
        let log = Entry::number(
            [
                Message::user("run everything"),
                Message::assistant("", calls),
                Message::user("results were lost"),
            ],
            1,
            family,
        );
        let raw: u64 = log.iter().map(|entry| entry.tokens).sum();
        let budget = Budget {
            context_window: raw,
            output_reserve: 0,
            tool_schema_tokens: 0,
            safety_margin: 0,
            trigger_percent: 100,
            low_water_percent: 10,
        };
        let policy = Policy {
            family,
            nudges: NudgePolicy {
                memory_every_turns: 0,
                stall_after_turns: 0,
                ..NudgePolicy::default()
            },
            ..Policy::default()
        };
        let input = TurnInput {
            log: &log,
            checkpoint: None,
            system_prompt: "",
            budget,
            policy: &policy,
            nudge_state: NudgeState::default(),
            usage_anchor: None,
            todos: &[],
        };
        let Ok(Plan::Ready(ready)) = plan_turn(&input) else {
            panic!("the log fits the trigger before repair, so no summary is asked for");
        };
        assert_eq!(ready.stats.repair.missing_results, 6);
        assert!(
            ready.stats.total_tokens <= budget.usable(),
            "{:?}",
            ready.stats
        );
        assert!(ready.stats.fits);
        assert_eq!(ready.stats.tier, Some(Tier::Truncated));
    }
}
