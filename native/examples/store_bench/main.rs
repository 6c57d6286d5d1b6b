//! The stores side by side: SQLite (a file in a temporary folder), PostgreSQL directly (the
//! server at `CTXKIT_BENCH_POSTGRES_URL`, or `CTXKIT_TEST_POSTGRES_URL`, in a fresh database) and
//! the same PostgreSQL database through PgBouncer in transaction mode
//! (`CTXKIT_BENCH_PGBOUNCER_URL`, or `CTXKIT_TEST_PGBOUNCER_URL`), each store with its defaults
//! (PostgreSQL: every commit durable).
//!
//! The data: a 100k-message session shaped like the corpus's Claude Code session, in steady
//! state (a checkpoint and the tail after it), and 10,000 memories. Measured, in one process so
//! the figures compare:
//! - one handle's latency ([`latency`]): appending one message, a turn's load, the engine's
//!   freshness check, a `SELECT 1` on PostgreSQL (one round trip, the least any call costs),
//!   memory searches and history searches (medians);
//! - the query plans of those searches on PostgreSQL ([`plans`]): printed, and the benchmark
//!   fails (after its figures) when one would scan a table instead of using an index;
//! - 1, 4 and 16 concurrent workers ([`workers`], threads with a store handle each): appends
//!   (each worker on a session of its own), turn loads, history searches and memory searches,
//!   in operations per second over a fixed time.
//!
//! PostgreSQL's tables are vacuumed and analyzed after loading (what autovacuum does within a
//! minute of bulk inserts: statistics, and the trigram indexes' pending entries merged). Prints Markdown tables on standard output (docs/performance.md, "SQLite and
//! PostgreSQL side by side"), progress on standard error.
//!
//! ```text
//! source scripts/pg-server.sh
//! cargo run --release -p ctxkit --example store_bench
//! ```
//!
//! `CTXKIT_BENCH_LATENCY_ONLY=1` leaves out the workers' table (a quicker run of the latency
//! table and the plans, to repeat on a shared machine). `CTXKIT_BENCH_KEEP_DATABASE=1` leaves the
//! PostgreSQL database in place (its name on standard error), to read its plans by hand.

mod latency;
mod plans;
mod workers;

use std::time::{Duration, Instant};

use ctxkit::core::compaction::Budget;
use ctxkit::core::memory::{MemoryScope, NudgeState};
use ctxkit::core::model::Entry;
use ctxkit::core::tokens::ModelFamily;
use ctxkit::core::TurnChanges;
use ctxkit::store::{NewMemory, PostgresStore, SqliteOptions, SqliteStore, Store};
use ctxkit_tests::corpus_log::{repeated_log, session_messages, steady_checkpoint};

const FAMILY: ModelFamily = ModelFamily::Claude;
const PROJECT: &str = "/work/project";
/// The 100k-message session.
const STEADY: &str = "steady";

/// Opens a new handle on one backend's database.
type Open = Box<dyn Fn() -> Box<dyn Store> + Sync>;

/// Opens a new PostgreSQL store on one backend's database.
type OpenPostgres = Box<dyn Fn() -> PostgresStore + Sync>;

/// A backend as the tables name it, and how to open it (and, for PostgreSQL, as a
/// `PostgresStore`, for the round-trip floor).
struct Backend {
    name: &'static str,
    open: Open,
    postgres: Option<OpenPostgres>,
}

/// The history searches measured: name, query.
pub const HISTORY_QUERIES: [(&str, &str); 5] = [
    ("a word in 4,600 messages (`defmodule`)", "defmodule"),
    (
        "a path in 140 messages (`deps/ash_computer/lib/ash_computer.ex`)",
        "deps/ash_computer/lib/ash_computer.ex",
    ),
    (
        "two words, never side by side (`defmodule unwrap`)",
        "defmodule unwrap",
    ),
    ("a word in no message (`zqxjvk`)", "zqxjvk"),
    ("CJK in no message (`持久化会话`)", "持久化会话"),
];

/// The memory searches measured: name, query.
pub const MEMORY_QUERIES: [(&str, &str); 5] = [
    ("two terms, few matches (`Memory 4242`)", "Memory 4242"),
    ("one term in 1,667 rows (`deploy`)", "deploy"),
    ("CJK substring in 1,667 rows (`持久化`)", "持久化"),
    ("two-letter term (`db`)", "db"),
    (
        "search syntax taken literally (`\"deploy\" AND NEAR(`)",
        "\"deploy\" AND NEAR(",
    ),
];

/// Median of the samples.
pub fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// A duration as the tables show it.
pub fn show(duration: Duration) -> String {
    let micros = duration.as_secs_f64() * 1e6;
    if micros >= 1_000.0 {
        format!("{:.2} ms", micros / 1_000.0)
    } else {
        format!("{micros:.0} µs")
    }
}

/// `count` entries cycling through `template`, numbered from `first`.
pub fn numbered(template: &[Entry], first: u64, count: usize) -> Vec<Entry> {
    (0..count as u64)
        .map(|i| Entry {
            seq: first + i,
            ..template[(first + i) as usize % template.len()].clone()
        })
        .collect()
}

fn memories() -> Vec<NewMemory> {
    let topics = [
        "database",
        "deploy",
        "testing",
        "持久化会话",
        "formatting",
        "release",
    ];
    (0..10_000)
        .map(|index| {
            let topic = topics[index % topics.len()];
            NewMemory {
                title: format!("{topic} note {index}"),
                content: format!(
                    "Memory {index} about {topic}: run step {} before step {} and keep the log.",
                    index % 97,
                    index % 89
                ),
                importance: (index % 10) as i64 + 1,
                scope: if index.is_multiple_of(5) {
                    MemoryScope::Global
                } else {
                    MemoryScope::Project
                },
                ..NewMemory::default()
            }
        })
        .collect()
}

