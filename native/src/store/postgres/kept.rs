//! Statements PostgreSQL keeps planned: the searches' statements whose planning cost more than
//! running them, sent as calls of PL/pgSQL functions that run them, created by migration 8
//! ([`migration_8_sql`]).
//!
//! PL/pgSQL keeps each statement's plan for the server connection's life, and these functions
//! ask for the generic plan (made once, whatever the parameters), so a call plans nothing but
//! the call. The plans are the server's own cache, not state a caller sees: nothing is
//! prepared on the connection, and the store runs unchanged through a pooler in transaction
//! mode (each server connection keeps its own). They are:
//!
//! - `ctxkit_search_memories` ([`super::memory_search`]): a memory search whose terms the
//!   trigram index serves;
//! - `ctxkit_history_newest`: a history search's first statement ([`super::reads::pass_query`]
//!   of a session by name, one key, its newest part: the session's row, the newest messages'
//!   hits and the offloaded outputs'), 0.3-0.5 ms of planning for 0.2-0.4 ms of work on a
//!   frequent word;
//! - `ctxkit_call_candidates` ([`super::reads::call_candidates_query`]): the calls of the tool
//!   results a search found.
//!
//! A kept function is made from the very statement the search would otherwise send (the same
//! builder, `$1`, `$2`, ... being the function's parameters), so the two cannot differ. The
//! text is part of the schema: once released it is never edited, and a change to one of these
//! statements is a new migration that replaces its function (the snapshot of
//! [`migration_8_sql`], `native/src/store/postgres/snapshots/`, shows any change in review).

use crate::store::postgres::memory_search::search_function_sql;
use crate::store::postgres::query::Query;
use crate::store::postgres::reads::{
    call_candidates_query, pass_query, Of, Part, CALL_CANDIDATES, HISTORY_NEWEST,
};

/// The columns `ctxkit_history_newest` returns: a pass's rows (kind, seq or the log's end,
/// body, path, stored text, the session's row id).
const PASS_ROWS: &str = "found_kind INTEGER, found_seq BIGINT, found_body TEXT, \
    found_path TEXT, found_content TEXT, found_session BIGINT";

/// The columns `ctxkit_call_candidates` returns: the result's seq, the call's seq and body.
const CANDIDATE_ROWS: &str = "found_result BIGINT, found_seq BIGINT, found_body TEXT";

/// A read-only function `name` returning `returns` that runs `query`'s statement with its
/// generic plan kept, the statement's parameters being the function's, in order. The search
/// path is the one the migration ran with (the store's schema).
fn kept_function_sql(name: &str, query: &Query, returns: &str) -> String {
    format!(
        "CREATE OR REPLACE FUNCTION {name}({})\nRETURNS TABLE ({returns})\nLANGUAGE plpgsql \
         STABLE\nSET search_path FROM CURRENT\nSET plan_cache_mode = force_generic_plan\n\
         AS $kept$\nBEGIN\n    RETURN QUERY {};\nEND\n$kept$;\n",
        query.type_names().join(", "),
        query.statement()
    )
}

/// Migration 8: the three functions. Each statement's text depends on its shape only, not
/// on its parameters' values, so it is built here from placeholder values.
pub(super) fn migration_8_sql() -> String {
    let newest = pass_query(Of::Name(""), &[String::new()], 1, Part::Newest);
    let calls = call_candidates_query(0, Vec::new(), Vec::new(), 0);
    [
        search_function_sql(),
        kept_function_sql(HISTORY_NEWEST, &newest, PASS_ROWS),
        kept_function_sql(CALL_CANDIDATES, &calls, CANDIDATE_ROWS),
    ]
    .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migration_8_is_this_text() {
        insta::assert_snapshot!(migration_8_sql());
    }

    #[test]
    fn the_kept_statements_are_sent_as_calls_and_the_others_as_themselves() {
        let newest = pass_query(Of::Name("s"), &["word".to_owned()], 11, Part::Newest);
        assert_eq!(newest.kept_function(), Some(HISTORY_NEWEST));
        let calls = call_candidates_query(1, vec![2], vec!["c".to_owned()], 3);
        assert_eq!(calls.kept_function(), Some(CALL_CANDIDATES));
        // Other shapes are planned for their parameters.
        let words = ["a".to_owned(), "b".to_owned()];
        let every_word = pass_query(Of::Name("s"), &words, 11, Part::Newest);
        assert_eq!(every_word.kept_function(), None);
        let older = pass_query(Of::Row(1, 5000), &["a".to_owned()], 11, Part::OlderMessages);
        assert_eq!(older.kept_function(), None);
        let known = pass_query(Of::Row(1, 5000), &["a".to_owned()], 11, Part::Newest);
        assert_eq!(known.kept_function(), None);
    }
}
