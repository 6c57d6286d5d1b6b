//! A fleet through PgBouncer in transaction pooling mode (the pooler `scripts/pg-server.sh`
//! starts in front of the throwaway server): 16 worker processes append to 8 shared sessions
//! while the pooler is restarted mid-run; every message a worker saw committed is stored once,
//! `seq` is contiguous in every session, the sessions' counters agree with their logs. Meanwhile
//! pairs of workers race to prepare one session's turn through the pooler, round after round
//! ([`fleet::race_one_turn`]; the pooler restarts as the first race's workers start): each race
//! is resolved, one checkpoint stored and none lost, both views valid. Bounded: 16 x 40
//! messages and 4 races, a few seconds.
//!
//! In the `alone` test binary, one at a time, since it restarts the pooler the other tests use
//! (see `alone/main.rs`). With CI=true a missing server or pooler fails, never skips.

use std::collections::BTreeSet;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::backends::{fresh_database, postgres_url};
use crate::common::fleet::{self, Orders};
use ctxkit::store::{PostgresStore, SessionStore};

const WORKERS: usize = 16;
const PER_WORKER: usize = 40;

fn var(name: &str) -> String {
    match std::env::var(name) {
        Ok(value) if !value.is_empty() => value,
        _ => panic!("{name} is not set: source scripts/pg-server.sh, which starts the pooler"),
    }
}

/// The database `direct` names (a URL of the server), through the pooler.
fn pooled(direct: &str) -> String {
    let database = direct.rsplit('/').next().unwrap();
    let pooler = var("CTXKIT_TEST_PGBOUNCER_URL");
    let (base, _) = pooler.rsplit_once('/').unwrap();
    format!("{base}/{database}?sslmode=disable")
}

/// Stops the pooler at once (SIGTERM: immediate shutdown, every client connection cut) and
/// starts it again on the same port.
fn restart_pooler() {
    let pid = std::fs::read_to_string(var("CTXKIT_TEST_PGBOUNCER_PID_FILE")).unwrap();
    let killed = Command::new("kill").arg(pid.trim()).status().unwrap();
    assert!(killed.success());
    std::thread::sleep(Duration::from_millis(300));
    let run_as = std::env::var("CTXKIT_TEST_POSTGRES_RUN_AS").unwrap_or_default();
    let (bin, ini) = (
        var("CTXKIT_TEST_PGBOUNCER_BIN"),
        var("CTXKIT_TEST_PGBOUNCER_INI"),
    );
    let mut command = if run_as.is_empty() {
        Command::new(&bin)
    } else {
        let mut command = Command::new("runuser");
        command.args(["-u", &run_as, "--", &bin]);
        command
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        // The old one may still hold the port for a moment.
        let status = command.args(["-d", "-q", &ini]).status().unwrap();
        if status.success() {
            return;
        }
        assert!(Instant::now() < deadline, "pgbouncer did not start again");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn sixteen_workers_through_the_pooler_lose_nothing_while_it_restarts() {
    let _alone = crate::one_at_a_time();
    let Some(server) = postgres_url("fleet_pgbouncer") else {
        return;
    };
    let direct = fresh_database(&server, "fleet_pgbouncer");
    let url = pooled(&direct);
    let sessions: Vec<String> = (0..8).map(|n| format!("s{n}")).collect();
    let names: Vec<&str> = sessions.iter().map(String::as_str).collect();
    let mut store = PostgresStore::open(&url).unwrap();
    for name in &names {
        store
            .create_session(name, ctxkit::core::ModelFamily::OpenAi, 1)
            .unwrap();
    }
    let go = tempfile::tempdir().unwrap();
    let go = go.path().join("go");
    let mut children: Vec<_> = (0..WORKERS)
        .map(|worker| {
            fleet::spawn(&Orders {
                url: &url,
                worker,
                sessions: &names,
                messages: PER_WORKER,
                pad: 256,
                go: &go,
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    std::fs::write(&go, "").unwrap();
    // Racing turns through the pooler while the fleet appends; the pooler is restarted the
    // moment the first race's two workers start preparing (the sessions are set up directly,
    // so only the races go through the pooler).
    let races = {
        let (direct, url) = (direct.clone(), url.clone());
        std::thread::spawn(move || {
            fleet::race_one_turn(&direct, &url, "race0", &restart_pooler);
            for round in 1..4 {
                fleet::race_one_turn(&direct, &url, &format!("race{round}"), &|| {});
            }
        })
    };
    let mut committed = BTreeSet::new();
    let mut errors = 0;
    for (worker, child) in children.iter_mut().enumerate() {
        let lines = fleet::lines(child);
        assert!(child.wait().unwrap().success(), "{lines:?}");
        for line in &lines {
            if let Some(rest) = line.strip_prefix("committed ") {
                let index: usize = rest.split(' ').nth(1).unwrap().parse().unwrap();
                committed.insert(fleet::message_text(worker, index));
            }
            errors += usize::from(line.starts_with("error: "));
        }
    }
    assert_eq!(
        committed.len(),
        WORKERS * PER_WORKER,
        "every worker finished"
    );
    races
        .join()
        .expect("every race through the pooler was resolved");
    let check = PostgresStore::open(&direct).unwrap();
    let mut stored = BTreeSet::new();
    for name in &names {
        let log = check.export_session(name).unwrap();
        for (position, entry) in log.entries.iter().enumerate() {
            assert_eq!(entry.seq, position as u64 + 1, "{name}: no seq gap");
            let text = entry.message.text_content();
            let id = format!("{}]", text.split(']').next().unwrap());
            assert!(stored.insert(id), "{name}: stored once: {text}");
        }
        let info = check.session_info(name).unwrap();
        assert_eq!(info.last_seq, log.entries.len() as u64);
    }
    assert_eq!(
        stored, committed,
        "acknowledged appends equal stored appends"
    );
    eprintln!(
        "fleet_pgbouncer: {} messages by {WORKERS} processes through PgBouncer, restarted \
         mid-run ({errors} connection errors retried); 4 racing turns through it ({} calls of \
         theirs retried)",
        stored.len(),
        fleet::RETRIED.load(std::sync::atomic::Ordering::Relaxed)
    );
}
