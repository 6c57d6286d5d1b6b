//! The statements the PostgreSQL session store is made of, each a function over an open
//! transaction ([`Tx`]), so a store call can combine several in one transaction. Every error
//! names the session. Rows are read into the core's types here, with the SQLite store's
//! conversions where they are not SQLite's ([`crate::store::columns`]: families, methods, facts, bodies).
//!
//! The log's end is read under the session row's lock ([`session_row`] with `lock`), so two
//! writers of one session are serialized by PostgreSQL and the second reads the first's end:
//! an append numbered from a stale end is a [`crate::Error::SeqConflict`] before anything is
//! written. Messages are inserted in batches through `unnest` (one statement per
//! [`INSERT_BATCH`] messages), each with its searchable text.

use ctxkit_core::compaction::Checkpoint;
use ctxkit_core::memory::NudgeState;
use ctxkit_core::model::Entry;
use ctxkit_core::recall::searchable_text;
use ctxkit_core::tokens::{ModelFamily, UsageAnchor};
use postgres::types::Type;
use postgres::Row;

use crate::error::{Error, Result};
use crate::store::append_rule::{check_append, check_checkpoint};
use crate::store::columns::{
    checkpoint_from_columns, entry_from_parts, family_from_name, family_name, message_body,
    CheckpointColumns, CheckpointFacts, CHECKPOINT_COLUMNS,
};
use crate::store::postgres::text::{from_column, owned_column, search_key, to_column};
use crate::store::postgres::{big, get, unsigned, Tx};
use crate::store::read_count::count_message_rows;
use crate::store::{check_key, Appended, OffloadRecord, SessionImport};

/// The most messages one insert statement carries.
const INSERT_BATCH: usize = 2_000;

/// A checkpoint from a row of [`CHECKPOINT_COLUMNS`].
pub(super) fn checkpoint_from_row(name: &str, row: &Row, target: &str) -> Result<Checkpoint> {
    let columns = CheckpointColumns {
        through_seq: unsigned(get(row, 0, target)?),
        method: get(row, 1, target)?,
        summary: from_column(get(row, 2, target)?),
        active_tasks: get::<Option<String>>(row, 3, target)?.map(from_column),
        tokens: unsigned(get(row, 4, target)?),
        made_at_turn: unsigned(get(row, 5, target)?),
        facts: get(row, 6, target)?,
        compaction_block: get::<Option<String>>(row, 7, target)?.map(from_column),
        restore: get::<Option<String>>(row, 8, target)?.map(from_column),
    };
    checkpoint_from_columns(name, columns)
}

/// The columns [`anchor_from_row`] reads, in order.
const ANCHOR_COLUMNS: &str = "checkpoint_through, last_seq, input_tokens, estimated_tokens";

fn anchor_from_row(row: &Row, target: &str) -> Result<UsageAnchor> {
    Ok(UsageAnchor {
        checkpoint_through: get::<Option<i64>>(row, 0, target)?.map(unsigned),
        last_seq: get::<Option<i64>>(row, 1, target)?.map(unsigned),
        input_tokens: unsigned(get(row, 2, target)?),
        estimated_tokens: unsigned(get(row, 3, target)?),
    })
}

/// The session's row id and last seq; with `lock`, the row is locked until the transaction
/// ends (writers of the session queue here).
pub(super) fn session_row(tx: &mut Tx<'_>, name: &str, lock: bool) -> Result<(i64, u64)> {
    let sql = if lock {
        "SELECT id, last_seq FROM sessions WHERE name = $1 FOR UPDATE"
    } else {
        "SELECT id, last_seq FROM sessions WHERE name = $1"
    };
    let what = || format!("session {name:?}: reading it");
    let name_column = to_column(name);
    let rows = tx.query_typed(sql, &[(&name_column, Type::TEXT)], &what)?;
    let row = rows
        .first()
        .ok_or_else(|| Error::NoSuchSession(name.to_owned()))?;
    Ok((get(row, 0, tx.target)?, unsigned(get(row, 1, tx.target)?)))
}

