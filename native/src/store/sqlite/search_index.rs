//! The search index of the SQLite log, `messages_fts` (a trigram FTS5 table, one row per
//! message, its rowid the message's `messages.id`, holding the core's [`searchable_text`]):
//! [`index_message`] writes a row in the transaction of each append and import;
//! [`index_existing_messages`] fills the table for a database created before it (a
//! migration).
//! A leaf of the backend: it imports nothing of it, so the schema and the queries can both
//! use it ([`super::history`] reads the index).

use ctxkit_core::recall::searchable_text;
use ctxkit_core::Message;
use rusqlite::{params, Transaction};

use crate::error::{Context, Result};

/// Indexes `message` (stored as row `row_id`, seq `seq`) inside a write transaction.
pub(super) fn index_message(
    transaction: &Transaction<'_>,
    name: &str,
    row_id: i64,
    seq: u64,
    message: &Message,
) -> Result<()> {
    let text = searchable_text(message);
    if text.is_empty() {
        return Ok(());
    }
    transaction
        .prepare_cached("INSERT INTO messages_fts (rowid, text) VALUES (?1, ?2)")
        .and_then(|mut statement| statement.execute(params![row_id, text]))
        .context(|| format!("session {name:?}: indexing message seq {seq} for search"))?;
    Ok(())
}

/// Indexes every stored message (the migration that creates the index runs it).
pub(super) fn index_existing_messages(
    transaction: &Transaction<'_>,
    path: &std::path::Path,
) -> Result<()> {
    let what = || {
        format!(
            "migrating {}: indexing the stored messages for search",
            path.display()
        )
    };
    let mut select = transaction
        .prepare("SELECT id, body FROM messages ORDER BY id")
        .context(what)?;
    let mut insert = transaction
        .prepare("INSERT INTO messages_fts (rowid, text) VALUES (?1, ?2)")
        .context(what)?;
    let mut rows = select.query([]).context(what)?;
    while let Some(row) = rows.next().context(what)? {
        let id: i64 = row.get(0).context(what)?;
        let body = row
            .get_ref(1)
            .and_then(|value| value.as_str().map_err(Into::into))
            .context(what)?;
        // A body that is not a message (only a file edited by hand has one) is indexed as it
        // is: its text stays findable and the database still opens.
        let text = serde_json::from_str::<Message>(body)
            .map(|message| searchable_text(&message))
            .unwrap_or_else(|_| body.to_owned());
        if !text.is_empty() {
            insert.execute(params![id, text]).context(what)?;
        }
    }
    Ok(())
}
