//! [`MemoryStore`] for [`SqliteStore`]: memories with a trigram FTS5 index.
//!
//! A memory is *live* when it is not disabled (soft-deleted) and not expired at `now`, and
//! *visible* in a project when it is global or belongs to that project. Searches and the
//! default listing return only live, visible memories. Duplicates are found through the
//! indexed content hash and confirmed by comparing normalized contents
//! ([`ctxkit_core::memory`]), so a hash collision cannot hide a memory.
//!
//! A search is bounded ([`crate::store::fts_query::query_terms`]): the work of a trigram query grows
//! with its terms and their length times the memories' size, so a query past the bounds is
//! refused before it reaches SQLite, naming the bound and its size.

use ctxkit_core::memory::MemoryScope;
use ctxkit_core::memory::{clamp_importance, is_duplicate_content, memory_content_hash};
use ctxkit_core::recall::fold_for_search;
use rusqlite::{params, params_from_iter, OptionalExtension, Transaction};

use crate::error::{Context, Error, Result};
use crate::store::columns::{provenance_name, scope_name, source_name, tags_json};
use crate::store::fts_query::{fts5_match_expression, query_terms};
use crate::store::memory_types::{
    checked_content, result_limit, AddedMemory, MemoryFilter, MemoryQuery, MemoryRecord,
    MemoryUpdate, NewMemory,
};
use crate::store::sqlite::rows::{memory_from_row, MEMORY_COLUMNS};
use crate::store::sqlite::SqliteStore;
use crate::store::MemoryStore;

/// Live: not disabled, not expired at `?now`. Visible: global or of `?project`.
const LIVE_AND_VISIBLE: &str = "m.disabled_at IS NULL \
    AND (m.expires_at IS NULL OR m.expires_at > :now) \
    AND (m.project IS NULL OR m.project = :project)";

fn memory_by_id(connection: &rusqlite::Connection, id: i64) -> Result<Option<MemoryRecord>> {
    let sql = format!("SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.id = ?1");
    connection
        .prepare_cached(&sql)
        .and_then(|mut statement| statement.query_row([id], memory_from_row).optional())
        .context(|| format!("reading memory {id}"))
}

/// The live duplicate of `content` visible in `project`, if any.
fn find_duplicate(
    transaction: &Transaction<'_>,
    project: &str,
    content: &str,
    now: i64,
) -> Result<Option<MemoryRecord>> {
    let sql = format!(
        "SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.content_hash = :hash AND {LIVE_AND_VISIBLE} \
         ORDER BY m.id"
    );
    let candidates = transaction
        .prepare_cached(&sql)
        .and_then(|mut statement| {
            statement
                .query_map(
                    rusqlite::named_params! {
                        ":hash": memory_content_hash(content),
                        ":now": now,
                        ":project": project,
                    },
                    memory_from_row,
                )?
                .collect::<rusqlite::Result<Vec<_>>>()
        })
        .context(|| "looking for a duplicate memory".to_owned())?;
    Ok(candidates
        .into_iter()
        .find(|candidate| is_duplicate_content(&candidate.content, content)))
}

/// Adds `memory` inside `transaction`, or finds the live duplicate it would repeat.
pub(super) fn add_memory_in(
    transaction: &Transaction<'_>,
    project: &str,
    memory: &NewMemory,
    now: i64,
) -> Result<AddedMemory> {
    checked_content("memory.content", &memory.content)?;
    if let Some(existing) = find_duplicate(transaction, project, &memory.content, now)? {
        return Ok(AddedMemory::Duplicate(existing));
    }
    let project_column = match memory.scope {
        MemoryScope::Project => Some(project),
        MemoryScope::Global => None,
    };
    transaction
        .execute(
            "INSERT INTO memories (project, scope, source, title, content, category, tags, \
             importance, content_hash, created_at, updated_at, expires_at, provenance) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10, ?11, ?12)",
            params![
                project_column,
                scope_name(memory.scope),
                source_name(memory.source),
                memory.title,
                memory.content,
                memory.category,
                tags_json(&memory.tags),
                clamp_importance(memory.importance),
                memory_content_hash(&memory.content),
                now,
                memory.expires_at,
                provenance_name(memory.source),
            ],
        )
        .context(|| "adding a memory".to_owned())?;
    let id = transaction.last_insert_rowid();
    let record = memory_by_id(transaction, id)?.ok_or(Error::NoSuchMemory(id))?;
    Ok(AddedMemory::Added(record))
}

