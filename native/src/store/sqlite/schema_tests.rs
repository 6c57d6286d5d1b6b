//! The SQLite schema's migrations: their numbers, their probes, a database at every version
//! brought to the newest.

use super::*;
use crate::store::{HistoryStore, SessionStore, SqliteStore};
use ctxkit_core::recall::SearchRequest;
use ctxkit_core::{Message, ToolCall};

#[test]
fn the_numbers_increase_and_the_newest_is_the_schema_version() {
    let numbers: Vec<i64> = MIGRATIONS.iter().map(|m| m.number).collect();
    assert!(
        numbers.windows(2).all(|pair| pair[0] < pair[1]),
        "{numbers:?}"
    );
    assert_eq!(numbers.last(), Some(&SCHEMA_VERSION));
}

#[test]
fn a_gap_is_skipped_and_a_late_migration_below_the_version_still_runs() {
    let path = Path::new(":memory:");
    let mut connection = Connection::open_in_memory().unwrap();
    migrate(&mut connection, path).unwrap();
    let version: i64 = connection
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION);
    assert!(!needs_migration(&connection, SCHEMA_VERSION).unwrap());

    // A database at 2 goes to the newest across the gap.
    let mut older = Connection::open_in_memory().unwrap();
    for migration in MIGRATIONS.iter().filter(|m| m.number <= 2) {
        older.execute_batch(migration.sql).unwrap();
    }
    older.execute_batch("PRAGMA user_version = 2").unwrap();
    assert!(needs_migration(&older, 2).unwrap());
    migrate(&mut older, path).unwrap();
    let columns: i64 = older
        .query_row(
            "SELECT count(*) FROM pragma_table_info('memories') \
             WHERE name IN ('provenance', 'approved_at')",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(columns, 2);

    // A database whose version passed 4 without it (a merge brought 4 later) gets it.
    let mut passed = Connection::open_in_memory().unwrap();
    for migration in MIGRATIONS.iter().filter(|m| m.number <= 2) {
        passed.execute_batch(migration.sql).unwrap();
    }
    passed.execute_batch("PRAGMA user_version = 4").unwrap();
    assert!(needs_migration(&passed, 4).unwrap());
    migrate(&mut passed, path).unwrap();
    assert!(!needs_migration(&passed, SCHEMA_VERSION).unwrap());
    let block_column: i64 = passed
        .query_row(
            "SELECT count(*) FROM pragma_table_info('checkpoints') \
             WHERE name = 'compaction_block'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(block_column, 1);
}

/// A database as version 1 left it: the first migration only, with a session and messages
/// written by hand, as that version's store wrote them.
fn version_one_database(path: &Path) {
    let connection = Connection::open(path).unwrap();
    connection.execute_batch(MIGRATIONS[0].sql).unwrap();
    connection.execute_batch("PRAGMA user_version = 1").unwrap();
    connection
        .execute(
            "INSERT INTO sessions (name, family, created_at, updated_at, last_seq, \
             message_count, total_tokens) VALUES ('old', 'openai', 1, 1, 3, 3, 30)",
            [],
        )
        .unwrap();
    let messages = [
        Message::user("把用户数据持久化到 SQLite"),
        Message::assistant(
            "",
            vec![ToolCall::new("c1", "bash", r#"{"cmd":"ls \"src/db\""}"#)],
        ),
        Message::tool_result("c1", "schema.rs", false),
    ];
    for (seq, message) in (1..).zip(messages) {
        connection
            .execute(
                "INSERT INTO messages (session_id, seq, role, body, tokens, created_at) \
                 VALUES (1, ?1, ?2, ?3, 10, 1)",
                rusqlite::params![
                    seq,
                    message.role.as_str(),
                    serde_json::to_string(&message).unwrap()
                ],
            )
            .unwrap();
    }
}

#[test]
fn a_database_from_before_the_message_index_is_indexed_when_opened() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v1.db");
    version_one_database(&path);
    let mut store = SqliteStore::open(&path).unwrap();
    let version: i64 = store
        .connection
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION);
    let seqs = |store: &SqliteStore, query: &str| -> Vec<u64> {
        let request = SearchRequest::new(query, None).unwrap();
        let found = store.search_history("old", &request).unwrap();
        found.hits.iter().map(|hit| hit.item.seq).collect()
    };
    assert_eq!(seqs(&store, "持久化"), [1]);
    assert_eq!(seqs(&store, "ls \"src/db\""), [2], "arguments are decoded");
    assert_eq!(seqs(&store, "SCHEMA.RS"), [3]);
    // Messages appended after the migration are indexed as they are written.
    let next = ctxkit_core::Entry::number(
        [Message::user("and now schema.rs again")],
        4,
        ctxkit_core::ModelFamily::OpenAi,
    );
    store.append("old", &next, &[], 2).unwrap();
    assert_eq!(seqs(&store, "schema.rs"), [4, 3]);
    drop(store);
    // Opening again migrates nothing more.
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(seqs(&store, "schema.rs"), [4, 3]);
}

#[test]
fn the_trigram_table_is_replaced_by_the_plain_texts_with_every_row() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v1.db");
    version_one_database(&path);
    // Migration 3 indexes the three messages in `messages_fts`; 10 moves them and drops it.
    let store = SqliteStore::open(&path).unwrap();
    let count = |sql: &str| -> i64 {
        store
            .connection
            .query_row(sql, [], |row| row.get(0))
            .unwrap()
    };
    assert_eq!(count("SELECT count(*) FROM message_texts"), 3);
    assert_eq!(
        count("SELECT count(*) FROM sqlite_schema WHERE name LIKE 'messages_fts%'"),
        0
    );
    assert!(!needs_migration(&store.connection, SCHEMA_VERSION).unwrap());
}
