//! The two stores side by side: SQLite (a file in a temporary folder) and PostgreSQL (the
//! server at `CTXKIT_BENCH_POSTGRES_URL`, or `CTXKIT_TEST_POSTGRES_URL`, in a fresh schema).
//! Measures, for each: appending one message (one transaction each), a turn's load of a
//! 100k-message session in steady state (latest checkpoint and the tail after it), memory
//! search over 10,000 memories, and the append throughput of 1, 2, 4 and 8 concurrent workers
//! (threads, each with its own store handle, appending to a session of its own). Prints a
//! Markdown table (docs/performance.md, "SQLite and PostgreSQL side by side"). PostgreSQL's
//! tables are analyzed before the searches (what autovacuum does within a minute of the
//! inserts).
//!
//! ```text
//! source scripts/pg-server.sh
//! cargo run --release -p ctxkit --example store_bench
//! ```

use std::time::{Duration, Instant};

use ctxkit::core::compaction::Budget;
use ctxkit::core::memory::{MemoryScope, NudgeState};
use ctxkit::core::model::Entry;
use ctxkit::core::tokens::ModelFamily;
use ctxkit::core::TurnChanges;
use ctxkit::store::{
    MemoryQuery, NewMemory, PostgresOptions, PostgresStore, SqliteOptions, SqliteStore, Store,
};
use ctxkit_tests::corpus_log::{repeated_log, session_messages, steady_checkpoint};

const FAMILY: ModelFamily = ModelFamily::Claude;
const PROJECT: &str = "/work/project";

/// Opens a new handle on one backend's database.
type Open = Box<dyn Fn() -> Box<dyn Store> + Sync>;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn show(duration: Duration) -> String {
    let micros = duration.as_secs_f64() * 1e6;
    if micros >= 1_000.0 {
        format!("{:.2} ms", micros / 1_000.0)
    } else {
        format!("{micros:.0} µs")
    }
}

/// Median of `runs` timed calls of `f`.
fn time(runs: usize, mut f: impl FnMut()) -> Duration {
    let samples = (0..runs)
        .map(|_| {
            let started = Instant::now();
            f();
            started.elapsed()
        })
        .collect();
    median(samples)
}

fn numbered(template: &[Entry], first: u64, count: usize) -> Vec<Entry> {
    (0..count as u64)
        .map(|i| Entry {
            seq: first + i,
            ..template[(first + i) as usize % template.len()].clone()
        })
        .collect()
}

