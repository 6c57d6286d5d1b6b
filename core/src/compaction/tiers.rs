//! The tiers of [`crate::plan_turn`], one function each, in the order they are tried while
//! the view is over the trigger: [`clear_tier`] (old tool results), then the strategy
//! ([`summarize_tier`] asks for a summary, [`window_tier`] keeps the last messages), then
//! [`truncate_tier`] (the oldest units into a truncation checkpoint) and, after repair,
//! [`fit_tier`] (cut oversized messages; drop units only on a tiny budget).
//!
//! Every tier keeps tool calls with their results: cuts are taken at safe points
//! ([`crate::model::safe_cut_points`]) and whole units are dropped.

use crate::compaction::pinned::{cap_pinned, gather_pinned, DroppedFacts};
use crate::compaction::{
    cache_safe_messages, clear_old_tool_results, cut_to_fit, render_active_tasks, restore_block,
    restore_budget, summary_message, summary_request, truncation_summary, with_pinned, Budget,
    Checkpoint, ClearPolicy, PlanInput, SummaryMethod, SummaryMode, SummaryRequest, Tier,
};
use crate::model::{first_after, safe_cut_points, window_start, Entry, Message, Role, ViewMessage};
use crate::tokens::{estimate_message, estimate_text, ModelFamily};
use crate::wire::repair_view;

/// What a view's fixed parts cost and how the last real usage corrects an estimate.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Measure {
    pub family: ModelFamily,
    pub trigger: u64,
    /// Real usage minus the estimate of the view it was reported for.
    pub delta: i128,
    /// The low-water mark, lowered by a positive correction.
    pub low_water: u64,
    pub system_tokens: u64,
    /// The latest checkpoint's summary.
    pub summary_tokens: u64,
    pub nudge_tokens: u64,
}

impl Measure {
    /// An estimate corrected by the last real usage.
    pub fn corrected(&self, raw: u64) -> u64 {
        u64::try_from((i128::from(raw) + self.delta).max(0)).unwrap_or(u64::MAX)
    }

    /// The corrected tokens of a view of `items` with the system prompt, summary and nudges.
    pub fn with_fixed(&self, items: &[ViewMessage<'_>]) -> u64 {
        self.corrected(
            self.system_tokens
                + self.summary_tokens
                + self.nudge_tokens
                + sum_tokens(items, self.family),
        )
    }

    /// Over the trigger.
    pub fn over(&self, tokens: u64) -> bool {
        tokens > self.trigger
    }
}

/// What the tiers did, gathered for the stats.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    pub tier: Tier,
    pub dropped: usize,
    pub cleared: usize,
    pub cut: usize,
    pub new_checkpoint: Option<Checkpoint>,
}

