//! How a memory search is said to PostgreSQL: two forms of one search, built from the same
//! pieces ([`matching`]), so they find the same memories in the same order.
//!
//! - **The search function** (`ctxkit_search_memories`, PL/pgSQL, created by migration 8 from
//!   [`search_function_sql`]): the search of a query with a term the trigram index can serve
//!   (three letters or digits in a row, [`index_serves`]). PL/pgSQL keeps each statement's plan
//!   for the server connection's life, and the function asks for the generic plan (a bitmap
//!   scan of the trigram index for the patterns, whatever they are), so a search plans nothing:
//!   planning the statement afresh took 0.2-0.3 ms, more than running it when few memories
//!   match (docs/performance.md). The kept plans are the server's own cache, not state a caller
//!   sees, so the store still runs unchanged through a pooler in transaction mode. The function
//!   finds the ranked ids, counts their use (its commit not waiting for the WAL flush) and
//!   returns the memories in rank order, in one call.
//! - **The statement planned for its patterns** ([`planned_search_query`]): the search of a
//!   query whose every term is too short for a trigram (`db`). A generic plan would read the
//!   whole trigram index for it; planned for its patterns, PostgreSQL reads the table instead.
//!
//! The function's text is part of the schema ([`super::kept`]): once released it is never
//! edited, and a change to the search is a new migration that replaces it.

use postgres::types::Type;

use crate::store::fts_query::{like_pattern, MAX_QUERY_TERMS, MIN_TRIGRAM_CHARS};
use crate::store::memory_types::result_limit;
use crate::store::postgres::query::Query;
use crate::store::postgres::text::{owned_column, search_key};

/// The search function's name, as migration 8 creates it.
const SEARCH_FUNCTION: &str = "ctxkit_search_memories";

/// The columns a search returns, in the order `memory_from_row` reads them, from a table (or a
/// function's rows) aliased `m`.
pub(super) const MEMORY_COLUMNS: &str = "m.id, m.project, m.title, m.content, m.category, \
    m.importance, m.tags, m.scope, m.source, m.created_at, m.updated_at, m.expires_at, \
    m.use_count, m.disabled_at, m.approved_at";

/// What the search's conditions are called: the time, the project, the result limit and each
/// term's pattern (a placeholder such as `$4`, or the function's parameter).
struct Names<'a> {
    at: &'a str,
    project: &'a str,
    limit: &'a str,
    patterns: Vec<String>,
}

/// Live (not disabled, not expired at `at`) and visible (global or of `project`), of `memories
/// m`: the rule SQLite's store keeps too.
pub(super) fn live_and_visible(at: &str, project: &str) -> String {
    format!(
        "m.disabled_at IS NULL AND (m.expires_at IS NULL OR m.expires_at > {at}) \
         AND (m.project IS NULL OR m.project = {project})"
    )
}

/// The pieces of a search of `names.patterns`: the condition on `memories m` (live, visible in
/// the project, holding every term's key in its `search_text`), the number of terms its title
/// holds (what ranks a hit first), and the order after it.
fn matching(names: &Names<'_>) -> (String, String, &'static str) {
    let mut condition = live_and_visible(names.at, names.project);
    let mut title_hits = String::from("0");
    for pattern in &names.patterns {
        condition.push_str(&format!(" AND m.search_text LIKE {pattern}"));
        title_hits.push_str(&format!(" + (m.search_title LIKE {pattern})::int"));
    }
    (
        condition,
        title_hits,
        "m.importance DESC, m.updated_at DESC, m.id",
    )
}

/// The ids of the best `names.limit` matches, best first: the statement the search function
/// runs for that many terms, and whose plan [`super::plans`] shows.
fn ranked_ids(names: &Names<'_>) -> String {
    let (condition, title_hits, order) = matching(names);
    format!(
        "SELECT m.id FROM memories m WHERE {condition} \
         ORDER BY ({title_hits}) DESC, {order} LIMIT {}",
        names.limit
    )
}

