//! Finding 4, lost acknowledgements (PostgreSQL only): a loopback TCP proxy in front of the
//! server, directly and in front of PgBouncer, lets a keyed append's `COMMIT` through, waits
//! for the server's `CommandComplete` for it (so the commit is stored), drops that answer and
//! closes both sides. The append must fail as retryable; its retry with the same key (the
//! caller's, then one derived from the seq it follows) must store nothing. Counted: batches
//! stored twice after a keyed retry.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use ctxkit::core::Message;
use ctxkit::store::{PostgresStore, SessionStore};
use ctxkit::{AppendKey, Engine, EngineConfig};

use crate::Row;

/// `COMMIT` as a simple query: `Q`, its length (4 + 7), the text, its NUL.
const COMMIT: &[u8] = b"Q\0\0\0\x0bCOMMIT\0";
/// The server's `CommandComplete` for it.
const COMMIT_DONE: &[u8] = b"C\0\0\0\x0bCOMMIT\0";

fn holds(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle)
}

/// The proxy: armed, it cuts the next keyed transaction after its `COMMIT` was answered.
struct Proxy {
    port: u16,
    armed: Arc<AtomicBool>,
}

impl Proxy {
    fn start(upstream: String) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the proxy");
        let port = listener.local_addr().expect("its address").port();
        let armed = Arc::new(AtomicBool::new(false));
        let shared = armed.clone();
        thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let Ok(server) = TcpStream::connect(&upstream) else {
                    continue;
                };
                let armed = shared.clone();
                thread::spawn(move || relay(client, server, &armed));
            }
        });
        Proxy { port, armed }
    }
}

/// Server to client: forwarded until the cut, then only read, until the COMMIT's answer.
fn answers(
    mut from_server: TcpStream,
    mut to_client: TcpStream,
    cut: &AtomicBool,
    answered: &AtomicBool,
) {
    let mut buffer = [0u8; 65536];
    let mut after_cut = Vec::new();
    while let Ok(read) = from_server.read(&mut buffer) {
        if read == 0 {
            break;
        }
        if cut.load(Ordering::SeqCst) {
            after_cut.extend_from_slice(&buffer[..read]);
            answered.store(holds(&after_cut, COMMIT_DONE), Ordering::SeqCst);
            continue;
        }
        if to_client.write_all(&buffer[..read]).is_err() {
            break;
        }
    }
    let _ = to_client.shutdown(Shutdown::Both);
}

fn relay(client: TcpStream, server: TcpStream, armed: &AtomicBool) {
    let cut = Arc::new(AtomicBool::new(false));
    let answered = Arc::new(AtomicBool::new(false));
    let (Ok(from_server), Ok(to_client)) = (server.try_clone(), client.try_clone()) else {
        return;
    };
    let (cut_reader, answered_reader) = (cut.clone(), answered.clone());
    thread::spawn(move || answers(from_server, to_client, &cut_reader, &answered_reader));
    let (Ok(mut from_client), Ok(mut to_server)) = (client.try_clone(), server.try_clone()) else {
        return;
    };
    let mut keyed = false;
    let mut buffer = [0u8; 65536];
    while let Ok(read) = from_client.read(&mut buffer) {
        if read == 0 {
            break;
        }
        let chunk = &buffer[..read];
        keyed |= holds(chunk, b"INSERT INTO append_keys");
        let cutting = keyed && holds(chunk, COMMIT) && armed.swap(false, Ordering::SeqCst);
        cut.store(cut.load(Ordering::SeqCst) || cutting, Ordering::SeqCst);
        if to_server.write_all(chunk).is_err() {
            break;
        }
        if holds(chunk, COMMIT) {
            keyed = false;
        }
        if cutting {
            let until = Instant::now() + Duration::from_secs(30);
            while !answered.load(Ordering::SeqCst) && Instant::now() < until {
                thread::sleep(Duration::from_millis(5));
            }
            let _ = client.shutdown(Shutdown::Both);
            let _ = server.shutdown(Shutdown::Both);
            break;
        }
    }
}

/// A new database on the server at `url`; its URL.
fn fresh_database(url: &str, name: &str) -> String {
    let mut admin = postgres::Client::connect(url, postgres::NoTls).expect("connect to PostgreSQL");
    admin
        .batch_execute(&format!("CREATE DATABASE \"{name}\""))
        .expect("create a database");
    let (base, _) = url.rsplit_once('/').expect("a URL with a database");
    format!("{base}/{name}")
}

