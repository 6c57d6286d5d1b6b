//! The PostgreSQL memory search finds exactly what its rule says, in its order, whichever of
//! its two forms runs it: the search function with kept plans (a term of three letters or
//! digits in a row) or the statement planned for its patterns (only shorter terms), in a
//! database of its own (each search one statement) and in a schema (each search in a
//! transaction setting it).
//!
//! The rule, computed here from the stored records alone: a live memory visible in the
//! project holds every term (case-folded as the core folds for search) in one of its fields
//! (title, content, category, tags as JSON); best first by how many terms its title holds, then
//! importance, then the latest update, then the oldest id; at most the query's limit.
//!
//! Generated memories and queries from a vocabulary mixing long and short words, CJK, case
//! variants and search syntax (`"deploy"`, `near(`, `50%`, `a_b`). Uses the run's
//! `PROPTEST_RNG_SEED`; 24 cases.

use std::cell::{Cell, RefCell};

use crate::common::backends::{fresh_database, postgres_url, Backend};
use ctxkit::core::recall::fold_for_search;
use ctxkit::store::{
    query_terms, AddedMemory, MemoryQuery, MemoryRecord, MemoryStore, NewMemory, PostgresStore,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

const NOW: i64 = 1_770_768_000;

const WORDS: &[&str] = &[
    "deploy",
    "Deploy",
    "DEPLOY",
    "redeploy",
    "db",
    "DB",
    "x",
    "setup",
    "持久化",
    "持久",
    "会话",
    "\"deploy\"",
    "near(",
    "AND",
    "and",
    "50%",
    "a_b",
    "ÉCOLE",
    "école",
    "🦀rust",
    "ep",
    "plo",
];

/// One memory to add: title and content words, importance, seconds after `NOW`.
#[derive(Debug, Clone)]
struct Draft {
    title: Vec<usize>,
    content: Vec<usize>,
    importance: i64,
    at: i64,
}

fn draft() -> impl Strategy<Value = Draft> {
    let word = 0..WORDS.len();
    (
        proptest::collection::vec(word.clone(), 1..4),
        proptest::collection::vec(word, 1..6),
        1i64..=10,
        0i64..4,
    )
        .prop_map(|(title, content, importance, at)| Draft {
            title,
            content,
            importance,
            at,
        })
}

fn words(indexes: &[usize]) -> String {
    let words: Vec<&str> = indexes.iter().map(|&i| WORDS[i]).collect();
    words.join(" ")
}

/// What the rule finds for `text` among `records`, best first, at most `limit`.
fn expected(records: &[MemoryRecord], text: &str, limit: usize) -> Vec<i64> {
    let terms: Vec<String> = query_terms(text)
        .unwrap()
        .iter()
        .map(|term| fold_for_search(term))
        .collect();
    let mut found: Vec<(usize, &MemoryRecord)> = records
        .iter()
        .filter_map(|record| {
            let fields = [
                record.title.clone(),
                record.content.clone(),
                record.category.clone(),
                serde_json::to_string(&record.tags).unwrap(),
            ]
            .map(|field| fold_for_search(&field));
            let holds = |term: &String| fields.iter().any(|field| field.contains(term.as_str()));
            terms.iter().all(holds).then(|| {
                let in_title = terms.iter().filter(|t| fields[0].contains(t.as_str()));
                (in_title.count(), record)
            })
        })
        .collect();
    found.sort_by(|(a_hits, a), (b_hits, b)| {
        b_hits
            .cmp(a_hits)
            .then(b.importance.cmp(&a.importance))
            .then(b.updated_at.cmp(&a.updated_at))
            .then(a.id.cmp(&b.id))
    });
    found.iter().take(limit).map(|(_, r)| r.id).collect()
}

#[test]
fn both_forms_of_the_postgres_search_find_what_the_rule_says_in_its_order() {
    let Some(server) = postgres_url("memory_search_order") else {
        return;
    };
    let plain_url = fresh_database(&server, "memory_search_order");
    let with_schema = Backend::all("memory_search_order")
        .into_iter()
        .find(Backend::is_postgres)
        .unwrap();
    let stores: Vec<(&str, RefCell<Box<dyn MemoryStore>>)> = vec![
        (
            "alone",
            RefCell::new(Box::new(PostgresStore::open(&plain_url).unwrap())),
        ),
        (
            "in a schema",
            RefCell::new(Box::new(with_schema.postgres())),
        ),
    ];
    let case = (
        proptest::collection::vec(draft(), 1..16),
        proptest::collection::vec(
            (proptest::collection::vec(0..WORDS.len(), 1..4), 1usize..6),
            4,
        ),
    );
    // The run's seed (PROPTEST_RNG_SEED) comes with the default configuration.
    let mut runner = TestRunner::new(Config {
        failure_persistence: None,
        ..Config::with_cases(24)
    });
    let number = Cell::new(0usize);
    runner
        .run(&case, |(drafts, queries)| {
            number.set(number.get() + 1);
            // A project of this case's own: the memories of earlier cases are not visible.
            let project = format!("/case{}", number.get());
            for (name, store) in &stores {
                let mut store = store.borrow_mut();
                let mut records = Vec::new();
                for draft in &drafts {
                    let memory = NewMemory {
                        title: words(&draft.title),
                        content: words(&draft.content),
                        importance: draft.importance,
                        ..NewMemory::default()
                    };
                    let at = NOW + draft.at;
                    if let AddedMemory::Added(record) =
                        store.add_memory(&project, &memory, at).unwrap()
                    {
                        records.push(record);
                    }
                }
                for (query_words, limit) in &queries {
                    let text = words(query_words);
                    let query = MemoryQuery {
                        text: text.clone(),
                        limit: *limit,
                    };
                    let found = store.search_memories(&project, &query, NOW + 10).unwrap();
                    let ids: Vec<i64> = found.iter().map(|record| record.id).collect();
                    let want = expected(&records, &text, *limit);
                    if ids != want {
                        return Err(TestCaseError::fail(format!(
                            "{name}: {text:?} (limit {limit}) found {ids:?}, the rule {want:?}; \
                             memories: {records:#?}"
                        )));
                    }
                }
            }
            Ok(())
        })
        .unwrap();
}
