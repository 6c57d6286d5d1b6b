//! Acknowledged means durable on PostgreSQL: a loop of appends (the store's default mode,
//! every commit waiting for the WAL flush) while the server is stopped with `pg_ctl stop -m
//! immediate` (a crash: no checkpoint, no flush) and started again, three times; every
//! append that returned success is in the log afterwards, once, in order, `seq` contiguous.
//! Bounded: about 1.5 s of appends between crashes.
//!
//! In the `alone` test binary, one at a time, since it crashes the server every test uses (see
//! `alone/main.rs`). With CI=true a missing server fails, never skips.

use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::backends::{fresh_database, postgres_url};
use ctxkit::core::model::Entry;
use ctxkit::core::tokens::ModelFamily;
use ctxkit::core::Message;
use ctxkit::store::{PostgresStore, SessionStore};

const CRASHES: usize = 3;

/// `pg_ctl ACTION` on the test server, as the user it runs as.
fn pg_ctl(args: &[&str]) {
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let (data, pg_ctl, run_as) = (
        var("CTXKIT_TEST_POSTGRES_DATA"),
        var("CTXKIT_TEST_POSTGRES_PG_CTL"),
        var("CTXKIT_TEST_POSTGRES_RUN_AS"),
    );
    let mut command = if run_as.is_empty() {
        Command::new(&pg_ctl)
    } else {
        let mut command = Command::new("runuser");
        command.args(["-u", &run_as, "--", &pg_ctl]);
        command
    };
    let log = std::path::Path::new(&data).with_file_name("server.log");
    let status = command
        .args(["-D", &data, "-w", "-t", "60", "-l"])
        .arg(&log)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(
        status.success(),
        "pg_ctl {args:?}: {status:?} (see {})",
        log.display()
    );
}

#[test]
fn no_acknowledged_append_is_lost_when_the_server_crashes() {
    let _alone = crate::one_at_a_time();
    let Some(server) = postgres_url("pg_crash") else {
        return;
    };
    let url = fresh_database(&server, "pg_crash");
    let mut store = PostgresStore::open(&url).unwrap();
    store.create_session("log", ModelFamily::OpenAi, 1).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let appender = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut acknowledged: Vec<(u64, String)> = Vec::new();
            let mut failures = 0usize;
            let mut n = 0usize;
            while !stop.load(Ordering::Relaxed) {
                // Where the log ends now (after a failure, the append may or may not have
                // committed: the log says).
                let Ok(info) = store.session_info("log") else {
                    failures += 1;
                    std::thread::sleep(Duration::from_millis(20));
                    continue;
                };
                let text = format!("append {n}");
                let entry = Entry::new(info.last_seq + 1, Message::user(text.clone()), info.family);
                match store.append("log", &[entry], &[], 2) {
                    Ok(()) => acknowledged.push((info.last_seq + 1, text)),
                    Err(_) => failures += 1,
                }
                n += 1;
            }
            (acknowledged, failures)
        })
    };
    for _ in 0..CRASHES {
        std::thread::sleep(Duration::from_millis(1500));
        pg_ctl(&["-m", "immediate", "stop"]);
        std::thread::sleep(Duration::from_millis(200));
        pg_ctl(&["start"]);
    }
    std::thread::sleep(Duration::from_millis(500));
    stop.store(true, Ordering::Relaxed);
    let (acknowledged, failures) = appender.join().unwrap();
    let check = PostgresStore::open(&url).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let log = loop {
        match check.export_session("log") {
            Ok(log) => break log,
            Err(error) if Instant::now() < deadline => {
                eprintln!("pg_crash: waiting for the server: {error}");
                std::thread::sleep(Duration::from_millis(200));
            }
            Err(error) => panic!("{error}"),
        }
    };
    for (position, entry) in log.entries.iter().enumerate() {
        assert_eq!(entry.seq, position as u64 + 1, "no seq gap");
    }
    let lost: Vec<_> = acknowledged
        .iter()
        .filter(|(seq, text)| {
            log.entries
                .get(*seq as usize - 1)
                .is_none_or(|entry| entry.message.text_content() != *text)
        })
        .collect();
    eprintln!(
        "pg_crash: {} appends acknowledged across {CRASHES} crashes ({failures} failed \
         calls), {} lost",
        acknowledged.len(),
        lost.len()
    );
    assert!(acknowledged.len() > 100, "appends ran between the crashes");
    assert!(lost.is_empty(), "acknowledged appends lost: {lost:?}");
}
