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
use crate::store::postgres::query::Query;
use crate::store::postgres::reads::{pass_query, Of, Part};
use crate::store::postgres::text::search_key;
use crate::store::postgres::{get, PostgresStore, Tx};

impl PostgresStore {
    /// The plans of a history search of session `name` for `request`: for the exact pass, then
    /// the every-word pass when the request has one, the plan of its first statement (the
    /// newest messages and the offloaded outputs; the exact pass's also reads the session's
    /// row) and of its second (the older messages, run only when the newest held too few).
    /// Fails as the search would (no such session).
    pub fn explain_history_search(
        &self,
        name: &str,
        request: &SearchRequest,
    ) -> Result<Vec<String>> {
        let what = || format!("session {name:?}: planning its history search");
        self.read(&what, |tx| {
            let (id, last_seq) = session_row(tx, name, false)?;
            let wanted = request.limit.saturating_add(1);
            let mut passes = vec![vec![request.query.as_str()]];
            if request.has_word_pass() {
                passes.push(request.terms.iter().map(String::as_str).collect());
            }
            let mut plans = Vec::new();
            for (index, needles) in passes.into_iter().enumerate() {
                let keys: Vec<String> = needles.iter().map(|needle| search_key(needle)).collect();
                // The search's first statement reads the session's row itself.
                let newest = match index {
                    0 => Of::Name(name),
                    _ => Of::Row(id, last_seq),
                };
                let newest = pass_query(newest, &keys, wanted, Part::Newest);
                plans.push(plan(tx, &newest, &what)?);
                let older = pass_query(Of::Row(id, last_seq), &keys, wanted, Part::OlderMessages);
                plans.push(plan(tx, &older, &what)?);
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
            let count_use = !self.pool.read_only;
            let search = search_query(project, &terms, query.limit, now, count_use);
            Ok(vec![plan(tx, &search, &what)?])
        })
    }
}

/// `EXPLAIN` of `query`, one line of the plan per line.
fn plan(tx: &mut Tx<'_>, query: &Query, what: &dyn Fn() -> String) -> Result<String> {
    let rows = query.run_with(tx, "EXPLAIN ", what)?;
    let lines = rows
        .iter()
        .map(|row| get::<String>(row, 0, tx.target))
        .collect::<Result<Vec<_>>>()?;
    Ok(lines.join("\n"))
}
