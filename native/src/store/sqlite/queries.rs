//! The statements the SQLite session store is made of, each a function over a connection or
//! an open write transaction, so a store call can combine several in one transaction. Every
//! error names the session.

use ctxkit_core::compaction::Checkpoint;
use ctxkit_core::memory::NudgeState;
use ctxkit_core::model::Entry;
use ctxkit_core::tokens::{ModelFamily, UsageAnchor};
use rusqlite::{params, Connection, OptionalExtension, Transaction};

use crate::error::{Context, Error, Result};
use crate::store::append_rule::{check_append, check_checkpoint};
use crate::store::columns::{
    checkpoint_from_columns, entry_from_parts, family_from_name, family_name, message_body,
    CheckpointFacts, CHECKPOINT_COLUMNS,
};
use crate::store::read_count::count_message_rows;
use crate::store::sqlite::rows::{anchor_from_row, checkpoint_of_row, ANCHOR_COLUMNS};
use crate::store::sqlite::search_index::index_message;
use crate::store::{check_key, Appended, OffloadRecord, SessionImport};

/// The session's row id and last seq, inside a transaction or not.
pub(super) fn session_row(connection: &Connection, name: &str) -> Result<(i64, u64)> {
    connection
        .prepare_cached("SELECT id, last_seq FROM sessions WHERE name = ?1")
        .and_then(|mut statement| {
            statement
                .query_row([name], |row| Ok((row.get(0)?, row.get(1)?)))
                .optional()
        })
        .context(|| format!("session {name:?}: reading it"))?
        .ok_or_else(|| Error::NoSuchSession(name.to_owned()))
}

/// The latest checkpoint of a session.
pub(super) fn latest_checkpoint(
    connection: &Connection,
    name: &str,
    id: i64,
) -> Result<Option<Checkpoint>> {
    let sql = format!(
        "SELECT {CHECKPOINT_COLUMNS} FROM checkpoints WHERE session_id = ?1 \
         ORDER BY through_seq DESC LIMIT 1"
    );
    let row = connection
        .prepare_cached(&sql)
        .and_then(|mut statement| statement.query_row([id], checkpoint_of_row).optional())
        .context(|| format!("session {name:?}: reading its latest checkpoint"))?;
    row.map(|row| checkpoint_from_columns(name, row))
        .transpose()
}

/// Every checkpoint of a session, in order.
pub(super) fn checkpoints(connection: &Connection, name: &str, id: i64) -> Result<Vec<Checkpoint>> {
    let sql = format!(
        "SELECT {CHECKPOINT_COLUMNS} FROM checkpoints WHERE session_id = ?1 ORDER BY through_seq"
    );
    let rows = connection
        .prepare_cached(&sql)
        .and_then(|mut statement| {
            statement
                .query_map([id], checkpoint_of_row)?
                .collect::<rusqlite::Result<Vec<_>>>()
        })
        .context(|| format!("session {name:?}: reading its checkpoints"))?;
    rows.into_iter()
        .map(|row| checkpoint_from_columns(name, row))
        .collect()
}

/// The latest usage anchor of a session.
pub(super) fn latest_anchor(
    connection: &Connection,
    name: &str,
    id: i64,
) -> Result<Option<UsageAnchor>> {
    let sql = format!(
        "SELECT {ANCHOR_COLUMNS} FROM usage_anchors WHERE session_id = ?1 \
         ORDER BY id DESC LIMIT 1"
    );
    connection
        .prepare_cached(&sql)
        .and_then(|mut statement| statement.query_row([id], anchor_from_row).optional())
        .context(|| format!("session {name:?}: reading its usage anchor"))
}

/// The session's family and nudge state.
pub(super) fn session_state(
    connection: &Connection,
    name: &str,
    id: i64,
) -> Result<(ModelFamily, NudgeState)> {
    let (family, nudge) = connection
        .prepare_cached(
            "SELECT family, nudge_turn, nudge_last_seq, nudge_turns_without_progress \
             FROM sessions WHERE id = ?1",
        )
        .and_then(|mut statement| {
            statement.query_row([id], |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    NudgeState {
                        turn: row.get(1)?,
                        last_seq: row.get(2)?,
                        turns_without_progress: row.get(3)?,
                    },
                ))
            })
        })
        .context(|| format!("session {name:?}: reading its state"))?;
    Ok((family_from_name(name, &family)?, nudge))
}