/// `url` with its host and port the proxy's (TLS off: the proxy reads the messages).
fn through_proxy(url: &str) -> (String, Proxy) {
    let (scheme_user, rest) = url.split_once('@').expect("user@host");
    let (authority, path) = rest.split_once('/').expect("host/database");
    let path = path.split_once('?').map_or(path, |(path, _)| path);
    let proxy = Proxy::start(authority.to_owned());
    let proxied = format!(
        "{scheme_user}@127.0.0.1:{}/{path}?sslmode=disable",
        proxy.port
    );
    (proxied, proxy)
}

/// Counts over every case.
#[derive(Default)]
struct Tally {
    cases: usize,
    cut: usize,
    twice: usize,
    failures: usize,
    notes: Vec<String>,
}

/// Two lost acknowledgements (a given key, a derived one) on the database `direct`, reached
/// at `url`.
fn lost_acknowledgements(what: &str, direct: &str, url: &str, tally: &mut Tally) {
    let (proxied, proxy) = through_proxy(url);
    let dir = tempfile::tempdir().expect("a folder");
    let mut engine = Engine::open(&proxied, dir.path(), EngineConfig::default())
        .expect("open through the proxy");
    engine.create_session("s").expect("a session");
    let check = PostgresStore::open(direct).expect("open directly");
    let batch = |text: &str| {
        vec![
            Message::user(text),
            Message::assistant("On it.", Vec::new()),
        ]
    };
    let keys = [
        ("given key", AppendKey::Given("turn-1".to_owned())),
        ("derived key", AppendKey::After(2)),
    ];
    for (expected, (kind, key)) in [2, 4].into_iter().zip(keys) {
        tally.cases += 1;
        proxy.armed.store(true, Ordering::SeqCst);
        let lost = engine.record_batch_keyed("s", batch(kind), false, key.clone());
        let stored = check
            .session_info("s")
            .map(|info| info.messages)
            .unwrap_or(0);
        if lost.as_ref().is_err_and(ctxkit::Error::is_retryable) && stored == expected {
            tally.cut += 1;
        } else {
            tally.notes.push(format!(
                "{what}, {kind}: the cut was not made ({lost:?}, {stored} stored)"
            ));
        }
        let retried = engine.record_batch_keyed("s", batch(kind), false, key);
        let stored = check
            .session_info("s")
            .map(|info| info.messages)
            .unwrap_or(0);
        let repeated = retried.as_ref().is_ok_and(|outcome| outcome.repeated);
        if stored > expected {
            tally.twice += 1;
        }
        if stored != expected || !repeated {
            tally.failures += 1;
            tally.notes.push(format!("{what}, {kind}: {stored} messages after the retry, expected {expected}; retry: {:?}", retried.map(|o| o.repeated)));
        }
    }
}

/// The row of finding 4 after `runs` runs, or `None` when no database URL is set.
pub fn probe(runs: usize) -> Row {
    let url = ["CTXKIT_TEST_POSTGRES_URL", "CTXKIT_TEST_DATABASE_URL"]
        .iter()
        .find_map(|name| std::env::var(name).ok().filter(|url| !url.is_empty()));
    let finding = "4. lost acknowledgements (COMMIT's answer dropped, keyed retry)".to_owned();
    let failure = "a batch stored twice, or the retry not reported as a repeat".to_owned();
    let Some(url) = url else {
        return Row {
            finding,
            cases: 0,
            failure,
            failures: 0,
            figure:
                "skipped: no database (set CTXKIT_TEST_POSTGRES_URL: source scripts/pg-server.sh)"
                    .to_owned(),
            notes: Vec::new(),
        };
    };
    let bouncer = std::env::var("CTXKIT_TEST_PGBOUNCER_URL")
        .ok()
        .filter(|url| !url.is_empty());
    let mut tally = Tally::default();
    for run in 0..runs {
        let name = format!("hostile_probe_{}_{run}", std::process::id());
        let direct = fresh_database(&url, &name);
        lost_acknowledgements("direct", &direct, &direct, &mut tally);
        if let Some(bouncer) = &bouncer {
            let pooled_name = format!("{name}_pool");
            let direct = fresh_database(&url, &pooled_name);
            let (base, _) = bouncer.rsplit_once('/').expect("a URL with a database");
            lost_acknowledgements(
                "PgBouncer",
                &direct,
                &format!("{base}/{pooled_name}"),
                &mut tally,
            );
        }
    }
    let through = if bouncer.is_some() {
        "directly and through PgBouncer"
    } else {
        "directly (PgBouncer skipped: no CTXKIT_TEST_PGBOUNCER_URL)"
    };
    Row {
        finding,
        cases: tally.cases,
        failure,
        failures: tally.failures,
        figure: format!(
            "batches stored twice after a keyed retry: {} of {} ({through}; acknowledgement cut after the commit in {} of {})",
            tally.twice, tally.cases, tally.cut, tally.cases
        ),
        notes: tally.notes,
    }
}
