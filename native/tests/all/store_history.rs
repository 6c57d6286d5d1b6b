//! The stores' history search and reads, the same tests against SQLite and PostgreSQL
//! ([`common::backends`]): what `search_history` and `read_history` find in a session's log
//! through the trigram index (FTS5, `pg_trgm`): substrings of text, tool calls and tool
//! results, CJK, queries of one or two characters (answered by LIKE), search syntax and quotes
//! taken as text, the exact pass before the every-word pass, sessions kept apart, imports
//! indexed in their transaction, reads by seq with tools' names, and hits on both sides of the
//! newest thousand messages (which PostgreSQL scans before it turns to its index) in one
//! newest-first order, a tool result among the older messages still named.

use crate::common::backends::Backend;
use ctxkit::core::model::Entry;
use ctxkit::core::recall::{ReadRequest, SearchRequest};
use ctxkit::core::tokens::ModelFamily;
use ctxkit::core::{Message, ToolCall};
use ctxkit::store::Store;

const FAMILY: ModelFamily = ModelFamily::OpenAi;

fn log() -> Vec<Message> {
    vec![
        Message::user("请把用户设置持久化到数据库, and keep `UserSettings` small."),
        Message::assistant(
            "",
            vec![ToolCall::new(
                "c1",
                "bash",
                r#"{"command":"grep -rn \"NEAR(x\" src/ || echo 'AND OR NOT'"}"#,
            )],
        ),
        Message::tool_result(
            "c1",
            "src/query.rs:12: let q = \"NEAR(x*\";\nerror: 50% of tests_failed",
            true,
        ),
        Message::user("Also: the column is called user_settings, not settings."),
        Message::assistant(
            "Done: `UserSettings` is stored in the user_settings table.",
            vec![],
        ),
    ]
}

fn store_with_log(backend: &Backend) -> Box<dyn Store> {
    let mut store = backend.open();
    store
        .import_session("s", FAMILY, &Entry::number(log(), 1, FAMILY), 1)
        .unwrap();
    // Another session holding the same words: never found from "s".
    store
        .import_session("other", FAMILY, &Entry::number(log(), 1, FAMILY), 1)
        .unwrap();
    store
}

/// (seq, exact) of each hit of `query`.
fn hits(store: &dyn Store, query: &str) -> Vec<(u64, bool)> {
    let request = SearchRequest::new(query, None).unwrap();
    let found = store.search_history("s", &request).unwrap();
    found
        .hits
        .iter()
        .map(|hit| (hit.item.seq, hit.exact))
        .collect()
}

#[test]
fn cjk_substrings_are_found() {
    for backend in Backend::all("cjk_substrings_are_found") {
        let store = store_with_log(&backend);
        let store = store.as_ref();
        assert_eq!(hits(store, "持久化"), [(1, true)]);
        assert_eq!(hits(store, "设置持久化到数"), [(1, true)]);
        assert_eq!(hits(store, "数据库"), [(1, true)]);
        assert_eq!(
            hits(store, "持久 数据"),
            [(1, false)],
            "every word, not the exact text"
        );
    }
}

#[test]
fn search_syntax_and_quotes_are_text() {
    for backend in Backend::all("search_syntax_and_quotes_are_text") {
        let store = store_with_log(&backend);
        let store = store.as_ref();
        assert_eq!(hits(store, "\"NEAR(x"), [(3, true), (2, true)]);
        assert_eq!(
            hits(store, "grep -rn \"NEAR(x\" src/"),
            [(2, true)],
            "the call's arguments, decoded"
        );
        assert_eq!(hits(store, "\"NEAR(x*\""), [(3, true)]);
        assert_eq!(hits(store, "'AND OR NOT'"), [(2, true)]);
        assert_eq!(hits(store, "AND OR NOT"), [(2, true)]);
        assert_eq!(hits(store, "50% of tests_failed"), [(3, true)]);
        assert_eq!(hits(store, "50%"), [(3, true)]);
        assert_eq!(hits(store, "tests_"), [(3, true)]);
        assert_eq!(hits(store, "\""), [(3, true), (2, true)]);
        assert_eq!(hits(store, "col:umn ^start NOT x*"), []);
        assert_eq!(hits(store, "\"\"\""), []);
    }
}

#[test]
fn short_queries_use_like_and_still_stay_in_the_session() {
    for backend in Backend::all("short_queries_use_like_and_still_stay_in_the_session") {
        let store = store_with_log(&backend);
        let store = store.as_ref();
        assert_eq!(hits(store, "用"), [(1, true)]);
        assert_eq!(hits(store, "%"), [(3, true)]);
        assert_eq!(hits(store, "_"), [(5, true), (4, true), (3, true)]);
        assert_eq!(
            hits(store, "\\"),
            [(2, true)],
            "the call's arguments as written"
        );
        assert_eq!(hits(store, "zz"), []);
        // One short and one long word: the index for the long one, LIKE for the short one.
        assert_eq!(hits(store, "OR tests_failed"), [(3, false)]);
    }
}

