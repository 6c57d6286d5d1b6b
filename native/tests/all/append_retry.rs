//! Appends that can be retried (issue 34 item 4): an append under an idempotency key (the
//! caller's, or derived from the batch and the seq it must follow) is stored once, however often
//! it is run. On PostgreSQL, directly and through PgBouncer, a loopback proxy in front of the
//! server lets an append's `COMMIT` through and drops the server's answer (the connection cut
//! between the commit and its acknowledgement): the append fails, the batch is stored, and the
//! retry with its key returns the first seqs and stores nothing. Without a key the same retry
//! stores the batch twice (the finding).

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use crate::common::backends::{fresh_database, postgres_url};
use ctxkit::core::Message;
use ctxkit::store::{PostgresStore, SessionStore, SqliteStore};
use ctxkit::{AppendKey, Engine, EngineConfig, Error};

fn batch(text: &str) -> Vec<Message> {
    vec![
        Message::user(text),
        Message::assistant("On it.", Vec::new()),
    ]
}

#[test]
fn a_keyed_append_is_stored_once_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ctxkit.db");
    let mut engine = Engine::open(&db, dir.path(), EngineConfig::default()).unwrap();
    let key = || AppendKey::Given("turn-1".to_owned());
    let first = engine
        .record_batch_keyed("s", batch("fix it"), true, key())
        .unwrap();
    assert!(!first.repeated);
    let again = engine
        .record_batch_keyed("s", batch("fix it"), true, key())
        .unwrap();
    assert!(again.repeated);
    assert_eq!(again.recorded, first.recorded);
    assert_eq!(engine.session_info("s").unwrap().messages, 2);

    // Derived from the seq it follows: the same batch there is stored once; an equal batch
    // after it is a new one; a batch that names a seq the log moved past is refused.
    let after = engine
        .record_batch_keyed("s", batch("go on"), false, AppendKey::After(2))
        .unwrap();
    assert_eq!(after.recorded.first().unwrap().seq, 3);
    let retried = engine
        .record_batch_keyed("s", batch("go on"), false, AppendKey::After(2))
        .unwrap();
    assert!(retried.repeated);
    assert_eq!(retried.recorded, after.recorded);
    let next = engine
        .record_batch_keyed("s", batch("go on"), false, AppendKey::After(4))
        .unwrap();
    assert!(!next.repeated);
    let stale = engine.record_batch_keyed("s", batch("other"), false, AppendKey::After(4));
    assert!(matches!(stale, Err(Error::SeqConflict { .. })), "{stale:?}");
    assert_eq!(engine.session_info("s").unwrap().messages, 6);
    assert!(engine
        .record_batch_keyed("s", batch("x"), false, AppendKey::Given(String::new()))
        .is_err());
}

#[test]
fn a_database_from_before_the_keys_is_migrated() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ctxkit.db");
    let mut store = SqliteStore::open(&db).unwrap();
    store
        .create_session("s", ctxkit::core::tokens::ModelFamily::Claude, 0)
        .unwrap();
    drop(store);
    let connection = rusqlite::Connection::open(&db).unwrap();
    connection
        .execute_batch("DROP TABLE append_keys; PRAGMA user_version = 8;")
        .unwrap();
    drop(connection);
    let mut engine = Engine::open(&db, dir.path(), EngineConfig::default()).unwrap();
    let key = || AppendKey::Given("k".to_owned());
    engine
        .record_batch_keyed("s", batch("a"), false, key())
        .unwrap();
    let again = engine
        .record_batch_keyed("s", batch("a"), false, key())
        .unwrap();
    assert!(again.repeated);
    assert_eq!(engine.session_info("s").unwrap().messages, 2);
}

