//! The PostgreSQL server restarted while a fleet appends: 4 worker processes appending to 2
//! shared sessions get clear errors (naming the server, saying the connection was lost or
//! refused) while it is down, and resume by themselves once it is back; no message is lost or
//! stored twice, and `seq` stays contiguous.
//!
//! In the `alone` test binary, one at a time, since it stops the server every test uses (see
//! `alone/main.rs`). The server is the one `scripts/pg-server.sh` started; its data
//! directory, `pg_ctl` and the user it runs as come from the environment it exports (its log
//! is `server.log` beside the data directory).

use std::collections::BTreeSet;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::backends::{fresh_database, postgres_url};
use crate::common::fleet::{self, Orders};
use ctxkit::store::{PostgresStore, SessionStore};

const WORKERS: usize = 4;
const PER_WORKER: usize = 300;

/// `pg_ctl restart` on the test server, as the user it runs as.
fn restart_server() {
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
    // The new server's output goes to the log, never to a pipe of ours: it would hold the
    // pipe open as long as it runs.
    let log = std::path::Path::new(&data).with_file_name("server.log");
    let status = command
        .args(["-D", &data, "-m", "fast", "-w", "-t", "60", "-l"])
        .arg(&log)
        .arg("restart")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(
        status.success(),
        "pg_ctl restart: {status:?} (see {})",
        log.display()
    );
}

#[test]
fn workers_get_clear_errors_while_the_server_restarts_and_resume() {
    let _alone = crate::one_at_a_time();
    let Some(server) = postgres_url("fleet_restart") else {
        return;
    };
    if std::env::var("CTXKIT_TEST_POSTGRES_DATA").is_err() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true: CTXKIT_TEST_POSTGRES_DATA must name the server's data directory"
        );
        eprintln!("fleet_restart: skipped: the server is not scripts/pg-server.sh's");
        return;
    }
    let url = fresh_database(&server, "fleet_restart");
    let sessions = ["r0", "r1"];
    let mut store = PostgresStore::open(&url).unwrap();
    for name in sessions {
        store
            .create_session(name, ctxkit::core::ModelFamily::OpenAi, 1)
            .unwrap();
    }
    drop(store);
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
    std::fs::write(&go, "").unwrap();
    // Mid-run: some messages are in, most are not.
    let watcher = PostgresStore::open(&url).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while watcher.session_info("r0").unwrap().messages < 50 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    drop(watcher);
    restart_server();
    let mut errors = Vec::new();
    for child in &mut children {
        let lines = fleet::lines(child);
        assert!(child.wait().unwrap().success(), "{lines:?}");
        let committed = lines.iter().filter(|l| l.starts_with("committed ")).count();
        assert_eq!(committed, PER_WORKER, "{lines:?}");
        errors.extend(lines.into_iter().filter(|l| l.starts_with("error: ")));
    }
    assert!(!errors.is_empty(), "the restart was felt");
    for error in &errors {
        assert!(error.contains("PostgreSQL at 127.0.0.1:"), "{error}");
        assert_eq!(error.lines().count(), 1, "{error}");
    }
    eprintln!(
        "fleet_restart: {} errors while the server restarted, e.g. {:?}",
        errors.len(),
        errors.first()
    );
    let store = PostgresStore::open(&url).unwrap();
    let mut seen = BTreeSet::new();
    for session in sessions {
        let exported = store.export_session(session).unwrap();
        for (position, entry) in exported.entries.iter().enumerate() {
            assert_eq!(
                entry.seq,
                position as u64 + 1,
                "{session}: seqs are contiguous"
            );
            let text = entry.message.text_content();
            let id = text.split(']').next().unwrap().to_owned();
            assert!(seen.insert(id.clone()), "{session}: {id} stored twice");
        }
    }
    assert_eq!(seen.len(), WORKERS * PER_WORKER, "nothing lost");
}
