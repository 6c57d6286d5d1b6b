//! Conversions from SQLite rows to the core's types, kept in one place so every query reads a
//! column the same way (the column encodings themselves are [`crate::store::columns`]).

use ctxkit_core::tokens::UsageAnchor;
use rusqlite::Row;

use crate::store::columns::{
    judged, scope_from_name, source_from_name, tags_from_json, CheckpointColumns,
};
use crate::store::memory_types::MemoryRecord;

/// A checkpoint's columns from a row of [`crate::store::columns::CHECKPOINT_COLUMNS`] (made a
/// checkpoint by [`crate::store::columns::checkpoint_from_columns`]).
pub(crate) fn checkpoint_of_row(row: &Row<'_>) -> rusqlite::Result<CheckpointColumns> {
    Ok(CheckpointColumns {
        through_seq: row.get(0)?,
        method: row.get(1)?,
        summary: row.get(2)?,
        active_tasks: row.get(3)?,
        tokens: row.get(4)?,
        made_at_turn: row.get(5)?,
        facts: row.get(6)?,
        compaction_block: row.get(7)?,
        restore: row.get(8)?,
    })
}

/// The columns [`anchor_from_row`] reads, in order.
pub(crate) const ANCHOR_COLUMNS: &str =
    "checkpoint_through, last_seq, input_tokens, estimated_tokens";

/// A usage anchor from a row of [`ANCHOR_COLUMNS`].
pub(crate) fn anchor_from_row(row: &Row<'_>) -> rusqlite::Result<UsageAnchor> {
    Ok(UsageAnchor {
        checkpoint_through: row.get(0)?,
        last_seq: row.get(1)?,
        input_tokens: row.get(2)?,
        estimated_tokens: row.get(3)?,
    })
}

/// The columns [`memory_from_row`] reads, in order, from a table aliased `m`.
pub(crate) const MEMORY_COLUMNS: &str = "m.id, m.project, m.title, m.content, m.category, \
    m.importance, m.tags, m.scope, m.source, m.created_at, m.updated_at, m.expires_at, \
    m.use_count, m.disabled_at, m.provenance, m.approved_at";

/// A memory from a row of [`MEMORY_COLUMNS`]. Unknown scope, source or tags (impossible
/// through the CHECK constraints and this code) read as the defaults rather than failing a
/// whole listing.
pub(crate) fn memory_from_row(row: &Row<'_>) -> rusqlite::Result<MemoryRecord> {
    let tags: String = row.get(6)?;
    let scope: String = row.get(7)?;
    let source: String = row.get(8)?;
    // Rows older than migration 4 have no provenance: their `source` says it.
    let provenance: Option<String> = row.get(14)?;
    Ok(judged(MemoryRecord {
        id: row.get(0)?,
        project: row.get(1)?,
        title: row.get(2)?,
        content: row.get(3)?,
        category: row.get(4)?,
        importance: row.get(5)?,
        tags: tags_from_json(&tags),
        scope: scope_from_name(&scope),
        source: source_from_name(provenance.as_deref().unwrap_or(&source)),
        created_at: row.get(9)?,
        updated_at: row.get(10)?,
        expires_at: row.get(11)?,
        use_count: row.get(12)?,
        disabled_at: row.get(13)?,
        approved_at: row.get(15)?,
        quarantine: None,
    }))
}