#[test]
fn the_cli_append_with_a_key_stores_once() {
    let dir = tempfile::tempdir().unwrap();
    let run = || {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_ctxkit"))
            .arg("--workdir")
            .arg(dir.path())
            .args(["append", "s", "--create", "--key", "turn-7"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let input = r#"[{"role":"user","content":"hello"}]"#;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "{output:?}");
        String::from_utf8(output.stdout).unwrap()
    };
    assert!(run().starts_with("appended 1 message(s) to s (seq 1–1)"));
    let again = run();
    assert!(again.starts_with("already appended (same key, nothing stored): 1 message(s)"));
    let store = SqliteStore::open(dir.path().join(".ctxkit/ctxkit.db")).unwrap();
    assert_eq!(store.session_info("s").unwrap().messages, 1);
}

/// A loopback proxy to `upstream` that, once armed, lets the `COMMIT` of the next transaction
/// that stores an append key reach the server, waits for the server's answer, drops it and
/// closes both connections: the commit happened, its acknowledgement never arrives.
struct Proxy {
    port: u16,
    armed: Arc<AtomicBool>,
}

/// `COMMIT` as a simple query message: `Q`, the length (4 + 7), the text and its NUL.
const COMMIT: &[u8] = b"Q\0\0\0\x0bCOMMIT\0";

/// The server's `CommandComplete` for it: `C`, the same length, the tag `COMMIT` and its NUL.
const COMMIT_DONE: &[u8] = b"C\0\0\0\x0bCOMMIT\0";

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle)
}

impl Proxy {
    fn start(upstream: String) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let armed = Arc::new(AtomicBool::new(false));
        let shared = armed.clone();
        thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let server = TcpStream::connect(&upstream).unwrap();
                let armed = shared.clone();
                thread::spawn(move || relay(client, server, armed));
            }
        });
        Proxy { port, armed }
    }
}

/// Relays one connection both ways (see [`Proxy`]).
fn relay(client: TcpStream, server: TcpStream, armed: Arc<AtomicBool>) {
    let cut = Arc::new(AtomicBool::new(false));
    let answered = Arc::new(Mutex::new(false));
    let (mut from_server, mut to_client) =
        (server.try_clone().unwrap(), client.try_clone().unwrap());
    let (cut_reply, answered_reply) = (cut.clone(), answered.clone());
    thread::spawn(move || {
        let mut buffer = [0u8; 65536];
        let mut after_cut = Vec::new();
        while let Ok(read) = from_server.read(&mut buffer) {
            if read == 0 {
                break;
            }
            if cut_reply.load(Ordering::SeqCst) {
                // Only the COMMIT's own completion says it is stored: an earlier statement's
                // answer may arrive first, and closing then would reset the connection before
                // the server read the COMMIT (a race CI once lost).
                after_cut.extend_from_slice(&buffer[..read]);
                if contains(&after_cut, COMMIT_DONE) {
                    *answered_reply.lock().unwrap() = true;
                }
                continue;
            }
            if to_client.write_all(&buffer[..read]).is_err() {
                break;
            }
        }
        let _ = to_client.shutdown(Shutdown::Both);
    });
    let (mut from_client, mut to_server) =
        (client.try_clone().unwrap(), server.try_clone().unwrap());
    let mut keyed = false;
    let mut buffer = [0u8; 65536];
    while let Ok(read) = from_client.read(&mut buffer) {
        if read == 0 {
            break;
        }
        let chunk = &buffer[..read];
        keyed |= contains(chunk, b"INSERT INTO append_keys");
        let drop_answer = keyed && contains(chunk, COMMIT) && armed.swap(false, Ordering::SeqCst);
        if drop_answer {
            cut.store(true, Ordering::SeqCst);
        }
        if to_server.write_all(chunk).is_err() {
            break;
        }
        if contains(chunk, COMMIT) {
            keyed = false;
        }
        if drop_answer {
            // The server answered the COMMIT: it is stored. Then the connection goes.
            for _ in 0..3000 {
                if *answered.lock().unwrap() {
                    break;
                }
                thread::sleep(Duration::from_millis(10));
            }
            let _ = client.shutdown(Shutdown::Both);
            let _ = server.shutdown(Shutdown::Both);
            break;
        }
    }
}

/// `url` (postgres://user@host:port/db) with its host and port replaced by the proxy's and
/// TLS off (the proxy reads the messages); the proxy's upstream is the URL's host and port.
fn through_proxy(url: &str) -> (String, Proxy) {
    let (scheme_user, rest) = url.split_once('@').unwrap();
    let (authority, path) = rest.split_once('/').unwrap();
    let proxy = Proxy::start(authority.to_owned());
    let path = path.split_once('?').map_or(path, |(path, _)| path);
    let proxied = format!(
        "{scheme_user}@127.0.0.1:{}/{path}?sslmode=disable",
        proxy.port
    );
    (proxied, proxy)
}

