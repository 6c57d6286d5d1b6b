//! [`MemoryStore`] for [`PostgresStore`]: memories searched through a trigram GIN index
//! (`pg_trgm`) over each memory's fields, with the SQLite store's rules.
//!
//! *Live* and *visible* mean what they mean in SQLite (`sqlite_memory`). A search takes the
//! same bounded terms ([`query_terms`]: at most [`crate::store::MAX_QUERY_CHARS`] characters and
//! [`crate::store::MAX_QUERY_TERMS`] terms) and finds memories holding every term as a
//! case-insensitive substring of one field: each term's search key (the core's case fold,
//! [`super::text::search_key`]) in the memory's `search_text`, the fields' keys written with
//! the memory (`LIKE`, the key escaped by [`like_pattern`] and bound as a parameter), so CJK
//! substrings are found as SQLite's trigram FTS5 finds them; best match first (the terms found
//! in the title's key), then importance and recency. A search is one call, in one round trip
//! ([`super::memory_search`]: the search function with its plans kept, or the statement planned
//! for its patterns when no term is long enough for a trigram), and counts the uses of what it
//! found in the same call, its commit not waiting for the WAL flush; it runs as its own
//! transaction unless the store's schema must be set
//! first (then in a transaction that sets it). Duplicates are found through the indexed content
//! hash and confirmed by the core's normalized comparison, under a transaction-scoped advisory
//! lock on the hash, so two workers adding the same memory at once store it once. Every text is
//! stored and read back byte for byte ([`super::text`]).

use ctxkit_core::memory::{clamp_importance, is_duplicate_content, memory_content_hash};
use ctxkit_core::memory::{MemoryScope, MemorySource};
use postgres::Row;

use crate::error::{Error, Result};
use crate::store::columns::{
    judged, provenance_name, scope_from_name, scope_name, source_from_name, tags_from_json,
    tags_json,
};
use crate::store::fts_query::query_terms;
use crate::store::memory_types::{
    checked_content, result_limit, AddedMemory, MemoryFilter, MemoryQuery, MemoryRecord,
    MemoryUpdate, NewMemory,
};
use crate::store::postgres::memory_search::{live_and_visible, search_query, MEMORY_COLUMNS};
use crate::store::postgres::text::{from_column, search_key, to_column};
use crate::store::postgres::{get, PostgresStore, Tx};
use crate::store::MemoryStore;

fn memory_from_row(row: &Row, target: &str) -> Result<MemoryRecord> {
    let tags: String = get(row, 6, target)?;
    let scope: String = get(row, 7, target)?;
    let source: String = get(row, 8, target)?;
    Ok(judged(MemoryRecord {
        id: get(row, 0, target)?,
        project: get::<Option<String>>(row, 1, target)?.map(from_column),
        title: from_column(get(row, 2, target)?),
        content: from_column(get(row, 3, target)?),
        category: from_column(get(row, 4, target)?),
        importance: get(row, 5, target)?,
        tags: tags_from_json(&tags),
        scope: scope_from_name(&scope),
        source: source_from_name(&source),
        created_at: get(row, 9, target)?,
        updated_at: get(row, 10, target)?,
        expires_at: get(row, 11, target)?,
        use_count: get(row, 12, target)?,
        disabled_at: get(row, 13, target)?,
        approved_at: get(row, 14, target)?,
        quarantine: None,
    }))
}

/// What a memory's search columns hold for these fields: `search_text`, every field's search
/// key, one per line (a term has no whitespace, so it matches within one field), and
/// `search_title`, the title's key (what ranks a hit).
pub(super) fn search_columns(
    title: &str,
    content: &str,
    category: &str,
    tags: &[String],
) -> [String; 2] {
    let title = search_key(title);
    let text = format!(
        "{title}\n{}\n{}\n{}",
        search_key(content),
        search_key(category),
        search_key(&tags_json(tags))
    );
    [text, title]
}

fn memory_by_id(tx: &mut Tx<'_>, id: i64) -> Result<Option<MemoryRecord>> {
    let what = || format!("reading memory {id}");
    let sql = format!("SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.id = $1");
    let row = tx.query_opt(&sql, &[&id], &what)?;
    let target = tx.target;
    row.map(|row| memory_from_row(&row, target)).transpose()
}