/// Whether the trigram index can serve `key` (a term's search key): it holds three letters or
/// digits in a row, which `pg_trgm` makes a trigram of. (`pg_trgm` reads letters by the
/// database's locale; a locale that does not class a term's letters as letters only costs
/// speed, never a hit.)
pub(super) fn index_serves(key: &str) -> bool {
    let mut run = 0;
    for c in key.chars() {
        run = if c.is_alphanumeric() { run + 1 } else { 0 };
        if run >= MIN_TRIGRAM_CHARS {
            return true;
        }
    }
    false
}

/// Migration 8: `ctxkit_search_memories(at_time, project_key, most, count_use, term_1, ...
/// term_16)`, the search of up to [`MAX_QUERY_TERMS`] patterns (the first `n` given, the rest
/// NULL): the ids of the best `most` matches by one kept statement per number of terms, then
/// (with `count_use`) a use counted on each, then the memories in rank order. The search path
/// is the one the migration ran with (the store's schema), and the plans are generic.
pub(super) fn search_function_sql() -> String {
    let parameters: Vec<String> = (1..=MAX_QUERY_TERMS)
        .map(|i| match i {
            1 => format!("term_{i} TEXT"),
            _ => format!("term_{i} TEXT DEFAULT NULL"),
        })
        .collect();
    let all_terms: Vec<String> = (1..=MAX_QUERY_TERMS).map(|i| format!("term_{i}")).collect();
    let mut cases = String::new();
    for n in 1..=MAX_QUERY_TERMS {
        let names = Names {
            at: "at_time",
            project: "project_key",
            limit: "most",
            patterns: all_terms.iter().take(n).cloned().collect(),
        };
        cases.push_str(&format!(
            "    WHEN {n} THEN\n        ranked := ARRAY({});\n",
            ranked_ids(&names)
        ));
    }
    format!(
        "CREATE OR REPLACE FUNCTION {SEARCH_FUNCTION}(\n    at_time BIGINT, project_key TEXT, \
         most BIGINT, count_use BOOLEAN,\n    {})\nRETURNS SETOF memories\nLANGUAGE plpgsql\n\
         SET search_path FROM CURRENT\nSET plan_cache_mode = force_generic_plan\n\
         AS $search$\nDECLARE\n    ranked BIGINT[];\nBEGIN\n    CASE num_nonnulls({})\n\
         {cases}    END CASE;\n    IF count_use AND cardinality(ranked) > 0 THEN\n\
         \x20       -- A use count is a statistic: its commit does not wait for the WAL flush.\n\
         \x20       PERFORM set_config('synchronous_commit', 'off', true);\n\
         \x20       UPDATE memories m SET use_count = m.use_count + 1 WHERE m.id = ANY (ranked);\n\
         \x20   END IF;\n\
         \x20   RETURN QUERY SELECT m.* FROM unnest(ranked) WITH ORDINALITY AS r (id, rank)\n\
         \x20       JOIN memories m ON m.id = r.id ORDER BY r.rank;\nEND\n$search$;\n",
        parameters.join(", "),
        all_terms.join(", ")
    )
}

/// The search of `terms` (at least one, at most [`MAX_QUERY_TERMS`]) in `project` at `now`, at
/// most `limit` memories, best first, counting their use with `count_use`: a call of the search
/// function when the trigram index serves a term, else the statement planned for its patterns.
pub(super) fn search_query(
    project: &str,
    terms: &[&str],
    limit: usize,
    now: i64,
    count_use: bool,
) -> Query {
    let keys: Vec<String> = terms.iter().map(|term| search_key(term)).collect();
    if !through_function(&keys) {
        return planned_search_query(project, &keys, limit, now, count_use);
    }
    let mut query = Query::new("");
    let at = query.bind(now, Type::INT8);
    let project = query.bind(owned_column(project), Type::TEXT);
    let limit = query.bind(result_limit(limit), Type::INT8);
    let count_use = query.bind(count_use, Type::BOOL);
    let patterns: Vec<String> = keys
        .iter()
        .map(|key| query.bind(like_pattern(key), Type::TEXT))
        .collect();
    query.push(&format!(
        "SELECT {MEMORY_COLUMNS} FROM {SEARCH_FUNCTION}({at}, {project}, {limit}, {count_use}, \
         {}) WITH ORDINALITY AS m ORDER BY m.ordinality",
        patterns.join(", ")
    ));
    query
}