struct Figures {
    append: Duration,
    load_steady: Duration,
    tail: usize,
    session_head: Duration,
    searches: Vec<(&'static str, Duration)>,
    throughput: Vec<(usize, f64)>,
}

fn measure(open: &Open, analyze: &dyn Fn(), source: &[Entry], log: &[Entry]) -> Figures {
    let mut store = open();
    // Appending one message, one transaction each.
    store.create_session("append", FAMILY, 0).unwrap();
    let mut next = 1u64;
    let append = time(2_000, || {
        store
            .append("append", &numbered(source, next, 1), &[], 0)
            .unwrap();
        next += 1;
    });

    eprintln!("  append measured");
    // A 100k-message session in steady state.
    store.import_session("steady", FAMILY, log, 0).unwrap();
    let budget = Budget {
        context_window: 200_000,
        tool_schema_tokens: 26_450,
        ..Budget::default()
    };
    let checkpoint = steady_checkpoint(log, &budget, FAMILY).unwrap();
    store.add_checkpoint("steady", &checkpoint, 0).unwrap();
    let changes = TurnChanges {
        checkpoint: None,
        nudge_state: NudgeState {
            turn: 500,
            last_seq: Some(log.len() as u64 - 3),
            turns_without_progress: 0,
        },
        memories: Vec::new(),
    };
    store.finish_turn("steady", &changes, &[], "", 0).unwrap();
    let tail = store.load_for_turn("steady").unwrap().entries.len();
    let load_steady = time(50, || {
        std::hint::black_box(store.load_for_turn("steady").unwrap());
    });
    let session_head = time(500, || {
        std::hint::black_box(store.session_head("steady").unwrap());
    });

    eprintln!("  load measured ({tail}-message tail)");
    // Memory search over 10,000 memories.
    let topics = [
        "database",
        "deploy",
        "testing",
        "持久化会话",
        "formatting",
        "release",
    ];
    for index in 0..10_000 {
        let topic = topics[index % topics.len()];
        let memory = NewMemory {
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
        };
        store.add_memory(PROJECT, &memory, 0).unwrap();
    }
    // PostgreSQL plans by table statistics, which autovacuum gathers within a minute of bulk
    // inserts: gathered now, as a running fleet's database has them.
    analyze();
    let searches = [
        ("two terms, few matches (`Memory 4242`)", "Memory 4242"),
        ("one term in 1,667 rows (`deploy`)", "deploy"),
        ("CJK substring in 1,667 rows (`持久化`)", "持久化"),
        ("two-letter term (`db`)", "db"),
        (
            "search syntax taken literally (`\"deploy\" AND NEAR(`)",
            "\"deploy\" AND NEAR(",
        ),
    ]
    .into_iter()
    .map(|(name, text)| {
        let query = MemoryQuery {
            text: text.into(),
            limit: 20,
        };
        let duration = time(50, || {
            std::hint::black_box(store.search_memories(PROJECT, &query, 1).unwrap());
        });
        (name, duration)
    })
    .collect();

    eprintln!("  search measured");
    // Throughput of concurrent workers, each appending to its own session.
    let per_worker = 500usize;
    let throughput = [1usize, 2, 4, 8]
        .into_iter()
        .map(|workers| {
            let names: Vec<String> = (0..workers).map(|w| format!("w{workers}_{w}")).collect();
            for name in &names {
                store.create_session(name, FAMILY, 0).unwrap();
            }
            // Every handle opened before the clock starts.
            let handles: Vec<Box<dyn Store>> = names.iter().map(|_| open()).collect();
            let started = Instant::now();
            std::thread::scope(|scope| {
                for (name, mut store) in names.iter().zip(handles) {
                    scope.spawn(move || {
                        for seq in 1..=per_worker as u64 {
                            store
                                .append(name, &numbered(source, seq, 1), &[], 0)
                                .unwrap();
                        }
                    });
                }
            });
            let rate = (workers * per_worker) as f64 / started.elapsed().as_secs_f64();
            (workers, rate)
        })
        .collect();
    Figures {
        append,
        load_steady,
        tail,
        session_head,
        searches,
        throughput,
    }
}

fn main() {
    let url = std::env::var("CTXKIT_BENCH_POSTGRES_URL")
        .or_else(|_| std::env::var("CTXKIT_TEST_POSTGRES_URL"))
        .expect("set CTXKIT_BENCH_POSTGRES_URL (or source scripts/pg-server.sh)");
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
    // Eight writers queue on SQLite's one write lock: a long busy timeout, so none gives up.
    let sqlite: Open = Box::new(move || {
        let options = SqliteOptions {
            busy_timeout: Duration::from_secs(120),
            ..SqliteOptions::default()
        };
        Box::new(SqliteStore::open_with(&path, options).unwrap())
    });
    let schema = format!("bench_{}", std::process::id());
    let (analyze_url, analyze_schema) = (url.clone(), schema.clone());
    let analyze = move || {
        let mut client = postgres::Client::connect(&analyze_url, postgres::NoTls).unwrap();
        client
            .batch_execute(&format!(
                "SET search_path TO \"{analyze_schema}\"; ANALYZE memories; ANALYZE messages"
            ))
            .unwrap();
    };
    let postgres: Open = Box::new(move || {
        let options = PostgresOptions {
            schema: Some(schema.clone()),
            ..PostgresOptions::default()
        };
        Box::new(PostgresStore::open_with(&url, options).unwrap())
    });
    let started = Instant::now();
    let a = measure(&sqlite, &|| {}, &source, &log);
    eprintln!("SQLite measured in {:?}", started.elapsed());
    let started = Instant::now();
    let b = measure(&postgres, &analyze, &source, &log);
    eprintln!("PostgreSQL measured in {:?}", started.elapsed());

    println!("| operation | SQLite | PostgreSQL |");
    println!("|---|---|---|");
    println!(
        "| append one message (one transaction) | {} | {} |",
        show(a.append),
        show(b.append)
    );
    println!(
        "| load a 100k-message session for a turn (steady state: checkpoint + {}-message tail) | {} | {} |",
        a.tail.max(b.tail),
        show(a.load_steady),
        show(b.load_steady)
    );
    println!(
        "| `session_head` (the engine's per-call freshness check) | {} | {} |",
        show(a.session_head),
        show(b.session_head)
    );
    for ((name, x), (_, y)) in a.searches.iter().zip(&b.searches) {
        println!(
            "| memory search, 10k memories: {name} | {} | {} |",
            show(*x),
            show(*y)
        );
    }
    for ((workers, x), (_, y)) in a.throughput.iter().zip(&b.throughput) {
        println!(
            "| appends/s, {workers} concurrent worker{} | {x:.0} | {y:.0} |",
            if *workers == 1 { "" } else { "s" }
        );
    }
}
