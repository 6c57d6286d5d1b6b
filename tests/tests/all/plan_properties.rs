//! Properties of `plan_turn` over generated logs and budgets (the invariants of docs/architecture.md): the log is
//! never changed and the same inputs give the same plan; every view passes both validators;
//! a view fits the budget whenever the system prompt (plus the smallest conversation) fits, and
//! a budget is refused (`BudgetTooSmall`) only when they do not, never with an empty view;
//! the second plan of a turn is always ready; and across turns, summary requests and
//! checkpoints match one to one.

use ctxkit_core::compaction::answer_extractively;
use ctxkit_core::compaction::Budget;
use ctxkit_core::compaction::Checkpoint;
use ctxkit_core::compaction::MIN_MESSAGE_TOKENS;
use ctxkit_core::compaction::{
    plan_turn, Plan, PlanInput, Policy, ReadyView, Strategy as Compaction,
};
use ctxkit_core::memory::{NudgePolicy, NudgeState};
use ctxkit_core::model::Entry;
use ctxkit_core::tokens::{estimate_message, ModelFamily};
use ctxkit_core::{
    to_anthropic, to_openai, validate_anthropic, validate_openai, CoreError, Message, Role,
};
use ctxkit_tests::arbitrary::arb_log;
use proptest::prelude::*;

const FAMILY: ModelFamily = ModelFamily::OpenAi;

fn arb_strategy() -> impl Strategy<Value = Compaction> {
    prop_oneof![
        4 => Just(Compaction::Summarize),
        1 => (1usize..8).prop_map(|keep_last| Compaction::SlidingWindow { keep_last }),
        1 => Just(Compaction::Truncate),
    ]
}

fn arb_budget() -> impl Strategy<Value = Budget> {
    (100u64..6_000, 50u8..=100, 10u8..=50).prop_map(|(usable, trigger, low)| Budget {
        context_window: usable,
        output_reserve: 0,
        tool_schema_tokens: 0,
        safety_margin: 0,
        trigger_percent: trigger,
        low_water_percent: low.min(trigger),
        cost_trigger_tokens: None,
        cost_low_water_tokens: None,
    })
}

/// Runs one turn the way a shell does: plan, answer a summary request extractively, plan again.
/// A budget too small for any view is `Ok(Err(..))`, for the property to judge.
#[allow(clippy::type_complexity)]
fn run_turn<'l>(
    log: &'l [Entry],
    checkpoint: Option<&Checkpoint>,
    system: &str,
    budget: Budget,
    policy: &Policy,
    state: NudgeState,
) -> Result<Result<(ReadyView<'l>, Option<Checkpoint>), CoreError>, TestCaseError> {
    let input = PlanInput {
        log,
        checkpoint,
        system_prompt: system,
        budget,
        policy,
        nudge_state: state,
        usage_anchor: None,
        todos: &[],
    };
    let plan = match plan_turn(&input) {
        Err(error @ CoreError::BudgetTooSmall { .. }) => return Ok(Err(error)),
        other => other.map_err(|e| TestCaseError::fail(e.to_string()))?,
    };
    match plan {
        Plan::Ready(ready) => {
            let made = ready.new_checkpoint.clone();
            Ok(Ok((*ready, made)))
        }
        Plan::Summarize(request) => {
            let made = answer_extractively(&request, log, &policy.extractive, FAMILY)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            let again = PlanInput {
                checkpoint: Some(&made),
                ..input
            };
            let plan = match plan_turn(&again) {
                Err(error @ CoreError::BudgetTooSmall { .. }) => return Ok(Err(error)),
                other => other.map_err(|e| TestCaseError::fail(e.to_string()))?,
            };
            match plan {
                Plan::Ready(ready) => {
                    prop_assert!(
                        ready.new_checkpoint.is_none(),
                        "a second checkpoint in one turn"
                    );
                    Ok(Ok((*ready, Some(made))))
                }
                Plan::Summarize(_) => Err(TestCaseError::fail(
                    "the second plan of a turn asked for another summary",
                )),
            }
        }
    }
}