/// Whether the search of these search keys goes through the search function: a key the
/// trigram index serves.
fn through_function(keys: &[String]) -> bool {
    keys.iter().any(|key| index_serves(key))
}

/// For a search of `terms` through the search function, the statement whose generic plan the
/// function keeps, as a statement to `PREPARE` (its parameters: the time, the project, the
/// limit, then each pattern) with the parameters' types: what [`super::plans`] explains.
/// `None` when the search is planned for its patterns instead.
pub(super) fn kept_statement(terms: &[&str]) -> Option<(String, Vec<String>)> {
    let keys: Vec<String> = terms.iter().map(|term| search_key(term)).collect();
    if !through_function(&keys) {
        return None;
    }
    let names = Names {
        at: "$1",
        project: "$2",
        limit: "$3",
        patterns: (0..keys.len()).map(|i| format!("${}", i + 4)).collect(),
    };
    let mut types = vec!["int8", "text", "int8"];
    types.extend(std::iter::repeat_n("text", keys.len()));
    let types = types.into_iter().map(String::from).collect();
    Some((ranked_ids(&names), types))
}

/// The search as one statement planned for its patterns (search keys, `keys`): with
/// `count_use`, the same statement counts a use of each memory it returns (and returns it
/// counted), its commit not waiting for the WAL flush.
fn planned_search_query(
    project: &str,
    keys: &[String],
    limit: usize,
    now: i64,
    count_use: bool,
) -> Query {
    let mut query = Query::new("");
    let at = query.bind(now, Type::INT8);
    let project = query.bind(owned_column(project), Type::TEXT);
    let limit = query.bind(result_limit(limit), Type::INT8);
    let patterns = keys
        .iter()
        .map(|key| query.bind(like_pattern(key), Type::TEXT))
        .collect();
    let names = Names {
        at: &at,
        project: &project,
        limit: &limit,
        patterns,
    };
    let (condition, title_hits, order) = matching(&names);
    if count_use {
        // `unflushed` sets `synchronous_commit` for the statement's own transaction (what
        // `SET LOCAL` does in a transaction block), read before any row is counted.
        query.push(&format!(
            "WITH found AS (SELECT m.id, ({title_hits}) AS hits, m.importance, m.updated_at \
             FROM memories m WHERE {condition} ORDER BY hits DESC, {order} LIMIT {limit}), \
             unflushed AS (SELECT set_config('synchronous_commit', 'off', true)), \
             counted AS (UPDATE memories m SET use_count = m.use_count + 1 \
             FROM found, unflushed WHERE m.id = found.id RETURNING m.*) \
             SELECT {MEMORY_COLUMNS} FROM counted m JOIN found ON found.id = m.id \
             ORDER BY found.hits DESC, {order}"
        ));
    } else {
        query.push(&format!(
            "SELECT {MEMORY_COLUMNS} FROM memories m WHERE {condition} \
             ORDER BY ({title_hits}) DESC, {order} LIMIT {limit}"
        ));
    }
    query
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_serves_a_term_with_three_letters_or_digits_in_a_row() {
        assert!(index_serves("deploy"));
        assert!(index_serves("\"deploy\""));
        assert!(index_serves("持久化"));
        assert!(index_serves("a1b"));
        assert!(!index_serves("db"));
        assert!(!index_serves("a.b.c"));
        assert!(!index_serves("%_\\"));
        assert!(!index_serves("持久"));
    }

    #[test]
    fn a_query_the_index_serves_calls_the_function_with_each_pattern_bound() {
        let query = search_query("/p", &["Deploy", "db"], 5, 7, true);
        let sql = query.statement();
        assert!(
            sql.contains("ctxkit_search_memories($1, $2, $3, $4, $5, $6)"),
            "{sql}"
        );
        assert!(
            !sql.contains("deploy"),
            "values are bound, never spliced: {sql}"
        );
        let query = search_query("/p", &["db", "x"], 5, 7, true);
        assert!(!query.statement().contains(SEARCH_FUNCTION));
    }
}
