//! The plans PostgreSQL makes for the store's searches (`EXPLAIN`, the statements not run), for
//! an operator checking that a database serves them from its indexes: the store benchmark
//! (`native/examples/store_bench`) prints them and fails when a search would scan a table.
//! Each plan is of the very statement the search runs (the same SQL and parameters, built by
//! one function), planned for these parameters as the search's statement is.

use ctxkit_core::recall::SearchRequest;

use crate::error::Result;
use crate::store::fts_query::query_terms;
use crate::store::memory_types::MemoryQuery;
use crate::store::postgres::memory::search_query;
use crate::store::postgres::queries::session_row;
use crate::store::postgres::reads::matching_query;
use crate::store::postgres::{get, PostgresStore, Query, Tx};

impl PostgresStore {
    /// The plans of a history search of session `name` for `request`: the exact pass's, then
    /// the every-word pass's when the request has one. Fails as the search would (no such
    /// session).
    pub fn explain_history_search(
        &self,
        name: &str,
        request: &SearchRequest,
    ) -> Result<Vec<String>> {
        let what = || format!("session {name:?}: planning its history search");
        self.read(&what, |tx| {
            let (id, _) = session_row(tx, name, false)?;
            let wanted = request.limit.saturating_add(1);
            let mut plans = vec![plan(
                tx,
                &matching_query(id, &[request.query.as_str()], wanted),
                &what,
            )?];
            if request.has_word_pass() {
                let terms: Vec<&str> = request.terms.iter().map(String::as_str).collect();
                plans.push(plan(tx, &matching_query(id, &terms, wanted), &what)?);
            }
            Ok(plans)
        })
    }

    /// The plan of a memory search for `query` in `project` at `now` (none for a query without
    /// terms, which searches nothing). Fails as the search would (a query past the bounds).
    pub fn explain_memory_search(
        &self,
        project: &str,
        query: &MemoryQuery,
        now: i64,
    ) -> Result<Vec<String>> {
        let terms = query_terms(&query.text)?;
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let what = || format!("planning the memory search for {:?}", query.text);
        self.read(&what, |tx| {
            Ok(vec![plan(
                tx,
                &search_query(project, &terms, query.limit, now),
                &what,
            )?])
        })
    }
}

/// `EXPLAIN` of `query`, one line of the plan per line.
fn plan(tx: &mut Tx<'_>, query: &Query, what: &dyn Fn() -> String) -> Result<String> {
    let sql = format!("EXPLAIN {}", query.sql);
    let rows = tx.query_planned(&sql, &query.params(), what)?;
    let lines = rows
        .iter()
        .map(|row| get::<String>(row, 0, tx.target))
        .collect::<Result<Vec<_>>>()?;
    Ok(lines.join("\n"))
}
