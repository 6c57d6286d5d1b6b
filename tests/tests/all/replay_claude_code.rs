//! Replays the corpus's Claude Code session turn by turn through `plan_turn`, with a 200k
//! window and the extractive summarizer, as an agent loop would: before each of the session's
//! API calls, plan the view of everything logged so far.
//!
//! Checks (issue: the context pipeline): compactions happen; every view is valid for both
//! providers; summary requests and checkpoints match one to one (no re-summarizing on turns
//! that need no new compaction); at least 90% of the distinct file paths in the covered tool
//! calls' arguments appear in the checkpoints; and on at least 90% of turns the previous view,
//! less its nudges, is a prefix of the new one (the provider's prompt cache keeps hitting).

use std::collections::BTreeSet;

use ctxkit_core::compaction::answer_extractively;
use ctxkit_core::compaction::Budget;
use ctxkit_core::compaction::Checkpoint;
use ctxkit_core::compaction::{plan_turn, Plan, PlanInput, Policy};
use ctxkit_core::import::import_claude_code;
use ctxkit_core::memory::NudgeState;
use ctxkit_core::model::Entry;
use ctxkit_core::tokens::ModelFamily;
use ctxkit_core::{to_anthropic, to_openai, validate_anthropic, validate_openai, Message};

const SESSION: &str = "claude-code_marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl";

/// The keys whose values the test counts as file paths (Claude Code's Read/Edit/Write/Glob/
/// Grep/NotebookEdit inputs), independent of the summarizer's own extraction.
fn paths_in(arguments: &str) -> Vec<String> {
    let Ok(serde_json::Value::Object(object)) = serde_json::from_str(arguments) else {
        return Vec::new();
    };
    ["file_path", "path", "notebook_path"]
        .iter()
        .filter_map(|key| object.get(*key).and_then(|v| v.as_str()))
        .map(str::to_owned)
        .collect()
}

#[test]
fn claude_code_session_replays_with_stable_prefixes_and_kept_paths() {
    let text = std::fs::read_to_string(ctxkit_tests::corpus_dir().join(SESSION)).unwrap();
    let session = import_claude_code(&text).unwrap();
    let family = ModelFamily::Claude;
    let entries = Entry::number(session.messages.clone(), 1, family);
    // Claude Code's first call already sent 26,450 tokens: its system prompt and tool schemas.
    let first_prompt = session
        .api_calls
        .first()
        .and_then(|call| call.prompt_tokens)
        .unwrap_or(26_450);
    let system_prompt =
        "You are a coding agent working in /home/USER/spotter. Today's date: 2026-02-11.";
    let budget = Budget {
        context_window: 200_000,
        tool_schema_tokens: first_prompt,
        ..Budget::default()
    };
    let policy = Policy {
        family,
        ..Policy::default()
    };

    let mut checkpoints: Vec<Checkpoint> = Vec::new();
    let mut nudge_state = NudgeState::default();
    let mut requests = 0;
    let mut previous: Option<(String, Vec<Message>)> = None;
    let (mut turns, mut prefix_turns) = (0, 0);
    for call in &session.api_calls {
        let log = &entries[..call.message_index];
        let mut answered_this_turn = 0;
        let ready = loop {
            let input = PlanInput {
                log,
                checkpoint: checkpoints.last(),
                system_prompt,
                budget,
                policy: &policy,
                nudge_state,
                usage_anchor: None,
                todos: &[],
            };
            match plan_turn(&input).unwrap() {
                Plan::Ready(ready) => break ready,
                Plan::Summarize(request) => {
                    assert_eq!(
                        answered_this_turn, 0,
                        "a second summary request in one turn"
                    );
                    answered_this_turn += 1;
                    requests += 1;
                    checkpoints.push(
                        answer_extractively(&request, log, &policy.extractive, family).unwrap(),
                    );
                }
            }
        };
        if let Some(checkpoint) = ready.new_checkpoint.clone() {
            checkpoints.push(checkpoint);
        }
        nudge_state = ready.next_nudge_state;
        let messages = ready.view.to_messages();
        let openai = validate_openai(&to_openai(&messages));
        assert!(openai.is_empty(), "turn {turns}: {openai:?}");
        let anthropic = validate_anthropic(&to_anthropic(&messages).unwrap());
        assert!(anthropic.is_empty(), "turn {turns}: {anthropic:?}");
        assert!(ready.stats.fits, "turn {turns}: {:?}", ready.stats);

        let without_nudges: Vec<Message> =
            messages[..messages.len() - ready.stats.nudges.len()].to_vec();
        if let Some((system, before)) = &previous {
            turns += 1;
            if *system == ready.view.system && without_nudges.starts_with(before) {
                prefix_turns += 1;
            }
        }
        previous = Some((ready.view.system.clone(), without_nudges));
    }

    let llm_or_extractive = checkpoints
        .iter()
        .filter(|c| c.method != ctxkit_core::compaction::SummaryMethod::Truncation)
        .count();
    assert!(llm_or_extractive >= 1, "no compaction happened");
    assert_eq!(
        requests, llm_or_extractive,
        "every summary request made exactly one checkpoint"
    );

    let covered_through = checkpoints.last().map_or(0, |c| c.through_seq);
    let paths: BTreeSet<String> = entries
        .iter()
        .filter(|entry| entry.seq <= covered_through)
        .flat_map(|entry| {
            entry
                .message
                .tool_calls
                .iter()
                .flat_map(|call| paths_in(&call.arguments))
        })
        .collect();
    // A path written relative to the working directory a summary states counts as kept.
    let kept = paths
        .iter()
        .filter(|path| {
            checkpoints
                .iter()
                .any(|c| ctxkit_core::compaction::pinned::summary_holds(&c.summary, path))
        })
        .count();
    let path_share = kept as f64 / paths.len().max(1) as f64;
    let prefix_share = prefix_turns as f64 / turns.max(1) as f64;
    println!(
        "replay: {} turns, {} checkpoints ({} summary requests), paths kept {kept}/{} = {:.1}%, prefix-stable turns {prefix_turns}/{turns} = {:.1}%",
        session.api_calls.len(),
        checkpoints.len(),
        requests,
        paths.len(),
        path_share * 100.0,
        prefix_share * 100.0
    );
    assert!(!paths.is_empty());
    assert!(
        path_share >= 0.9,
        "only {kept} of {} paths kept",
        paths.len()
    );
    assert!(
        prefix_share >= 0.9,
        "only {prefix_turns} of {turns} turns kept the prefix"
    );
}
