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
//! Then every view is repaired (tool pairs, ids, leading user) and nudges are appended. A
//! budget so small that fitting leaves no message of a non-empty log is an error
//! ([`CoreError::BudgetTooSmall`], naming the window, the budget and what the system prompt
//! and the last user message need), never an empty view. Each
//! tier is one function in [`crate::compaction::tiers`]; this file measures the view, runs
//! them in order, and assembles the result.
//!
//! Cost: proportional to the view, not the log. The checkpoint is found by binary search, new
//! entries for the nudges likewise, and estimates come cached with the entries.

use crate::compaction::tiers::{
    clear_tier, fit_tier, is_said_by_user, smallest_view, sum_tokens, summarize_tier,
    truncate_tier, window_tier, Measure, Outcome,
};
use crate::compaction::{
    checkpoint_restore_message, summary_message, Budget, Checkpoint, Policy, Strategy,
    SummaryRequest, Tier, TodoItem, ViewStats, MIN_MESSAGE_TOKENS, SUMMARY_HEADER,
};
use crate::cost::place_breakpoints;
use crate::error::{CoreError, Result};
use crate::memory::{advance_nudges, NudgeState};
use crate::model::{first_after, Entry, Message, Role, View, ViewMessage};
use crate::offload::is_offload_reference;
use crate::tokens::{calibrated_tokens, estimate_message, UsageAnchor};
use crate::wire::repair_view;

