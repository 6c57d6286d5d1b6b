//! 1, 4 and 16 concurrent workers on each backend: threads, each with a store handle of its
//! own (opened before the clock starts), repeating one operation for a fixed time; the figure is
//! the operations all of them completed per second.

use std::time::{Duration, Instant};

use ctxkit::core::model::Entry;
use ctxkit::core::recall::SearchRequest;
use ctxkit::store::{MemoryQuery, Store};

use crate::{numbered, Backend, FAMILY, PROJECT, STEADY};

/// How many workers each row runs.
const WORKER_COUNTS: [usize; 3] = [1, 4, 16];
/// How long each cell runs.
const SPAN: Duration = Duration::from_secs(3);

/// The operations measured, as the table names them.
const OPERATIONS: [&str; 4] = [
    "append one message (each worker its own session)",
    "load the 100k-message session for a turn",
    "history search, 100k messages (`deps/ash_computer/lib/ash_computer.ex`)",
    "memory search, 10k memories (`deploy`)",
];

/// Operations per second, by operation, then by worker count, then by backend.
pub struct Figures(Vec<Vec<Vec<f64>>>);

/// The `count`-th operation of kind `operation` (an index of [`OPERATIONS`]) by a worker
/// whose own session is `session`.
fn run(store: &mut dyn Store, operation: usize, session: &str, count: u64, source: &[Entry]) {
    match operation {
        0 => store
            .append(session, &numbered(source, count + 1, 1), &[], 0)
            .unwrap(),
        1 => {
            std::hint::black_box(store.load_for_turn(STEADY).unwrap());
        }
        2 => {
            let request =
                SearchRequest::new("deps/ash_computer/lib/ash_computer.ex", None).unwrap();
            std::hint::black_box(store.search_history(STEADY, &request).unwrap());
        }
        _ => {
            let query = MemoryQuery {
                text: "deploy".into(),
                limit: 20,
            };
            std::hint::black_box(store.search_memories(PROJECT, &query, 1).unwrap());
        }
    }
}

fn rate(backend: &Backend, operation: usize, workers: usize, source: &[Entry]) -> f64 {
    let sessions: Vec<String> = (0..workers)
        .map(|w| format!("{} op{operation} x{workers} w{w}", backend.name))
        .collect();
    if operation == 0 {
        let mut store = (backend.open)();
        for name in &sessions {
            store.create_session(name, FAMILY, 0).unwrap();
        }
    }
    let handles: Vec<Box<dyn Store>> = sessions.iter().map(|_| (backend.open)()).collect();
    let started = Instant::now();
    let done: u64 = std::thread::scope(|scope| {
        let threads: Vec<_> = sessions
            .iter()
            .zip(handles)
            .map(|(session, mut store)| {
                scope.spawn(move || {
                    let mut count = 0u64;
                    while started.elapsed() < SPAN {
                        run(&mut *store, operation, session, count, source);
                        count += 1;
                    }
                    count
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).sum()
    });
    done as f64 / started.elapsed().as_secs_f64()
}

/// Every cell of the table; the backends of one cell are measured back to back, so they share
/// the machine's load.
pub fn measure(backends: &[Backend], source: &[Entry]) -> Figures {
    Figures(
        (0..OPERATIONS.len())
            .map(|operation| {
                WORKER_COUNTS
                    .iter()
                    .map(|&workers| {
                        backends
                            .iter()
                            .map(|backend| rate(backend, operation, workers, source))
                            .collect()
                    })
                    .collect()
            })
            .collect(),
    )
}

pub fn print(backends: &[Backend], figures: &Figures) {
    let names: Vec<&str> = backends.iter().map(|b| b.name).collect();
    println!(
        "| operations per second, all workers together | workers | {} |",
        names.join(" | ")
    );
    println!("|---|---|{}", "---|".repeat(names.len()));
    for (operation, name) in OPERATIONS.iter().enumerate() {
        for (column, workers) in WORKER_COUNTS.iter().enumerate() {
            let cells: Vec<String> = figures.0[operation][column]
                .iter()
                .map(|rate| format!("{rate:.0}"))
                .collect();
            println!("| {name} | {workers} | {} |", cells.join(" | "));
        }
    }
    println!();
}