/// The session's family and nudge state.
pub(super) fn session_state(
    tx: &mut Tx<'_>,
    name: &str,
    id: i64,
) -> Result<(ModelFamily, NudgeState)> {
    let what = || format!("session {name:?}: reading its state");
    let rows = tx.query_typed(
        "SELECT family, nudge_turn, nudge_last_seq, nudge_turns_without_progress \
         FROM sessions WHERE id = $1",
        &[(&id, Type::INT8)],
        &what,
    )?;
    let row = rows
        .first()
        .ok_or_else(|| Error::NoSuchSession(name.to_owned()))?;
    let family: String = get(row, 0, tx.target)?;
    let nudge = NudgeState {
        turn: unsigned(get(row, 1, tx.target)?),
        last_seq: get::<Option<i64>>(row, 2, tx.target)?.map(unsigned),
        turns_without_progress: u32::try_from(get::<i64>(row, 3, tx.target)?).unwrap_or(u32::MAX),
    };
    Ok((family_from_name(name, &family)?, nudge))
}

/// The latest checkpoint of a session.
pub(super) fn latest_checkpoint(
    tx: &mut Tx<'_>,
    name: &str,
    id: i64,
) -> Result<Option<Checkpoint>> {
    let what = || format!("session {name:?}: reading its latest checkpoint");
    let sql = format!(
        "SELECT {CHECKPOINT_COLUMNS} FROM checkpoints WHERE session_id = $1 \
         ORDER BY through_seq DESC LIMIT 1"
    );
    let rows = tx.query_typed(&sql, &[(&id, Type::INT8)], &what)?;
    let target = tx.target;
    rows.first()
        .map(|row| checkpoint_from_row(name, row, target))
        .transpose()
}

/// The latest usage anchor of a session.
pub(super) fn latest_anchor(tx: &mut Tx<'_>, name: &str, id: i64) -> Result<Option<UsageAnchor>> {
    let what = || format!("session {name:?}: reading its usage anchor");
    let sql = format!(
        "SELECT {ANCHOR_COLUMNS} FROM usage_anchors WHERE session_id = $1 \
         ORDER BY id DESC LIMIT 1"
    );
    let rows = tx.query_typed(&sql, &[(&id, Type::INT8)], &what)?;
    let target = tx.target;
    rows.first()
        .map(|row| anchor_from_row(row, target))
        .transpose()
}

/// The entries with `from <= seq <= to`, in order.
pub(super) fn entries_between(
    tx: &mut Tx<'_>,
    name: &str,
    id: i64,
    from: u64,
    to: u64,
) -> Result<Vec<Entry>> {
    let what = || format!("session {name:?}: reading its log");
    let (from, to) = (big(from), big(to));
    let rows = tx.query_typed(
        "SELECT seq, body, tokens FROM messages WHERE session_id = $1 AND seq >= $2 \
         AND seq <= $3 ORDER BY seq",
        &[(&id, Type::INT8), (&from, Type::INT8), (&to, Type::INT8)],
        &what,
    )?;
    let target = tx.target;
    count_message_rows(rows.len());
    rows.iter()
        .map(|row| {
            let seq = unsigned(get(row, 0, target)?);
            let body: &str = get(row, 1, target)?;
            entry_from_parts(name, seq, body, unsigned(get(row, 2, target)?))
        })
        .collect()
}

/// A keyed append (see [`crate::store::SessionStore::append_keyed`]) under the session's row
/// lock: the batch stored under `key` when the session holds one (nothing written), else the
/// session created when missing and `create` says so, the entries appended and the key stored
/// with their seqs.
pub(super) fn keyed_append_in(
    tx: &mut Tx<'_>,
    name: &str,
    key: &str,
    create: Option<ModelFamily>,
    entries: &[Entry],
    offloads: &[OffloadRecord],
    now: i64,
) -> Result<Appended> {
    check_key(key)?;
    let what = || format!("session {name:?}: looking up append key {key:?}");
    let id = match (session_row(tx, name, true), create) {
        (Ok((id, _)), _) => Some(id),
        (Err(Error::NoSuchSession(_)), Some(family)) => {
            insert_session(tx, name, family, now)?;
            None
        }
        (Err(error), _) => return Err(error),
    };
    if let Some(id) = id {
        let rows = tx.query_typed(
            "SELECT first_seq, last_seq FROM append_keys WHERE session_id = $1 AND key = $2",
            &[(&id, Type::INT8), (&key, Type::TEXT)],
            &what,
        )?;
        if let Some(row) = rows.first() {
            return Ok(Appended::Repeated {
                first_seq: unsigned(get(row, 0, tx.target)?),
                last_seq: unsigned(get(row, 1, tx.target)?),
            });
        }
    }
    append_in(tx, name, entries, offloads, now)?;
    let (id, last_seq) = session_row(tx, name, true)?;
    let first_seq = entries.first().map_or(last_seq, |entry| entry.seq);
    tx.execute(
        "INSERT INTO append_keys (session_id, key, first_seq, last_seq, created_at) \
         VALUES ($1, $2, $3, $4, $5)",
        &[&id, &key, &big(first_seq), &big(last_seq), &now],
        &|| format!("session {name:?}: storing append key {key:?}"),
    )?;
    Ok(Appended::Stored)
}