/// A keyed append whose acknowledgement is lost, then retried, on the database at `direct`
/// reached at `url` (directly or through a pooler).
fn lost_acknowledgement(direct: &str, url: &str) {
    let (proxied, proxy) = through_proxy(url);
    let dir = tempfile::tempdir().unwrap();
    let mut engine = Engine::open(&proxied, dir.path(), EngineConfig::default()).unwrap();
    engine.create_session("s").unwrap();
    let key = || AppendKey::Given("turn-1".to_owned());

    proxy.armed.store(true, Ordering::SeqCst);
    let lost = engine.record_batch_keyed("s", batch("fix it"), false, key());
    assert!(lost.as_ref().is_err_and(Error::is_retryable), "{lost:?}");
    let check = PostgresStore::open(direct).unwrap();
    assert_eq!(
        check.session_info("s").unwrap().messages,
        2,
        "the commit was stored"
    );

    let retried = engine
        .record_batch_keyed("s", batch("fix it"), false, key())
        .unwrap();
    assert!(retried.repeated);
    let seqs: Vec<u64> = retried.recorded.iter().map(|r| r.seq).collect();
    assert_eq!(seqs, [1, 2]);
    assert_eq!(check.session_info("s").unwrap().messages, 2, "stored once");

    // Derived from the seq it follows: the same.
    proxy.armed.store(true, Ordering::SeqCst);
    let lost = engine.record_batch_keyed("s", batch("go on"), false, AppendKey::After(2));
    assert!(lost.is_err());
    let retried = engine
        .record_batch_keyed("s", batch("go on"), false, AppendKey::After(2))
        .unwrap();
    assert!(retried.repeated);
    assert_eq!(check.session_info("s").unwrap().messages, 4, "stored once");
}

#[test]
fn a_lost_acknowledgement_retried_with_its_key_stores_once_on_postgres() {
    let Some(url) = postgres_url("a_lost_acknowledgement_retried_with_its_key") else {
        return;
    };
    let direct = fresh_database(&url, "append_retry");
    lost_acknowledgement(&direct, &direct);
}

#[test]
fn a_lost_acknowledgement_retried_with_its_key_stores_once_through_pgbouncer() {
    let Some(url) = postgres_url("a_lost_acknowledgement_through_pgbouncer") else {
        return;
    };
    let Ok(bouncer) = std::env::var("CTXKIT_TEST_PGBOUNCER_URL") else {
        eprintln!("PgBouncer skipped: CTXKIT_TEST_PGBOUNCER_URL is not set");
        return;
    };
    let direct = fresh_database(&url, "append_retry_pool");
    let database = direct.rsplit_once('/').unwrap().1;
    let (base, _) = bouncer.rsplit_once('/').unwrap();
    lost_acknowledgement(&direct, &format!("{base}/{database}"));
}

#[test]
fn without_a_key_the_same_retry_stores_twice() {
    let Some(url) = postgres_url("without_a_key_the_same_retry_stores_twice") else {
        return;
    };
    let direct = fresh_database(&url, "append_retry_plain");
    let (proxied, proxy) = through_proxy(&direct);
    let dir = tempfile::tempdir().unwrap();
    let mut engine = Engine::open(&proxied, dir.path(), EngineConfig::default()).unwrap();
    engine.create_session("s").unwrap();
    // A keyed append arms the cut; the plain one after it shows what a retry without a key
    // does: the proxy cuts only a keyed transaction, so the plain batch is lost by hand here.
    proxy.armed.store(true, Ordering::SeqCst);
    assert!(engine
        .record_batch_keyed("s", batch("fix it"), false, AppendKey::Given("k".into()))
        .is_err());
    // The caller without a key cannot tell the batch was stored, and retries it.
    engine.record_batch("s", batch("fix it"), false).unwrap();
    let check = PostgresStore::open(&direct).unwrap();
    assert_eq!(check.session_info("s").unwrap().messages, 4, "stored twice");
}
