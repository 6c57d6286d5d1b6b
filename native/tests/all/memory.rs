//! Long-term memories through the engine, the same tests on a real SQLite file and on
//! PostgreSQL ([`common::backends`]): trigram search (CJK
//! substrings), user text that looks like FTS5 syntax, short queries, disabled and expired
//! rows, duplicates, importance clamping, scopes, and MEMORY.md rewritten after each write.
//! A PostgreSQL store without a schema of its own runs a search as one statement, its own
//! transaction: the same hits in the same order, the same use counts, as with a schema.

use std::os::unix::fs::PermissionsExt;

use crate::common::backends::{fresh_database, postgres_url, Backend};
use ctxkit::clock::FixedClock;
use ctxkit::core::memory::{MemoryScope, MemorySource};
use ctxkit::store::{
    AddedMemory, MemoryFilter, MemoryQuery, MemoryStore, MemoryUpdate, NewMemory, PostgresOptions,
    PostgresStore,
};
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

#[test]
fn a_postgres_search_alone_finds_and_counts_as_one_in_a_transaction() {
    let Some(server) = postgres_url("memory_search_alone") else {
        return;
    };
    // The same memories in a database of their own (no schema: each search is one statement)
    // and in a schema of the test's database (each search in a transaction setting it).
    let plain_url = fresh_database(&server, "memory_alone");
    let with_schema = Backend::all("memory_search_alone")
        .into_iter()
        .find(Backend::is_postgres)
        .unwrap();
    let mut stores: Vec<Box<dyn MemoryStore>> = vec![
        Box::new(PostgresStore::open(&plain_url).unwrap()),
        Box::new(with_schema.postgres()),
    ];
    let topics = ["deploy", "持久化会话", "db setup", "\"deploy\" AND NEAR(x"];
    for store in &mut stores {
        for index in 0..40usize {
            let topic = topics[index % topics.len()];
            let new = NewMemory {
                title: format!("{topic} note {index}"),
                content: format!("Memory {index} about {topic}, step {}", index % 7),
                importance: (index % 10) as i64 + 1,
                ..NewMemory::default()
            };
            store.add_memory("/p", &new, NOW).unwrap();
        }
    }
    for text in [
        "deploy",
        "持久化",
        "db",
        "\"deploy\" AND NEAR(",
        "note 7",
        "absent",
    ] {
        let query = MemoryQuery {
            text: text.into(),
            limit: 5,
        };
        // Twice: the second search finds the same memories, each counted once more.
        let mut before: Vec<(i64, String, i64)> = Vec::new();
        for round in 0..2 {
            let found: Vec<Vec<(i64, String, i64)>> = stores
                .iter_mut()
                .map(|store| {
                    let hits = store.search_memories("/p", &query, NOW).unwrap();
                    hits.iter()
                        .map(|m| (m.id, m.title.clone(), m.use_count))
                        .collect()
                })
                .collect();
            assert_eq!(found[0], found[1], "{text:?}, round {round}");
            let expect_hits = text != "absent";
            assert_eq!(!found[0].is_empty(), expect_hits, "{text:?}");
            if round == 1 {
                let counted: Vec<(i64, String, i64)> = before
                    .iter()
                    .map(|(id, t, n)| (*id, t.clone(), n + 1))
                    .collect();
                assert_eq!(found[0], counted, "{text:?}");
            }
            before = found[0].clone();
        }
    }
    // Read-only: found alone too, nothing counted.
    let options = PostgresOptions {
        read_only: true,
        ..PostgresOptions::default()
    };
    let mut read_only = PostgresStore::open_with(&plain_url, options).unwrap();
    let query = MemoryQuery {
        text: "deploy".into(),
        limit: 3,
    };
    let counts = |store: &mut PostgresStore| -> Vec<(i64, i64)> {
        let hits = store.search_memories("/p", &query, NOW).unwrap();
        hits.iter().map(|hit| (hit.id, hit.use_count)).collect()
    };
    let first = counts(&mut read_only);
    assert_eq!(first.len(), 3);
    assert_eq!(counts(&mut read_only), first, "nothing counted");
    for (id, use_count) in first {
        let stored = stores[0].get_memory(id).unwrap().unwrap();
        assert_eq!(stored.use_count, use_count, "memory {id}");
    }
}