/// Checks and inserts a checkpoint (the session's row locked by the caller).
pub(super) fn insert_checkpoint(
    tx: &mut Tx<'_>,
    name: &str,
    id: i64,
    last_seq: u64,
    checkpoint: &Checkpoint,
    now: i64,
) -> Result<()> {
    let what = || format!("session {name:?}: reading its checkpoints");
    let rows = tx.query(
        "SELECT max(through_seq) FROM checkpoints WHERE session_id = $1",
        &[&id],
        &what,
    )?;
    let latest: Option<u64> = match rows.first() {
        Some(row) => get::<Option<i64>>(row, 0, tx.target)?.map(unsigned),
        None => None,
    };
    let through = checkpoint.through_seq;
    check_checkpoint(name, latest, last_seq, through)?;
    let what = || format!("session {name:?}: storing the checkpoint through seq {through}");
    tx.execute(
        "INSERT INTO checkpoints (session_id, through_seq, method, summary, active_tasks, \
         tokens, made_at_turn, created_at, facts, compaction_block, restore) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
        &[
            &id,
            &big(through),
            &checkpoint.method.as_str(),
            &to_column(&checkpoint.summary),
            &checkpoint.active_tasks.as_deref().map(owned_column),
            &big(checkpoint.tokens),
            &big(checkpoint.made_at_turn),
            &now,
            &CheckpointFacts::json_of(checkpoint),
            &checkpoint.compaction_block.as_deref().map(owned_column),
            &checkpoint.restore.as_deref().map(owned_column),
        ],
        &what,
    )?;
    Ok(())
}

/// Inserts a new, empty session; [`Error::SessionExists`] when the name is taken (also by a
/// writer that committed it meanwhile).
pub(super) fn insert_session(
    tx: &mut Tx<'_>,
    name: &str,
    family: ModelFamily,
    now: i64,
) -> Result<()> {
    if name.trim().is_empty() {
        return Err(Error::invalid("session", "empty: a session needs a name"));
    }
    let what = || format!("session {name:?}: creating it");
    let created = tx.query_opt(
        "INSERT INTO sessions (name, family, created_at, updated_at) VALUES ($1, $2, $3, $3) \
         ON CONFLICT (name) DO NOTHING RETURNING id",
        &[&to_column(name), &family_name(family), &now],
        &what,
    )?;
    if created.is_none() {
        return Err(Error::SessionExists(name.to_owned()));
    }
    Ok(())
}

