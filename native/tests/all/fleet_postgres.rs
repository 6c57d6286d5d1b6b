//! A fleet on one PostgreSQL database: 8 worker processes append to 4 shared sessions at once
//! (3,200 messages) and nothing is lost, duplicated or reordered, `seq` contiguous per session
//! (lost races retried); two workers preparing one session's turn at once store one
//! checkpoint and both get a valid view; a worker killed with SIGKILL mid-append loses only
//! the message it had not committed, and the next worker carries on. (The server restarted
//! mid-run is `fleet_restart_postgres.rs`, in the `alone` test binary.)

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use crate::common::backends::{fresh_database, postgres_url};
use crate::common::fleet::{self, message_text, Orders};
use ctxkit::store::{PostgresStore, SessionStore};

const WORKERS: usize = 8;
const PER_WORKER: usize = 400;

/// Every message of `session`, as (worker, index), in seq order, checking seqs are 1..=n.
fn log_of(store: &PostgresStore, session: &str) -> Vec<(usize, usize)> {
    let exported = store.export_session(session).unwrap();
    exported
        .entries
        .iter()
        .enumerate()
        .map(|(position, entry)| {
            assert_eq!(
                entry.seq,
                position as u64 + 1,
                "{session}: seqs are contiguous"
            );
            let text = entry.message.text_content();
            let inner = text.strip_prefix("[w").unwrap().split(']').next().unwrap();
            let (worker, index) = inner.split_once(" i").unwrap();
            (worker.parse().unwrap(), index.parse().unwrap())
        })
        .collect()
}

#[test]
fn eight_workers_append_to_four_sessions_and_nothing_is_lost_duplicated_or_reordered() {
    let Some(server) = postgres_url("fleet_appends") else {
        return;
    };
    let url = fresh_database(&server, "fleet_appends");
    let sessions = ["s0", "s1", "s2", "s3"];
    let mut store = PostgresStore::open(&url).unwrap();
    for name in sessions {
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
                sessions: &sessions,
                messages: PER_WORKER,
                pad: 64,
                go: &go,
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    std::fs::write(&go, "").unwrap();
    let mut retries = 0usize;
    for child in &mut children {
        let lines = fleet::lines(child);
        assert!(child.wait().unwrap().success(), "{lines:?}");
        let committed = lines.iter().filter(|l| l.starts_with("committed ")).count();
        assert_eq!(committed, PER_WORKER, "{lines:?}");
        retries += lines
            .iter()
            .find_map(|l| l.strip_prefix("retries "))
            .unwrap()
            .parse::<usize>()
            .unwrap();
    }
    let elapsed = started.elapsed();
    let mut seen = BTreeSet::new();
    let mut total = 0;
    for session in sessions {
        let log = log_of(&store, session);
        total += log.len();
        // Each worker's messages in this session are in the order it sent them.
        let mut last: BTreeMap<usize, usize> = BTreeMap::new();
        for &(worker, index) in &log {
            assert!(seen.insert((worker, index)), "duplicated {worker} {index}");
            assert_eq!(sessions[(index + worker) % sessions.len()], session);
            if let Some(previous) = last.insert(worker, index) {
                assert!(previous < index, "{session}: worker {worker} reordered");
            }
        }
        let info = store.session_info(session).unwrap();
        assert_eq!(
            (info.messages, info.last_seq),
            (log.len() as u64, log.len() as u64)
        );
    }
    assert_eq!(total, WORKERS * PER_WORKER, "nothing lost");
    eprintln!(
        "fleet: {total} messages by {WORKERS} processes in {elapsed:?} \
         ({retries} lost races retried)"
    );
}

#[test]
fn two_workers_preparing_one_turn_store_one_checkpoint_and_both_views_are_valid() {
    let Some(server) = postgres_url("fleet_turns") else {
        return;
    };
    let url = fresh_database(&server, "fleet_turns");
    for round in 0..4 {
        fleet::race_one_turn(&url, &url, &format!("turn{round}"), &|| {});
    }
}

#[test]
fn a_worker_killed_mid_append_loses_only_its_uncommitted_message() {
    let Some(server) = postgres_url("fleet_kill") else {
        return;
    };
    let url = fresh_database(&server, "fleet_kill");
    let mut store = PostgresStore::open(&url).unwrap();
    store
        .create_session("k", ctxkit::core::ModelFamily::OpenAi, 1)
        .unwrap();
    let go = tempfile::tempdir().unwrap();
    let go = go.path().join("go");
    std::fs::write(&go, "").unwrap();
    let orders = |worker| Orders {
        url: &url,
        worker,
        sessions: &["k"],
        messages: 100_000,
        pad: 200_000,
        go: &go,
    };
    let mut victim = fleet::spawn(&orders(0));
    // Let it commit some, then kill it wherever it is (most of its time is inside appends).
    let deadline = Instant::now() + Duration::from_secs(30);
    while store.session_info("k").unwrap().messages < 20 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    victim.kill().unwrap();
    let printed = fleet::lines(&mut victim);
    victim.wait().unwrap();
    let log = log_of(&store, "k");
    // Exactly the messages 0..n, each whole: nothing half-written, none skipped.
    let indexes: Vec<usize> = log.iter().map(|&(_, index)| index).collect();
    assert_eq!(indexes, (0..log.len()).collect::<Vec<_>>());
    let exported = store.export_session("k").unwrap();
    for entry in &exported.entries {
        let whole = format!(
            "{} {}",
            message_text(0, entry.seq as usize - 1),
            "p".repeat(200_000)
        );
        assert!(entry.message.text_content() == whole, "seq {}", entry.seq);
    }
    // What it printed as committed is in the log (a commit may land before its line).
    let committed = printed
        .iter()
        .filter(|l| l.starts_with("committed "))
        .count();
    assert!(
        committed <= log.len() && log.len() <= committed + 1,
        "{committed} {}",
        log.len()
    );

    // The next worker carries on at once: the killed one holds no lock.
    let started = Instant::now();
    let mut next = fleet::spawn(&Orders {
        messages: 5,
        pad: 10,
        ..orders(1)
    });
    let lines = fleet::lines(&mut next);
    assert!(next.wait().unwrap().success(), "{lines:?}");
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(log_of(&store, "k").len(), log.len() + 5);
}
