//! The turn protocol's unit tests: a session compacting offline, answers used, refused and
//! stale, extraction, and failures that leave the session as it was.

use super::*;
use crate::compaction::{Budget, Checkpoint, Policy, SummaryMethod};
use crate::error::CoreError;
use crate::model::{Message, ToolCall};
use crate::tokens::ModelFamily;

fn small_budget() -> Budget {
    Budget {
        context_window: 3_000,
        output_reserve: 0,
        tool_schema_tokens: 0,
        safety_margin: 0,
        ..Budget::default()
    }
}

fn long_session() -> Session {
    let mut session = Session::new(ModelFamily::OpenAi);
    for turn in 0..30 {
        session.append([
            Message::user(format!("step {turn}: look at src/file{turn}.rs")),
            Message::assistant(
                "",
                vec![ToolCall::new(format!("c{turn}"), "read_file", "{}")],
            ),
            Message::tool_result(format!("c{turn}"), "fn main() {}\n".repeat(20), false),
        ]);
    }
    session
}

fn small_policy() -> Policy {
    Policy {
        max_summary_tokens: 300,
        ..Policy::default()
    }
}

/// Runs a turn, answering a summary request with `answer`; returns the view's length.
fn run_turn(
    session: &mut Session,
    inputs: &TurnInputs<'_>,
    answer: Option<&str>,
) -> Result<(usize, TurnResult), CoreError> {
    let mut turn = TurnDriver::start(inputs)?;
    let length = loop {
        match turn.step(session)? {
            TurnStep::NeedExtraction(_) => turn.answer_extraction(None)?,
            TurnStep::NeedSummary(_) => turn.answer_summary(session, answer)?,
            TurnStep::Ready(view) => break view.messages.len(),
        }
    };
    let (result, _) = turn.finish(session)?;
    Ok((length, result))
}