/// Tier 2: clears old tool results; the tier is `Cleared` when that brought the view under
/// the trigger.
pub(crate) fn clear_tier(
    items: &mut [ViewMessage<'_>],
    clear: &ClearPolicy,
    measure: &Measure,
    outcome: &mut Outcome,
) {
    outcome.cleared = clear_old_tool_results(items, clear);
    if outcome.cleared > 0 && !measure.over(measure.with_fixed(items)) {
        outcome.tier = Tier::Cleared;
    }
}

/// Tier 3, summarize: the request for a summary of the oldest messages of `tail`, or `None`
/// when no cut would save anything.
pub(crate) fn summarize_tier(
    input: &PlanInput<'_, '_>,
    tail: &[Entry],
    this_turn: u64,
    measure: &Measure,
) -> Option<SummaryRequest> {
    let policy = input.policy;
    let caps = policy.summary_caps(&input.budget);
    // What the summary will likely cost: half its limit, but never most of the low-water mark
    // (a small window gets a small summary).
    let expected_summary = (caps.max_summary_tokens / 2).min(measure.low_water / 3);
    let target_fixed = measure.system_tokens + expected_summary + measure.nudge_tokens;
    // The new summary replaces the old one too: it must cost less than both.
    let replacement = expected_summary.saturating_sub(measure.summary_tokens);
    let mut cut = choose_cut(
        tail,
        policy.keep_last_messages,
        target_fixed,
        measure.low_water,
        replacement,
    )?;
    let restore_at = |cut: usize| {
        policy.restore.as_ref().and_then(|limits| {
            restore_block(
                tail.get(..cut).unwrap_or_default(),
                tail.get(cut..).unwrap_or_default(),
                restore_budget(limits, &input.budget),
                limits,
                policy.family,
            )
        })
    };
    let mut restore = restore_at(cut);
    // The restore block is part of what the view comes down to: the kept tail makes room.
    if let Some(text) = &restore {
        let tokens = estimate_text(text, policy.family);
        if let Some(later) = choose_cut(
            tail,
            policy.keep_last_messages,
            target_fixed + tokens,
            measure.low_water,
            replacement,
        ) {
            if later != cut {
                cut = later;
                restore = restore_at(cut);
            }
        }
    }
    let covered = tail.get(..cut).unwrap_or_default();
    let mut request = summary_request(
        covered,
        input.checkpoint,
        input.todos,
        this_turn,
        caps,
        &policy.transcript_limits(&input.budget),
    );
    request.restore = restore;
    request.working_directory = policy.working_directory.clone();
    if policy.summary_mode == SummaryMode::CacheSafe {
        request.cache_safe_messages = cache_safe_messages(
            &request,
            input.system_prompt,
            input.checkpoint,
            tail,
            tail.len() - cut,
            &input.budget,
            policy.family,
        );
    }
    Some(request)
}

/// Tier 3, sliding window: keeps the last `keep_last` messages of `tail` (pair-safe).
pub(crate) fn window_tier(
    items: &mut Vec<ViewMessage<'_>>,
    tail: &[Entry],
    keep_last: usize,
    outcome: &mut Outcome,
) {
    let start = window_start(tail, keep_last);
    items.drain(..start.min(items.len()));
    outcome.dropped = start;
    outcome.tier = Tier::Window;
}

/// Tier 4: drops the oldest units of `tail` into a truncation checkpoint, which it returns
/// (and keeps in `outcome` for the caller to store); `None` when nothing can be dropped.
pub(crate) fn truncate_tier(
    items: &mut Vec<ViewMessage<'_>>,
    input: &PlanInput<'_, '_>,
    tail: &[Entry],
    this_turn: u64,
    measure: &Measure,
    outcome: &mut Outcome,
) -> Option<Checkpoint> {
    let new = truncation_checkpoint(
        input,
        tail,
        this_turn,
        measure.system_tokens + measure.nudge_tokens,
        measure.low_water,
    )?;
    let cut = first_after(tail, Some(new.through_seq));
    items.drain(..cut.min(items.len()));
    outcome.dropped += cut;
    outcome.new_checkpoint = Some(new.clone());
    Some(new)
}

/// Makes a repaired view fit under the trigger (a view of one message: under
/// [`Budget::ceiling`], filling it): cut oversized messages (first each one over half the
/// trigger to that half, the same way every turn; then the biggest as far as the view needs),
/// then (only for a tiny
/// budget) drop the oldest units of the view. Dropping whole units, and never leaving a
/// non-user message first, keeps the view repaired.
pub(crate) fn fit_tier(
    all: &mut Vec<ViewMessage<'_>>,
    fixed: u64,
    budget: &Budget,
    family: ModelFamily,
    outcome: &mut Outcome,
) {
    // A message alone in the view fills what is free up to the ceiling (see
    // `Budget::ceiling`): there is nothing around it to keep a stable prefix for.
    let alone = all.len() == 1;
    let limit = if alone {
        budget.ceiling()
    } else {
        budget.trigger()
    };
    let allowance = limit.saturating_sub(fixed);
    // First each message over half the trigger, alone, to half the trigger: a cut that
    // depends only on the message and the budget, so the next turn cuts it the same way and
    // the cached prefix holds. Only if the view is still over are the biggest cut further.
    let stable_cap = if alone {
        allowance
    } else {
        budget.trigger() / 2
    };
    let mut stably_cut = 0;
    for item in all.iter_mut() {
        let tokens = item
            .tokens
            .unwrap_or_else(|| estimate_message(item, family));
        if tokens > stable_cap {
            stably_cut += cut_to_fit(std::slice::from_mut(item), stable_cap, family);
        }
    }
    let further = cut_to_fit(all, allowance, family);
    outcome.cut += stably_cut.max(further);
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

/// The smallest conversation, for when [`fit_tier`] left no message (the last units did not
/// start with a user message, or none fitted): the first of these that fits the allowance,
/// repaired and cut: the last user message of `tail` that is not blank, alone, the checkpoint's summary, the
/// last message's text, the last message with its calls. `None` when none fits: the budget is
/// too small for any view.
pub(crate) fn smallest_view<'a>(
    tail: &'a [Entry],
    checkpoint: Option<&Checkpoint>,
    fixed: u64,
    budget: &Budget,
    family: ModelFamily,
    outcome: &mut Outcome,
) -> Option<Vec<ViewMessage<'a>>> {
    let allowance = budget.trigger().saturating_sub(fixed);
    let mut candidates: Vec<ViewMessage<'a>> = Vec::new();
    if let Some(entry) = tail.iter().rev().find(|e| is_said_by_user(e)) {
        candidates.push(ViewMessage::from_entry(entry));
    }
    if let Some(checkpoint) = checkpoint {
        let mut summary = ViewMessage::owned(summary_message(checkpoint));
        summary.tokens = Some(checkpoint.tokens);
        candidates.push(summary);
    }
    if let Some(last) = tail.iter().rev().find(|e| e.message.role != Role::System) {
        // Its text alone first: the placeholder results of its calls may not fit.
        let mut text_only = last.message.clone();
        text_only.tool_calls.clear();
        if text_only.role == Role::Tool {
            text_only = Message::assistant(text_only.text_content(), Vec::new());
        }
        candidates.push(ViewMessage::owned(text_only));
        candidates.push(ViewMessage::from_entry(last));
    }
    candidates.into_iter().find_map(|candidate| {
        let (mut view, _) = repair_view(vec![candidate]);
        let cut = cut_to_fit(&mut view, allowance, family);
        if view.is_empty() || sum_tokens(&view, family) > allowance {
            return None;
        }
        outcome.cut += cut;
        outcome.dropped = outcome
            .dropped
            .saturating_sub(view.iter().filter(|m| m.seq.is_some()).count());
        Some(view)
    })
}