impl MemoryStore for SqliteStore {
    fn add_memory(&mut self, project: &str, memory: &NewMemory, now: i64) -> Result<AddedMemory> {
        checked_content("memory.content", &memory.content)?;
        let transaction = self.write(|| "adding a memory".to_owned())?;
        let added = add_memory_in(&transaction, project, memory, now)?;
        if let AddedMemory::Added(record) = &added {
            transaction
                .commit()
                .context(|| format!("adding memory {}", record.id))?;
        }
        Ok(added)
    }

    fn update_memory(&mut self, id: i64, update: &MemoryUpdate, now: i64) -> Result<MemoryRecord> {
        if let Some(content) = &update.content {
            checked_content("update.content", content)?;
        }
        let transaction = self.write(|| format!("updating memory {id}"))?;
        let current = memory_by_id(&transaction, id)?
            .filter(|record| record.disabled_at.is_none())
            .ok_or(Error::NoSuchMemory(id))?;
        let content = update.content.as_ref().unwrap_or(&current.content);
        let title = update.title.as_ref().unwrap_or(&current.title);
        let category = update.category.as_ref().unwrap_or(&current.category);
        // An approval is of the text that was read: new text is judged afresh.
        let rewritten =
            *content != current.content || *title != current.title || *category != current.category;
        let approved_at = if rewritten { None } else { current.approved_at };
        transaction
            .execute(
                "UPDATE memories SET title = ?2, content = ?3, category = ?4, importance = ?5, \
                 tags = ?6, expires_at = ?7, content_hash = ?8, updated_at = ?9, \
                 approved_at = ?10 WHERE id = ?1",
                params![
                    id,
                    title,
                    content,
                    category,
                    update
                        .importance
                        .map_or(current.importance, clamp_importance),
                    tags_json(update.tags.as_ref().unwrap_or(&current.tags)),
                    update.expires_at.unwrap_or(current.expires_at),
                    memory_content_hash(content),
                    now,
                    approved_at,
                ],
            )
            .context(|| format!("updating memory {id}"))?;
        let record = memory_by_id(&transaction, id)?.ok_or(Error::NoSuchMemory(id))?;
        transaction
            .commit()
            .context(|| format!("updating memory {id}"))?;
        Ok(record)
    }