#[test]
fn a_session_compacts_offline_and_checkpoints_move_forward() {
    let mut session = Session::new(ModelFamily::OpenAi);
    let policy = small_policy();
    let inputs = TurnInputs::new("sys", small_budget(), &policy);
    for turn in 0..40 {
        session.append([
            Message::user(format!("step {turn}: look at src/file{turn}.rs")),
            Message::assistant(
                "",
                vec![ToolCall::new(
                    format!("c{turn}"),
                    "read_file",
                    format!(r#"{{"path":"src/file{turn}.rs"}}"#),
                )],
            ),
            Message::tool_result(format!("c{turn}"), "fn main() {}\n".repeat(20), false),
        ]);
        let (messages, stats) = session.prepare_offline(&inputs).unwrap();
        assert!(stats.fits, "turn {turn}: {stats:?}");
        assert!(messages.len() > 1);
    }
    assert!(session.checkpoints.len() >= 2);
    assert!(session
        .checkpoints
        .windows(2)
        .all(|pair| pair[0].through_seq < pair[1].through_seq));
    assert_eq!(session.nudge_state.turn, 40);
    assert_eq!(session.next_seq(), 121);

    let stale = session.checkpoints[0].clone();
    let before = session.clone();
    assert!(session.add_checkpoint(stale).is_err());
    assert_eq!(session, before, "a failed call changes nothing");
}

#[test]
fn an_answer_is_used_an_unusable_one_falls_back_and_a_stale_one_is_dropped() {
    let policy = small_policy();
    let inputs = TurnInputs::new("sys", small_budget(), &policy);

    let mut session = long_session();
    let (_, result) = run_turn(&mut session, &inputs, Some("## Goal\nsteps")).unwrap();
    let summary = result.summary.unwrap();
    assert_eq!(summary.method, SummaryMethod::Llm);
    assert_eq!(session.checkpoints.len(), 1);
    assert_eq!(summary.through_seq, session.checkpoints[0].through_seq);
    // The log's Goal (the user's first request, verbatim), then the LLM's text under its own
    // heading, then what both left out.
    let summary = &session.checkpoints[0].summary;
    assert!(
        summary.starts_with("## Goal\n- step 0: look at src/file0.rs"),
        "{summary}"
    );
    assert!(
        summary.contains(&format!(
            "\n\n{}\nsteps",
            crate::compaction::MODEL_GOAL_HEADING
        )),
        "{summary}"
    );
    // The Goal holds the requests, so the pinned facts do not repeat them.
    assert!(!summary.contains("- request: step 0:"), "{summary}");
    assert_eq!(session.nudge_state.turn, 1);

    // A request answered after a checkpoint covering it reached the session is stale.
    let mut stale = long_session();
    let mut turn = TurnDriver::start(&inputs).unwrap();
    let TurnStep::NeedSummary(request) = turn.step(&stale).unwrap() else {
        panic!("the session is over the trigger");
    };
    assert_eq!(request.max_output_tokens, 600);
    run_turn(&mut stale, &inputs, Some("## Goal\nfirst")).unwrap();
    let before = stale.clone();
    turn.answer_summary(&stale, Some("## Goal\nagain")).unwrap();
    assert!(matches!(turn.step(&stale).unwrap(), TurnStep::Ready(_)));
    let (result, changes) = turn.finish(&mut stale).unwrap();
    assert_eq!(result.summary, None);
    assert_eq!(changes.checkpoint, None);
    assert_eq!(stale.checkpoints, before.checkpoints);

    let mut fallback = long_session();
    let (_, result) = run_turn(&mut fallback, &inputs, Some("")).unwrap();
    let summary = result.summary.unwrap();
    assert_eq!(summary.method, SummaryMethod::Extractive);
    assert_eq!(
        summary.fallback_reason.map(|e| e.to_string()).as_deref(),
        Some("summary: the summarizer returned an empty summary")
    );
}

#[test]
fn extraction_comes_first_when_asked_for_and_its_drafts_are_changes() {
    let policy = small_policy();
    let inputs = TurnInputs {
        extract_memories: true,
        ..TurnInputs::new("sys", small_budget(), &policy)
    };
    let mut session = long_session();
    let mut turn = TurnDriver::start(&inputs).unwrap();
    let TurnStep::NeedExtraction(request) = turn.step(&session).unwrap() else {
        panic!("extraction comes before the summary");
    };
    assert!(request.prompt.contains("step 0: look at src/file0.rs"));
    assert_eq!(
        request.max_output_tokens,
        crate::memory::EXTRACTION_OUTPUT_TOKENS
    );
    let answer = r#"[{"title":"Layout","content":"Sources live in src/.","category":"convention","importance":6}]"#;
    turn.answer_extraction(Some(answer)).unwrap();
    assert!(matches!(
        turn.step(&session).unwrap(),
        TurnStep::NeedSummary(_)
    ));
    turn.answer_summary(&session, None).unwrap();
    assert!(matches!(turn.step(&session).unwrap(), TurnStep::Ready(_)));
    let (result, changes) = turn.finish(&mut session).unwrap();
    assert_eq!(changes.memories.len(), 1);
    assert_eq!(changes.memories[0].content, "Sources live in src/.");
    assert_eq!(result.extraction.unwrap().drafts.len(), 1);
    assert_eq!(
        changes.checkpoint.map(|c| c.method),
        Some(SummaryMethod::Extractive)
    );
}

#[test]
fn answers_out_of_order_and_a_changed_session_are_errors_that_change_nothing() {
    let policy = small_policy();
    let inputs = TurnInputs::new("sys", small_budget(), &policy);
    let mut session = long_session();
    let before = session.clone();
    let mut turn = TurnDriver::start(&inputs).unwrap();
    assert!(turn.answer_extraction(None).is_err());
    assert!(turn.result().is_err(), "no ready view yet");
    let TurnStep::NeedSummary(_) = turn.step(&session).unwrap() else {
        panic!("over the trigger");
    };
    turn.answer_summary(&session, None).unwrap();
    assert!(turn.answer_summary(&session, None).is_err());
    assert!(matches!(turn.step(&session).unwrap(), TurnStep::Ready(_)));
    assert_eq!(session, before, "nothing is applied before finish");

    session.append([Message::user("one more")]);
    let changed = session.clone();
    let refused = turn.finish(&mut session).map_err(|e| e.to_string());
    assert_eq!(
        refused,
        Err("turn: the session changed after its view was made; prepare the turn again".into())
    );
    assert_eq!(session, changed);
}

#[test]
fn a_turn_that_is_never_finished_leaves_the_session_as_it_was() {
    let policy = Policy::default();
    let inputs = TurnInputs::new("sys", small_budget(), &policy);
    let mut session = long_session();
    let before = session.clone();
    let mut turn = TurnDriver::start(&inputs).unwrap();
    let TurnStep::NeedSummary(_) = turn.step(&session).unwrap() else {
        panic!("over the trigger");
    };
    turn.answer_summary(&session, None).unwrap();
    assert!(matches!(turn.step(&session).unwrap(), TurnStep::Ready(_)));
    let (_, changes) = turn.result().unwrap();
    assert_eq!(
        changes.checkpoint.map(|c| c.method),
        Some(SummaryMethod::Extractive)
    );
    drop(turn);
    assert_eq!(
        session, before,
        "the extractive checkpoint was never applied"
    );
    let inputs = TurnInputs::new("sys", small_budget(), &policy);
    let (_, stats) = session.prepare_offline(&inputs).unwrap();
    assert_eq!(stats.checkpoint_method, Some(SummaryMethod::Extractive));
    assert_eq!(session.checkpoints.len(), 1);
}

#[test]
fn a_session_from_outside_is_checked() {
    let session = long_session();
    assert_eq!(Session::validated(session.clone()), Ok(session.clone()));

    let mut shuffled = session.clone();
    shuffled.entries.swap(3, 4);
    assert_eq!(
        Session::validated(shuffled).map_err(|e| e.to_string()),
        Err("entries[seq 4]: seq must increase, but 4 follows 5".to_owned())
    );

    let mut beyond = session.clone();
    beyond.checkpoints.push(Checkpoint {
        through_seq: 500,
        summary: "s".into(),
        method: SummaryMethod::Extractive,
        active_tasks: None,
        tokens: 1,
        made_at_turn: 1,
        pinned: Vec::new(),
        dropped_facts: Default::default(),
        compaction_block: None,
        restore: None,
    });
    assert_eq!(
        Session::validated(beyond).map_err(|e| e.to_string()),
        Err("checkpoints[0].through_seq: covers seq 500 but the log ends at 90".to_owned())
    );
}

#[test]
fn an_expired_cache_compacts_from_the_lower_cold_trigger() {
    // A log that grows one file read per turn: warm, it compacts at the trigger; told the cache
    // has expired, from the cold trigger below it, and a policy without one ignores the word.
    let budget = Budget {
        context_window: 20_000,
        ..small_budget()
    };
    let (trigger, low) = (budget.trigger(), budget.low_water());
    let cold = budget.with_cold_cache(25);
    assert_eq!(cold.low_water(), low);
    assert_eq!(cold.trigger(), low + (trigger - low) / 4);
    let first_compaction = |cold_percent: Option<u8>, expired: bool| {
        let policy = Policy {
            cold_trigger_percent: cold_percent,
            ..small_policy()
        };
        let inputs = TurnInputs {
            cache_expired: expired,
            ..TurnInputs::new("sys", budget, &policy)
        };
        let mut session = Session::new(ModelFamily::OpenAi);
        for turn in 0..200 {
            session.append([
                Message::user(format!("step {turn}: look at src/file{turn}.rs")),
                Message::assistant("fn main() {}\n".repeat(20), vec![]),
            ]);
            let before = session.latest_checkpoint().map(|c| c.through_seq);
            let (_, result) = run_turn(&mut session, &inputs, None).unwrap();
            if result.summary.is_some() {
                assert_ne!(session.latest_checkpoint().map(|c| c.through_seq), before);
                return Some((turn, result.stats.total_tokens));
            }
        }
        None
    };
    let (warm_turn, _) = first_compaction(Some(25), false).unwrap();
    let (cold_turn, _) = first_compaction(Some(25), true).unwrap();
    let (ignored_turn, _) = first_compaction(None, true).unwrap();
    assert!(cold_turn < warm_turn, "cold {cold_turn}, warm {warm_turn}");
    assert_eq!(ignored_turn, warm_turn);
}

#[test]
fn the_cache_has_expired_only_past_its_lifetime() {
    assert!(!cache_expired(None, 10_000, 300));
    assert!(!cache_expired(Some(9_700), 10_000, 300));
    assert!(cache_expired(Some(9_699), 10_000, 300));
    assert!(!cache_expired(Some(i64::MIN), i64::MAX, i64::MAX));
}

#[test]
fn an_implausible_usage_is_refused_said_in_the_stats_and_never_calibrates() {
    // The issue's case: a session estimated far over its window reported as 10 tokens.
    let policy = Policy {
        strategy: crate::compaction::Strategy::Off,
        ..small_policy()
    };
    let inputs = TurnInputs::new("sys", small_budget(), &policy);
    let mut session = long_session();
    let (_, first) = run_turn(&mut session, &inputs, None).unwrap();
    assert!(
        !first.stats.fits,
        "the view is over the budget: {:?}",
        first.stats
    );
    let refused = session.record_usage(&first.stats, 10).unwrap_err();
    assert_eq!(refused.input_tokens, 10);
    assert_eq!(session.usage_anchor, None);
    let (_, next) = run_turn(&mut session, &inputs, None).unwrap();
    assert_eq!(next.stats.calibrated_tokens, None);
    assert!(
        !next.stats.fits,
        "a refused usage does not make the view fit"
    );
    assert_eq!(next.stats.refused_usage, Some(refused));
    // A plausible count is taken and clears the refusal.
    let real = next.stats.total_tokens + next.stats.total_tokens / 10;
    session.record_usage(&next.stats, real).unwrap();
    let (_, calibrated) = run_turn(&mut session, &inputs, None).unwrap();
    let anchor = session.usage_anchor.unwrap();
    assert_eq!(anchor.input_tokens, real);
    assert_eq!(
        calibrated.stats.calibrated_tokens,
        crate::tokens::calibrated_tokens(
            &anchor,
            calibrated.stats.checkpoint_through,
            calibrated.stats.last_seq,
            calibrated.stats.total_tokens
        )
    );
    assert!(calibrated.stats.calibrated_tokens.is_some());
    assert_eq!(calibrated.stats.refused_usage, None);
}

#[test]
fn a_turn_that_compacts_plans_its_view_with_the_refreshed_prompt() {
    let policy = small_policy();
    let inputs = TurnInputs {
        refreshed_system_prompt: Some("fresh"),
        ..TurnInputs::new("frozen", small_budget(), &policy)
    };
    let mut session = long_session();
    let mut turn = TurnDriver::start(&inputs).unwrap();
    let TurnStep::NeedSummary(_) = turn.step(&session).unwrap() else {
        panic!("the long session compacts");
    };
    turn.answer_summary(&session, None).unwrap();
    let TurnStep::Ready(view) = turn.step(&session).unwrap() else {
        panic!("ready after the summary");
    };
    assert_eq!(view.to_messages()[0].text_content(), "fresh");
    let (result, _) = turn.finish(&mut session).unwrap();
    assert!(result.prompt_refreshed);
    // The next turn, without a compaction, keeps the prompt frozen at the checkpoint.
    let next_inputs = TurnInputs {
        refreshed_system_prompt: Some("fresher"),
        ..TurnInputs::new("fresh", small_budget(), &policy)
    };
    let mut next = TurnDriver::start(&next_inputs).unwrap();
    let TurnStep::Ready(view) = next.step(&session).unwrap() else {
        panic!("no second compaction");
    };
    assert_eq!(view.to_messages()[0].text_content(), "fresh");
    assert!(!next.finish(&mut session).unwrap().0.prompt_refreshed);
}
