//! Unit tests of `plan_turn` (core/src/compaction/plan.rs), kept in a file of their own so
//! that file stays one concept under 500 lines.

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
