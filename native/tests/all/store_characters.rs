//! No character lost, on SQLite and PostgreSQL alike ([`common::backends`]): generated text
//! made of every control character (C0, DEL, C1, NUL first among them), U+FFFD and the
//! characters the PostgreSQL store escapes or searches with (`0`, `N`), line and paragraph
//! separators, a byte order mark, letters, CJK and emoji, written as a session's name, a
//! message, a tool call's id, a checkpoint's summary and tasks, an offload's call id, path and
//! output, a memory's project, title, content, category and tags, comes back equal byte for
//! byte; the history search finds the message by its whole text, and the memory search the
//! memory by a word of it. (Lone surrogates cannot be a Rust `String`: JSON carrying one is
//! refused where it is read, as the CLI tests show.) A NUL is searched as a NUL: never found by
//! the U+FFFD that PostgreSQL stored in its place before (an example beside the property).
//!
//! Uses the run's `PROPTEST_RNG_SEED`; 40 cases, each a handful of transactions per backend
//! (about 5 s with PostgreSQL's durable commits).

use crate::common::backends::Backend;
use ctxkit::core::compaction::{Checkpoint, SummaryMethod};
use ctxkit::core::model::Entry;
use ctxkit::core::recall::SearchRequest;
use ctxkit::core::tokens::ModelFamily;
use ctxkit::core::{Message, ToolCall};
use ctxkit::store::{AddedMemory, MemoryQuery, NewMemory, OffloadRecord, Store};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

const FAMILY: ModelFamily = ModelFamily::OpenAi;

/// One character: mostly the ones a store may mishandle.
fn hostile_char() -> impl Strategy<Value = char> {
    prop_oneof![
        4 => (0u32..0x20).prop_map(|c| char::from_u32(c).unwrap()),
        2 => Just('\0'),
        1 => (0x7Fu32..0xA0).prop_map(|c| char::from_u32(c).unwrap()),
        2 => proptest::sample::select(vec![
            '\u{FFFD}', '0', 'N', 'n', '\u{2028}', '\u{2029}', '\u{FEFF}', '%', '_', '\\',
        ]),
        3 => proptest::char::range('a', 'z'),
        1 => proptest::sample::select(vec!['É', 'ß', '持', '久', '🦀', ' ']),
    ]
}

fn hostile_text() -> impl Strategy<Value = String> {
    proptest::collection::vec(hostile_char(), 1..24).prop_map(String::from_iter)
}

/// Writes everything of case `n` with `text` into `store`, reads it back, and checks it.
fn round_trip(store: &mut dyn Store, postgres: bool, n: usize, text: &str) -> Result<(), String> {
    let session = format!("s{n} {text}");
    let call = format!("call{n} {text}");
    let path = format!(".ctxkit/tool_results/{n}/{text}.txt");
    store
        .create_session(&session, FAMILY, 1)
        .map_err(|e| e.to_string())?;
    let messages = vec![
        Message::user(text),
        Message::assistant(text, vec![ToolCall::new(call.clone(), text, text)]),
        Message::tool_result(call.clone(), text, false),
    ];
    let entries = Entry::number(messages, 1, FAMILY);
    let offload = OffloadRecord {
        seq: 3,
        tool_call_id: Some(call.clone()),
        relative_path: path.clone(),
        bytes: text.len() as u64,
        lines: 1,
        is_error: false,
        content: Some(text.to_owned()),
    };
    store
        .append(&session, &entries, std::slice::from_ref(&offload), 2)
        .map_err(|e| e.to_string())?;
    let checkpoint = Checkpoint {
        through_seq: 2,
        summary: text.to_owned(),
        method: SummaryMethod::Extractive,
        active_tasks: Some(text.to_owned()),
        tokens: 5,
        made_at_turn: 1,
        pinned: Vec::new(),
        dropped_facts: Default::default(),
        compaction_block: None,
        restore: Some(text.to_owned()),
    };
    store
        .add_checkpoint(&session, &checkpoint, 3)
        .map_err(|e| e.to_string())?;
    let project = format!("/p/{n}/{text}");
    let memory = NewMemory {
        title: text.to_owned(),
        content: format!("m{n} {text}"),
        category: text.to_owned(),
        tags: vec![text.to_owned(), "t".to_owned()],
        ..NewMemory::default()
    };
    let AddedMemory::Added(added) = store
        .add_memory(&project, &memory, 4)
        .map_err(|e| e.to_string())?
    else {
        return Err("the memory was taken for a duplicate".to_owned());
    };

    let check = |what: &str, equal: bool| {
        if equal {
            Ok(())
        } else {
            Err(format!("{what} did not come back equal"))
        }
    };
    let names: Vec<String> = store
        .list_sessions()
        .map_err(|e| e.to_string())?
        .into_iter()
        .map(|info| info.name)
        .collect();
    check("the session's name", names.contains(&session))?;
    let exported = store.export_session(&session).map_err(|e| e.to_string())?;
    check("the log", exported.entries == entries)?;
    check("the checkpoint", exported.checkpoints == vec![checkpoint])?;
    let offloads = store.offloads(&session).map_err(|e| e.to_string())?;
    check(
        "the offload record",
        offloads
            == vec![OffloadRecord {
                content: None,
                ..offload
            }],
    )?;
    let kept = store
        .offload_text(&session, &path)
        .map_err(|e| e.to_string())?;
    // PostgreSQL keeps offloaded outputs for other machines; SQLite has only the file.
    let expected = postgres.then(|| text.to_owned());
    check("the offloaded output", kept == expected)?;
    let read = store
        .get_memory(added.id)
        .map_err(|e| e.to_string())?
        .ok_or("the memory is gone")?;
    check(
        "the memory",
        read.title == memory.title
            && read.content == memory.content
            && read.category == memory.category
            && read.tags == memory.tags
            && read.project.as_deref() == Some(project.as_str()),
    )?;

    if let Ok(request) = SearchRequest::new(text, None) {
        let found = store
            .search_history(&session, &request)
            .map_err(|e| e.to_string())?;
        check(
            "the history search by the whole text",
            found.hits.iter().any(|hit| hit.item.seq == 1 && hit.exact),
        )?;
    }
    let word = format!("m{n}");
    let found = store
        .search_memories(
            &project,
            &MemoryQuery {
                text: word,
                limit: 5,
            },
            5,
        )
        .map_err(|e| e.to_string())?;
    check(
        "the memory search",
        found.iter().any(|record| record.id == added.id),
    )
}

