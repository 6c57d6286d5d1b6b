//! The searchable text of the SQLite log, `message_texts` (one row per message, its id the
//! message's `messages.id`, holding the core's [`searchable_text`]; no index over it: the
//! history search scans a session's own rows): [`index_message`] writes a row in the
//! transaction of each append and import; [`index_existing_messages`] filled the trigram table
//! `messages_fts` that held it before (migration 3), and [`move_search_texts`] moves what that
//! table holds here and drops it (migration 10); [`matching`] scans a session's indexed text for the history search, with the
//! core's case fold ([`register_search_function`]), and [`matching_offloads`] its offloaded
//! outputs' text (`offloads.search_text`, written with each offload's row).
//! A leaf of the backend: it imports nothing of it, so the schema, the queries and the reads
//! can all use it.

use ctxkit_core::model::Entry;
use ctxkit_core::recall::{contains_folded, fold_for_search, searchable_text};
use ctxkit_core::Message;
use rusqlite::functions::FunctionFlags;
use rusqlite::types::Value;
use rusqlite::{params, params_from_iter, Connection, Transaction};

use crate::error::{Context, Result};
use crate::store::assembly::OffloadFound;
use crate::store::columns::entry_from_parts;

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
        .prepare_cached("INSERT INTO message_texts (id, text) VALUES (?1, ?2)")
        .and_then(|mut statement| statement.execute(params![row_id, text]))
        .context(|| format!("session {name:?}: indexing message seq {seq} for search"))?;
    Ok(())
}

/// Moves the searchable texts of `messages_fts` (the trigram table of migration 3), when the
/// database has it, into `message_texts`, and drops it with its trigger (migration 10).
pub(super) fn move_search_texts(
    transaction: &Transaction<'_>,
    path: &std::path::Path,
) -> Result<()> {
    let what = || {
        format!(
            "migrating {}: moving the search texts out of the trigram index",
            path.display()
        )
    };
    let has_index: bool = transaction
        .query_row(
            "SELECT EXISTS (SELECT 1 FROM sqlite_schema WHERE name = 'messages_fts')",
            [],
            |row| row.get(0),
        )
        .context(what)?;
    if has_index {
        transaction
            .execute_batch(
                "INSERT OR IGNORE INTO message_texts (id, text) \
                 SELECT rowid, text FROM messages_fts; \
                 DROP TRIGGER IF EXISTS messages_fts_delete; \
                 DROP TABLE messages_fts;",
            )
            .context(what)?;
    }
    Ok(())
}

/// Indexes every stored message in `messages_fts` (migration 3, which creates that table,
/// runs it; migration 10 then moves the texts to `message_texts`).
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

/// The session's messages (at most `wanted`, newest first) whose indexed text holds every one
/// of `needles` under the search's case fold.
pub(super) fn matching(
    connection: &Connection,
    name: &str,
    id: i64,
    needles: &[&str],
    wanted: usize,
) -> Result<Vec<Entry>> {
    let mut values: Vec<Value> = vec![id.into(), i64::try_from(wanted).unwrap_or(i64::MAX).into()];
    let mut sql = "SELECT m.seq, m.body FROM messages m JOIN message_texts f ON f.id = m.id \
                   WHERE m.session_id = ?1"
        .to_owned();
    for needle in needles {
        values.push(fold_for_search(needle).into());
        sql.push_str(&format!(" AND ctxkit_contains(f.text, ?{})", values.len()));
    }
    sql.push_str(" ORDER BY m.seq DESC LIMIT ?2");
    let what = || format!("session {name:?}: searching its history");
    let rows: Vec<(u64, String)> = connection
        .prepare_cached(&sql)
        .and_then(|mut statement| {
            statement
                .query_map(params_from_iter(values), |row| {
                    Ok((row.get(0)?, row.get(1)?))
                })?
                .collect()
        })
        .context(what)?;
    rows.into_iter()
        .map(|(seq, body)| entry_from_parts(name, seq, &body, 0))
        .collect()
}

/// The session's offloaded outputs (at most `wanted`, newest first) whose text holds every one
/// of `needles` under the search's case fold: each as the message it was offloaded from (the
/// reference), the output's path and its text. Scans the session's own offload rows only (the
/// `offloads` key, session then seq), as [`matching`] does its messages.
pub(super) fn matching_offloads(
    connection: &Connection,
    name: &str,
    id: i64,
    needles: &[&str],
    wanted: usize,
) -> Result<Vec<OffloadFound>> {
    let mut values: Vec<Value> = vec![id.into(), i64::try_from(wanted).unwrap_or(i64::MAX).into()];
    let mut sql = "SELECT o.seq, m.body, o.relative_path, o.search_text FROM offloads o \
                   JOIN messages m ON m.session_id = o.session_id AND m.seq = o.seq \
                   WHERE o.session_id = ?1 AND o.search_text IS NOT NULL"
        .to_owned();
    for needle in needles {
        values.push(fold_for_search(needle).into());
        sql.push_str(&format!(
            " AND ctxkit_contains(o.search_text, ?{})",
            values.len()
        ));
    }
    sql.push_str(" ORDER BY o.seq DESC LIMIT ?2");
    let what = || format!("session {name:?}: searching its offloaded outputs");
    let rows: Vec<(u64, String, String, String)> = connection
        .prepare_cached(&sql)
        .and_then(|mut statement| {
            statement
                .query_map(params_from_iter(values), |row| {
                    Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
                })?
                .collect()
        })
        .context(what)?;
    rows.into_iter()
        .map(|(seq, body, path, text)| Ok((entry_from_parts(name, seq, &body, 0)?, path, text)))
        .collect()
}

/// Fills `offloads.search_text` of the rows that lack it (written before migration 5, or
/// without the output's text) with what `read` gives for each one's path, in `transaction`;
/// a row `read` gives nothing for stays as it is (tried again next time). Returns how many
/// rows it filled.
pub(super) fn fill_offload_texts(
    transaction: &Transaction<'_>,
    at: &str,
    read: &mut dyn FnMut(&str) -> Option<String>,
) -> Result<u64> {
    let what = || format!("{at}: indexing offloaded outputs for search");
    let rows: Vec<(i64, i64, String)> = transaction
        .prepare(
            "SELECT session_id, seq, relative_path FROM offloads \
             WHERE search_text IS NULL ORDER BY session_id, seq",
        )
        .and_then(|mut statement| {
            statement
                .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?
                .collect()
        })
        .context(what)?;
    let mut update = transaction
        .prepare("UPDATE offloads SET search_text = ?3 WHERE session_id = ?1 AND seq = ?2")
        .context(what)?;
    let mut filled = 0u64;
    for (session, seq, path) in rows {
        if let Some(text) = read(&path) {
            update.execute(params![session, seq, text]).context(what)?;
            filled += 1;
        }
    }
    Ok(filled)
}

/// Registers `ctxkit_contains(text, folded_needle)` on `connection`: 1 when `text` holds the
/// needle (folded by [`fold_for_search`]) under the core's case fold ([`contains_folded`]),
/// else 0; NULL text is 0. Deterministic and pure, so SQLite may use it anywhere.
pub(crate) fn register_search_function(connection: &Connection) -> rusqlite::Result<()> {
    connection.create_scalar_function(
        "ctxkit_contains",
        2,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |context| {
            let text: Option<String> = context.get(0)?;
            let needle: String = context.get(1)?;
            Ok(text.is_some_and(|text| contains_folded(&text, &needle)))
        },
    )
}
