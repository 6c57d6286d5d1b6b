//! Snapshots of every pipeline transform on a slice of the corpus's Claude Code session
//! (tests/fixtures/pipeline/claude_code_slice.json, made by the `cut_pipeline_fixture`
//! example): the view before and after compaction, the summary request, the extractive
//! summary, a nudged view, truncation, the sliding window and cleared tool results.
//!
//! Views are rendered compactly (role, seq, tokens, the first line of text, calls) so a
//! reviewer can read them; the stats are shown whole.

use ctxkit_core::compaction::Budget;
use ctxkit_core::compaction::Checkpoint;
use ctxkit_core::compaction::ClearPolicy;
use ctxkit_core::compaction::{answer_extractively, SummaryRequest};
use ctxkit_core::compaction::{plan_turn, Plan, PlanInput, Policy, ReadyView, Strategy};
use ctxkit_core::compaction::{TodoItem, TodoStatus};
use ctxkit_core::memory::{NudgePolicy, NudgeState};
use ctxkit_core::model::Entry;
use ctxkit_core::text::head_bytes;
use ctxkit_core::tokens::{estimate_message, ModelFamily};
use ctxkit_core::Message;

const FAMILY: ModelFamily = ModelFamily::Claude;
const SYSTEM: &str =
    "You are a coding agent working in /home/USER/spotter.\nCurrent date: 2026-02-11";

fn log() -> Vec<Entry> {
    let text = std::fs::read_to_string(
        ctxkit_tests::fixtures_dir().join("pipeline/claude_code_slice.json"),
    )
    .unwrap();
    let messages: Vec<Message> = serde_json::from_str(&text).unwrap();
    Entry::number(messages, 1, FAMILY)
}

fn budget(window: u64) -> Budget {
    Budget {
        context_window: window,
        output_reserve: 1_000,
        tool_schema_tokens: 0,
        safety_margin: 0,
        ..Budget::default()
    }
}

fn quiet() -> NudgePolicy {
    NudgePolicy {
        memory_every_turns: 0,
        stall_after_turns: 0,
        ..NudgePolicy::default()
    }
}

fn plan<'l>(
    log: &'l [Entry],
    checkpoint: Option<&Checkpoint>,
    budget: Budget,
    policy: &Policy,
    state: NudgeState,
) -> Plan<'l> {
    let todos = [
        TodoItem {
            content: "Extract shared transcript presentation".into(),
            status: TodoStatus::InProgress,
        },
        TodoItem {
            content: "Add debug parity for subagents".into(),
            status: TodoStatus::Pending,
        },
    ];
    let input = PlanInput {
        log,
        checkpoint,
        system_prompt: SYSTEM,
        budget,
        policy,
        nudge_state: state,
        usage_anchor: None,
        todos: &todos,
    };
    plan_turn(&input).unwrap()
}

