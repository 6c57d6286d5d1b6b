//! Long-term memories through the engine, the same tests on a real SQLite file and on
//! PostgreSQL ([`common::backends`]): trigram search (CJK
//! substrings), user text that looks like FTS5 syntax, short queries, disabled and expired
//! rows, duplicates, importance clamping, scopes, and MEMORY.md rewritten after each write.

mod common;

use std::os::unix::fs::PermissionsExt;

use common::backends::Backend;
use ctxkit::clock::FixedClock;
use ctxkit::core::memory::{MemoryScope, MemorySource};
use ctxkit::store::{AddedMemory, MemoryFilter, MemoryQuery, MemoryUpdate, NewMemory};
use ctxkit::{Engine, EngineConfig};

const NOW: i64 = 1_770_768_000;

fn engine_at(backend: &Backend, workdir: &std::path::Path, now: i64) -> Engine {
    Engine::with_store(backend.open(), workdir, EngineConfig::default())
        .unwrap()
        .with_clock(FixedClock(now))
}

fn memory(title: &str, content: &str) -> NewMemory {
    NewMemory {
        title: title.into(),
        content: content.into(),
        ..NewMemory::default()
    }
}

fn ids(found: &[ctxkit::store::MemoryRecord]) -> Vec<i64> {
    found.iter().map(|record| record.id).collect()
}

#[test]
fn search_finds_cjk_substrings_and_takes_any_text_literally() {
    for backend in Backend::all("search_finds_cjk_substrings_and_takes_any_text_literally") {
        let dir = tempfile::tempdir().unwrap();
        let mut engine = engine_at(&backend, dir.path(), NOW);
        let cjk = engine
            .add_memory(&memory("会话", "使用持久化会话"))
            .unwrap();
        let quoted = engine
            .add_memory(&memory(
                "Quotes",
                r#"Say "hello" AND mean it: 100% NEAR(done)*"#,
            ))
            .unwrap();
        engine
            .add_memory(&memory("pnpm", "Use pnpm, not npm."))
            .unwrap();

        let found = engine.search_memories(&MemoryQuery::new("持久化")).unwrap();
        assert_eq!(ids(&found), vec![cjk.record().id]);
        // Two characters are too few for trigrams: LIKE finds it.
        let found = engine.search_memories(&MemoryQuery::new("持久")).unwrap();
        assert_eq!(ids(&found), vec![cjk.record().id]);

        for text in [
            "\"",
            "a\"b",
            "AND",
            "OR",
            "NOT",
            "hello AND",
            "NEAR(",
            "NEAR(done",
            "*",
            "done)*",
            "^x",
            "title:x",
            ":",
            "(",
            ")",
            "'",
            "''",
            "\\",
            "%",
            "_",
            "-x",
            "+",
            "{a b}",
            "\u{0}",
        ] {
            let result = engine.search_memories(&MemoryQuery::new(text));
            assert!(result.is_ok(), "{text:?}: {result:?}");
        }
        let found = engine
            .search_memories(&MemoryQuery::new("\"hello\" AND"))
            .unwrap();
        assert_eq!(ids(&found), vec![quoted.record().id]);
        let found = engine
            .search_memories(&MemoryQuery::new("NEAR(done)*"))
            .unwrap();
        assert_eq!(ids(&found), vec![quoted.record().id]);
        // `%` and `_` are literal in the LIKE fallback, not wildcards.
        let found = engine.search_memories(&MemoryQuery::new("%")).unwrap();
        assert_eq!(ids(&found), vec![quoted.record().id]);
        assert!(engine
            .search_memories(&MemoryQuery::new("_"))
            .unwrap()
            .is_empty());
        assert!(engine
            .search_memories(&MemoryQuery::new("  "))
            .unwrap()
            .is_empty());
        // Searching counts as a use.
        let once = engine.search_memories(&MemoryQuery::new("pnpm")).unwrap();
        let again = engine.search_memories(&MemoryQuery::new("pnpm")).unwrap();
        assert_eq!(again[0].use_count, once[0].use_count + 1);
    }
}

#[test]
fn disabled_and_expired_memories_never_come_back() {
    for backend in Backend::all("disabled_and_expired_memories_never_come_back") {
        let dir = tempfile::tempdir().unwrap();
        let mut engine = engine_at(&backend, dir.path(), NOW);
        let removed = engine
            .add_memory(&memory("gone", "deploy with make ship"))
            .unwrap();
        let expiring = engine
            .add_memory(&NewMemory {
                expires_at: Some(NOW + 60),
                ..memory("soon", "deploy window is friday")
            })
            .unwrap();
        let expired = engine
            .add_memory(&NewMemory {
                expires_at: Some(NOW),
                ..memory("past", "deploy freeze this week")
            })
            .unwrap();
        assert!(engine.remove_memory(removed.record().id).unwrap());
        assert!(!engine.remove_memory(removed.record().id).unwrap());

        let found = engine.search_memories(&MemoryQuery::new("deploy")).unwrap();
        assert_eq!(ids(&found), vec![expiring.record().id]);
        let found = engine.search_memories(&MemoryQuery::new("de")).unwrap();
        assert_eq!(ids(&found), vec![expiring.record().id]);
        let listed = engine.list_memories(&MemoryFilter::default()).unwrap();
        assert_eq!(ids(&listed), vec![expiring.record().id]);
        assert!(!engine.memory_precis().unwrap().contains("make ship"));

        // An hour later the expiring one is gone too.
        let mut later = engine_at(&backend, dir.path(), NOW + 3_600);
        assert!(later
            .search_memories(&MemoryQuery::new("deploy"))
            .unwrap()
            .is_empty());
        let everything = later
            .list_memories(&MemoryFilter {
                include_disabled: true,
                include_expired: true,
                ..MemoryFilter::default()
            })
            .unwrap();
        assert_eq!(everything.len(), 3);
        assert!(everything.iter().all(|record| !record.is_live(NOW + 3_600)));
        assert!(later
            .update_memory(removed.record().id, &MemoryUpdate::default())
            .is_err());
        let _ = expired;
    }
}

