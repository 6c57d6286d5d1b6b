//! Worker processes of a fleet, for the PostgreSQL fleet tests: each is the test binary itself,
//! run with `--exact common::fleet::fleet_worker` and the worker's orders in the environment, appending
//! messages through its own engine, retrying what [`ctxkit::Error::is_retryable`] says may
//! succeed, and printing one line per committed message (`committed S I`) and per error
//! (`error: ...`).
//!
//! Every message is `[wW iI]`, unique in the fleet. After an error that may have committed
//! (a connection lost during the commit), the worker looks for its message before appending
//! it again, so a retry never stores it twice.
//!
//! Also [`race_one_turn`]: two workers preparing one session's turn at once.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};

use ctxkit::core::recall::SearchRequest;
use ctxkit::core::Message;
use ctxkit::store::{PostgresStore, SessionStore};
use ctxkit::{Engine, EngineConfig, Error, Result, TurnResult};

const URL: &str = "CTXKIT_FLEET_URL";
const WORKER: &str = "CTXKIT_FLEET_WORKER";
const SESSIONS: &str = "CTXKIT_FLEET_SESSIONS";
const MESSAGES: &str = "CTXKIT_FLEET_MESSAGES";
const PAD: &str = "CTXKIT_FLEET_PAD";
const GO: &str = "CTXKIT_FLEET_GO";

/// How long a worker keeps retrying one message before it gives up.
const PATIENCE: Duration = Duration::from_secs(60);

/// The text of worker `worker`'s message `index`.
pub fn message_text(worker: usize, index: usize) -> String {
    format!("[w{worker} i{index}]")
}

/// What a worker is told to do.
pub struct Orders<'a> {
    /// The database.
    pub url: &'a str,
    /// The worker's number.
    pub worker: usize,
    /// The sessions it appends to, in turn.
    pub sessions: &'a [&'a str],
    /// How many messages it appends.
    pub messages: usize,
    /// Bytes of padding per message (longer transactions).
    pub pad: usize,
    /// A file whose existence says "start".
    pub go: &'a Path,
}

/// Starts a worker process with `orders`, its standard output piped.
pub fn spawn(orders: &Orders<'_>) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", &super::test_name(module_path!(), "fleet_worker")])
        .args(["--nocapture", "--test-threads=1"])
        .env(URL, orders.url)
        .env(WORKER, orders.worker.to_string())
        .env(SESSIONS, orders.sessions.join(","))
        .env(MESSAGES, orders.messages.to_string())
        .env(PAD, orders.pad.to_string())
        .env(GO, orders.go)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// The lines a worker printed, read to its end.
pub fn lines(child: &mut Child) -> Vec<String> {
    let stdout = child.stdout.take().unwrap();
    BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        .collect()
}

/// The worker process, in every test binary that has this module: [`spawn`] runs the binary
/// with `--exact` naming this test; nothing to do as a test of the suite.
#[test]
fn fleet_worker() {
    worker_main();
}

/// Runs the worker the environment describes; does nothing without one (as a test of the
/// suite).
pub fn worker_main() {
    let Ok(url) = std::env::var(URL) else {
        return;
    };
    let var = |name: &str| std::env::var(name).unwrap();
    let worker: usize = var(WORKER).parse().unwrap();
    let sessions: Vec<String> = var(SESSIONS).split(',').map(str::to_owned).collect();
    let messages: usize = var(MESSAGES).parse().unwrap();
    let pad: usize = var(PAD).parse().unwrap();
    let go = std::path::PathBuf::from(var(GO));
    let workdir = tempfile::tempdir().unwrap();
    let deadline = Instant::now() + PATIENCE;
    let mut engine = loop {
        match Engine::open(&url, workdir.path(), EngineConfig::default()) {
            Ok(engine) => break engine,
            Err(error) if error.is_retryable() && Instant::now() < deadline => {
                println!("error: {error}");
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(error) => panic!("worker {worker}: {error}"),
        }
    };
    while !go.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(2));
    }
    // Its own line: libtest printed "test fleet_worker ... " without a newline.
    println!();
    let mut retries = 0usize;
    for index in 0..messages {
        let session = &sessions[(index + worker) % sessions.len()];
        let text = message_text(worker, index);
        let padded = format!("{text} {}", "p".repeat(pad));
        let started = Instant::now();
        let mut maybe_committed = false;
        loop {
            if maybe_committed && already_stored(&engine, session, &text) {
                break;
            }
            match engine.record_batch(session, vec![Message::user(padded.clone())], false) {
                Ok(_) => break,
                Err(error) if error.is_retryable() && started.elapsed() < PATIENCE => {
                    retries += 1;
                    if !matches!(error, Error::SeqConflict { .. }) {
                        println!("error: {error}");
                        maybe_committed = true;
                        std::thread::sleep(Duration::from_millis(20));
                    }
                }
                Err(error) => panic!("worker {worker}, message {index}: {error}"),
            }
        }
        println!("committed {session} {index}");
    }
    println!("retries {retries}");
}