/// Appends inside a transaction (see [`crate::store::SessionStore::append`]), each message with its
/// searchable text, and the offload records (with their outputs' text, when given).
pub(super) fn append_in(
    tx: &mut Tx<'_>,
    name: &str,
    entries: &[Entry],
    offloads: &[OffloadRecord],
    now: i64,
) -> Result<()> {
    let (id, last_seq) = session_row(tx, name, true)?;
    let new_last_seq = check_append(name, last_seq, entries, offloads)?;
    let what = || format!("session {name:?}: appending {} messages", entries.len());
    for chunk in entries.chunks(INSERT_BATCH) {
        if let [entry] = chunk {
            // One message (the common append): a plain insert, no arrays to build.
            tx.execute(
                "INSERT INTO messages (session_id, seq, role, body, tokens, is_error, \
                 search_text, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                &[
                    &id,
                    &big(entry.seq),
                    &entry.message.role.as_str(),
                    &message_body(name, entry)?,
                    &big(entry.tokens),
                    &entry.message.is_error,
                    // In the same transaction: a committed message is always findable.
                    &search_key(&searchable_text(&entry.message)),
                    &now,
                ],
                &what,
            )?;
            continue;
        }
        let mut seqs = Vec::with_capacity(chunk.len());
        let mut roles = Vec::with_capacity(chunk.len());
        let mut bodies = Vec::with_capacity(chunk.len());
        let mut tokens = Vec::with_capacity(chunk.len());
        let mut errors = Vec::with_capacity(chunk.len());
        let mut texts = Vec::with_capacity(chunk.len());
        for entry in chunk {
            seqs.push(big(entry.seq));
            roles.push(entry.message.role.as_str());
            bodies.push(message_body(name, entry)?);
            tokens.push(big(entry.tokens));
            errors.push(entry.message.is_error);
            texts.push(search_key(&searchable_text(&entry.message)));
        }
        tx.execute(
            "INSERT INTO messages (session_id, seq, role, body, tokens, is_error, \
             search_text, created_at) \
             SELECT $1, s, r, b, t, e, x, $8 FROM unnest($2::bigint[], $3::text[], \
             $4::text[], $5::bigint[], $6::boolean[], $7::text[]) AS u (s, r, b, t, e, x)",
            &[&id, &seqs, &roles, &bodies, &tokens, &errors, &texts, &now],
            &what,
        )?;
    }
    for offload in offloads {
        let what = || {
            format!(
                "session {name:?}: recording the offload of seq {}",
                offload.seq
            )
        };
        tx.execute(
            "INSERT INTO offloads (session_id, seq, tool_call_id, relative_path, bytes, \
             lines, is_error, content, created_at, search_text) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
            &[
                &id,
                &big(offload.seq),
                &offload.tool_call_id.as_deref().map(owned_column),
                &to_column(&offload.relative_path),
                &big(offload.bytes),
                &big(offload.lines),
                &offload.is_error,
                &offload.content.as_deref().map(owned_column),
                &now,
                // The output's search key, in this transaction: a committed offload is
                // findable by the history search.
                &offload
                    .content
                    .as_deref()
                    .map(search_key)
                    .unwrap_or_default(),
            ],
            &what,
        )?;
    }
    let total: u64 = entries.iter().map(|entry| entry.tokens).sum();
    tx.execute(
        "UPDATE sessions SET last_seq = $2, message_count = message_count + $3, \
         total_tokens = total_tokens + $4, updated_at = $5 WHERE id = $1",
        &[
            &id,
            &big(new_last_seq),
            &big(entries.len() as u64),
            &big(total),
            &now,
        ],
        &what,
    )?;
    Ok(())
}

/// Sets the session's nudge state.
pub(super) fn update_nudge_state(
    tx: &mut Tx<'_>,
    name: &str,
    id: i64,
    nudge_state: &NudgeState,
    now: i64,
) -> Result<()> {
    let what = || format!("session {name:?}: storing its nudge state");
    tx.execute(
        "UPDATE sessions SET nudge_turn = $2, nudge_last_seq = $3, \
         nudge_turns_without_progress = $4, updated_at = $5 WHERE id = $1",
        &[
            &id,
            &big(nudge_state.turn),
            &nudge_state.last_seq.map(big),
            &i64::from(nudge_state.turns_without_progress),
            &now,
        ],
        &what,
    )?;
    Ok(())
}

/// Records a usage anchor; returns its row id.
pub(super) fn insert_usage_anchor(
    tx: &mut Tx<'_>,
    name: &str,
    id: i64,
    anchor: &UsageAnchor,
    now: i64,
) -> Result<i64> {
    let what = || format!("session {name:?}: recording usage");
    let row = tx.query_opt(
        "INSERT INTO usage_anchors (session_id, checkpoint_through, last_seq, \
         input_tokens, estimated_tokens, recorded_at) VALUES ($1, $2, $3, $4, $5, $6) \
         RETURNING id",
        &[
            &id,
            &anchor.checkpoint_through.map(big),
            &anchor.last_seq.map(big),
            &big(anchor.input_tokens),
            &big(anchor.estimated_tokens),
            &now,
        ],
        &what,
    )?;
    match row {
        Some(row) => get(&row, 0, tx.target),
        None => Err(Error::NoSuchSession(name.to_owned())),
    }
}

/// Creates a whole session (see [`crate::store::SessionStore::import_sessions`]).
pub(super) fn insert_whole_session(
    tx: &mut Tx<'_>,
    import: &SessionImport<'_>,
    now: i64,
) -> Result<()> {
    let name = import.name;
    let session = import.session;
    insert_session(tx, name, session.family, now)?;
    append_in(tx, name, &session.entries, import.offloads, now)?;
    let (id, last_seq) = session_row(tx, name, true)?;
    for checkpoint in &session.checkpoints {
        insert_checkpoint(tx, name, id, last_seq, checkpoint, now)?;
    }
    update_nudge_state(tx, name, id, &session.nudge_state, now)?;
    if let Some(anchor) = &session.usage_anchor {
        insert_usage_anchor(tx, name, id, anchor, now)?;
    }
    Ok(())
}