/// Adds `memory` inside `tx`, or finds the live duplicate it would repeat.
pub(super) fn add_memory_in(
    tx: &mut Tx<'_>,
    project: &str,
    memory: &NewMemory,
    now: i64,
) -> Result<AddedMemory> {
    checked_content("memory.content", &memory.content)?;
    let hash = memory_content_hash(&memory.content);
    let what = || "adding a memory".to_owned();
    // Held to the end of the transaction: another worker adding the same text waits, then
    // finds this one.
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
        &[&hash],
        &what,
    )?;
    let sql = format!(
        "SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.content_hash = $3 \
         AND {} ORDER BY m.id",
        live_and_visible("$1", "$2")
    );
    let rows = tx.query(&sql, &[&now, &to_column(project), &hash], &what)?;
    for row in &rows {
        let candidate = memory_from_row(row, tx.target)?;
        if is_duplicate_content(&candidate.content, &memory.content) {
            return Ok(AddedMemory::Duplicate(candidate));
        }
    }
    let project_column = match memory.scope {
        MemoryScope::Project => Some(to_column(project)),
        MemoryScope::Global => None,
    };
    let source: MemorySource = memory.source;
    let [search_text, search_title] = search_columns(
        &memory.title,
        &memory.content,
        &memory.category,
        &memory.tags,
    );
    let sql = format!(
        "INSERT INTO memories AS m (project, scope, source, title, content, category, tags, \
         importance, content_hash, created_at, updated_at, expires_at, search_text, \
         search_title) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, $11, $12, $13) \
         RETURNING {MEMORY_COLUMNS}"
    );
    let row = tx
        .query_opt(
            &sql,
            &[
                &project_column,
                &scope_name(memory.scope),
                &provenance_name(source),
                &to_column(&memory.title),
                &to_column(&memory.content),
                &to_column(&memory.category),
                &tags_json(&memory.tags),
                &clamp_importance(memory.importance),
                &hash,
                &now,
                &memory.expires_at,
                &search_text,
                &search_title,
            ],
            &what,
        )?
        .ok_or(Error::NoSuchMemory(0))?;
    Ok(AddedMemory::Added(memory_from_row(&row, tx.target)?))
}

impl MemoryStore for PostgresStore {
    fn add_memory(&mut self, project: &str, memory: &NewMemory, now: i64) -> Result<AddedMemory> {
        checked_content("memory.content", &memory.content)?;
        self.write(&|| "adding a memory".to_owned(), |tx| {
            add_memory_in(tx, project, memory, now)
        })
    }

    fn update_memory(&mut self, id: i64, update: &MemoryUpdate, now: i64) -> Result<MemoryRecord> {
        if let Some(content) = &update.content {
            checked_content("update.content", content)?;
        }
        let what = || format!("updating memory {id}");
        self.write(&what, |tx| {
            tx.execute(
                "SELECT 1 FROM memories WHERE id = $1 FOR UPDATE",
                &[&id],
                &what,
            )?;
            let current = memory_by_id(tx, id)?
                .filter(|record| record.disabled_at.is_none())
                .ok_or(Error::NoSuchMemory(id))?;
            let content = update.content.as_ref().unwrap_or(&current.content);
            let title = update.title.as_ref().unwrap_or(&current.title);
            let category = update.category.as_ref().unwrap_or(&current.category);
            // An approval is of the text that was read: new text is judged afresh.
            let rewritten = *content != current.content
                || *title != current.title
                || *category != current.category;
            let approved_at = if rewritten { None } else { current.approved_at };
            let tags = update.tags.as_ref().unwrap_or(&current.tags);
            let [search_text, search_title] = search_columns(title, content, category, tags);
            tx.execute(
                "UPDATE memories SET title = $2, content = $3, category = $4, importance = $5, \
                 tags = $6, expires_at = $7, content_hash = $8, updated_at = $9, \
                 approved_at = $10, search_text = $11, search_title = $12 WHERE id = $1",
                &[
                    &id,
                    &to_column(title),
                    &to_column(content),
                    &to_column(category),
                    &update
                        .importance
                        .map_or(current.importance, clamp_importance),
                    &tags_json(tags),
                    &update.expires_at.unwrap_or(current.expires_at),
                    &memory_content_hash(content),
                    &now,
                    &approved_at,
                    &search_text,
                    &search_title,
                ],
                &what,
            )?;
            memory_by_id(tx, id)?.ok_or(Error::NoSuchMemory(id))
        })
    }