fn ready(plan: Plan<'_>) -> ReadyView<'_> {
    match plan {
        Plan::Ready(ready) => *ready,
        Plan::Summarize(request) => panic!(
            "expected a view, got a summary request through {}",
            request.through_seq
        ),
    }
}

fn request(plan: Plan<'_>) -> SummaryRequest {
    match plan {
        Plan::Summarize(request) => *request,
        Plan::Ready(ready) => panic!("expected a summary request, got a view: {:?}", ready.stats),
    }
}

/// One line per message: role, seq (`-` for messages the pipeline made), tokens (`*`: made or
/// changed this turn), first line.
fn render(ready: &ReadyView<'_>) -> String {
    let mut out = format!("system: {}\n", ready.view.system.replace('\n', " / "));
    for item in &ready.view.messages {
        let seq = item.seq.map_or("-".to_owned(), |seq| seq.to_string());
        let text = item.text_content();
        let first = text
            .lines()
            .find(|line| !line.trim().is_empty())
            .unwrap_or("");
        let calls: Vec<String> = item
            .tool_calls
            .iter()
            .map(|c| format!("{}#{}", c.name, c.id))
            .collect();
        let id = item
            .tool_call_id
            .as_deref()
            .map(|id| format!(" ←{id}"))
            .unwrap_or_default();
        let calls = if calls.is_empty() {
            String::new()
        } else {
            format!(" calls [{}]", calls.join(", "))
        };
        let error = if item.is_error { " (error)" } else { "" };
        out.push_str(&format!(
            "{:<9} {:>3} {:>5}t{id}{error}{calls} | {}\n",
            item.role.as_str(),
            seq,
            // `*`: made or changed this turn, estimated now (the log's cached estimate is not
            // used for it).
            item.tokens.map_or_else(
                || format!("{}*", estimate_message(item, FAMILY)),
                |t| t.to_string()
            ),
            head_bytes(first.trim(), 90)
        ));
    }
    out.push_str(&format!(
        "\n{}",
        serde_json::to_string_pretty(&ready.stats).unwrap()
    ));
    out
}

#[test]
fn view_before_compaction_is_the_log_as_it_is() {
    let log = log();
    let policy = Policy {
        family: FAMILY,
        nudges: quiet(),
        ..Policy::default()
    };
    let view = ready(plan(
        &log,
        None,
        budget(200_000),
        &policy,
        NudgeState::default(),
    ));
    insta::assert_snapshot!("view_before_compaction", render(&view));
}

#[test]
fn compaction_requests_a_summary_then_the_view_starts_from_the_checkpoint() {
    let log = log();
    let policy = Policy {
        family: FAMILY,
        nudges: quiet(),
        max_summary_tokens: 2_000,
        ..Policy::default()
    };
    let budget = budget(9_000);
    let request = request(plan(&log, None, budget, &policy, NudgeState::default()));
    insta::assert_snapshot!(
        "summary_request_prompt",
        format!("system: {}\n\n{}", request.system, request.prompt)
    );

    let checkpoint = answer_extractively(&request, &log, &policy.extractive, FAMILY).unwrap();
    insta::assert_snapshot!("extractive_summary", checkpoint.summary);

    let view = ready(plan(
        &log,
        Some(&checkpoint),
        budget,
        &policy,
        NudgeState::default(),
    ));
    insta::assert_snapshot!("view_after_compaction", render(&view));

    // The next compaction updates the previous summary instead of summarizing it.
    let longer_request = request_after(&log, &checkpoint, &policy);
    assert_eq!(
        longer_request.previous_summary.as_deref(),
        Some(checkpoint.summary.as_str())
    );
    assert!(longer_request
        .prompt
        .contains("Update it with the new messages below"));
}

fn request_after(log: &[Entry], checkpoint: &Checkpoint, policy: &Policy) -> SummaryRequest {
    let state = NudgeState {
        turn: 1,
        ..NudgeState::default()
    };
    request(plan(log, Some(checkpoint), budget(4_000), policy, state))
}

#[test]
fn nudges_go_after_the_tool_results_and_only_into_the_view() {
    let log = log();
    let policy = Policy {
        family: FAMILY,
        nudges: NudgePolicy {
            memory_every_turns: 1,
            stall_after_turns: 2,
            ..NudgePolicy::default()
        },
        ..Policy::default()
    };
    // Two earlier turns saw the first ten messages, acting without progress tools, and the
    // new messages (11..21) only read files: the stall nudge fires with the memory nudge.
    let state = NudgeState {
        turn: 2,
        last_seq: Some(10),
        turns_without_progress: 1,
    };
    let view = ready(plan(&log[..21], None, budget(200_000), &policy, state));
    insta::assert_snapshot!("nudged_view", render(&view));
}

#[test]
fn truncation_drops_old_units_into_a_checkpoint_and_cuts_what_is_left() {
    let log = log();
    let policy = Policy {
        family: FAMILY,
        strategy: Strategy::Truncate,
        nudges: quiet(),
        ..Policy::default()
    };
    let view = ready(plan(
        &log,
        None,
        budget(6_000),
        &policy,
        NudgeState::default(),
    ));
    let checkpoint = view
        .new_checkpoint
        .clone()
        .expect("a truncation checkpoint");
    insta::assert_snapshot!(
        "truncation_view",
        format!(
            "{}\n\ncheckpoint summary:\n{}",
            render(&view),
            checkpoint.summary
        )
    );
}

#[test]
fn sliding_window_keeps_the_last_messages_pair_safe() {
    let log = log();
    let policy = Policy {
        family: FAMILY,
        strategy: Strategy::SlidingWindow { keep_last: 9 },
        nudges: quiet(),
        ..Policy::default()
    };
    let view = ready(plan(
        &log,
        None,
        budget(9_000),
        &policy,
        NudgeState::default(),
    ));
    insta::assert_snapshot!("sliding_window_view", render(&view));
}

#[test]
fn clearing_replaces_old_tool_results_in_batches() {
    let log = log();
    let clear = ClearPolicy {
        keep_last_exchanges: 3,
        batch_exchanges: 4,
        exclude_tools: vec!["Task".into()],
        min_bytes: 200,
    };
    let policy = Policy {
        family: FAMILY,
        clear_tool_results: Some(clear),
        nudges: quiet(),
        ..Policy::default()
    };
    let view = ready(plan(
        &log,
        None,
        budget(9_000),
        &policy,
        NudgeState::default(),
    ));
    insta::assert_snapshot!("cleared_view", render(&view));
}
