//! One handle's latency on each backend: medians of repeated calls, each call bounded in count
//! and in time (a slow search is sampled fewer times, never fewer than 3). Each operation is
//! measured on every backend back to back, so the figures of one row share the machine's load.

use std::time::{Duration, Instant};

use ctxkit::core::model::Entry;
use ctxkit::core::recall::SearchRequest;
use ctxkit::store::{MemoryQuery, PostgresStore, Store};

use crate::{
    median, numbered, show, Backend, FAMILY, HISTORY_QUERIES, MEMORY_QUERIES, PROJECT, STEADY,
};

/// The table: each operation's name and its median on each backend, in the backends' order.
pub struct Figures(Vec<(String, Vec<Duration>)>);

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

/// `measure` on each store in turn (so the backends of one row are measured back to back,
/// under the same load), by the store's index.
fn each(
    stores: &mut [Box<dyn Store>],
    mut measure: impl FnMut(usize, &mut dyn Store) -> Duration,
) -> Vec<Duration> {
    stores
        .iter_mut()
        .enumerate()
        .map(|(index, store)| measure(index, &mut **store))
        .collect()
}

/// Every operation of the table, on every backend.
pub fn measure(backends: &[Backend], source: &[Entry]) -> Figures {
    let mut stores: Vec<Box<dyn Store>> = backends.iter().map(|b| (b.open)()).collect();
    let sessions: Vec<String> = backends
        .iter()
        .map(|b| format!("append {}", b.name))
        .collect();
    for (store, session) in stores.iter_mut().zip(&sessions) {
        store.create_session(session, FAMILY, 0).unwrap();
    }
    let budget = Duration::from_secs(5);
    let mut rows = Vec::new();
    let mut next = vec![1u64; stores.len()];
    let append = each(&mut stores, |index, store| {
        sample(2_000, budget, || {
            let entries = numbered(source, next[index], 1);
            store.append(&sessions[index], &entries, &[], 0).unwrap();
            next[index] += 1;
        })
    });
    rows.push(("append one message (one transaction)".to_owned(), append));
    let tail = stores[0].load_for_turn(STEADY).unwrap().entries.len();
    let load = each(&mut stores, |_, store| {
        sample(50, budget, || {
            std::hint::black_box(store.load_for_turn(STEADY).unwrap());
        })
    });
    rows.push((
        format!("load the 100k-message session for a turn (checkpoint + {tail}-message tail)"),
        load,
    ));
    let head = each(&mut stores, |_, store| {
        sample(500, budget, || {
            std::hint::black_box(store.session_head(STEADY).unwrap());
        })
    });
    rows.push((
        "`session_head` (the engine's freshness check)".to_owned(),
        head,
    ));
    // No round trip in process: SQLite's cell is left empty (zero).
    let pings: Vec<Option<PostgresStore>> = backends
        .iter()
        .map(|b| b.postgres.as_ref().map(|open| open()))
        .collect();
    let floor = pings
        .iter()
        .map(|store| match store {
            Some(store) => sample(500, budget, || store.ping().unwrap()),
            None => Duration::ZERO,
        })
        .collect();
    rows.push((
        "a `SELECT 1` on a store's connection (one round trip: the least a call costs)".to_owned(),
        floor,
    ));
    for (name, text) in MEMORY_QUERIES {
        let query = MemoryQuery {
            text: text.into(),
            limit: 20,
        };
        let durations = each(&mut stores, |_, store| {
            sample(50, budget, || {
                std::hint::black_box(store.search_memories(PROJECT, &query, 1).unwrap());
            })
        });
        rows.push((format!("memory search, 10k memories: {name}"), durations));
    }
    for (name, text) in HISTORY_QUERIES {
        let request = SearchRequest::new(text, None).unwrap();
        let durations = each(&mut stores, |_, store| {
            sample(30, budget, || {
                std::hint::black_box(store.search_history(STEADY, &request).unwrap());
            })
        });
        rows.push((format!("history search, 100k messages: {name}"), durations));
    }
    Figures(rows)
}

/// `value` over SQLite's (the first backend's), as the tables show it.
fn ratio(value: Duration, sqlite: Duration) -> String {
    format!("{:.2}×", value.as_secs_f64() / sqlite.as_secs_f64())
}

pub fn print(backends: &[Backend], figures: &Figures) {
    let names: Vec<&str> = backends.iter().map(|b| b.name).collect();
    println!("| operation (one handle, median) | {} |", names.join(" | "));
    println!("|---|{}", "---|".repeat(names.len()));
    for (name, values) in &figures.0 {
        let sqlite = values[0];
        let cells: Vec<String> = values
            .iter()
            .enumerate()
            .map(|(index, value)| match index {
                _ if value.is_zero() => "–".to_owned(),
                0 => show(*value),
                _ if sqlite.is_zero() => show(*value),
                _ => format!("{} ({})", show(*value), ratio(*value, sqlite)),
            })
            .collect();
        println!("| {name} | {} |", cells.join(" | "));
    }
    println!();
}
