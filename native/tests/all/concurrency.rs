//! Two processes append to different sessions of one database at the same time, each through
//! its own engine; nothing is lost and each log is in order. The same test runs on a SQLite
//! file and on a fresh PostgreSQL database.
//!
//! The children are this test binary itself, selected by an environment variable.

use crate::common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ctxkit::core::Message;
use ctxkit::{Engine, EngineConfig};

const CHILD_DB: &str = "CTXKIT_TEST_CONCURRENT_CHILD_DB";
const CHILD_SESSION: &str = "CTXKIT_TEST_CONCURRENT_CHILD_SESSION";
const CHILD_WORKDIR: &str = "CTXKIT_TEST_CONCURRENT_CHILD_WORKDIR";
const MESSAGES: usize = 1_000;

fn message_for(session: &str, index: usize) -> Message {
    Message::user(format!(
        "{session} message {index}: {}",
        "z".repeat(index % 200)
    ))
}

/// A child: appends `MESSAGES` messages to its session, one `record` call (one transaction)
/// each.
#[test]
fn child_writer() {
    let (Ok(db), Ok(session)) = (std::env::var(CHILD_DB), std::env::var(CHILD_SESSION)) else {
        return; // Run as part of the suite: nothing to do.
    };
    let workdir = std::path::PathBuf::from(std::env::var(CHILD_WORKDIR).unwrap());
    let mut engine = Engine::open(&db, &workdir, EngineConfig::default()).unwrap();
    // Both children start writing together: each says it is ready, then waits for `go`.
    std::fs::write(workdir.join(format!("ready-{session}")), "").unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !workdir.join("go").exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    println!("\nwriter-start={}", unix_nanos());
    for index in 0..MESSAGES {
        engine
            .record(&session, vec![message_for(&session, index)])
            .unwrap();
    }
    println!("\nwriter-end={}", unix_nanos());
}

fn unix_nanos() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

/// The `start` and `end` times a child printed.
fn interval(stdout: &str) -> (u128, u128) {
    let time = |label: &str| {
        stdout
            .split_whitespace()
            .find_map(|word| word.strip_prefix(label))
            .and_then(|value| value.parse().ok())
            .unwrap_or_else(|| panic!("no {label:?} in {stdout:?}"))
    };
    (time("writer-start="), time("writer-end="))
}

#[test]
fn two_processes_append_to_two_sessions_of_one_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut databases = vec![dir.path().join("ctxkit.db").display().to_string()];
    if let Some(url) = common::backends::postgres_url("concurrency") {
        databases.push(common::backends::fresh_database(&url, "concurrency"));
    }
    for db in databases {
        two_processes_on(&db);
    }
}

fn two_processes_on(db: &str) {
    let dir = tempfile::tempdir().unwrap();
    let mut engine = Engine::open(db, dir.path(), EngineConfig::default()).unwrap();
    let sessions = ["left", "right"];
    for session in sessions {
        engine.create_session(session).unwrap();
    }
    let children: Vec<_> = sessions
        .iter()
        .map(|session| {
            Command::new(std::env::current_exe().unwrap())
                .args([
                    "--exact",
                    &common::test_name(module_path!(), "child_writer"),
                ])
                .args(["--nocapture", "--test-threads=1"])
                .env(CHILD_DB, db)
                .env(CHILD_SESSION, session)
                .env(CHILD_WORKDIR, dir.path())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let ready_by = Instant::now() + Duration::from_secs(60);
    while sessions
        .iter()
        .any(|session| !dir.path().join(format!("ready-{session}")).exists())
    {
        assert!(Instant::now() < ready_by, "the children did not start");
        std::thread::sleep(Duration::from_millis(1));
    }
    std::fs::write(dir.path().join("go"), "").unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut intervals = Vec::new();
    for mut child in children {
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                let mut stderr = String::new();
                std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr)
                    .unwrap();
                assert!(status.success(), "child failed: {stderr}");
                let mut stdout = String::new();
                std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut stdout)
                    .unwrap();
                intervals.push(interval(&stdout));
                break;
            }
            if Instant::now() > deadline {
                child.kill().unwrap();
                panic!("a child did not finish in time");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    let [(start_a, end_a), (start_b, end_b)] = intervals[..] else {
        panic!("{intervals:?}");
    };
    assert!(
        start_a < end_b && start_b < end_a,
        "the two writers did not overlap: {intervals:?}"
    );
    for session in sessions {
        let log = engine.export_session(session).unwrap();
        assert_eq!(log.entries.len(), MESSAGES, "{session}");
        for (index, entry) in log.entries.iter().enumerate() {
            assert_eq!(entry.seq, index as u64 + 1);
            assert_eq!(entry.message, message_for(session, index));
        }
    }
}
