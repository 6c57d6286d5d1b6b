//! One handle's latency on each backend: medians of repeated calls, each call bounded in count
//! and in time (a slow search is sampled fewer times, never fewer than 3).

use std::time::{Duration, Instant};

use ctxkit::core::model::Entry;
use ctxkit::core::recall::SearchRequest;
use ctxkit::store::MemoryQuery;

use crate::{
    median, numbered, show, Backend, FAMILY, HISTORY_QUERIES, MEMORY_QUERIES, PROJECT, STEADY,
};

/// What one backend measured.
pub struct Figures {
    append: Duration,
    load: Duration,
    tail: usize,
    head: Duration,
    memory: Vec<Duration>,
    history: Vec<Duration>,
}

/// The median of at most `runs` calls of `f`, fewer once `budget` has passed (at least 3).
pub fn sample(runs: usize, budget: Duration, mut f: impl FnMut()) -> Duration {
    let started = Instant::now();
    let mut samples = Vec::with_capacity(runs);
    while samples.len() < runs && (samples.len() < 3 || started.elapsed() < budget) {
        let call = Instant::now();
        f();
        samples.push(call.elapsed());
    }
    median(samples)
}

pub fn measure(backend: &Backend, source: &[Entry]) -> Figures {
    let mut store = (backend.open)();
    let session = format!("append {}", backend.name);
    store.create_session(&session, FAMILY, 0).unwrap();
    let mut next = 1u64;
    let budget = Duration::from_secs(5);
    let append = sample(2_000, budget, || {
        store
            .append(&session, &numbered(source, next, 1), &[], 0)
            .unwrap();
        next += 1;
    });
    let tail = store.load_for_turn(STEADY).unwrap().entries.len();
    let load = sample(50, budget, || {
        std::hint::black_box(store.load_for_turn(STEADY).unwrap());
    });
    let head = sample(500, budget, || {
        std::hint::black_box(store.session_head(STEADY).unwrap());
    });
    let memory = MEMORY_QUERIES
        .iter()
        .map(|(_, text)| {
            let query = MemoryQuery {
                text: (*text).into(),
                limit: 20,
            };
            sample(50, budget, || {
                std::hint::black_box(store.search_memories(PROJECT, &query, 1).unwrap());
            })
        })
        .collect();
    let history = HISTORY_QUERIES
        .iter()
        .map(|(_, text)| {
            let request = SearchRequest::new(text, None).unwrap();
            sample(30, budget, || {
                std::hint::black_box(store.search_history(STEADY, &request).unwrap());
            })
        })
        .collect();
    Figures {
        append,
        load,
        tail,
        head,
        memory,
        history,
    }
}

/// `value` over SQLite's (the first backend's), as the tables show it.
fn ratio(value: Duration, sqlite: Duration) -> String {
    format!("{:.2}×", value.as_secs_f64() / sqlite.as_secs_f64())
}

pub fn print(backends: &[Backend], figures: &[Figures]) {
    let names: Vec<&str> = backends.iter().map(|b| b.name).collect();
    println!("| operation (one handle, median) | {} |", names.join(" | "));
    println!("|---|{}", "---|".repeat(names.len()));
    let row = |name: &str, values: Vec<Duration>| {
        let sqlite = values[0];
        let cells: Vec<String> = values
            .iter()
            .enumerate()
            .map(|(index, value)| match index {
                0 => show(*value),
                _ => format!("{} ({})", show(*value), ratio(*value, sqlite)),
            })
            .collect();
        println!("| {name} | {} |", cells.join(" | "));
    };
    row(
        "append one message (one transaction)",
        figures.iter().map(|f| f.append).collect(),
    );
    row(
        &format!(
            "load the 100k-message session for a turn (checkpoint + {}-message tail)",
            figures[0].tail
        ),
        figures.iter().map(|f| f.load).collect(),
    );
    row(
        "`session_head` (the engine's freshness check)",
        figures.iter().map(|f| f.head).collect(),
    );
    for (index, (name, _)) in MEMORY_QUERIES.iter().enumerate() {
        row(
            &format!("memory search, 10k memories: {name}"),
            figures.iter().map(|f| f.memory[index]).collect(),
        );
    }
    for (index, (name, _)) in HISTORY_QUERIES.iter().enumerate() {
        row(
            &format!("history search, 100k messages: {name}"),
            figures.iter().map(|f| f.history[index]).collect(),
        );
    }
    println!();
}
