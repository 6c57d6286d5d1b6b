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
use crate::error::{CoreError, Result};
use crate::memory::{advance_nudges, NudgeOutcome, NudgeState};
use crate::model::{first_after, Entry, Message, Role, View, ViewMessage};
use crate::offload::is_offload_reference;
use crate::tokens::{calibrated_tokens, estimate_message, UsageAnchor};
use crate::wire::breakpoints::place_breakpoints;
use crate::wire::{repair_view, RepairReport};

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

/// Plans one turn (see the module doc): measures the view, runs the tiers while it is over
/// the trigger, repairs and fits what they left, then adds the nudges and the stats.
pub fn plan_turn<'a>(input: &PlanInput<'a, '_>) -> Result<Plan<'a>> {
    input.budget.validate()?;
    let (turn, mut items, nudges) = measure_turn(input)?;
    let mut checkpoint = input.checkpoint.cloned();
    let mut outcome = Outcome {
        tier: if turn.compacted_this_turn {
            Tier::Summarized
        } else {
            Tier::Fits
        },
        ..Outcome::default()
    };
    if let Some(request) = run_tiers(input, &turn, &mut items, &mut checkpoint, &mut outcome) {
        return Ok(Plan::Summarize(Box::new(request)));
    }
    let (all, repair) = match fit_repaired(input, &turn, items, checkpoint.as_ref(), &mut outcome)?
    {
        Fitted::View(all, repair) => (all, repair),
        Fitted::Summarize(request) => return Ok(Plan::Summarize(request)),
    };
    let fitted = FittedView {
        all,
        repair,
        checkpoint: checkpoint.as_ref(),
        outcome,
    };
    Ok(Plan::Ready(Box::new(ready_view(
        input, &turn, fitted, nudges,
    ))))
}

/// What a turn's plan measured before the tiers run.
struct Turn<'a> {
    /// The log after the latest checkpoint.
    tail: &'a [Entry],
    this_turn: u64,
    /// The latest checkpoint was made by this turn: it may not compact again.
    compacted_this_turn: bool,
    system_tokens: u64,
    nudge_tokens: u64,
    /// The estimate of the view as it is (tier 1), before any correction.
    raw_total: u64,
    last_seq: Option<u64>,
    measure: Measure,
}

/// Measures the view as it is: the system prompt, the checkpoint's summary (and restore
/// block), the log after it and the nudges, corrected by the last real usage. Returns the
/// measure, the tail as view messages, and the nudges this turn would add.
fn measure_turn<'a>(
    input: &PlanInput<'a, '_>,
) -> Result<(Turn<'a>, Vec<ViewMessage<'a>>, NudgeOutcome)> {
    let family = input.policy.family;
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
    let nudges = advance_nudges(&input.nudge_state, input.log, &input.policy.nudges);
    let nudge_tokens: u64 = nudges
        .messages
        .iter()
        .map(|m| estimate_message(m, family))
        .sum();
    // The summary message and the restore message after it.
    let summary_tokens = input
        .checkpoint
        .map_or(0, |c| c.tokens + restore_tokens(c, family));
    let items: Vec<ViewMessage<'a>> = tail.iter().map(ViewMessage::from_entry).collect();
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
    let budget = input.budget;
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
    let turn = Turn {
        tail,
        this_turn,
        compacted_this_turn,
        system_tokens,
        nudge_tokens,
        raw_total,
        last_seq,
        measure,
    };
    Ok((turn, items, nudges))
}

/// Tiers 2 to 4, each only while the view is still over the trigger: clearing, the strategy
/// (a summary request, returned, or a sliding window), truncation (its checkpoint replaces
/// `checkpoint`).
fn run_tiers<'a>(
    input: &PlanInput<'a, '_>,
    turn: &Turn<'a>,
    items: &mut Vec<ViewMessage<'a>>,
    checkpoint: &mut Option<Checkpoint>,
    outcome: &mut Outcome,
) -> Option<SummaryRequest> {
    let policy = input.policy;
    let measure = &turn.measure;
    if measure.over(measure.corrected(turn.raw_total)) {
        if let Some(clear) = &policy.clear_tool_results {
            clear_tier(items, clear, measure, outcome);
        }
    }
    if measure.over(measure.with_fixed(items)) {
        let allowed_to_compact = !turn.compacted_this_turn;
        match &policy.strategy {
            Strategy::Off => outcome.tier = Tier::Uncompacted,
            Strategy::Summarize if allowed_to_compact => {
                if let Some(request) = summarize_tier(input, turn.tail, turn.this_turn, measure) {
                    return Some(request);
                }
            }
            Strategy::SlidingWindow { keep_last } => {
                window_tier(items, turn.tail, *keep_last, outcome);
            }
            Strategy::Summarize | Strategy::Truncate => {}
        }
        if measure.over(measure.with_fixed(items)) && policy.strategy != Strategy::Off {
            outcome.tier = Tier::Truncated;
            if allowed_to_compact && outcome.dropped == 0 {
                if let Some(new) =
                    truncate_tier(items, input, turn.tail, turn.this_turn, measure, outcome)
                {
                    *checkpoint = Some(new);
                }
            }
        }
    }
    None
}

