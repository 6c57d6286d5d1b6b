//! The `ctxkit-idle` strategy replayed over sessions with recorded pauses: the idle timer
//! compacts in a pause that outlasts the margin before the cache's expiry when the view is
//! big, bills that summary call, and changes nothing in a short pause.

use super::call_times::{call_gaps, expired_calls};
use super::compare::{bill_replay, strategy_cost, CostSetup};
use super::prices::pricing_for;
use super::report::StrategyCost;
use super::strategies::{replay_strategy, Replay, ReplaySetup, Strategy};
use ctxkit_core::model::Message;
use ctxkit_core::tokens::ModelFamily;
use ctxkit_core::ToolCall;

/// A session of `turns` user requests, each answered by a file read and a reply; every reply
/// ends a user turn.
fn transcript(turns: usize) -> Vec<Message> {
    let mut out = Vec::new();
    for turn in 0..turns {
        out.push(Message::user(format!(
            "Request {turn}: look at `src/module_{turn}.rs` and explain it"
        )));
        let id = format!("c{turn}");
        out.push(Message::assistant(
            "",
            vec![ToolCall::new(
                &id,
                "read_file",
                format!(r#"{{"file_path":"src/module_{turn}.rs"}}"#),
            )],
        ));
        let body: String = (0..250)
            .map(|line| format!("fn item_{turn}_{line}() -> u32 {{ {line} }}\n"))
            .collect();
        out.push(Message::tool_result(&id, body, false));
        out.push(Message::assistant(
            format!("Module {turn} defines 250 items."),
            vec![],
        ));
    }
    out
}

/// Two calls per turn, a minute apart; the call that answers turn `pause_at`'s request comes
/// `pause` seconds after the one before.
fn setup(turns: usize, pause_at: usize, pause: i64) -> CostSetup {
    let mut now = 0;
    let times: Vec<Option<i64>> = (0..turns * 2)
        .map(|call| {
            now += if call == pause_at * 2 { pause } else { 60 };
            Some(now)
        })
        .collect();
    let pricing = pricing_for("claude-sonnet-4-5").unwrap();
    CostSetup {
        replay: ReplaySetup {
            window: 40_000,
            family: ModelFamily::Claude,
            reserve_tokens: 5_000,
            system: "You are a coding agent.".into(),
            cache_expired: expired_calls(&times, pricing.cache.ttl_seconds),
            call_gaps: call_gaps(&times),
            cache_ttl_seconds: 300,
            marks: Default::default(),
            working_directory: None,
        },
        pricing,
        call_times: times,
        warm_reserve_tokens: 0,
    }
}

/// The billed units of call `index` (its summary call included): the replay billed through
/// it, less the replay billed through the call before.
fn call_units(replay: &Replay, index: usize, setup: &CostSetup) -> f64 {
    let through = |end: usize| {
        let calls = replay.calls.get(..end).unwrap_or_default().to_vec();
        let part = Replay {
            log: replay.log.clone(),
            calls,
        };
        bill_replay("part", &part, setup).input_cost_units
    };
    through(index + 1) - through(index)
}

/// The row of `strategy`, named `ctxkit` so rows compare whole.
fn as_ctxkit(strategy: Strategy, log: &[Message], setup: &CostSetup) -> StrategyCost {
    StrategyCost {
        strategy: "ctxkit".into(),
        ..strategy_cost(strategy, log, setup)
    }
}

#[test]
fn a_pause_past_the_lifetime_with_a_big_view_is_compacted_in_the_pause() {
    let (log, setup) = (transcript(30), setup(30, 10, 3_600));
    let at = 20; // the call after the pause
    let idle = replay_strategy(Strategy::CtxkitIdle, &log, &setup.replay);
    let call = &idle.calls[at];
    assert!(call.idle_compaction && call.compacted, "{call:?}");
    assert_eq!(idle.calls.iter().filter(|c| c.idle_compaction).count(), 1);
    // The summary call ran before the lifetime ended: the previous call's prefix is read.
    let summary = call.summary_call.expect("the idle summary call is billed");
    assert!(summary.cached_input > 10 * summary.new_input, "{summary:?}");
    assert!(summary.output > 0);
    let row = strategy_cost(Strategy::CtxkitIdle, &log, &setup);
    assert_eq!(row.idle_compactions, 1, "{row:?}");
    // The next call writes the small prefix: with its summary call it costs less than the
    // same call of the policy that waits for the trigger (the whole prefix written again).
    let units = |strategy| {
        let replay = replay_strategy(strategy, &log, &setup.replay);
        call_units(&replay, at, &setup)
    };
    let (idle_units, warm_only) = (
        units(Strategy::CtxkitIdle),
        units(Strategy::CtxkitNoColdTrigger),
    );
    assert!(idle_units < warm_only, "{idle_units} {warm_only}");
    // The default's cold trigger compacts at that call instead (the cache has expired): the
    // same rewrite, its extractive summary made without a call. The idle call's own request
    // costs no more; the idle row pays its summary call (read 0.1, new input 1) on top.
    let read = setup.pricing.prices.units().1;
    let summary_units = summary.new_input as f64 + summary.cached_input as f64 * read;
    let cold = units(Strategy::Ctxkit);
    assert!(
        idle_units - summary_units <= cold + 1.0,
        "{idle_units} {summary_units} {cold}"
    );
    assert!(idle_units > cold, "{idle_units} {cold}");
}

#[test]
fn a_short_pause_or_a_small_view_changes_nothing() {
    let log = transcript(30);
    // Four and a half minutes: the timer (due 30 seconds before the five-minute lifetime ends)
    // has not fired.
    let short = setup(30, 10, 269);
    assert_eq!(
        as_ctxkit(Strategy::CtxkitIdle, &log, &short),
        as_ctxkit(Strategy::Ctxkit, &log, &short)
    );
    // An hour, but early in the session: the view is below the idle floor.
    let early = setup(30, 1, 3_600);
    let row = as_ctxkit(Strategy::CtxkitIdle, &log, &early);
    assert_eq!(row.idle_compactions, 0);
    assert_eq!(row, as_ctxkit(Strategy::Ctxkit, &log, &early));
}