#[test]
fn duplicates_importance_scopes_and_updates() {
    for backend in Backend::all("duplicates_importance_scopes_and_updates") {
        let dir = tempfile::tempdir().unwrap();
        let project_b = tempfile::tempdir().unwrap();
        let mut engine = engine_at(&backend, dir.path(), NOW);
        let first = engine
            .add_memory(&memory("pm", "Use pnpm, not npm."))
            .unwrap();
        assert!(matches!(first, AddedMemory::Added(_)));
        let again = engine
            .add_memory(&NewMemory {
                source: MemorySource::User,
                ..memory("pm again", "  use PNPM,\n not   npm. ")
            })
            .unwrap();
        assert_eq!(again, AddedMemory::Duplicate(first.record().clone()));

        let loud = engine
            .add_memory(&NewMemory {
                importance: 99,
                ..memory("a", "importance ninety-nine")
            })
            .unwrap();
        let quiet = engine
            .add_memory(&NewMemory {
                importance: -5,
                ..memory("b", "importance minus five")
            })
            .unwrap();
        assert_eq!(loud.record().importance, 10);
        assert_eq!(quiet.record().importance, 1);

        let global = engine
            .add_memory(&NewMemory {
                scope: MemoryScope::Global,
                ..memory("g", "The user signs commits.")
            })
            .unwrap();
        let mut other = engine_at(&backend, project_b.path(), NOW);
        let seen: Vec<i64> = ids(&other.list_memories(&MemoryFilter::default()).unwrap());
        assert_eq!(
            seen,
            vec![global.record().id],
            "project memories stay in their project"
        );
        assert!(other
            .search_memories(&MemoryQuery::new("pnpm"))
            .unwrap()
            .is_empty());
        // The same content in another project is not a duplicate there.
        assert!(matches!(
            other
                .add_memory(&memory("pm", "Use pnpm, not npm."))
                .unwrap(),
            AddedMemory::Added(_)
        ));

        let updated = engine
            .update_memory(
                first.record().id,
                &MemoryUpdate {
                    content: Some("Use bun.".into()),
                    importance: Some(42),
                    tags: Some(vec!["tooling".into()]),
                    ..MemoryUpdate::default()
                },
            )
            .unwrap();
        assert_eq!((updated.importance, updated.tags.len()), (10, 1));
        assert_eq!(
            ids(&engine.search_memories(&MemoryQuery::new("bun")).unwrap()),
            vec![first.record().id]
        );
        assert!(engine
            .search_memories(&MemoryQuery::new("pnpm"))
            .unwrap()
            .is_empty());
        assert!(engine
            .search_memories(&MemoryQuery::new("tooling"))
            .unwrap()
            .iter()
            .any(|record| record.id == first.record().id));
        assert!(engine.add_memory(&memory("empty", "  \n")).is_err());
    }
}

#[test]
fn memory_md_is_bounded_private_and_rewritten_after_each_write() {
    for backend in Backend::all("memory_md_is_bounded_private_and_rewritten_after_each_write") {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".ctxkit/MEMORY.md");
        let mut previous = String::new();
        let mut last_id = 0;
        let mut engine = engine_at(&backend, dir.path(), NOW);
        for index in 0..60 {
            // A second later each time, so the newest ranks first among equals.
            engine = engine_at(&backend, dir.path(), NOW + index);
            let added = engine
                .add_memory(&NewMemory {
                    importance: 10,
                    ..memory(
                        &format!("fact {index:02}"),
                        &format!("fact number {index:02}: {}", "detail ".repeat(20)),
                    )
                })
                .unwrap();
            last_id = added.record().id;
            let text = std::fs::read_to_string(&path).unwrap();
            assert_ne!(text, previous, "rewritten after write {index}");
            assert!(text.len() <= 5_120, "{} bytes", text.len());
            // The newest of equally important memories ranks first.
            assert!(
                text.starts_with(&format!("- **fact {index:02}**")),
                "{text}"
            );
            previous = text;
        }
        assert!(previous.ends_with("…(truncated)"));
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let gitignore = std::fs::read_to_string(dir.path().join(".ctxkit/.gitignore")).unwrap();
        assert!(gitignore.lines().any(|line| line == "*"));

        assert!(engine.remove_memory(last_id).unwrap());
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("fact 59"), "removed memory left MEMORY.md");
        assert_eq!(text, engine.memory_precis().unwrap());
        // No temporary files are left behind.
        let leftovers: Vec<_> = std::fs::read_dir(dir.path().join(".ctxkit"))
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }
}