/// The inputs of one turn. Everything the pipeline knows arrives here. The view borrows from
/// the log (`'log`) only; the other inputs (`'x`) may be short-lived.
#[derive(Debug, Clone, Copy)]
pub struct PlanInput<'log, 'x> {
    /// The session's log, in `seq` order. It may start anywhere at or before the latest
    /// checkpoint's `through_seq + 1` (a store may load only the tail).
    pub log: &'log [Entry],
    /// The latest checkpoint, if any.
    pub checkpoint: Option<&'x Checkpoint>,
    /// The system prompt of this turn (see [`crate::prompt`]).
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

/// Plans one turn (see the module doc).
pub fn plan_turn<'a>(input: &PlanInput<'a, '_>) -> Result<Plan<'a>> {
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
    // The summary message and the restore message after it.
    let summary_tokens = checkpoint
        .as_ref()
        .map_or(0, |c| c.tokens + restore_tokens(c, family));
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
    let measure = Measure {
        family,
        trigger: budget.trigger(),
        delta,
        low_water: u64::try_from((i128::from(budget.low_water()) - delta.max(0)).max(0))
            .unwrap_or(0),
        system_tokens,
        summary_tokens,
        nudge_tokens,
    };

    let mut outcome = Outcome {
        tier: if compacted_this_turn {
            Tier::Summarized
        } else {
            Tier::Fits
        },
        ..Outcome::default()
    };
    if measure.over(measure.corrected(raw_total)) {
        if let Some(clear) = &policy.clear_tool_results {
            clear_tier(&mut items, clear, &measure, &mut outcome);
        }
    }
    if measure.over(measure.with_fixed(&items)) {
        let allowed_to_compact = !compacted_this_turn;
        match &policy.strategy {
            Strategy::Off => outcome.tier = Tier::Uncompacted,
            Strategy::Summarize if allowed_to_compact => {
                if let Some(request) = summarize_tier(input, tail, this_turn, &measure) {
                    return Ok(Plan::Summarize(Box::new(request)));
                }
            }
            Strategy::SlidingWindow { keep_last } => {
                window_tier(&mut items, tail, *keep_last, &mut outcome);
            }
            Strategy::Summarize | Strategy::Truncate => {}
        }
        if measure.over(measure.with_fixed(&items)) && policy.strategy != Strategy::Off {
            outcome.tier = Tier::Truncated;
            if allowed_to_compact && outcome.dropped == 0 {
                if let Some(new) =
                    truncate_tier(&mut items, input, tail, this_turn, &measure, &mut outcome)
                {
                    checkpoint = Some(new);
                }
            }
        }
    }

    let mut all = Vec::with_capacity(items.len() + 1);
    if let Some(c) = checkpoint.as_ref() {
        let mut summary = ViewMessage::owned(summary_message(c));
        summary.tokens = Some(c.tokens);
        all.push(summary);
        all.extend(checkpoint_restore_message(c).map(ViewMessage::owned));
    }
    all.extend(items);
    let (mut all, repair) = repair_view(all);

    // Repair can add messages (placeholder results, a leading user message), so a view that was
    // under the trigger before it may be over after it: every compacting strategy checks again.
    // The nudges are not part of what the stored messages must fit: they come and go from turn
    // to turn and are left out below when they do not fit, so a message is never cut (by an
    // amount that would change when the nudge goes) to make room for one.
    let fixed = system_tokens;
    let had_messages = !all.is_empty();
    let over_after_repair = policy.strategy != Strategy::Off
        && measure.over(measure.corrected(fixed + sum_tokens(&all, family)));
    // Over only because of what repair added: summarize if this turn still may. Cutting an
    // old message to fit instead would rewrite it by a different amount every turn (the
    // allowance moves with the nudges), breaking the cached prefix at each call.
    if over_after_repair
        && outcome.tier != Tier::Truncated
        && policy.strategy == Strategy::Summarize
        && !compacted_this_turn
    {
        if let Some(request) = summarize_tier(input, tail, this_turn, &measure) {
            return Ok(Plan::Summarize(Box::new(request)));
        }
    }
    if outcome.tier == Tier::Truncated || over_after_repair {
        outcome.tier = Tier::Truncated;
        fit_tier(&mut all, fixed, &budget, family, &mut outcome);
    }
    if had_messages && all.is_empty() {
        // Fitting dropped everything: a view with no message is rejected by every provider.
        // The smallest conversation is the last user message alone; if even that cannot fit,
        // the budget is refused, naming what it would have to hold.
        all = smallest_view(
            tail,
            checkpoint.as_ref(),
            fixed,
            &budget,
            family,
            &mut outcome,
        )
        .ok_or_else(|| budget_too_small(&budget, system_tokens, tail))?;
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
    let nudges_in_view = if nudges_fit { nudges.messages.len() } else { 0 };
    if nudges_fit {
        all.extend(nudges.messages.into_iter().map(ViewMessage::owned));
    }
    let conversation: Vec<&Message> = all.iter().map(|item| &*item.message).collect();
    let cache_breakpoints = place_breakpoints(
        &conversation,
        !input.system_prompt.is_empty(),
        summary_in_view > 0,
        nudges_in_view,
    );
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
        dropped_facts: checkpoint
            .as_ref()
            .map(|c| c.dropped_facts)
            .unwrap_or_default(),
        cache_breakpoints,
        refused_usage: None,
        fallbacks: Vec::new(),
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

/// The estimate of `checkpoint`'s restore message (0 without one).
fn restore_tokens(checkpoint: &Checkpoint, family: crate::tokens::ModelFamily) -> u64 {
    checkpoint_restore_message(checkpoint).map_or(0, |m| estimate_message(&m, family))
}

/// The [`CoreError::BudgetTooSmall`] of a budget that left no message of `tail` in the view.
fn budget_too_small(budget: &Budget, system_tokens: u64, tail: &[Entry]) -> CoreError {
    let last_user_tokens = tail
        .iter()
        .rev()
        .find(|entry| is_said_by_user(entry))
        .map_or(0, |entry| entry.tokens);
    CoreError::BudgetTooSmall {
        window: budget.context_window,
        usable: budget.usable(),
        allowed: budget.trigger(),
        system_tokens,
        last_user_tokens,
        needed: system_tokens + last_user_tokens.min(MIN_MESSAGE_TOKENS),
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compaction::Tier;
    use crate::memory::NudgePolicy;
    use crate::model::ToolCall;
    use crate::tokens::ModelFamily;

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
            cost_trigger_tokens: None,
            cost_low_water_tokens: None,
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
        let input = PlanInput {
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

    /// A budget that cannot hold the system prompt and the last user message is refused,
    /// naming the numbers, instead of giving a view without a message.
    #[test]
    fn a_budget_too_small_for_any_view_is_an_error_naming_the_numbers() {
        let family = ModelFamily::OpenAi;
        let log = Entry::number([Message::user("fix the failing test")], 1, family);
        let policy = Policy {
            family,
            ..Policy::default()
        };
        let system = "You are a careful agent. ".repeat(20);
        let system_tokens = estimate_message(&Message::text(Role::System, system.clone()), family);
        let user_tokens = log[0].tokens;
        let no_window = PlanInput {
            log: &log,
            checkpoint: None,
            system_prompt: &system,
            budget: Budget::for_window(0),
            policy: &policy,
            nudge_state: NudgeState::default(),
            usage_anchor: None,
            todos: &[],
        };
        assert!(matches!(
            plan_turn(&no_window),
            Err(CoreError::ReservesFillWindow { window: 0, .. })
        ));
        for window in [1, 10, 100] {
            let input = PlanInput {
                log: &log,
                checkpoint: None,
                system_prompt: &system,
                budget: Budget::for_window(window),
                policy: &policy,
                nudge_state: NudgeState::default(),
                usage_anchor: None,
                todos: &[],
            };
            let budget = Budget::for_window(window);
            assert_eq!(
                plan_turn(&input),
                Err(CoreError::BudgetTooSmall {
                    window,
                    usable: budget.usable(),
                    allowed: budget.trigger(),
                    system_tokens,
                    last_user_tokens: user_tokens,
                    needed: system_tokens + user_tokens.min(MIN_MESSAGE_TOKENS),
                }),
                "window {window}"
            );
        }
        let input = PlanInput {
            log: &log,
            checkpoint: None,
            system_prompt: &system,
            budget: Budget::for_window(2_000),
            policy: &policy,
            nudge_state: NudgeState::default(),
            usage_anchor: None,
            todos: &[],
        };
        let Ok(Plan::Ready(ready)) = plan_turn(&input) else {
            panic!("a 2,000-token window holds the prompt and the message");
        };
        assert_eq!(ready.view.messages.len(), 1);
    }
}
