//! The SQLite store on a real file (WAL, `synchronous = NORMAL`): appending one message,
//! batches, and a turn's ten appends with its sync; loading a 100k-message session for a turn
//! (steady state: the latest checkpoint and the tail after it) and with no checkpoint (the
//! whole log, corpus-sized and chat-sized messages); and searching 10k memories.
//!
//! Messages are the corpus's Claude Code session repeated (tool-call ids made unique).
//!
//! `cargo bench -p ctxkit --bench store`

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use ctxkit::core::compaction::Budget;
use ctxkit::core::memory::MemoryScope;
use ctxkit::core::memory::NudgeState;
use ctxkit::core::model::Entry;
use ctxkit::core::tokens::ModelFamily;
use ctxkit::core::Message;
use ctxkit::store::{MemoryQuery, MemoryStore, NewMemory, SessionStore, SqliteStore};
use ctxkit_tests::corpus_log::{repeated_log, session_messages, steady_checkpoint};

const FAMILY: ModelFamily = ModelFamily::Claude;

fn corpus_log(length: usize) -> Vec<Entry> {
    let messages = session_messages();
    assert!(!messages.is_empty(), "the corpus session is missing");
    repeated_log(&messages, length, FAMILY)
}

fn append(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(dir.path().join("append.db")).unwrap();
    let source = corpus_log(2_000);
    let mut group = c.benchmark_group("append");

    store.create_session("one", FAMILY, 0).unwrap();
    let mut next = 1u64;
    group.throughput(Throughput::Elements(1));
    group.bench_function("one_message", |b| {
        b.iter(|| {
            let template = &source[(next as usize - 1) % source.len()];
            let entry = Entry {
                seq: next,
                ..template.clone()
            };
            store.append("one", &[entry], &[], 0).unwrap();
            next += 1;
        })
    });

    for size in [10usize, 100] {
        let name = format!("batch_{size}");
        store.create_session(&name, FAMILY, 0).unwrap();
        let mut next = 1u64;
        group.throughput(Throughput::Elements(size as u64));
        group.bench_function(&name, |b| {
            b.iter_batched(
                || {
                    let batch: Vec<Entry> = (0..size as u64)
                        .map(|i| Entry {
                            seq: next + i,
                            ..source[((next + i) as usize - 1) % source.len()].clone()
                        })
                        .collect();
                    next += size as u64;
                    batch
                },
                |batch| store.append(&name, &batch, &[], 0).unwrap(),
                BatchSize::SmallInput,
            )
        });
    }

    // One turn's writes: ten messages appended one by one, then the turn's durability point
    // (a WAL checkpoint with its fsyncs).
    store.create_session("turn", FAMILY, 0).unwrap();
    let mut next = 1u64;
    group.throughput(Throughput::Elements(10));
    group.bench_function("ten_then_sync", |b| {
        b.iter(|| {
            for _ in 0..10 {
                let entry = Entry {
                    seq: next,
                    ..source[(next as usize - 1) % source.len()].clone()
                };
                store.append("turn", &[entry], &[], 0).unwrap();
                next += 1;
            }
            store.sync().unwrap();
        })
    });
    group.finish();
}

fn load(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(dir.path().join("load.db")).unwrap();
    let log = corpus_log(100_000);
    let budget = Budget {
        context_window: 200_000,
        tool_schema_tokens: 26_450,
        ..Budget::default()
    };
    store.import_session("steady", FAMILY, &log, 0).unwrap();
    let checkpoint = steady_checkpoint(&log, &budget, FAMILY).unwrap();
    store.add_checkpoint("steady", &checkpoint, 0).unwrap();
    let nudge = NudgeState {
        turn: 500,
        last_seq: Some(log.len() as u64 - 3),
        turns_without_progress: 0,
    };
    store
        .finish_turn("steady", &turn_changes(None, nudge), &[], "", 0)
        .unwrap();
    store.import_session("whole", FAMILY, &log, 0).unwrap();
    // Chat-sized messages (about 300 bytes of JSON each), as in tau-bench dialogs.
    let small = Entry::number(
        (0..100_000).map(|i| {
            if i % 2 == 0 {
                Message::user(format!("Customer turn {i}: I would like to change my reservation to a later flight, please keep the same seat class and check the baggage allowance."))
            } else {
                Message::assistant(format!("Agent turn {i}: I can help with that. Let me look up the reservation and the available flights for the new date."), vec![])
            }
        }),
        1,
        FAMILY,
    );
    store.import_session("small", FAMILY, &small, 0).unwrap();
    let tail = store.load_for_turn("steady").unwrap().entries.len();
    eprintln!(
        "100k-message session: {} bytes of JSON bodies; a steady turn loads {tail} messages",
        log.iter()
            .map(|e| serde_json::to_string(&e.message).unwrap().len())
            .sum::<usize>()
    );

    let mut group = c.benchmark_group("load_100k");
    group.sample_size(10);
    group.bench_function("for_turn_steady", |b| {
        b.iter(|| black_box(store.load_for_turn("steady").unwrap()))
    });
    group.bench_function("for_turn_no_checkpoint", |b| {
        b.iter(|| black_box(store.load_for_turn("whole").unwrap()))
    });
    group.bench_function("for_turn_no_checkpoint_small_messages", |b| {
        b.iter(|| black_box(store.load_for_turn("small").unwrap()))
    });
    group.bench_function("session_head", |b| {
        b.iter(|| black_box(store.session_head("steady").unwrap()))
    });
    group.finish();
}

fn search(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(dir.path().join("memory.db")).unwrap();
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
        store.add_memory("/work/project", &memory, 0).unwrap();
    }
    let mut group = c.benchmark_group("memory_search_10k");
    // `rare`: two terms, a few matches; `common`: one term in a sixth of the rows (bm25 ranks
    // them all); `cjk`: a CJK substring in a sixth of the rows; `like_short`: a two-letter
    // term, answered by LIKE over every row; `operators`: FTS5 syntax taken literally.
    for (name, text) in [
        ("trigram_rare", "Memory 4242"),
        ("trigram_common", "deploy"),
        ("trigram_cjk", "持久化"),
        ("like_short", "db"),
        ("operators", "\"deploy\" AND NEAR("),
    ] {
        let query = MemoryQuery {
            text: text.into(),
            limit: 20,
        };
        group.bench_function(name, |b| {
            b.iter(|| black_box(store.search_memories("/work/project", &query, 1).unwrap()))
        });
    }
    group.finish();
}

criterion_group!(benches, append, load, search);
criterion_main!(benches);

/// What a turn changed: `checkpoint` (if any) and the nudge state, no memories.
fn turn_changes(
    checkpoint: Option<ctxkit::core::Checkpoint>,
    nudge_state: ctxkit::core::memory::NudgeState,
) -> ctxkit::core::TurnChanges {
    ctxkit::core::TurnChanges {
        checkpoint,
        nudge_state,
        memories: Vec::new(),
    }
}