/// Stores the 100k-message session in steady state and the 10,000 memories.
fn load(store: &mut dyn Store, log: &[Entry]) {
    store.import_session(STEADY, FAMILY, log, 0).unwrap();
    let budget = Budget {
        context_window: 200_000,
        tool_schema_tokens: 26_450,
        ..Budget::default()
    };
    let checkpoint = steady_checkpoint(log, &budget, FAMILY).unwrap();
    store.add_checkpoint(STEADY, &checkpoint, 0).unwrap();
    let changes = TurnChanges {
        checkpoint: None,
        nudge_state: NudgeState {
            turn: 500,
            last_seq: Some(log.len() as u64 - 3),
            turns_without_progress: 0,
        },
        memories: Vec::new(),
    };
    store.finish_turn(STEADY, &changes, &[], "", 0).unwrap();
    store.import_sessions(&[], &memories(), PROJECT, 0).unwrap();
}

fn var(names: &[&str]) -> Option<String> {
    names
        .iter()
        .find_map(|name| std::env::var(name).ok().filter(|value| !value.is_empty()))
}

fn main() {
    let url = var(&["CTXKIT_BENCH_POSTGRES_URL", "CTXKIT_TEST_POSTGRES_URL"])
        .expect("set CTXKIT_BENCH_POSTGRES_URL (or source scripts/pg-server.sh)");
    let pooled = var(&["CTXKIT_BENCH_PGBOUNCER_URL", "CTXKIT_TEST_PGBOUNCER_URL"]).expect(
        "set CTXKIT_BENCH_PGBOUNCER_URL to the same server through PgBouncer \
         (or source scripts/pg-server.sh)",
    );
    let messages = session_messages();
    assert!(!messages.is_empty(), "the corpus session is missing");
    let source = repeated_log(&messages, 2_000, FAMILY);
    let log = repeated_log(&messages, 100_000, FAMILY);
    let bytes: usize = log
        .iter()
        .map(|e| serde_json::to_string(&e.message).unwrap().len())
        .sum();
    eprintln!("100k-message session: {bytes} bytes of JSON bodies");

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bench.db");
    // Sixteen writers queue on SQLite's one write lock: a long busy timeout, so none gives up.
    let sqlite: Open = Box::new(move || {
        let options = SqliteOptions {
            busy_timeout: Duration::from_secs(120),
            ..SqliteOptions::default()
        };
        Box::new(SqliteStore::open_with(&path, options).unwrap())
    });
    // A fresh database, opened with the store's defaults (the public schema, durable
    // commits), directly and through the pooler.
    let database = format!("ctxkit_bench_{}", std::process::id());
    let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    admin
        .batch_execute(&format!("CREATE DATABASE \"{database}\""))
        .unwrap();
    let in_database = |url: &str| -> String {
        let (base, rest) = url.rsplit_once('/').unwrap();
        let query = rest.split_once('?').map(|(_, q)| format!("?{q}"));
        format!("{base}/{database}{}", query.unwrap_or_default())
    };
    let (direct_url, pooled_url) = (in_database(&url), in_database(&pooled));
    let postgres_at =
        |url: String| -> Open { Box::new(move || Box::new(PostgresStore::open(&url).unwrap())) };
    let postgres_store =
        |url: String| -> OpenPostgres { Box::new(move || PostgresStore::open(&url).unwrap()) };
    let backends = [
        Backend {
            name: "SQLite",
            open: sqlite,
            postgres: None,
        },
        Backend {
            name: "PostgreSQL",
            open: postgres_at(direct_url.clone()),
            postgres: Some(postgres_store(direct_url.clone())),
        },
        Backend {
            name: "PostgreSQL through PgBouncer",
            open: postgres_at(pooled_url.clone()),
            postgres: Some(postgres_store(pooled_url)),
        },
    ];

    // The data, once per database: the pooled backend reads what the direct one stored.
    for backend in &backends[..2] {
        let started = Instant::now();
        load(&mut *(backend.open)(), &log);
        eprintln!("{}: data stored in {:?}", backend.name, started.elapsed());
    }
    // What autovacuum does within a minute of bulk inserts: the tables' statistics gathered
    // and the trigram indexes' pending entries merged.
    let mut client = postgres::Client::connect(&direct_url, postgres::NoTls).unwrap();
    for table in ["memories", "messages"] {
        client
            .batch_execute(&format!("VACUUM ANALYZE {table}"))
            .unwrap();
    }

    let scanning = plans::check(&PostgresStore::open(&direct_url).unwrap());

    let started = Instant::now();
    let figures = latency::measure(&backends, &source);
    eprintln!("latency measured in {:?}", started.elapsed());
    latency::print(&backends, &figures);
    if var(&["CTXKIT_BENCH_LATENCY_ONLY"]).is_none() {
        let started = Instant::now();
        let throughput = workers::measure(&backends, &source);
        eprintln!("workers measured in {:?}", started.elapsed());
        workers::print(&backends, &throughput);
    }

    drop((client, backends));
    if var(&["CTXKIT_BENCH_KEEP_DATABASE"]).is_some() {
        eprintln!("database {database} kept (CTXKIT_BENCH_KEEP_DATABASE)");
    } else {
        admin
            .batch_execute(&format!("DROP DATABASE \"{database}\" WITH (FORCE)"))
            .unwrap();
    }
    assert!(
        scanning.is_empty(),
        "these searches scan a table instead of using an index (plans above): {scanning:?}"
    );
}