    fn get_memory(&self, id: i64) -> Result<Option<MemoryRecord>> {
        self.checked(memory_by_id(&self.connection, id))
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
        let limit = result_limit(query.limit);
        let what = || format!("searching memories for {:?}", query.text);
        // A read-only open (a command that only reads) searches without counting the use:
        // it writes nothing.
        let counts_use = !self
            .connection
            .is_readonly(rusqlite::MAIN_DB)
            .context(what)?;
        let transaction = if counts_use {
            self.write(what)?
        } else {
            self.connection.transaction().context(what)?
        };
        let found: Vec<MemoryRecord> = match fts5_match_expression(&terms.join(" ")) {
            Some(expression) => {
                let sql = format!(
                    "SELECT {MEMORY_COLUMNS} FROM memories_fts f JOIN memories m ON m.id = f.rowid \
                     WHERE memories_fts MATCH :expression AND {LIVE_AND_VISIBLE} \
                     ORDER BY bm25(memories_fts), m.importance DESC, m.updated_at DESC, m.id \
                     LIMIT :limit"
                );
                transaction
                    .prepare_cached(&sql)
                    .and_then(|mut statement| {
                        statement
                            .query_map(
                                rusqlite::named_params! {
                                    ":expression": expression,
                                    ":now": now,
                                    ":project": project,
                                    ":limit": limit,
                                },
                                memory_from_row,
                            )?
                            .collect()
                    })
                    .context(what)?
            }
            None => {
                // Terms too short for trigrams, or holding NUL: every term must appear in some
                // field, under the core's case fold. The SQL holds only numbered placeholders;
                // the terms are bound.
                let mut sql = format!(
                    "SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.disabled_at IS NULL \
                     AND (m.expires_at IS NULL OR m.expires_at > ?1) \
                     AND (m.project IS NULL OR m.project = ?2)"
                );
                for index in 0..terms.len() {
                    let p = index + 4;
                    sql.push_str(&format!(
                        " AND (ctxkit_contains(m.title, ?{p}) OR ctxkit_contains(m.content, ?{p}) \
                         OR ctxkit_contains(m.category, ?{p}) OR ctxkit_contains(m.tags, ?{p}))"
                    ));
                }
                sql.push_str(" ORDER BY m.importance DESC, m.updated_at DESC, m.id LIMIT ?3");
                let mut values: Vec<rusqlite::types::Value> =
                    vec![now.into(), project.to_owned().into(), limit.into()];
                values.extend(terms.iter().map(|term| fold_for_search(term).into()));
                transaction
                    .prepare(&sql)
                    .and_then(|mut statement| {
                        statement
                            .query_map(params_from_iter(values), memory_from_row)?
                            .collect()
                    })
                    .context(what)?
            }
        };
        if !counts_use {
            drop(transaction);
            return self.checked(Ok(found));
        }
        {
            let mut used = transaction
                .prepare_cached("UPDATE memories SET use_count = use_count + 1 WHERE id = ?1")
                .context(what)?;
            for record in &found {
                used.execute([record.id]).context(what)?;
            }
        }
        transaction.commit().context(what)?;
        Ok(found
            .into_iter()
            .map(|record| MemoryRecord {
                use_count: record.use_count + 1,
                ..record
            })
            .collect())
    }

    fn list_memories(
        &self,
        project: &str,
        filter: &MemoryFilter,
        now: i64,
    ) -> Result<Vec<MemoryRecord>> {
        let sql = format!(
            "SELECT {MEMORY_COLUMNS} FROM memories m \
             WHERE (m.project IS NULL OR m.project = :project) \
             AND (:include_disabled OR m.disabled_at IS NULL) \
             AND (:include_expired OR m.expires_at IS NULL OR m.expires_at > :now) \
             ORDER BY m.updated_at DESC, m.id DESC LIMIT :limit"
        );
        let limit = result_limit(filter.limit);
        let result = self
            .connection
            .prepare_cached(&sql)
            .and_then(|mut statement| {
                statement
                    .query_map(
                        rusqlite::named_params! {
                            ":project": project,
                            ":include_disabled": filter.include_disabled,
                            ":include_expired": filter.include_expired,
                            ":now": now,
                            ":limit": limit,
                        },
                        memory_from_row,
                    )?
                    .collect()
            })
            .context(|| "listing memories".to_owned());
        self.checked(result)
    }

    fn approve_memory(&mut self, id: i64, now: i64) -> Result<MemoryRecord> {
        let transaction = self.write(|| format!("approving memory {id}"))?;
        let current = memory_by_id(&transaction, id)?
            .filter(|record| record.is_live(now))
            .ok_or(Error::NoSuchMemory(id))?;
        if current.approved_at.is_some() {
            return Ok(current);
        }
        transaction
            .execute(
                "UPDATE memories SET approved_at = ?2 WHERE id = ?1",
                params![id, now],
            )
            .context(|| format!("approving memory {id}"))?;
        let record = memory_by_id(&transaction, id)?.ok_or(Error::NoSuchMemory(id))?;
        transaction
            .commit()
            .context(|| format!("approving memory {id}"))?;
        Ok(record)
    }

    fn disable_memory(&mut self, id: i64, now: i64) -> Result<bool> {
        let transaction = self.write(|| format!("deleting memory {id}"))?;
        let changed = transaction
            .execute(
                "UPDATE memories SET disabled_at = ?2, updated_at = ?2 \
                 WHERE id = ?1 AND disabled_at IS NULL",
                params![id, now],
            )
            .context(|| format!("deleting memory {id}"))?;
        transaction
            .commit()
            .context(|| format!("deleting memory {id}"))?;
        Ok(changed == 1)
    }
}
