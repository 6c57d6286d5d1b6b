//! A writer killed with SIGKILL in the middle of appending: the database opens, its log is a
//! prefix of what was appended (every committed message, whole), and no partial message.
//!
//! The child is this test binary itself, run with an environment variable that turns
//! `child_appender` from a no-op into an endless append loop. The same test runs on a SQLite
//! file and on a fresh PostgreSQL database.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;
use crate::common::backends::{fresh_database, postgres_url};
use ctxkit::core::model::Entry;
use ctxkit::core::tokens::ModelFamily;
use ctxkit::core::Message;
use ctxkit::store::{is_postgres_url, PostgresStore, SessionStore, SqliteStore};

const CHILD_DB: &str = "CTXKIT_TEST_CRASH_CHILD_DB";
const FAMILY: ModelFamily = ModelFamily::OpenAi;

/// The message appended as `seq`: big enough (24 KB) that a kill often lands mid-write.
fn message_for(seq: u64) -> Message {
    let filler = format!("{seq:08} ").repeat(2_700);
    if seq.is_multiple_of(2) {
        Message::tool_result(format!("call_{seq}"), filler, seq.is_multiple_of(4))
    } else {
        Message::user(format!("message {seq}: {filler}"))
    }
}

/// The store at `db`: a SQLite file, or a PostgreSQL URL.
fn open(db: &str) -> Box<dyn SessionStore> {
    if is_postgres_url(db) {
        Box::new(PostgresStore::open(db).unwrap())
    } else {
        Box::new(SqliteStore::open(db).unwrap())
    }
}

/// The child: appends forever, one transaction per message, reporting each commit.
#[test]
fn child_appender() {
    let Ok(db) = std::env::var(CHILD_DB) else {
        return; // Run as part of the suite: nothing to do.
    };
    let mut store = open(&db);
    for seq in 1.. {
        let entry = Entry::new(seq, message_for(seq), FAMILY);
        store.append("crash", &[entry], &[], 0).unwrap();
        println!("committed {seq}");
    }
}

#[test]
fn a_killed_writer_leaves_a_whole_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let mut databases = vec![dir.path().join("ctxkit.db").display().to_string()];
    if let Some(url) = postgres_url("crash") {
        databases.push(fresh_database(&url, "crash"));
    }
    for db in databases {
        killed_writer_on(&db);
    }
}

fn killed_writer_on(db: &str) {
    open(db).create_session("crash", FAMILY, 0).unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            &common::test_name(module_path!(), "child_appender"),
        ])
        .args(["--nocapture", "--test-threads=1"])
        .env(CHILD_DB, db)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut committed = 0;
    while committed < 150 && Instant::now() < deadline {
        let Some(Ok(line)) = lines.next() else { break };
        if let Some(seq) = line.strip_prefix("committed ") {
            committed = seq.trim().parse().unwrap();
        }
    }
    assert!(
        committed >= 150,
        "the child committed only {committed} messages"
    );
    // Let it get into the next few writes, then kill it (SIGKILL: no cleanup at all).
    std::thread::sleep(Duration::from_millis(7));
    child.kill().unwrap();
    child.wait().unwrap();

    let store = open(db);
    let log = store.export_session("crash").unwrap();
    assert!(log.entries.len() >= committed as usize);
    for (index, entry) in log.entries.iter().enumerate() {
        let seq = index as u64 + 1;
        assert_eq!(entry.seq, seq);
        assert_eq!(entry.message, message_for(seq), "message {seq} is whole");
    }
    let info = store.session_info("crash").unwrap();
    assert_eq!(info.last_seq, log.entries.len() as u64);
    assert_eq!(info.messages, log.entries.len() as u64);
    if is_postgres_url(db) {
        return;
    }
    let connection = rusqlite::Connection::open(db).unwrap();
    let integrity: String = connection
        .query_row("PRAGMA integrity_check", [], |row| row.get(0))
        .unwrap();
    assert_eq!(integrity, "ok");
}
