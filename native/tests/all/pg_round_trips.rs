//! How many round trips a PostgreSQL search takes, counted by a loopback proxy between the
//! store and the server (each time the client speaks again after the server answered is one):
//! a memory search is one statement, a history search of a word among the newest messages is
//! two (its pass, which reads the session's row with its hits, and the calls of the tool results
//! it found), with no `BEGIN` or `COMMIT` around them, and [`PostgresStore::ping`] one. Their
//! answers are the same as a store's whose schema makes it run them in a transaction, and as
//! through PgBouncer in transaction mode; an unknown session is still
//! [`ctxkit::Error::NoSuchSession`].

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;

use crate::common::backends::pooled;
use crate::common::backends::{fresh_database, postgres_url, Backend};
use ctxkit::core::model::Entry;
use ctxkit::core::recall::SearchRequest;
use ctxkit::core::tokens::ModelFamily;
use ctxkit::core::{Message, ToolCall};
use ctxkit::store::{
    HistoryStore, MemoryQuery, MemoryStore, NewMemory, PostgresStore, SessionStore,
};

const FAMILY: ModelFamily = ModelFamily::OpenAi;

/// A proxy on a free loopback port in front of `server` (`host:port`) that counts round trips
/// of every connection made through it.
struct Proxy {
    port: u16,
    round_trips: Arc<AtomicUsize>,
}

impl Proxy {
    fn start(server: String) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let round_trips = Arc::new(AtomicUsize::new(0));
        let counter = round_trips.clone();
        thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { return };
                let server = TcpStream::connect(&server).unwrap();
                // Whether the server spoke last on this connection: the client speaking then
                // starts a round trip.
                let answered = Arc::new(AtomicBool::new(true));
                let pipe = |mut from: TcpStream, mut to: TcpStream, client_side: bool| {
                    let (answered, counter) = (answered.clone(), counter.clone());
                    thread::spawn(move || {
                        let mut buffer = [0u8; 16 * 1024];
                        loop {
                            let read = match from.read(&mut buffer) {
                                Ok(0) | Err(_) => break,
                                Ok(read) => read,
                            };
                            if client_side && answered.swap(false, Ordering::SeqCst) {
                                counter.fetch_add(1, Ordering::SeqCst);
                            }
                            if !client_side {
                                answered.store(true, Ordering::SeqCst);
                            }
                            if to.write_all(&buffer[..read]).is_err() {
                                break;
                            }
                        }
                        let _ = to.shutdown(Shutdown::Write);
                    });
                };
                pipe(
                    client.try_clone().unwrap(),
                    server.try_clone().unwrap(),
                    true,
                );
                pipe(server, client, false);
            }
        });
        Proxy { port, round_trips }
    }

    /// The round trips made through it so far.
    fn count(&self) -> usize {
        self.round_trips.load(Ordering::SeqCst)
    }
}

