//! History tool calls (`ctxkit_core::recall::parse_history_call`, `SearchRequest`) and the
//! memory store's full-text query building (`ctxkit::store`: `query_terms`,
//! `fts5_match_expression`, `like_pattern`), run against a real SQLite FTS5 trigram index.

use std::cell::RefCell;

use ctxkit::store::{
    fts5_match_expression, like_pattern, query_terms, MAX_QUERY_CHARS, MAX_QUERY_TERMS,
};
use ctxkit_core::recall::{
    parse_history_call, HistoryRequest, SearchRequest, OFFLOAD_MAX_LINES, QUERY_MAX_BYTES,
    QUERY_MAX_TERMS, READ_MAX_MESSAGES, SEARCH_MAX_LIMIT,
};
use rusqlite::Connection;

use crate::{text, two_texts};

/// Panics unless `search` respects the bounds a search request promises.
fn assert_search_bounds(search: &SearchRequest) {
    assert!(!search.query.is_empty(), "an empty query was taken");
    assert_eq!(
        search.query,
        search.query.trim(),
        "the query is not trimmed"
    );
    assert!(
        search.query.len() <= QUERY_MAX_BYTES,
        "a {}-byte query was taken",
        search.query.len()
    );
    assert!(!search.terms.is_empty(), "a query without terms");
    assert!(
        search.terms.len() <= QUERY_MAX_TERMS,
        "{} terms",
        search.terms.len()
    );
    for (index, term) in search.terms.iter().enumerate() {
        assert!(
            !term.is_empty() && !term.chars().any(char::is_whitespace),
            "the term {term:?} is not one word"
        );
        assert!(
            search.query.contains(term.as_str()),
            "the term {term:?} is not in the query"
        );
        assert!(
            !search
                .terms
                .iter()
                .take(index)
                .any(|earlier| earlier == term),
            "the term {term:?} is repeated"
        );
    }
    assert!(
        (1..=SEARCH_MAX_LIMIT).contains(&search.limit),
        "limit {}",
        search.limit
    );
}

/// The first byte picks the tool (or a made-up name), the rest is its JSON arguments; a
/// search is also built directly from the text.
///
/// Invariants: a call that parses respects every bound of `recall::limits` (a search: a
/// trimmed non-blank query of at most `QUERY_MAX_BYTES`, at most `QUERY_MAX_TERMS` distinct
/// words of it, a limit in 1..=`SEARCH_MAX_LIMIT`; a read: `1 <= from <= to`, at most
/// `READ_MAX_MESSAGES` seqs, `asked_to` only when shortened; an offload page: offset from 1,
/// limit in 1..=`OFFLOAD_MAX_LINES`, a trimmed non-empty path); a name that is not a history
/// tool is refused.
pub fn check_history_call(data: &[u8]) {
    let (name, arguments) = match data.split_first() {
        Some((selector, rest)) => {
            let name = match selector % 4 {
                0 => "search_history".to_owned(),
                1 => "read_history".to_owned(),
                2 => "read_offload".to_owned(),
                _ => two_texts(rest).0,
            };
            let arguments = if selector % 4 == 3 {
                two_texts(rest).1
            } else {
                text(rest)
            };
            (name, arguments)
        }
        None => return,
    };
    match parse_history_call(&name, &arguments) {
        Ok(HistoryRequest::Search(search)) => {
            assert_eq!(name, "search_history");
            assert_search_bounds(&search);
        }
        Ok(HistoryRequest::Read(read)) => {
            assert_eq!(name, "read_history");
            assert!(
                1 <= read.from && read.from <= read.to,
                "read {}..={}",
                read.from,
                read.to
            );
            assert!(
                read.to - read.from < READ_MAX_MESSAGES,
                "a read of {}..={}",
                read.from,
                read.to
            );
            if let Some(asked) = read.asked_to {
                assert!(
                    asked > read.to,
                    "asked_to {asked} but not shortened (to {})",
                    read.to
                );
            }
        }
        Ok(HistoryRequest::Offload(page)) => {
            assert_eq!(name, "read_offload");
            assert!(page.offset >= 1, "offset {}", page.offset);
            assert!(
                (1..=OFFLOAD_MAX_LINES).contains(&page.limit),
                "limit {}",
                page.limit
            );
            assert!(
                !page.path.is_empty() && page.path == page.path.trim(),
                "path {:?}",
                page.path
            );
        }
        Err(_) => {}
    }
    let limit = data.first().map(|&byte| i128::from(byte) - 64);
    if let Ok(search) = SearchRequest::new(&arguments, limit) {
        assert_search_bounds(&search);
    }
}

