//! The plans PostgreSQL makes for the store's searches (`EXPLAIN`, the statements not run), for
//! an operator checking that a database serves them from its indexes: the store benchmark
//! (`native/examples/store_bench`) prints them and fails when a search would scan a table.
//! Each plan is of the very statement the search runs (the same SQL and parameters, built by
//! one function), planned as the search's statement is: for these parameters, or (a memory
//! search through the search function) the generic plan the function keeps.

use ctxkit_core::recall::SearchRequest;

use crate::error::Result;
use crate::store::fts_query::query_terms;
use crate::store::memory_types::MemoryQuery;
use crate::store::postgres::memory_search::{kept_statement, search_query};
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
    /// terms, which searches nothing): when the trigram index serves a term, the generic plan
    /// the search function keeps for the ranked ids (PostgreSQL's own, made here by preparing
    /// the same statement in this transaction); else the plan of the statement the search
    /// sends. Fails as the search would (a query past the bounds).
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
            if let Some((statement, types)) = kept_statement(&terms) {
                return Ok(vec![kept_plan(tx, &statement, &types, &what)?]);
            }
            let count_use = !self.pool.read_only;
            let search = search_query(project, &terms, query.limit, now, count_use);
            Ok(vec![plan(tx, &search, &what)?])
        })
    }
}

/// The generic plan a kept function ([`super::kept`]) keeps for `statement` (parameters of
/// `types`), from the same statement prepared in `tx` (and deallocated before the transaction
/// ends, so nothing is left on the server connection). A generic plan is made without the
/// parameters' values, so it is explained with none (NULL for each).
fn kept_plan(
    tx: &mut Tx<'_>,
    statement: &str,
    types: &[String],
    what: &dyn Fn() -> String,
) -> Result<String> {
    tx.execute("SET LOCAL plan_cache_mode = force_generic_plan", &[], what)?;
    let prepare = format!("PREPARE ctxkit_kept ({}) AS {statement}", types.join(", "));
    tx.execute(&prepare, &[], what)?;
    let nulls = vec!["NULL"; types.len()].join(", ");
    let explain = Query::new(format!("ctxkit_kept ({nulls})"));
    let kept = plan_with(tx, &explain, "EXPLAIN EXECUTE ", what)?;
    tx.execute("DEALLOCATE ctxkit_kept", &[], what)?;
    Ok(kept)
}

/// `EXPLAIN` of `query`, one line of the plan per line; a statement sent through a kept
/// function is explained as the function runs it.
fn plan(tx: &mut Tx<'_>, query: &Query, what: &dyn Fn() -> String) -> Result<String> {
    match query.kept_function() {
        Some(_) => kept_plan(tx, query.statement(), &query.type_names(), what),
        None => plan_with(tx, query, "EXPLAIN ", what),
    }
}

/// The plan `prefix` (`EXPLAIN `, `EXPLAIN EXECUTE `) before `query` prints.
fn plan_with(
    tx: &mut Tx<'_>,
    query: &Query,
    prefix: &str,
    what: &dyn Fn() -> String,
) -> Result<String> {
    let rows = query.run_with(tx, prefix, what)?;
    let lines = rows
        .iter()
        .map(|row| get::<String>(row, 0, tx.target))
        .collect::<Result<Vec<_>>>()?;
    Ok(lines.join("\n"))
}