fn assert_valid(messages: &[Message]) -> Result<(), TestCaseError> {
    if !messages.iter().any(|m| m.role != Role::System) {
        return Ok(());
    }
    let openai = validate_openai(&to_openai(messages));
    prop_assert!(openai.is_empty(), "OpenAI: {openai:?}");
    let anthropic = to_anthropic(messages).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let violations = validate_anthropic(&anthropic);
    prop_assert!(violations.is_empty(), "Anthropic: {violations:?}");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10_000))]

    #[test]
    fn one_turn_is_valid_fits_and_leaves_the_log_alone(
        log in arb_log(),
        budget in arb_budget(),
        strategy in arb_strategy(),
        system_words in 0usize..40,
        keep_last in 0usize..8,
    ) {
        let entries = Entry::number(log, 1, FAMILY);
        let before = entries.clone();
        let system = "You are a careful agent. ".repeat(system_words);
        let policy = Policy { family: FAMILY, strategy, keep_last_messages: keep_last, max_summary_tokens: 400, nudges: NudgePolicy { memory_every_turns: 1, ..NudgePolicy::default() }, ..Policy::default() };
        let turn = run_turn(&entries, None, &system, budget, &policy, NudgeState::default())?;
        prop_assert_eq!(&entries, &before, "planning changed the log");
        let system_tokens = if system.is_empty() { 0 } else { estimate_message(&Message::text(Role::System, system.clone()), FAMILY) };
        // The smallest conversation: a cut summary message and the cut last unit.
        let smallest_fits = system_tokens + 4 * MIN_MESSAGE_TOKENS <= budget.trigger();
        let ready = match turn {
            Ok((ready, _)) => ready,
            Err(error) => {
                // Refused only when no view could fit (or the log holds no user message with
                // text, whose smallest view this measure does not know), naming the numbers.
                let has_user_text = entries.iter().any(|e| e.message.role == Role::User && !e.message.content.is_blank());
                prop_assert!(!smallest_fits || !has_user_text, "refused a budget that fits: {error}");
                let CoreError::BudgetTooSmall { window, system_tokens: named, .. } = error else {
                    return Err(TestCaseError::fail(error.to_string()));
                };
                prop_assert_eq!((window, named), (budget.context_window, system_tokens));
                return Ok(());
            }
        };

        let messages = ready.view.to_messages();
        assert_valid(&messages)?;
        // Never a view without a message from a log that has some.
        let conversation = entries.iter().any(|e| e.message.role != Role::System);
        prop_assert!(!conversation || !messages.is_empty(), "an empty view");

        // Independent accounting: every message re-estimated from scratch.
        let total: u64 = messages.iter().map(|m| estimate_message(m, FAMILY)).sum();
        prop_assert_eq!(total, ready.stats.total_tokens, "stats disagree with the view");
        if smallest_fits {
            prop_assert!(total <= budget.usable(), "{total} > {} ({:?})", budget.usable(), ready.stats);
            prop_assert!(ready.stats.fits);
        }

        // Same inputs, same plan.
        let again = run_turn(&entries, None, &system, budget, &policy, NudgeState::default())?;
        prop_assert_eq!(again.map(|(again, _)| again.view).ok(), Some(ready.view));
    }

    #[test]
    fn turns_compact_at_most_once_and_never_resummarize(
        log in arb_log(),
        budget in arb_budget(),
        split in 1usize..6,
    ) {
        let entries = Entry::number(log, 1, FAMILY);
        let policy = Policy { family: FAMILY, strategy: Compaction::Summarize, max_summary_tokens: 400, ..Policy::default() };
        let mut checkpoints: Vec<Checkpoint> = Vec::new();
        let mut state = NudgeState::default();
        // Grow the log in `split` steps, planning a turn at each.
        for step in 1..=split {
            let end = entries.len() * step / split;
            let Ok((ready, made)) = run_turn(&entries[..end], checkpoints.last(), "sys", budget, &policy, state)? else {
                // A budget too small for any view (checked in the property above).
                return Ok(());
            };
            assert_valid(&ready.view.to_messages())?;
            if let (Some(new), Some(last)) = (&made, checkpoints.last()) {
                prop_assert!(new.through_seq > last.through_seq, "a checkpoint must move forward");
            }
            checkpoints.extend(made);
            state = ready.next_nudge_state;
        }
    }
}