/// What fitting the repaired view gave.
enum Fitted<'a> {
    /// The messages of the view (the summary and restore block first), before the nudges, and
    /// what repair did.
    View(Vec<ViewMessage<'a>>, RepairReport),
    /// Repair pushed the view over, and this turn may still summarize.
    Summarize(Box<SummaryRequest>),
}

/// Puts the checkpoint's summary and restore block before `items`, repairs the tool pairs, and
/// fits what repair pushed over the trigger.
fn fit_repaired<'a>(
    input: &PlanInput<'a, '_>,
    turn: &Turn<'a>,
    items: Vec<ViewMessage<'a>>,
    checkpoint: Option<&Checkpoint>,
    outcome: &mut Outcome,
) -> Result<Fitted<'a>> {
    let policy = input.policy;
    let budget = input.budget;
    let family = policy.family;
    let mut all = Vec::with_capacity(items.len() + 1);
    if let Some(c) = checkpoint {
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
    let fixed = turn.system_tokens;
    let had_messages = !all.is_empty();
    let over_after_repair = policy.strategy != Strategy::Off
        && turn
            .measure
            .over(turn.measure.corrected(fixed + sum_tokens(&all, family)));
    // Over only because of what repair added: summarize if this turn still may. Cutting an
    // old message to fit instead would rewrite it by a different amount every turn (the
    // allowance moves with the nudges), breaking the cached prefix at each call.
    if over_after_repair
        && outcome.tier != Tier::Truncated
        && policy.strategy == Strategy::Summarize
        && !turn.compacted_this_turn
    {
        if let Some(request) = summarize_tier(input, turn.tail, turn.this_turn, &turn.measure) {
            return Ok(Fitted::Summarize(Box::new(request)));
        }
    }
    if outcome.tier == Tier::Truncated || over_after_repair {
        outcome.tier = Tier::Truncated;
        fit_tier(&mut all, fixed, &budget, family, outcome);
    }
    if had_messages && all.is_empty() {
        // Fitting dropped everything: a view with no message is rejected by every provider.
        // The smallest conversation is the last user message alone; if even that cannot fit,
        // the budget is refused, naming what it would have to hold.
        all = smallest_view(turn.tail, checkpoint, fixed, &budget, family, outcome)
            .ok_or_else(|| budget_too_small(&budget, turn.system_tokens, turn.tail))?;
    }
    Ok(Fitted::View(all, repair))
}

/// A view the tiers, repair and fitting made, with what made it.
struct FittedView<'a, 'c> {
    all: Vec<ViewMessage<'a>>,
    repair: RepairReport,
    checkpoint: Option<&'c Checkpoint>,
    outcome: Outcome,
}

/// The ready view: the fitted view with the nudges when they fit, its cache breakpoints and its
/// stats.
fn ready_view<'a>(
    input: &PlanInput<'a, '_>,
    turn: &Turn<'a>,
    fitted: FittedView<'a, '_>,
    nudges: NudgeOutcome,
) -> ReadyView<'a> {
    let FittedView {
        mut all,
        repair,
        checkpoint,
        outcome,
    } = fitted;
    let budget = input.budget;
    let family = input.policy.family;
    let system_tokens = turn.system_tokens;
    let message_tokens = sum_tokens(&all, family);
    let summary_in_view = match all.first() {
        Some(first) if first.seq.is_none() && first.text_content().starts_with(SUMMARY_HEADER) => {
            sum_tokens(all.get(..1).unwrap_or_default(), family)
        }
        _ => 0,
    };
    let offload_references = all.iter().filter(|m| is_offload_reference(m)).count();
    // Nudges are reminders: they never push a view over its budget.
    let nudges_fit = system_tokens + message_tokens + turn.nudge_tokens <= budget.usable();
    let (nudge_kinds, nudge_tokens) = if nudges_fit {
        (nudges.kinds, turn.nudge_tokens)
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
            checkpoint.map(|c| c.through_seq),
            turn.last_seq,
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
        checkpoint_through: checkpoint.map(|c| c.through_seq),
        checkpoint_method: checkpoint.map(|c| c.method),
        last_seq: turn.last_seq,
        dropped_messages: outcome.dropped,
        cleared_results: outcome.cleared,
        cut_messages: outcome.cut,
        offload_references,
        nudges: nudge_kinds,
        repair,
        dropped_facts: checkpoint.map(|c| c.dropped_facts).unwrap_or_default(),
        cache_breakpoints,
        refused_usage: None,
        fallbacks: Vec::new(),
    };
    ReadyView {
        view: View {
            system: input.system_prompt.to_owned(),
            messages: all,
        },
        stats,
        next_nudge_state: nudges.next,
        new_checkpoint: outcome.new_checkpoint,
    }
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
#[path = "plan_tests.rs"]
mod tests;