/// A session of 1,202 messages (so a search has newest and older parts): tool calls and
/// their results, every result holding `defmodule`.
fn log() -> Vec<Entry> {
    let mut messages = vec![Message::user("Port the modules to Elixir.")];
    for index in 0..600 {
        let id = format!("call_{index}");
        let arguments = format!(r#"{{"path":"lib/m{index}.ex"}}"#);
        messages.push(Message::assistant(
            "",
            vec![ToolCall::new(&id, "read_file", &arguments)],
        ));
        let text = format!("defmodule M{index} do\n  def run, do: {index}\nend");
        messages.push(Message::tool_result(&id, &text, false));
    }
    messages.push(Message::user("zqxjvk is nowhere else."));
    Entry::number(messages, 1, FAMILY)
}

fn memories() -> Vec<NewMemory> {
    (0..30usize)
        .map(|index| NewMemory {
            title: format!("deploy note {index}"),
            content: format!("Memory {index}: deploy with step {}", index % 7),
            importance: (index % 10) as i64 + 1,
            ..NewMemory::default()
        })
        .collect()
}

/// (seq, exact, tool name) of each hit.
fn hits(store: &dyn HistoryStore, query: &str) -> Vec<(u64, bool, Option<String>)> {
    let request = SearchRequest::new(query, None).unwrap();
    let found = store.search_history("s", &request).unwrap();
    found
        .hits
        .iter()
        .map(|hit| (hit.item.seq, hit.exact, hit.item.tool_name.clone()))
        .collect()
}

#[test]
fn searches_take_one_or_two_round_trips_and_answer_as_in_a_transaction() {
    let Some(server) = postgres_url("pg_round_trips") else {
        return;
    };
    let database_url = fresh_database(&server, "round_trips");
    // The same database through the proxy, in plain text (what is counted is messages).
    let (base, database) = database_url.rsplit_once('/').unwrap();
    let (scheme, authority) = base.split_once("://").unwrap();
    let (user, host) = authority.rsplit_once('@').unwrap();
    let proxy = Proxy::start(host.to_owned());
    let proxied = format!(
        "{scheme}://{user}@127.0.0.1:{}/{database}?sslmode=disable",
        proxy.port
    );
    let mut store = PostgresStore::open(&proxied).unwrap();
    store.import_session("s", FAMILY, &log(), 1).unwrap();
    for memory in memories() {
        store.add_memory("/p", &memory, 1).unwrap();
    }
    // A store whose schema is set in each transaction: the same searches, in transactions.
    let with_schema = Backend::all("round_trips")
        .into_iter()
        .find(Backend::is_postgres)
        .unwrap();
    let mut in_transaction = with_schema.postgres();
    in_transaction
        .import_session("s", FAMILY, &log(), 1)
        .unwrap();
    for memory in memories() {
        in_transaction.add_memory("/p", &memory, 1).unwrap();
    }

    for (query, most) in [
        // Found among the newest messages, all tool results to name: the pass, the calls.
        ("defmodule", 2),
        // In one newest message or none: the pass, then the older messages.
        ("zqxjvk", 2),
        ("nowhere-at-all", 2),
        // Two words never side by side: the exact pass (two statements), the every-word
        // pass (its newest part holds enough) and the calls.
        ("M1 run", 4),
    ] {
        let before = proxy.count();
        let found = hits(&store, query);
        let round_trips = proxy.count() - before;
        assert!(
            round_trips <= most,
            "{query:?}: {round_trips} round trips, at most {most}"
        );
        assert_eq!(found, hits(&in_transaction, query), "{query:?}");
    }
    let found = hits(&store, "defmodule");
    assert_eq!(found.len(), 10);
    assert_eq!(found[0].0, 1_201);
    assert!(found
        .iter()
        .all(|(_, exact, tool)| *exact && tool.as_deref() == Some("read_file")));

    let query = MemoryQuery {
        text: "deploy".into(),
        limit: 5,
    };
    let before = proxy.count();
    let found = store.search_memories("/p", &query, 1).unwrap();
    assert_eq!(
        proxy.count() - before,
        1,
        "a memory search is one round trip"
    );
    let titles = |found: &[ctxkit::store::MemoryRecord]| -> Vec<String> {
        found.iter().map(|m| m.title.clone()).collect()
    };
    let expected = in_transaction.search_memories("/p", &query, 1).unwrap();
    assert_eq!(titles(&found), titles(&expected));
    assert_eq!(found.len(), 5);

    let before = proxy.count();
    store.ping().unwrap();
    assert_eq!(proxy.count() - before, 1, "a ping is one round trip");

    // Through PgBouncer in transaction mode, the statements run alone answer the same.
    let pooled = PostgresStore::open(&pooled(&database_url)).unwrap();
    for query in ["defmodule", "zqxjvk", "nowhere-at-all", "M1 run"] {
        assert_eq!(
            hits(&pooled, query),
            hits(&store, query),
            "{query:?} pooled"
        );
    }
    pooled.ping().unwrap();

    let request = SearchRequest::new("defmodule", None).unwrap();
    for store in [&store, &in_transaction, &pooled] {
        assert!(matches!(
            store.search_history("nope", &request),
            Err(ctxkit::Error::NoSuchSession(name)) if name == "nope"
        ));
    }
}