/// A user message with something in it (repair drops a blank one from every view).
pub(crate) fn is_said_by_user(entry: &Entry) -> bool {
    entry.message.role == Role::User && !entry.message.content.is_blank()
}

pub(crate) fn sum_tokens(items: &[ViewMessage<'_>], family: ModelFamily) -> u64 {
    items
        .iter()
        .map(|item| {
            item.tokens
                .unwrap_or_else(|| estimate_message(item, family))
        })
        .sum()
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
    input: &PlanInput<'_, '_>,
    tail: &[Entry],
    this_turn: u64,
    fixed: u64,
    low_water: u64,
) -> Option<Checkpoint> {
    let policy = input.policy;
    let max_bytes = policy.summary_caps(&input.budget).max_bytes;
    // The pinned facts of what it drops, and of the previous checkpoint, carried verbatim.
    let previous_pinned = input.checkpoint.map_or(&[][..], |c| c.pinned.as_slice());
    let pinned_of = |cut: usize| {
        let dropped = tail.get(..cut).unwrap_or_default();
        let gathered = gather_pinned(
            dropped.iter().map(|entry| &entry.message),
            previous_pinned,
            input.todos,
        );
        cap_pinned(gathered, max_bytes / 2)
    };
    let (sizing_pinned, _) = pinned_of(tail.len());
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
        // Sized with the largest count and facts it could state, to choose the cut.
        summary: with_pinned(
            &truncation_summary(tail.len(), first_request.as_deref(), previous, max_bytes),
            &sizing_pinned,
        ),
        method: SummaryMethod::Truncation,
        active_tasks: render_active_tasks(input.todos),
        tokens: 0,
        made_at_turn: this_turn,
        pinned: Vec::new(),
        dropped_facts: DroppedFacts::default(),
        compaction_block: None,
        restore: None,
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
    let (pinned, dropped) = pinned_of(cut);
    checkpoint.summary = with_pinned(
        &truncation_summary(cut, first_request.as_deref(), previous, max_bytes),
        &pinned,
    );
    checkpoint.pinned = pinned;
    checkpoint.dropped_facts = input
        .checkpoint
        .map_or(dropped, |c| c.dropped_facts.plus(dropped));
    checkpoint.tokens = estimate_message(&summary_message(&checkpoint), policy.family);
    Some(checkpoint)
}