#[test]
fn exact_hits_come_first_then_every_word_newest_first() {
    for backend in Backend::all("exact_hits_come_first_then_every_word_newest_first") {
        let store = store_with_log(&backend);
        let store = store.as_ref();
        assert_eq!(
            hits(store, "user_settings table"),
            [(5, true)],
            "seq 4 has user_settings but not table"
        );
        assert_eq!(hits(store, "usersettings"), [(5, true), (1, true)]);
        assert_eq!(
            hits(store, "user_setings"),
            [],
            "a substring, not a fuzzy match"
        );
        assert_eq!(
            hits(store, "settings USER"),
            [(5, false), (4, false), (1, false)]
        );
        let request = SearchRequest::new("settings", Some(2)).unwrap();
        let found = store.search_history("s", &request).unwrap();
        assert_eq!(found.hits.len(), 2);
        assert!(found.more);
        assert_eq!(found.hits[0].item.seq, 5);
    }
}

#[test]
fn tool_results_carry_their_tool_and_reads_go_by_seq() {
    for backend in Backend::all("tool_results_carry_their_tool_and_reads_go_by_seq") {
        let store = store_with_log(&backend);
        let store = store.as_ref();
        let request = SearchRequest::new("src/query.rs", None).unwrap();
        let found = store.search_history("s", &request).unwrap();
        assert_eq!(found.hits[0].item.tool_name.as_deref(), Some("bash"));
        let read = store
            .read_history("s", &ReadRequest::new(3, Some(9)).unwrap())
            .unwrap();
        assert_eq!(read.last_seq, 5);
        let seqs: Vec<u64> = read.messages.iter().map(|m| m.seq).collect();
        assert_eq!(seqs, [3, 4, 5]);
        assert_eq!(read.messages[0].tool_name.as_deref(), Some("bash"));
        assert!(matches!(
            store.search_history("nope", &request),
            Err(ctxkit::Error::NoSuchSession(_))
        ));
    }
}

#[test]
fn a_failed_import_indexes_nothing() {
    for backend in Backend::all("a_failed_import_indexes_nothing") {
        let mut store = store_with_log(&backend);
        let mut entries = Entry::number([Message::user("unique-marker-text")], 1, FAMILY);
        entries.push(Entry::new(7, Message::user("gap"), FAMILY));
        assert!(store.import_session("bad", FAMILY, &entries, 1).is_err());
        store
            .import_session("bad", FAMILY, &entries[..1], 1)
            .unwrap();
        let request = SearchRequest::new("unique-marker-text", None).unwrap();
        let found = store.search_history("bad", &request).unwrap();
        assert_eq!(
            found.hits.len(),
            1,
            "the failed import left no index row behind"
        );
    }
}

/// A search in one session is answered from that session's messages: another session's long
/// run of one character (which made the SQLite index's phrase match take seconds and
/// gigabytes for a 1,000-byte query) is neither read into the answer nor a hit, and the
/// session's own text is still found with the core's case fold.
#[test]
fn another_sessions_long_run_of_one_character_is_not_searched() {
    for backend in Backend::all("store_history_long_run") {
        let mut store = store_with_log(&backend);
        let run = Message::user("a".repeat(1_000_000));
        store
            .import_session("runs", FAMILY, &Entry::number(vec![run], 1, FAMILY), 1)
            .unwrap();
        let query = format!("{}b", "a".repeat(999));
        assert_eq!(hits(&*store, &query), [], "{}", backend.name());
        assert_eq!(
            hits(&*store, "USERSETTINGS"),
            [(5, true), (1, true)],
            "{}",
            backend.name()
        );
        assert_eq!(hits(&*store, "持久化"), [(1, true)], "{}", backend.name());
        let whole = SearchRequest::new(&"a".repeat(1_000), None).unwrap();
        let found = store.search_history("runs", &whole).unwrap();
        assert_eq!(found.hits.len(), 1, "{}", backend.name());
    }
}

#[test]
fn hits_among_the_newest_and_the_older_messages_come_in_one_order() {
    // 1,300 messages: the oldest 300 lie beyond the newest thousand.
    let messages: Vec<Message> = (1..=1_300u64)
        .map(|seq| match seq {
            1 => Message::assistant("", vec![ToolCall::new("far", "grep", "{}")]),
            2 => Message::tool_result("far", "rare needle in a result", false),
            3..=20 | 1_291..=1_295 => Message::user(format!("common needle {seq}")),
            _ => Message::user(format!("filler {seq}")),
        })
        .collect();
    for backend in Backend::all("history_older_messages") {
        let mut store = backend.open();
        store
            .import_session("s", FAMILY, &Entry::number(messages.clone(), 1, FAMILY), 1)
            .unwrap();
        let request = SearchRequest::new("common NEEDLE", Some(10)).unwrap();
        let found = store.search_history("s", &request).unwrap();
        let seqs: Vec<u64> = found.hits.iter().map(|hit| hit.item.seq).collect();
        assert_eq!(
            seqs,
            [1_295, 1_294, 1_293, 1_292, 1_291, 20, 19, 18, 17, 16],
            "{}",
            backend.name()
        );
        assert!(found.more, "{}", backend.name());
        let request = SearchRequest::new("rare needle", None).unwrap();
        let found = store.search_history("s", &request).unwrap();
        assert_eq!(found.hits.len(), 1, "{}", backend.name());
        assert_eq!(found.hits[0].item.seq, 2);
        assert_eq!(found.hits[0].item.tool_name.as_deref(), Some("grep"));
        let request = SearchRequest::new("needle 1293 absent", None).unwrap();
        let found = store.search_history("s", &request).unwrap();
        assert!(found.hits.is_empty(), "{}", backend.name());
    }
}
