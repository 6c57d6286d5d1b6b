//! Planning a turn on logs of 1k, 10k and 100k messages shaped like the corpus's Claude Code
//! session, in the steady state of a running session (a checkpoint covers all but the newest
//! messages), plus the turn that asks for a summary. Planning must cost in proportion to the
//! view, not the log.
//!
//! `cargo bench -p ctxkit-tests --bench plan`

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use ctxkit_core::compaction::Budget;
use ctxkit_core::compaction::{plan_turn, Plan, PlanInput, Policy};
use ctxkit_core::memory::NudgeState;
use ctxkit_core::tokens::ModelFamily;
use ctxkit_tests::corpus_log::{repeated_log, session_messages, steady_checkpoint};

const FAMILY: ModelFamily = ModelFamily::Claude;
const SYSTEM: &str =
    "You are a coding agent working in /home/USER/spotter.\nCurrent date: 2026-02-11";

fn planning(c: &mut Criterion) {
    let messages = session_messages();
    assert!(!messages.is_empty(), "the corpus session is missing");
    let budget = Budget {
        context_window: 200_000,
        tool_schema_tokens: 26_450,
        ..Budget::default()
    };
    let policy = Policy {
        family: FAMILY,
        ..Policy::default()
    };
    let mut group = c.benchmark_group("plan_turn");
    for length in [1_000usize, 10_000, 100_000] {
        let log = repeated_log(&messages, length, FAMILY);
        let checkpoint = steady_checkpoint(&log, &budget, FAMILY);
        let state = NudgeState {
            turn: 7,
            last_seq: log.len().checked_sub(3).map(|i| log[i].seq),
            turns_without_progress: 2,
        };
        let input = PlanInput {
            log: &log,
            checkpoint: checkpoint.as_ref(),
            system_prompt: SYSTEM,
            budget,
            policy: &policy,
            nudge_state: state,
            usage_anchor: None,
            todos: &[],
        };
        assert!(
            matches!(plan_turn(&input), Ok(Plan::Ready(_))),
            "steady state must be ready"
        );
        group.bench_with_input(BenchmarkId::new("ready", length), &input, |b, input| {
            b.iter(|| plan_turn(input))
        });

        // The turn that compacts: a checkpoint far enough back that the tail is over the trigger.
        let older = checkpoint.as_ref().map(|c| {
            let mut c = c.clone();
            c.through_seq = c.through_seq.saturating_sub(400);
            c
        });
        let compacting = PlanInput {
            checkpoint: older.as_ref(),
            ..input
        };
        assert!(
            matches!(plan_turn(&compacting), Ok(Plan::Summarize(_))),
            "must ask for a summary"
        );
        group.bench_with_input(
            BenchmarkId::new("summary_request", length),
            &compacting,
            |b, input| b.iter(|| plan_turn(input)),
        );
    }
    group.finish();
}

criterion_group!(benches, planning);
criterion_main!(benches);
