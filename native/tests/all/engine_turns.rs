//! The engine's turn protocol on a real database: the clock and AGENTS.md are read every
//! turn, memory reaches the prompt, the system prompt is never stored, real usage calibrates
//! the next turns, a preview stores nothing, two engines on one session see each other's
//! messages, and a turn long after the one before (the provider's cache expired) compacts from
//! the policy's lower cold trigger.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use crate::common;

use ctxkit::clock::Clock;
use ctxkit::core::{Message, Role};
use ctxkit::store::NewMemory;
use ctxkit::{Engine, EngineConfig, Error, Event};

/// A clock the test moves.
#[derive(Debug, Clone, Default)]
struct TestClock(Arc<AtomicI64>);

impl Clock for TestClock {
    fn now_unix(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

const DAY: i64 = 86_400;
const FEB_11_2026: i64 = 1_770_768_000;

#[test]
fn every_turn_reads_the_clock_agents_md_and_memory_and_stores_no_prompt() {
    let dir = tempfile::tempdir().unwrap();
    let clock = TestClock::default();
    clock.0.store(FEB_11_2026, Ordering::SeqCst);
    let mut engine = Engine::open(dir.path().join("db"), dir.path(), EngineConfig::default())
        .unwrap()
        .with_clock(clock.clone());
    engine.create_session("s").unwrap();
    engine.record("s", vec![Message::user("hello")]).unwrap();

    let first = engine.prepare_turn("s").unwrap();
    assert!(first.system_prompt().contains("Current date: 2026-02-11"));
    assert!(!first.system_prompt().contains("AGENTS.md"));

    clock.0.store(FEB_11_2026 + DAY, Ordering::SeqCst);
    std::fs::write(dir.path().join("AGENTS.md"), "Always run `make check`.").unwrap();
    engine
        .add_memory(&NewMemory {
            title: "Package manager".into(),
            content: "Use pnpm.".into(),
            ..NewMemory::default()
        })
        .unwrap();
    // Without a compaction the prompt stays frozen (native/tests/all/frozen_prefix.rs); a refresh
    // the caller asks for reads everything anew.
    let frozen = engine.prepare_turn("s").unwrap();
    assert_eq!(frozen.system_prompt(), first.system_prompt());
    engine.refresh_prompt("s");
    let second = engine.prepare_turn("s").unwrap();
    let prompt = second.system_prompt();
    assert!(prompt.contains("Current date: 2026-02-12"), "{prompt}");
    assert!(prompt.contains("Always run `make check`."), "{prompt}");
    assert!(prompt.contains("## Long-Term Memory"), "{prompt}");
    assert!(prompt.contains("Use pnpm."), "{prompt}");
    assert!(
        prompt.contains("## Large Tool Outputs"),
        "offload guidance: {prompt}"
    );

    let log = engine.export_session("s").unwrap();
    assert!(log.entries.iter().all(|e| e.message.role != Role::System));
    assert_eq!(log.nudge_state.turn, 3);
    assert!(matches!(
        engine.prepare_turn("missing").unwrap_err(),
        Error::NoSuchSession(name) if name == "missing"
    ));
}

#[test]
fn real_usage_calibrates_the_next_turn_and_previews_store_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut engine = Engine::open(dir.path().join("db"), dir.path(), EngineConfig::default())
        .unwrap()
        .with_clock(ctxkit::clock::FixedClock(FEB_11_2026));
    engine.create_session("s").unwrap();
    engine
        .record("s", vec![Message::user("first question")])
        .unwrap();
    let turn = engine.prepare_turn("s").unwrap();
    assert_eq!(turn.stats.calibrated_tokens, None);
    let real = turn.stats.total_tokens + 500;
    let reported = engine.record_usage("s", &turn.stats, real).unwrap();
    assert_eq!(
        reported,
        Event::TokensReported {
            session: "s".into(),
            input_tokens: real,
            estimated_tokens: turn.stats.total_tokens,
        }
    );
    engine
        .record(
            "s",
            vec![
                Message::assistant("an answer", vec![]),
                Message::user("next"),
            ],
        )
        .unwrap();
    let next = engine.prepare_turn("s").unwrap();
    let appended = next.stats.total_tokens - turn.stats.total_tokens;
    assert_eq!(next.stats.calibrated_tokens, Some(real + appended));
    // A fresh engine (a restart) calibrates the same way: the anchor is stored.
    let before = engine.export_session("s").unwrap();
    drop(engine);
    let mut reopened = Engine::open(dir.path().join("db"), dir.path(), EngineConfig::default())
        .unwrap()
        .with_clock(ctxkit::clock::FixedClock(FEB_11_2026));
    let preview = reopened.preview_turn("s").unwrap();
    assert_eq!(preview.stats.calibrated_tokens, Some(real + appended));
    assert_eq!(
        reopened.export_session("s").unwrap(),
        before,
        "a preview stores nothing"
    );
}

#[test]
fn two_engines_on_one_session_see_each_others_messages() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let mut left = Engine::open(&db, dir.path(), EngineConfig::default()).unwrap();
    let mut right = Engine::open(&db, dir.path(), EngineConfig::default()).unwrap();
    left.create_session("shared").unwrap();
    left.record("shared", vec![Message::user("one")]).unwrap();
    left.prepare_turn("shared").unwrap();
    right
        .record("shared", vec![Message::assistant("two", vec![])])
        .unwrap();
    right.prepare_turn("shared").unwrap();
    let third = left.record("shared", vec![Message::user("three")]).unwrap();
    assert_eq!(third.recorded[0].seq, 3);
    let view = left.prepare_turn("shared").unwrap();
    let texts: Vec<String> = view.messages[1..]
        .iter()
        .map(|m| m.text_content().into_owned())
        .collect();
    assert_eq!(texts, ["one", "two", "three"]);
    assert_eq!(left.export_session("shared").unwrap().nudge_state.turn, 3);
    let sessions = right.list_sessions().unwrap();
    assert_eq!(sessions.len(), 1);
    assert_eq!((sessions[0].messages, sessions[0].turns), (3, 3));
}

#[test]
fn a_turn_after_the_cache_expired_compacts_from_the_cold_trigger() {
    // The same turns, the agent's model call taking a minute (warm) or ten (the five-minute
    // cache has expired by every turn): cold, the first compaction comes earlier.
    let first_compaction = |minutes_between: i64| {
        let dir = tempfile::tempdir().unwrap();
        let clock = TestClock::default();
        clock.0.store(FEB_11_2026, Ordering::SeqCst);
        let config = EngineConfig {
            budget: ctxkit::core::compaction::Budget {
                context_window: 12_000,
                ..common::small_window_config().budget
            },
            ..common::small_window_config()
        };
        let mut engine = Engine::open(dir.path().join("db"), dir.path(), config)
            .unwrap()
            .with_clock(clock.clone());
        engine.create_session("s").unwrap();
        for turn in 0..300 {
            engine.record("s", common::turn_messages(turn)).unwrap();
            let view = engine.prepare_turn("s").unwrap();
            if view.compacted.is_some() {
                return turn;
            }
            clock.0.fetch_add(minutes_between * 60, Ordering::SeqCst);
        }
        panic!("no compaction in 300 turns");
    };
    let warm = first_compaction(1);
    let cold = first_compaction(10);
    assert!(cold < warm, "cold {cold}, warm {warm}");
}
