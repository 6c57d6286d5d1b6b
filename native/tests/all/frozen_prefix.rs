//! The frozen prefix through the engine, on a real SQLite file and on PostgreSQL
//! ([`common::backends`]): with a clock the test moves, a new day, a memory added and an
//! AGENTS.md edited between two turns without a compaction leave the second request's system
//! prompt byte for byte the first's; the turn that compacts shows them, and so do the turns
//! after it; a new engine over the same store (another process) keeps the frozen parts, and
//! `Engine::refresh_prompt` takes what is read now.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use crate::common::backends::Backend;
use crate::common::{small_window_config, turn_messages};
use ctxkit::clock::Clock;
use ctxkit::store::NewMemory;
use ctxkit::{Engine, EngineConfig, TurnResult};

/// 2026-02-11T00:00:00Z.
const MONDAY: i64 = 1_770_768_000;
const DAY: i64 = 86_400;

/// A clock the test moves.
#[derive(Debug, Clone, Default)]
struct TestClock(Arc<AtomicI64>);

impl TestClock {
    fn set(&self, now: i64) {
        self.0.store(now, Ordering::SeqCst);
    }
}

impl Clock for TestClock {
    fn now_unix(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// The small window that compacts after a few turns, with AGENTS.md and the precis read.
fn config() -> EngineConfig {
    let mut config = small_window_config();
    config.prompt.read_agents_md = true;
    config.memory.in_prompt = true;
    config.memory.write_memory_file = false;
    config
}

fn engine(backend: &Backend, workdir: &std::path::Path, clock: &TestClock) -> Engine {
    Engine::with_store(backend.open(), workdir, config())
        .unwrap()
        .with_clock(clock.clone())
}

fn memory(content: &str) -> NewMemory {
    NewMemory {
        title: "deploy".into(),
        content: content.into(),
        ..NewMemory::default()
    }
}

/// Records turn `turn`'s messages and prepares the next view.
fn turn(engine: &mut Engine, turn: usize) -> TurnResult {
    engine.record("s", turn_messages(turn)).unwrap();
    engine.prepare_turn("s").unwrap()
}

#[test]
fn the_prompt_stays_frozen_between_compactions_on_every_backend() {
    for backend in Backend::all("the_prompt_stays_frozen_between_compactions_on_every_backend") {
        let at = backend.name();
        let workdir = tempfile::tempdir().unwrap();
        std::fs::write(workdir.path().join("AGENTS.md"), "Run make check.\n").unwrap();
        let clock = TestClock::default();
        clock.set(MONDAY);
        let mut engine = engine(&backend, workdir.path(), &clock);
        engine.create_session("s").unwrap();
        engine
            .add_memory(&memory("Deploy with make ship."))
            .unwrap();

        let first = turn(&mut engine, 0);
        assert!(first.compacted.is_none(), "{at}");
        let frozen = first.system_prompt().to_owned();
        assert!(
            frozen.contains("Current date: 2026-02-11"),
            "{at}: {frozen}"
        );
        assert!(frozen.contains("Deploy with make ship."), "{at}");

        // A new day, a memory added and AGENTS.md edited, with no compaction.
        clock.set(MONDAY + DAY);
        engine
            .add_memory(&memory("Never push to main on a Friday."))
            .unwrap();
        std::fs::write(workdir.path().join("AGENTS.md"), "Run make lint.\n").unwrap();
        let second = turn(&mut engine, 1);
        assert!(
            second.compacted.is_none(),
            "{at}: the second turn compacted"
        );
        assert_eq!(second.system_prompt(), frozen, "{at}: the prompt moved");

        // Another process over the same store keeps the frozen parts.
        clock.set(MONDAY + 2 * DAY);
        let mut other = self::engine(&backend, workdir.path(), &clock);
        let mut next = 2;
        let compacted = loop {
            let view = turn(&mut other, next);
            next += 1;
            if view.compacted.is_some() {
                break view;
            }
            assert_eq!(view.system_prompt(), frozen, "{at}: turn {next} moved");
            assert!(next < 200, "{at}: no compaction");
        };
        // The compaction's view holds what was read that turn.
        let refreshed = compacted.system_prompt().to_owned();
        assert!(
            refreshed.contains("Current date: 2026-02-13"),
            "{at}: {refreshed}"
        );
        assert!(
            refreshed.contains("Never push to main on a Friday."),
            "{at}"
        );
        assert!(refreshed.contains("Run make lint."), "{at}");

        // The turn after it begins byte for byte like the compaction's request (a minute
        // later: a day later the provider's cache has expired, and the turn compacts from the
        // cold trigger).
        clock.set(MONDAY + 2 * DAY + 60);
        let after = turn(&mut other, next);
        assert!(after.compacted.is_none(), "{at}");
        assert_eq!(
            after.system_prompt(),
            refreshed,
            "{at}: moved after the compaction"
        );

        // A refresh the caller asks for reads the parts now, and freezes them.
        clock.set(MONDAY + 3 * DAY);
        other.refresh_prompt("s");
        let asked = turn(&mut other, next + 1);
        assert!(
            asked.system_prompt().contains("Current date: 2026-02-14"),
            "{at}"
        );
        clock.set(MONDAY + 3 * DAY + 60);
        let kept = turn(&mut other, next + 2);
        assert!(kept.compacted.is_none(), "{at}");
        assert_eq!(
            kept.system_prompt(),
            asked.system_prompt(),
            "{at}: refresh not kept"
        );
    }
}

#[test]
fn frozen_text_comes_back_byte_for_byte() {
    for backend in Backend::all("frozen_text_comes_back_byte_for_byte") {
        let at = backend.name();
        let workdir = tempfile::tempdir().unwrap();
        // NUL, U+FFFD, a lone CR, CJK and an emoji: every text stored comes back as it was.
        let agents = "Tabs\tand NUL \0 and \u{FFFD}\u{FFFD} and CR\r and 会话 and 🦀";
        std::fs::write(workdir.path().join("AGENTS.md"), agents).unwrap();
        let clock = TestClock::default();
        clock.set(MONDAY);
        let mut engine = engine(&backend, workdir.path(), &clock);
        engine.create_session("s").unwrap();
        let first = turn(&mut engine, 0);
        assert!(first.system_prompt().contains(agents.trim()), "{at}");
        std::fs::write(workdir.path().join("AGENTS.md"), "changed").unwrap();
        let mut other = self::engine(&backend, workdir.path(), &clock);
        let second = turn(&mut other, 1);
        assert!(second.compacted.is_none(), "{at}");
        assert_eq!(second.system_prompt(), first.system_prompt(), "{at}");
    }
}