    fn get_memory(&self, id: i64) -> Result<Option<MemoryRecord>> {
        self.read(&|| format!("reading memory {id}"), |tx| {
            memory_by_id(tx, id)
        })
    }

    fn search_memories(
        &mut self,
        project: &str,
        query: &MemoryQuery,
        now: i64,
    ) -> Result<Vec<MemoryRecord>> {
        let terms = query_terms(&query.text)?;
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        // A store opened read-only (the read commands) searches without counting the use, as
        // SQLite's does. A use count is a statistic: its commit does not wait for the WAL
        // flush (a server crash may lose the last counts, never a memory).
        let count_use = !self.pool.read_only;
        let search = search_query(project, &terms, query.limit, now, count_use);
        let what = || format!("searching memories for {:?}", query.text);
        let target = self.pool.target.as_str();
        let records = |rows: Vec<Row>| {
            rows.iter()
                .map(|row| memory_from_row(row, target))
                .collect::<Result<Vec<_>>>()
        };
        // One statement, so one round trip where nothing must be set before it.
        if let Some(rows) = self.alone(&what, &search) {
            return records(rows?);
        }
        let run = |tx: &mut Tx<'_>| records(search.run(tx, &what)?);
        if count_use {
            self.write_unflushed(&what, run)
        } else {
            self.read(&what, run)
        }
    }

    fn list_memories(
        &self,
        project: &str,
        filter: &MemoryFilter,
        now: i64,
    ) -> Result<Vec<MemoryRecord>> {
        let what = || "listing memories".to_owned();
        let sql = format!(
            "SELECT {MEMORY_COLUMNS} FROM memories m \
             WHERE (m.project IS NULL OR m.project = $1) \
             AND ($2 OR m.disabled_at IS NULL) \
             AND ($3 OR m.expires_at IS NULL OR m.expires_at > $4) \
             ORDER BY m.updated_at DESC, m.id DESC LIMIT $5"
        );
        self.read(&what, |tx| {
            let rows = tx.query(
                &sql,
                &[
                    &to_column(project),
                    &filter.include_disabled,
                    &filter.include_expired,
                    &now,
                    &result_limit(filter.limit),
                ],
                &what,
            )?;
            let target = tx.target;
            rows.iter()
                .map(|row| memory_from_row(row, target))
                .collect()
        })
    }

    fn disable_memory(&mut self, id: i64, now: i64) -> Result<bool> {
        let what = || format!("deleting memory {id}");
        self.write(&what, |tx| {
            let changed = tx.execute(
                "UPDATE memories SET disabled_at = $2, updated_at = $2 \
                 WHERE id = $1 AND disabled_at IS NULL",
                &[&id, &now],
                &what,
            )?;
            Ok(changed == 1)
        })
    }

    fn approve_memory(&mut self, id: i64, now: i64) -> Result<MemoryRecord> {
        let what = || format!("approving memory {id}");
        self.write(&what, |tx| {
            tx.execute(
                "SELECT 1 FROM memories WHERE id = $1 FOR UPDATE",
                &[&id],
                &what,
            )?;
            let current = memory_by_id(tx, id)?
                .filter(|record| record.is_live(now))
                .ok_or(Error::NoSuchMemory(id))?;
            if current.approved_at.is_some() {
                return Ok(current);
            }
            tx.execute(
                "UPDATE memories SET approved_at = $2 WHERE id = $1",
                &[&id, &now],
                &what,
            )?;
            memory_by_id(tx, id)?.ok_or(Error::NoSuchMemory(id))
        })
    }
}
