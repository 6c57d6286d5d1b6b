//! Migrations many workers start at once: 8 `ctxkit` processes (and 8 stores in threads) open
//! one empty database at the same moment, directly and through PgBouncer in transaction mode;
//! the schema is migrated once (under the transaction-scoped advisory lock) and all proceed. A schema newer than this build is refused with a message
//! naming the versions, and left as it was. A database version 1 wrote (NUL stored as U+FFFD,
//! searches over unfolded text) is brought to version 2: every text reads back as it was
//! stored, and the searches look in keys made again from each message's body (which kept its
//! NUL), so a NUL is found as a NUL. A version 5 database gains lz4 compression (migration 6)
//! for the columns a history search reads. With CI=true a missing server or pooler fails.

use std::process::{Command, Stdio};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use crate::common::backends::pooled;
use crate::common::backends::{fresh_database, postgres_url};
use ctxkit::core::memory::memory_content_hash;
use ctxkit::core::recall::{searchable_text, SearchRequest};
use ctxkit::core::Message;
use ctxkit::store::{
    HistoryStore, MemoryQuery, MemoryStore, PostgresStore, SessionStore, POSTGRES_SCHEMA_VERSION,
};

#[test]
fn eight_stores_opening_an_empty_database_at_once_migrate_it_once() {
    let Some(server) = postgres_url("pg_migrate_at_once") else {
        return;
    };
    for url in [fresh_database(&server, "migrate_direct"), {
        let direct = fresh_database(&server, "migrate_pooled");
        pooled(&direct)
    }] {
        let barrier = Arc::new(Barrier::new(8));
        let opened: Vec<_> = (0..8)
            .map(|_| {
                let (url, barrier) = (url.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    let store = PostgresStore::open(&url)?;
                    store.schema_version()
                })
            })
            .collect();
        for thread in opened {
            assert_eq!(
                thread.join().unwrap().unwrap(),
                POSTGRES_SCHEMA_VERSION,
                "{url}"
            );
        }
        let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
        let rows = client
            .query("SELECT version FROM ctxkit_schema", &[])
            .unwrap();
        assert_eq!(rows.len(), 1, "one version row: migrated once");
        // A newer schema (a later release migrated it) is refused, never written.
        client
            .execute("UPDATE ctxkit_schema SET version = version + 1", &[])
            .unwrap();
        let refused = PostgresStore::open(&url).unwrap_err().to_string();
        assert!(
            refused.contains("newer") || refused.contains("version"),
            "{refused}"
        );
        let version: i32 = client
            .query_one("SELECT version FROM ctxkit_schema", &[])
            .unwrap()
            .get(0);
        assert_eq!(version, POSTGRES_SCHEMA_VERSION + 1, "left as it was");
    }
}

/// The key of the transaction-scoped advisory lock a migration takes
/// (native/src/store/postgres/schema.rs: "ctxkit" in ASCII). Should the two part, no process
/// would wait on the test's lock and the test fails waiting for them.
const MIGRATION_LOCK: i64 = 0x0000_6374_786b_6974;

/// How many sessions of the database's server wait for an advisory lock right now.
fn advisory_waiters(client: &mut postgres::Client) -> i64 {
    client
        .query_one(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted \
             AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
            &[],
        )
        .unwrap()
        .get(0)
}