/// The entries with `from <= seq <= to`, in order.
pub(super) fn entries_between(
    connection: &Connection,
    name: &str,
    id: i64,
    from: u64,
    to: u64,
) -> Result<Vec<Entry>> {
    let what = || format!("session {name:?}: reading seq {from} to {to}");
    let mut statement = connection
        .prepare_cached(
            "SELECT seq, body, tokens FROM messages WHERE session_id = ?1 AND seq >= ?2 \
             AND seq <= ?3 ORDER BY seq",
        )
        .context(what)?;
    // Past i64::MAX (the log's end, to SQLite) no seq goes.
    let to = i64::try_from(to).unwrap_or(i64::MAX);
    let mut rows = statement.query(params![id, from, to]).context(what)?;
    let mut entries = Vec::new();
    while let Some(row) = rows.next().context(what)? {
        let seq: u64 = row.get(0).context(what)?;
        // Borrowed from SQLite's buffer: no copy of the body before parsing it.
        let body = row
            .get_ref(1)
            .and_then(|value| value.as_str().map_err(Into::into))
            .context(|| format!("session {name:?}: reading message seq {seq}"))?;
        let tokens: u64 = row
            .get(2)
            .context(|| format!("session {name:?}: reading message seq {seq}"))?;
        entries.push(entry_from_parts(name, seq, body, tokens)?);
    }
    count_message_rows(entries.len());
    Ok(entries)
}

