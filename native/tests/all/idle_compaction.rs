//! Compaction ahead of the cache's expiry (issue 21, item 3) in the native engine, on a real
//! SQLite database, with the idle time given by a clock the test moves: too early it waits
//! (and says how long), in the margin before expiry it compacts and stores the checkpoint, so
//! the next turn starts from it and makes no compaction of its own; a small view or a policy
//! without it is skipped. The CLI runs the same for a stored session.

use crate::common::{small_window_config, turn_messages};
use ctxkit::core::compaction::{Policy, SummaryMethod};
use ctxkit::core::turn::{IdleDecision, IdleSkip};
use ctxkit::{Engine, EngineConfig};

/// An engine whose session `s` has a next view above the idle floor and below the trigger.
fn idle_session(dir: &std::path::Path, config: EngineConfig) -> Engine {
    let floor = config
        .budget
        .with_cold_cache(config.policy.idle_trigger_percent.unwrap_or(50))
        .trigger();
    let trigger = config.budget.trigger();
    let mut engine = Engine::open(dir.join("db"), dir, config).unwrap();
    engine.create_session("s").unwrap();
    for turn in 0..100 {
        engine.record("s", turn_messages(turn)).unwrap();
        let preview = engine.preview_turn("s").unwrap();
        assert!(
            preview.compacted.is_none(),
            "turn {turn} reached the trigger"
        );
        if preview.stats.total_tokens > floor {
            assert!(preview.stats.total_tokens <= trigger);
            return engine;
        }
    }
    panic!("the view never passed the floor of {floor}");
}

#[test]
fn an_idle_session_waits_then_compacts_in_the_margin_and_the_next_turn_starts_from_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = small_window_config();
    // No restore block: on this 3k window the kept tail cannot make room for one (it keeps the
    // last messages), and the test pins the view the next turn starts from at the low-water
    // mark (the restore block's own tests: restore_block.rs).
    config.policy.restore = None;
    let low_water = config.budget.low_water();
    let mut engine = idle_session(dir.path(), config);
    // The idle times are the test's clock: seconds since the session's last call.
    let ttl = 300;

    let early = engine.compact_if_idle("s", 10, ttl).unwrap();
    assert_eq!(early.decision, IdleDecision::Wait { seconds: 260 });
    assert!(early.turn.is_none());
    assert_eq!(
        engine.session_info("s").unwrap().checkpoints,
        0,
        "waiting stores nothing"
    );

    let due = engine.compact_if_idle("s", 275, ttl).unwrap();
    assert!(
        matches!(due.decision, IdleDecision::Compact { expired: false, .. }),
        "{:?}",
        due.decision
    );
    let turn = due.turn.expect("the compaction's turn");
    assert_eq!(turn.compacted, Some(SummaryMethod::Extractive));
    assert!(
        turn.stats.total_tokens < due.view_tokens,
        "{:?}",
        turn.stats
    );
    let info = engine.session_info("s").unwrap();
    assert_eq!(info.checkpoints, 1, "the checkpoint is stored");

    // The user comes back: the next turn starts from that checkpoint and compacts nothing.
    let next = engine.prepare_turn("s").unwrap();
    assert!(next.compacted.is_none());
    assert_eq!(
        next.stats.checkpoint_through,
        info.latest_checkpoint.map(|c| c.0)
    );
    assert!(
        next.stats.total_tokens <= low_water + 200,
        "{:?}",
        next.stats
    );

    // Now small: nothing to do however long it sits.
    let small = engine.compact_if_idle("s", 299, ttl).unwrap();
    assert!(
        matches!(
            small.decision,
            IdleDecision::Skip {
                reason: IdleSkip::BelowFloor { .. }
            }
        ),
        "{:?}",
        small.decision
    );
    assert_eq!(engine.session_info("s").unwrap().checkpoints, 1);
}

#[test]
fn a_policy_without_idle_compaction_never_compacts() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = small_window_config();
    let mut engine = idle_session(dir.path(), config.clone());
    config.policy = Policy {
        idle_trigger_percent: None,
        ..config.policy
    };
    let mut off = Engine::open(dir.path().join("db"), dir.path(), config).unwrap();
    let outcome = off.compact_if_idle("s", 299, 300).unwrap();
    assert_eq!(
        outcome.decision,
        IdleDecision::Skip {
            reason: IdleSkip::Off
        }
    );
    assert_eq!(engine.session_info("s").unwrap().checkpoints, 0);
    // Past the lifetime the default policy still compacts (off the critical path).
    let late = engine.compact_if_idle("s", 900, 300).unwrap();
    assert!(matches!(
        late.decision,
        IdleDecision::Compact { expired: true, .. }
    ));
    assert_eq!(engine.session_info("s").unwrap().checkpoints, 1);
}

#[test]
fn the_cli_runs_it_for_a_stored_session() {
    let dir = tempfile::tempdir().unwrap();
    let messages: Vec<_> = (0..40).flat_map(turn_messages).collect();
    let file = dir.path().join("log.json");
    std::fs::write(&file, serde_json::to_string(&messages).unwrap()).unwrap();
    let ctxkit = |args: &[&str]| {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_ctxkit"))
            .args(args)
            .current_dir(dir.path())
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        let text = String::from_utf8(output.stdout).unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{args:?}: {stderr}");
        text
    };
    ctxkit(&["append", "s", file.to_str().unwrap(), "--create"]);
    let idle = |seconds: &str| -> serde_json::Value {
        let args = [
            "compact-if-idle",
            "s",
            "--window",
            "4000",
            "--idle",
            seconds,
            "--json",
        ];
        serde_json::from_str(ctxkit(&args).trim()).unwrap()
    };
    let early = idle("100");
    assert_eq!(early["decision"]["action"], "wait", "{early}");
    assert_eq!(early["decision"]["seconds"], 170);
    let stats = |_: ()| -> serde_json::Value {
        serde_json::from_str(ctxkit(&["stats", "s", "--json"]).trim()).unwrap()
    };
    assert_eq!(stats(())["checkpoints"], 0);
    let due = idle("280");
    assert_eq!(due["decision"]["action"], "compact", "{due}");
    assert_eq!(due["compacted"], "extractive");
    assert!(due["tokens_after"].as_u64().unwrap() < due["view_tokens"].as_u64().unwrap());
    assert_eq!(stats(())["checkpoints"], 1);
    // The sentence form names what it did.
    let said = ctxkit(&["compact-if-idle", "s", "--window", "4000", "--idle", "10"]);
    assert!(said.starts_with("s: "), "{said}");
}