#[test]
fn eight_processes_starting_on_an_empty_database_at_once_migrate_it_once() {
    const WORKERS: usize = 8;
    let Some(server) = postgres_url("pg_migrate_processes") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let first = work.path().join("first.json");
    std::fs::write(&first, br#"[{"role":"user","content":"start"}]"#).unwrap();
    for pooler in [false, true] {
        let direct = fresh_database(&server, "migrate_processes");
        let url = if pooler {
            pooled(&direct)
        } else {
            direct.clone()
        };
        // The barrier: the test holds the migration lock, so every worker's migration waits
        // on it; once all 8 wait, it lets go and they race for it as a new release's workers
        // starting together do.
        let mut holder = postgres::Client::connect(&direct, postgres::NoTls).unwrap();
        let mut watcher = postgres::Client::connect(&direct, postgres::NoTls).unwrap();
        let mut barrier = holder.transaction().unwrap();
        barrier
            .execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
            .unwrap();
        let workers: Vec<_> = (0..WORKERS)
            .map(|worker| {
                let folder = work.path().join(format!("w{pooler}{worker}"));
                std::fs::create_dir(&folder).unwrap();
                let session = format!("worker-{worker}");
                Command::new(env!("CARGO_BIN_EXE_ctxkit"))
                    .args(["--db", &url, "append", &session])
                    .arg(&first)
                    .arg("--create")
                    .current_dir(&folder)
                    .env_remove("CTXKIT_DATABASE_URL")
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut waiting = advisory_waiters(&mut watcher);
        while waiting < WORKERS as i64 {
            assert!(
                Instant::now() < deadline,
                "pooler {pooler}: {waiting} of {WORKERS} workers reached the migration lock in 60 s"
            );
            std::thread::sleep(Duration::from_millis(20));
            waiting = advisory_waiters(&mut watcher);
        }
        barrier.commit().unwrap();
        for (worker, child) in workers.into_iter().enumerate() {
            let output = child.wait_with_output().unwrap();
            assert!(
                output.status.success(),
                "pooler {pooler}: worker {worker} failed: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        let versions = watcher
            .query("SELECT version FROM ctxkit_schema", &[])
            .unwrap();
        assert_eq!(versions.len(), 1, "pooler {pooler}: one version row");
        assert_eq!(versions[0].get::<_, i32>(0), POSTGRES_SCHEMA_VERSION);
        let store = PostgresStore::open(&direct).unwrap();
        for worker in 0..WORKERS {
            let log = store.export_session(&format!("worker-{worker}")).unwrap();
            assert_eq!(
                log.entries.len(),
                1,
                "pooler {pooler}: worker {worker}'s append"
            );
        }
    }
}

/// Turns a database this build made into the layout version 1 wrote (migration 1 of
/// native/src/store/postgres/schema.rs, never edited since): the memories' search text
/// generated from their fields, no title key, no offload keys (migration 3), no checkpoint
/// compaction blocks (migration 4), no frozen prompts (migration 5), the default compression
/// (migration 6), no checkpoint restore blocks (migration 7), the version row at 1.
const BACK_TO_VERSION_1: &str = "
    ALTER TABLE messages ALTER COLUMN body SET COMPRESSION default,
        ALTER COLUMN search_text SET COMPRESSION default;
    ALTER TABLE offloads ALTER COLUMN content SET COMPRESSION default,
        ALTER COLUMN search_text SET COMPRESSION default;
    DROP TABLE frozen_prompts;
    ALTER TABLE checkpoints DROP COLUMN restore;
    ALTER TABLE checkpoints DROP COLUMN compaction_block;
    DROP INDEX offloads_search;
    ALTER TABLE offloads DROP COLUMN search_text;
    DROP INDEX messages_search;
    DROP INDEX memories_search;
    ALTER TABLE memories DROP COLUMN search_text, DROP COLUMN search_title;
    ALTER TABLE memories ADD COLUMN search_text TEXT GENERATED ALWAYS AS
        (title || E'\\n' || content || E'\\n' || category || E'\\n' || tags) STORED;
    CREATE INDEX messages_search ON messages USING gin (search_text gin_trgm_ops);
    CREATE INDEX memories_search ON memories USING gin (search_text gin_trgm_ops);
    UPDATE ctxkit_schema SET version = 1;
";

#[test]
fn a_version_1_database_reads_back_as_stored_and_searches_nul_as_nul() {
    let Some(server) = postgres_url("pg_migrate_text") else {
        return;
    };
    let url = fresh_database(&server, "migrate_text");
    drop(PostgresStore::open(&url).unwrap());
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    client.batch_execute(BACK_TO_VERSION_1).unwrap();
    // Rows as version 1 wrote them: a NUL in stored text became U+FFFD; a message's body kept
    // it (JSON escapes it), its search text did not.
    let session = "old \u{FFFD}";
    let id: i64 = client
        .query_one(
            "INSERT INTO sessions (name, family, created_at, updated_at, last_seq, \
             message_count) VALUES ($1, 'openai', 1, 1, 2, 2) RETURNING id",
            &[&session],
        )
        .unwrap()
        .get(0);
    for (seq, text) in [(1i64, "find a\0b here"), (2, "find a\u{FFFD}b there")] {
        let message = Message::user(text);
        let old_search_text = searchable_text(&message).replace('\0', "\u{FFFD}");
        client
            .execute(
                "INSERT INTO messages (session_id, seq, role, body, tokens, search_text, \
                 created_at) VALUES ($1, $2, 'user', $3, 3, $4, 1)",
                &[
                    &id,
                    &seq,
                    &serde_json::to_string(&message).unwrap(),
                    &old_search_text,
                ],
            )
            .unwrap();
    }
    client
        .execute(
            "INSERT INTO checkpoints (session_id, through_seq, method, summary, tokens, \
             made_at_turn, created_at) VALUES ($1, 1, 'extractive', $2, 3, 1, 1)",
            &[&id, &"sum\u{FFFD}mary"],
        )
        .unwrap();
    client
        .execute(
            "INSERT INTO offloads (session_id, seq, tool_call_id, relative_path, bytes, lines, \
             is_error, content, created_at) VALUES ($1, 2, 'c\u{FFFD}', 'p.txt', 7, 1, false, \
             $2, 1)",
            &[&id, &"out\u{FFFD}put"],
        )
        .unwrap();
    let content = "Deploy\u{FFFD} with the staging key";
    client
        .execute(
            "INSERT INTO memories (project, scope, source, title, content, importance, \
             content_hash, created_at, updated_at) VALUES ('/p', 'project', 'user', $1, $2, 5, \
             $3, 1, 1)",
            &[&"Staging \u{FFFD}", &content, &memory_content_hash(content)],
        )
        .unwrap();

    let mut store = PostgresStore::open(&url).unwrap();
    assert_eq!(store.schema_version().unwrap(), POSTGRES_SCHEMA_VERSION);
    let names: Vec<String> = store
        .list_sessions()
        .unwrap()
        .into_iter()
        .map(|info| info.name)
        .collect();
    assert_eq!(names, [session]);
    let exported = store.export_session(session).unwrap();
    assert_eq!(exported.entries[0].message.text_content(), "find a\0b here");
    assert_eq!(exported.checkpoints[0].summary, "sum\u{FFFD}mary");
    let offloads = store.offloads(session).unwrap();
    assert_eq!(offloads[0].tool_call_id.as_deref(), Some("c\u{FFFD}"));
    assert_eq!(
        store.offload_text(session, "p.txt").unwrap().as_deref(),
        Some("out\u{FFFD}put")
    );
    let search = |store: &PostgresStore, query: &str| -> Vec<u64> {
        let request = SearchRequest::new(query, None).unwrap();
        let found = store.search_history(session, &request).unwrap();
        found.hits.iter().map(|hit| hit.item.seq).collect()
    };
    assert_eq!(
        search(&store, "A\0B"),
        [1],
        "the key was made again from the body"
    );
    assert_eq!(search(&store, "a\u{FFFD}b"), [2]);
    assert_eq!(search(&store, "FIND"), [2, 1]);
    let query = MemoryQuery {
        text: "staging DEPLOY\u{FFFD}".to_owned(),
        limit: 5,
    };
    let found = store.search_memories("/p", &query, 2).unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].title, "Staging \u{FFFD}");
    assert_eq!(found[0].content, content);
    // Written after the migration: a NUL is kept.
    store
        .append(
            session,
            &ctxkit::core::model::Entry::number([Message::user("new\0one")], 3, exported.family),
            &[],
            3,
        )
        .unwrap();
    assert_eq!(search(&store, "NEW\0"), [3]);
}

/// The compression method of each column migration 6 sets, as `pg_attribute` records it
/// (`l`: lz4; empty: the server's default).
fn compression(client: &mut postgres::Client) -> Vec<(String, String)> {
    client
        .query(
            "SELECT c.relname || '.' || a.attname, a.attcompression::text FROM pg_attribute a \
             JOIN pg_class c ON c.oid = a.attrelid WHERE c.relname IN ('messages', 'offloads') \
             AND a.attname IN ('body', 'search_text', 'content') ORDER BY 1",
            &[],
        )
        .unwrap()
        .iter()
        .map(|row| (row.get(0), row.get(1)))
        .collect()
}

#[test]
fn a_version_5_database_compresses_what_searches_read_with_lz4() {
    let Some(server) = postgres_url("pg_migrate_lz4") else {
        return;
    };
    let url = fresh_database(&server, "migrate_lz4");
    let lz4 = |columns: &[&str]| -> Vec<(String, String)> {
        columns
            .iter()
            .map(|c| (c.to_string(), "l".to_owned()))
            .collect()
    };
    let columns = [
        "messages.body",
        "messages.search_text",
        "offloads.content",
        "offloads.search_text",
    ];
    drop(PostgresStore::open(&url).unwrap());
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    assert_eq!(compression(&mut client), lz4(&columns), "a new database");
    // The layout version 5 left: the server's default compression.
    client
        .batch_execute(
            "ALTER TABLE messages ALTER COLUMN body SET COMPRESSION default, \
             ALTER COLUMN search_text SET COMPRESSION default; \
             ALTER TABLE offloads ALTER COLUMN content SET COMPRESSION default, \
             ALTER COLUMN search_text SET COMPRESSION default; \
             UPDATE ctxkit_schema SET version = 5;",
        )
        .unwrap();
    assert!(compression(&mut client)
        .iter()
        .all(|(_, method)| method.is_empty()));
    let store = PostgresStore::open(&url).unwrap();
    assert_eq!(store.schema_version().unwrap(), POSTGRES_SCHEMA_VERSION);
    assert_eq!(compression(&mut client), lz4(&columns), "migrated from 5");
}