/// Checks and inserts a checkpoint inside a write transaction.
pub(super) fn insert_checkpoint(
    transaction: &Transaction<'_>,
    name: &str,
    id: i64,
    last_seq: u64,
    checkpoint: &Checkpoint,
    now: i64,
) -> Result<()> {
    let latest: Option<u64> = transaction
        .query_row(
            "SELECT max(through_seq) FROM checkpoints WHERE session_id = ?1",
            [id],
            |row| row.get(0),
        )
        .context(|| format!("session {name:?}: reading its checkpoints"))?;
    let through = checkpoint.through_seq;
    check_checkpoint(name, latest, last_seq, through)?;
    transaction
        .prepare_cached(
            "INSERT INTO checkpoints (session_id, through_seq, method, summary, active_tasks, \
             tokens, made_at_turn, created_at, facts, compaction_block, restore) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        )
        .and_then(|mut statement| {
            statement.execute(params![
                id,
                through,
                checkpoint.method.as_str(),
                checkpoint.summary,
                checkpoint.active_tasks,
                checkpoint.tokens,
                checkpoint.made_at_turn,
                now,
                CheckpointFacts::json_of(checkpoint),
                checkpoint.compaction_block,
                checkpoint.restore
            ])
        })
        .context(|| format!("session {name:?}: storing the checkpoint through seq {through}"))?;
    Ok(())
}

/// Inserts a new, empty session inside a write transaction.
pub(super) fn insert_session(
    transaction: &Transaction<'_>,
    name: &str,
    family: ModelFamily,
    now: i64,
) -> Result<()> {
    let exists: Option<i64> = transaction
        .query_row("SELECT id FROM sessions WHERE name = ?1", [name], |row| {
            row.get(0)
        })
        .optional()
        .context(|| format!("session {name:?}: creating it"))?;
    if exists.is_some() {
        return Err(Error::SessionExists(name.to_owned()));
    }
    transaction
        .execute(
            "INSERT INTO sessions (name, family, created_at, updated_at) VALUES (?1, ?2, ?3, ?3)",
            params![name, family_name(family), now],
        )
        .context(|| format!("session {name:?}: creating it"))?;
    Ok(())
}

/// Appends inside a write transaction (see [`SessionStore::append`]), each message indexed for
/// the history search as it is inserted.
pub(super) fn append_in(
    transaction: &Transaction<'_>,
    name: &str,
    entries: &[Entry],
    offloads: &[OffloadRecord],
    now: i64,
) -> Result<()> {
    let what = || format!("session {name:?}: appending {} messages", entries.len());
    let (id, last_seq) = session_row(transaction, name)?;
    let new_last_seq = check_append(name, last_seq, entries, offloads)?;
    {
        let mut insert = transaction
            .prepare_cached(
                "INSERT INTO messages (session_id, seq, role, body, tokens, is_error, \
                 created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )
            .context(what)?;
        for entry in entries {
            let body = message_body(name, entry)?;
            insert
                .execute(params![
                    id,
                    entry.seq,
                    entry.message.role.as_str(),
                    body,
                    entry.tokens,
                    entry.message.is_error,
                    now
                ])
                .context(|| format!("session {name:?}: appending message seq {}", entry.seq))?;
            // In the same transaction: a committed message is always findable.
            index_message(
                transaction,
                name,
                transaction.last_insert_rowid(),
                entry.seq,
                &entry.message,
            )?;
        }
        let mut insert_offload = transaction
            .prepare_cached(
                "INSERT INTO offloads (session_id, seq, tool_call_id, relative_path, bytes, \
                 lines, is_error, created_at, search_text) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )
            .context(what)?;
        for offload in offloads {
            insert_offload
                .execute(params![
                    id,
                    offload.seq,
                    offload.tool_call_id,
                    offload.relative_path,
                    offload.bytes,
                    offload.lines,
                    offload.is_error,
                    now,
                    // The output's text, for the history search (in this transaction, so a
                    // committed offload is findable); NULL when the writer did not pass it:
                    // `index_offload_files` reads the file later.
                    offload.content
                ])
                .context(|| {
                    format!(
                        "session {name:?}: recording the offload of seq {}",
                        offload.seq
                    )
                })?;
        }
        let tokens: u64 = entries.iter().map(|entry| entry.tokens).sum();
        transaction
            .prepare_cached(
                "UPDATE sessions SET last_seq = ?2, message_count = message_count + ?3, \
                 total_tokens = total_tokens + ?4, updated_at = ?5 WHERE id = ?1",
            )
            .and_then(|mut statement| {
                statement.execute(params![id, new_last_seq, entries.len(), tokens, now])
            })
            .context(what)?;
    }
    Ok(())
}

/// A keyed append inside a write transaction (see [`crate::store::SessionStore::append_keyed`]):
/// the batch stored under `key` when the session holds one (nothing written), else the session
/// created when missing and `create` says so, the entries appended and the key stored with
/// their seqs.
pub(super) fn keyed_append_in(
    transaction: &Transaction<'_>,
    name: &str,
    key: &str,
    create: Option<ModelFamily>,
    entries: &[Entry],
    offloads: &[OffloadRecord],
    now: i64,
) -> Result<Appended> {
    check_key(key)?;
    let what = || format!("session {name:?}: looking up append key {key:?}");
    let id = match (session_row(transaction, name), create) {
        (Ok((id, _)), _) => Some(id),
        (Err(Error::NoSuchSession(_)), Some(family)) => {
            insert_session(transaction, name, family, now)?;
            None
        }
        (Err(error), _) => return Err(error),
    };
    if let Some(id) = id {
        let stored: Option<(u64, u64)> = transaction
            .prepare_cached(
                "SELECT first_seq, last_seq FROM append_keys WHERE session_id = ?1 AND key = ?2",
            )
            .and_then(|mut statement| {
                statement
                    .query_row(params![id, key], |row| Ok((row.get(0)?, row.get(1)?)))
                    .optional()
            })
            .context(what)?;
        if let Some((first_seq, last_seq)) = stored {
            return Ok(Appended::Repeated {
                first_seq,
                last_seq,
            });
        }
    }
    append_in(transaction, name, entries, offloads, now)?;
    let (id, last_seq) = session_row(transaction, name)?;
    let first_seq = entries.first().map_or(last_seq, |entry| entry.seq);
    transaction
        .prepare_cached(
            "INSERT INTO append_keys (session_id, key, first_seq, last_seq, created_at) \
             VALUES (?1, ?2, ?3, ?4, ?5)",
        )
        .and_then(|mut statement| statement.execute(params![id, key, first_seq, last_seq, now]))
        .context(|| format!("session {name:?}: storing append key {key:?}"))?;
    Ok(Appended::Stored)
}

/// Sets the session's nudge state inside a write transaction.
pub(super) fn update_nudge_state(
    transaction: &Transaction<'_>,
    name: &str,
    id: i64,
    nudge_state: &NudgeState,
    now: i64,
) -> Result<()> {
    transaction
        .prepare_cached(
            "UPDATE sessions SET nudge_turn = ?2, nudge_last_seq = ?3, \
             nudge_turns_without_progress = ?4, updated_at = ?5 WHERE id = ?1",
        )
        .and_then(|mut statement| {
            statement.execute(params![
                id,
                nudge_state.turn,
                nudge_state.last_seq,
                nudge_state.turns_without_progress,
                now
            ])
        })
        .context(|| format!("session {name:?}: storing its nudge state"))?;
    Ok(())
}

/// Records a usage anchor inside a write transaction; returns its row id.
pub(super) fn insert_usage_anchor(
    transaction: &Transaction<'_>,
    name: &str,
    id: i64,
    anchor: &UsageAnchor,
    now: i64,
) -> Result<i64> {
    transaction
        .prepare_cached(
            "INSERT INTO usage_anchors (session_id, checkpoint_through, last_seq, \
             input_tokens, estimated_tokens, recorded_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )
        .and_then(|mut statement| {
            statement.execute(params![
                id,
                anchor.checkpoint_through,
                anchor.last_seq,
                anchor.input_tokens,
                anchor.estimated_tokens,
                now
            ])
        })
        .context(|| format!("session {name:?}: recording usage"))?;
    Ok(transaction.last_insert_rowid())
}

/// Creates a whole session inside a write transaction (see
/// [`crate::store::SessionStore::import_sessions`]).
pub(super) fn insert_whole_session(
    transaction: &Transaction<'_>,
    import: &SessionImport<'_>,
    now: i64,
) -> Result<()> {
    let name = import.name;
    if name.trim().is_empty() {
        return Err(Error::invalid("session", "empty: a session needs a name"));
    }
    let session = import.session;
    insert_session(transaction, name, session.family, now)?;
    append_in(transaction, name, &session.entries, import.offloads, now)?;
    let (id, last_seq) = session_row(transaction, name)?;
    for checkpoint in &session.checkpoints {
        insert_checkpoint(transaction, name, id, last_seq, checkpoint, now)?;
    }
    update_nudge_state(transaction, name, id, &session.nudge_state, now)?;
    if let Some(anchor) = &session.usage_anchor {
        insert_usage_anchor(transaction, name, id, anchor, now)?;
    }
    Ok(())
}

/// Where the calls of tool results may be (see
/// [`crate::store::assembly::SessionReads::call_candidates`]): for each result, the assistant
/// messages among the `count` before it whose body holds its quoted call id.
pub(super) fn call_candidates(
    connection: &Connection,
    name: &str,
    id: i64,
    results: &[(u64, String)],
    count: u64,
) -> Result<Vec<(u64, u64, String)>> {
    let what = || format!("session {name:?}: finding the calls of tool results");
    let mut statement = connection
        .prepare_cached(
            "SELECT seq, body FROM (SELECT seq, body FROM messages WHERE session_id = ?1 \
             AND seq < ?2 AND role = 'assistant' ORDER BY seq DESC LIMIT ?3) \
             WHERE instr(body, ?4) > 0 ORDER BY seq DESC",
        )
        .context(what)?;
    let mut found = Vec::new();
    for (seq, quoted) in results {
        let rows = statement
            .query_map(params![id, seq, count, quoted], |row| {
                Ok((*seq, row.get(0)?, row.get(1)?))
            })
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
            .context(what)?;
        found.extend(rows);
    }
    count_message_rows(found.len());
    Ok(found)
}
