//! The query plans the searches rely on, on PostgreSQL: each measured search's plan
//! ([`PostgresStore::explain_history_search`], [`PostgresStore::explain_memory_search`]) is
//! printed with whether it reads its table through an index; one that scans the table instead
//! (its figures would grow with the table) makes the benchmark fail once it has printed its
//! figures, unless a term of it is shorter than a trigram (no index can serve it).

use ctxkit::core::recall::SearchRequest;
use ctxkit::store::{MemoryQuery, PostgresStore};

use crate::{HISTORY_QUERIES, MEMORY_QUERIES, PROJECT, STEADY};

/// Prints the plan and whether it reads `table` through an index without ever scanning it;
/// returns the search's name when it does not.
fn check_plan(search: String, plan: &str, table: &str) -> Option<String> {
    let scans = plan.contains(&format!("Seq Scan on {table}"));
    let indexed = plan
        .lines()
        .any(|line| line.contains("Index") && line.contains(table));
    let verdict = if indexed && !scans {
        "an index"
    } else {
        "NOT an index"
    };
    println!("{search}, reads {table} through {verdict}:\n```\n{plan}\n```");
    (!indexed || scans).then_some(search)
}

/// Prints every measured search's plan; returns the searches whose plan scans a table.
pub fn check(store: &PostgresStore) -> Vec<String> {
    let mut failed = Vec::new();
    println!(
        "Query plans on PostgreSQL (EXPLAIN), each checked to read its table through an index:\n"
    );
    for (name, text) in HISTORY_QUERIES {
        let request = SearchRequest::new(text, None).unwrap();
        let plans = store.explain_history_search(STEADY, &request).unwrap();
        let passes = [
            "exact pass, newest messages and offloaded outputs",
            "exact pass, older messages",
            "every-word pass, newest messages and offloaded outputs",
            "every-word pass, older messages",
        ];
        for (pass, plan) in passes.iter().zip(&plans) {
            let search = format!("history search, {name}, {pass}");
            failed.extend(check_plan(search, plan, "messages"));
        }
    }
    for (name, text) in MEMORY_QUERIES {
        let query = MemoryQuery {
            text: text.into(),
            limit: 20,
        };
        for plan in store.explain_memory_search(PROJECT, &query, 1).unwrap() {
            let search = format!("memory search, {name}");
            let failure = check_plan(search, &plan, "memories");
            // A term shorter than a trigram has no index to use, in either store (SQLite scans
            // too): its plan is shown, not held to one.
            let short = text.split_whitespace().any(|term| term.chars().count() < 3);
            failed.extend(failure.filter(|_| !short));
        }
    }
    println!();
    failed
}