/// Whether `text` is in `session`'s log already (a commit whose answer was lost). A search
/// that fails retryably (the server is still coming back, or the pool handed out a connection
/// that died with it) is asked again rather than taken as a no: a no sends the append again,
/// and if the lost commit had landed the message would be stored twice.
fn already_stored(engine: &Engine, session: &str, text: &str) -> bool {
    let Ok(request) = SearchRequest::new(text, Some(1)) else {
        return false;
    };
    let started = Instant::now();
    loop {
        match engine.search_history(session, &request) {
            Ok(found) => return found.hits.iter().any(|hit| hit.exact),
            Err(error) if error.is_retryable() && started.elapsed() < PATIENCE => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(_) => return false,
        }
    }
}

/// How many calls [`retrying`] retried, in this process.
pub static RETRIED: AtomicUsize = AtomicUsize::new(0);

/// `call` again while it fails with an error a retry may cure ([`Error::is_retryable`]: a lost
/// connection, a pooler restarting), for at most [`PATIENCE`].
pub fn retrying<T>(mut call: impl FnMut() -> Result<T>) -> T {
    let started = Instant::now();
    loop {
        match call() {
            Ok(value) => return value,
            Err(error) if error.is_retryable() && started.elapsed() < PATIENCE => {
                RETRIED.fetch_add(1, Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(error) => panic!("{error}"),
        }
    }
}

/// Two workers preparing one session's turn at once, through `url`: `setup` (a URL that stays
/// up) creates `session` and logs 40 turns on a tiny window, so a compaction is due; then two
/// threads, each with an engine of its own on `url`, read the session and, at a barrier,
/// prepare its turn together (retrying what a retry may cure), while this thread runs
/// `at_start` (a pooler restarted under the racing turns, say). The race is resolved: one
/// checkpoint is stored and none is lost, both views fit, carry the stored checkpoint's
/// summary, end with the last message, and are valid for OpenAI.
pub fn race_one_turn(setup: &str, url: &str, session: &str, at_start: &dyn Fn()) {
    let workdir = tempfile::tempdir().unwrap();
    let mut engine = Engine::open(setup, workdir.path(), super::small_window_config()).unwrap();
    engine.create_session(session).unwrap();
    for turn in 0..40 {
        engine.record(session, super::turn_messages(turn)).unwrap();
    }
    let barrier = Arc::new(Barrier::new(3));
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let (url, session, barrier) = (url.to_owned(), session.to_owned(), barrier.clone());
            std::thread::spawn(move || -> TurnResult {
                let workdir = tempfile::tempdir().unwrap();
                let config = super::small_window_config;
                let mut engine = retrying(|| Engine::open(&url, workdir.path(), config()));
                // Both read the session first, then plan and store at once.
                retrying(|| engine.session_info(&session));
                barrier.wait();
                retrying(|| engine.prepare_turn(&session))
            })
        })
        .collect();
    barrier.wait();
    at_start();
    let views: Vec<TurnResult> = workers.into_iter().map(|w| w.join().unwrap()).collect();
    let exported = PostgresStore::open(setup)
        .unwrap()
        .export_session(session)
        .unwrap();
    assert_eq!(exported.checkpoints.len(), 1, "{session}: one checkpoint");
    let summary = &exported.checkpoints[0].summary;
    for view in &views {
        assert!(view.stats.fits, "{session}");
        let text: Vec<String> = view
            .messages
            .iter()
            .map(|m| m.text_content().into_owned())
            .collect();
        assert!(
            text.iter()
                .any(|t| t.contains(summary.lines().nth(1).unwrap_or(""))),
            "{session}: the view carries the stored checkpoint's summary"
        );
        assert_eq!(
            view.messages.last().map(Message::text_content),
            exported.entries.last().map(|e| e.message.text_content())
        );
        let violations = ctxkit::core::wire::validate_openai(&view.to_openai());
        assert!(violations.is_empty(), "{session}: {violations:?}");
    }
}
