//! `SqliteStore::open_read_only`: reads without creating or writing anything, refuses every
//! write, and notices a writer that changed a database it read without locks.

use std::path::Path;

use ctxkit::core::model::Entry;
use ctxkit::core::tokens::ModelFamily;
use ctxkit::core::Message;
use ctxkit::store::{SessionStore, SqliteStore};
use ctxkit::Error;

const FAMILY: ModelFamily = ModelFamily::Claude;

fn entry(seq: u64) -> Entry {
    Entry::new(seq, Message::user(format!("message {seq}")), FAMILY)
}

/// A database holding session `s` with `messages` messages; every connection closed.
fn database(dir: &Path, messages: u64) -> std::path::PathBuf {
    let path = dir.join("ctxkit.db");
    let mut store = SqliteStore::open(&path).unwrap();
    store.create_session("s", FAMILY, 1).unwrap();
    let entries: Vec<Entry> = (1..=messages).map(entry).collect();
    store.append("s", &entries, &[], 2).unwrap();
    path
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_read_only_open_reads_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = database(dir.path(), 3);
    assert_eq!(names_in(dir.path()), ["ctxkit.db"]);
    let mut store = SqliteStore::open_read_only(&path).unwrap();
    assert_eq!(store.session_info("s").unwrap().messages, 3);
    assert_eq!(store.export_session("s").unwrap().entries.len(), 3);
    let error = store.append("s", &[entry(4)], &[], 3).unwrap_err();
    assert!(error.to_string().contains("readonly"), "{error}");
    drop(store);
    assert_eq!(names_in(dir.path()), ["ctxkit.db"], "no -wal or -shm");
    assert_eq!(
        SqliteStore::open(&path)
            .unwrap()
            .session_info("s")
            .unwrap()
            .messages,
        3
    );
}

#[test]
fn a_writer_during_a_lock_free_read_is_noticed_and_a_new_open_sees_its_commit() {
    let dir = tempfile::tempdir().unwrap();
    let path = database(dir.path(), 3);
    let reader = SqliteStore::open_read_only(&path).unwrap();
    assert_eq!(reader.session_info("s").unwrap().last_seq, 3);
    // A writer opens the database (making its -wal) and appends.
    let mut writer = SqliteStore::open(&path).unwrap();
    writer.append("s", &[entry(4)], &[], 3).unwrap();
    let error = reader.session_info("s").unwrap_err();
    assert!(matches!(error, Error::DatabaseChanged { .. }), "{error}");
    // With the writer's connection still open, the read goes through its WAL.
    let again = SqliteStore::open_read_only(&path).unwrap();
    assert_eq!(again.session_info("s").unwrap().last_seq, 4);
    // The writer leaves: the reader through the WAL still reads (SQLite keeps the WAL for it).
    drop(writer);
    assert_eq!(again.session_info("s").unwrap().last_seq, 4);
    drop(again);
    let fresh = SqliteStore::open_read_only(&path).unwrap();
    assert_eq!(fresh.session_info("s").unwrap().last_seq, 4);
}

#[test]
fn what_cannot_be_read_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let missing = SqliteStore::open_read_only(dir.path().join("none.db")).unwrap_err();
    assert!(
        matches!(&missing, Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound),
        "{missing}"
    );
    assert!(!dir.path().join("none.db").exists());
    let device = SqliteStore::open_read_only("/dev/null").unwrap_err();
    assert!(
        device.to_string().contains("not a regular file"),
        "{device}"
    );
    let path = database(dir.path(), 1);
    rusqlite::Connection::open(&path)
        .unwrap()
        .pragma_update(None, "user_version", 99)
        .unwrap();
    let newer = SqliteStore::open_read_only(&path).unwrap_err();
    assert!(
        matches!(newer, Error::SchemaTooNew { found: 99, .. }),
        "{newer}"
    );
    std::fs::write(dir.path().join("empty.db"), b"").unwrap();
    let old = SqliteStore::open_read_only(dir.path().join("empty.db")).unwrap_err();
    assert!(
        matches!(old, Error::NeedsMigration { found: 0, .. }),
        "{old}"
    );
}