thread_local! {
    /// An in-memory FTS5 table with the memory store's tokenizer, made once per thread.
    static FTS: RefCell<Option<Connection>> = const { RefCell::new(None) };
}

/// Runs `f` with the in-memory FTS5 trigram table `t(text)`.
fn with_fts<T>(f: impl FnOnce(&Connection) -> T) -> T {
    FTS.with(|cell| {
        let mut slot = cell.borrow_mut();
        let connection = slot.get_or_insert_with(|| {
            let connection = Connection::open_in_memory()
                .unwrap_or_else(|error| panic!("opening an in-memory SQLite: {error}"));
            connection
                .execute_batch("CREATE VIRTUAL TABLE t USING fts5 (text, tokenize = 'trigram');")
                .unwrap_or_else(|error| panic!("creating the FTS5 table: {error}"));
            connection
        });
        f(connection)
    })
}

/// Builds a memory search from the text and runs it against a table holding the text.
///
/// Invariants: `query_terms` refuses a query past `MAX_QUERY_CHARS` characters or
/// `MAX_QUERY_TERMS` terms and takes the rest, giving each distinct term once; the FTS5
/// expression built from any text is accepted by SQLite (user text never reaches FTS5 as
/// syntax) and finds the row that holds the text itself; each term's `LIKE` pattern matches
/// the term.
pub fn check_fts_query(data: &[u8]) {
    let query = text(data);
    let chars = query.trim().chars().count();
    let words: Vec<&str> = query.split_whitespace().collect();
    match query_terms(&query) {
        Ok(terms) => {
            assert!(chars <= MAX_QUERY_CHARS && words.len() <= MAX_QUERY_TERMS);
            for (index, term) in terms.iter().enumerate() {
                assert!(words.contains(term), "{term:?} is not a word of the query");
                assert!(
                    !terms.iter().take(index).any(|earlier| earlier == term),
                    "{term:?} twice"
                );
            }
            assert!(
                words.iter().all(|word| terms.contains(word)),
                "a word was lost"
            );
        }
        Err(_) => assert!(
            chars > MAX_QUERY_CHARS || words.len() > MAX_QUERY_TERMS,
            "a query within the bounds was refused"
        ),
    }
    // SQLite stops a string at NUL: the stored row would not hold the whole text.
    if query.contains('\0') {
        return;
    }
    with_fts(|connection| {
        if let Some(expression) = fts5_match_expression(&query) {
            connection
                .execute("DELETE FROM t", [])
                .unwrap_or_else(|error| panic!("clearing the table: {error}"));
            connection
                .execute("INSERT INTO t (text) VALUES (?1)", [&query])
                .unwrap_or_else(|error| panic!("inserting the row: {error}"));
            let found: Result<i64, _> = connection.query_row(
                "SELECT count(*) FROM t WHERE t MATCH ?1",
                [&expression],
                |row| row.get(0),
            );
            match found {
                Ok(found) => assert_eq!(found, 1, "{expression:?} does not find its own text"),
                Err(error) => panic!("SQLite refused the expression {expression:?}: {error}"),
            }
        }
        for word in &words {
            let matched: Result<bool, _> = connection.query_row(
                "SELECT ?1 LIKE ?2 ESCAPE '\\'",
                [word, &like_pattern(word).as_str()],
                |row| row.get(0),
            );
            match matched {
                Ok(matched) => assert!(matched, "the LIKE pattern of {word:?} does not match it"),
                Err(error) => panic!("SQLite refused the LIKE pattern of {word:?}: {error}"),
            }
        }
    });
}