#[test]
fn every_character_comes_back_byte_for_byte_on_both_backends() {
    let backends = Backend::all("store_characters");
    let stores: Vec<_> = backends
        .iter()
        .map(|backend| std::cell::RefCell::new(backend.open()))
        .collect();
    let case = std::cell::Cell::new(0usize);
    // The run's seed (PROPTEST_RNG_SEED) comes with the default configuration.
    let config = ProptestConfig {
        failure_persistence: None,
        ..ProptestConfig::with_cases(40)
    };
    let mut runner = proptest::test_runner::TestRunner::new(config);
    runner
        .run(&hostile_text(), |text| {
            case.set(case.get() + 1);
            for (backend, store) in backends.iter().zip(&stores) {
                let mut store = store.borrow_mut();
                round_trip(&mut **store, backend.is_postgres(), case.get(), &text).map_err(
                    |e| TestCaseError::fail(format!("{} ({text:?}): {e}", backend.name())),
                )?;
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn a_nul_is_searched_as_a_nul_and_never_as_its_old_replacement() {
    for backend in Backend::all("store_characters_nul") {
        let mut store = backend.open();
        store.create_session("s", FAMILY, 1).unwrap();
        let messages = vec![
            Message::user("before a\0b after"),
            Message::user("before a\u{FFFD}b after"),
        ];
        store
            .append("s", &Entry::number(messages, 1, FAMILY), &[], 1)
            .unwrap();
        let seqs = |query: &str| -> Vec<u64> {
            let request = SearchRequest::new(query, None).unwrap();
            let found = store.search_history("s", &request).unwrap();
            found.hits.iter().map(|hit| hit.item.seq).collect()
        };
        assert_eq!(seqs("A\0B"), [1], "{}", backend.name());
        assert_eq!(seqs("a\u{FFFD}B"), [2], "{}", backend.name());
        assert_eq!(seqs("a\0b after"), [1], "{}", backend.name());

        for content in ["note x\0y", "note x\u{FFFD}y"] {
            let memory = NewMemory {
                content: content.to_owned(),
                ..NewMemory::default()
            };
            // Two memories: text that differs only where PostgreSQL used to put U+FFFD.
            assert!(matches!(
                store.add_memory("/p", &memory, 1).unwrap(),
                AddedMemory::Added(_)
            ));
        }
        let mut contents = |query: &str| -> Vec<String> {
            let query = MemoryQuery {
                text: query.to_owned(),
                limit: 5,
            };
            let found = store.search_memories("/p", &query, 1).unwrap();
            found.into_iter().map(|record| record.content).collect()
        };
        assert_eq!(contents("X\0Y"), ["note x\0y"], "{}", backend.name());
        assert_eq!(
            contents("x\u{FFFD}y"),
            ["note x\u{FFFD}y"],
            "{}",
            backend.name()
        );
    }
}
