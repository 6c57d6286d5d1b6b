//! [`SqliteStore`]: the embedded store, one SQLite file (rusqlite, SQLite bundled).
//!
//! Settings, applied on every open: a busy timeout (default 5 s: another process writing makes
//! this one wait, not fail), `journal_mode = WAL` (readers never block the writer),
//! `synchronous = NORMAL` (see below), `foreign_keys = ON`, then the migrations
//! ([`super::schema`]). The file is created with mode 0600: it holds conversations and memories.
//!
//! Durability: every write is one transaction (`BEGIN IMMEDIATE`, so two writers queue instead
//! of failing halfway). In WAL mode with `synchronous = NORMAL` a commit is atomic and
//! survives a crash or kill of the process; only a power loss or OS crash can drop the last
//! commits before the next WAL checkpoint, and never corrupts the file. `synchronous = FULL`
//! ([`SqliteOptions::full_sync`]) closes that window at the cost of an fsync per append.
//! All SQL is static text with bound parameters.

use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ctxkit_core::checkpoint::Checkpoint;
use ctxkit_core::log::Entry;
use ctxkit_core::nudge::NudgeState;
use ctxkit_core::session::Session;
use ctxkit_core::tokens::{ModelFamily, UsageAnchor};
use rusqlite::{params, Connection, OptionalExtension, Transaction, TransactionBehavior};

use super::schema::migrate;
use super::sqlite_rows::{
    anchor_from_row, checked_checkpoint, checkpoint_from_row, entry_from_parts, family_from_name,
    family_name, message_body, ANCHOR_COLUMNS, CHECKPOINT_COLUMNS,
};
use super::{OffloadRecord, SessionHead, SessionInfo, SessionStore};
use crate::error::{Context, Error, Result};

/// How to open a database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SqliteOptions {
    /// How long to wait for another writer before failing. Default 5 s.
    pub busy_timeout: Duration,
    /// `synchronous = FULL` instead of `NORMAL`: an fsync per commit. Default false.
    pub full_sync: bool,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        SqliteOptions {
            busy_timeout: Duration::from_secs(5),
            full_sync: false,
        }
    }
}

/// The SQLite store (see the module doc).
#[derive(Debug)]
pub struct SqliteStore {
    pub(crate) connection: Connection,
    path: PathBuf,
}

impl SqliteStore {
    /// Opens (creating it and its folder if needed) the database at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        SqliteStore::open_with(path, SqliteOptions::default())
    }

    /// Opens the database at `path` with `options`.
    pub fn open_with(path: impl AsRef<Path>, options: SqliteOptions) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)
                .map_err(|e| Error::io("create the folder of", &path, e))?;
        }
        // Created here first so that it (and SQLite's -wal and -shm files, which copy its
        // mode) is readable by its owner only.
        OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(&path)
            .map_err(|e| Error::io("create", &path, e))?;
        let connection =
            Connection::open(&path).context(|| format!("opening {}", path.display()))?;
        SqliteStore::configure(connection, path, options)
    }

    /// An in-memory database (tests, dry runs); it has no WAL and disappears when dropped.
    pub fn open_in_memory() -> Result<Self> {
        let connection =
            Connection::open_in_memory().context(|| "opening an in-memory database".to_owned())?;
        SqliteStore::configure(
            connection,
            PathBuf::from(":memory:"),
            SqliteOptions::default(),
        )
    }

    fn configure(
        mut connection: Connection,
        path: PathBuf,
        options: SqliteOptions,
    ) -> Result<Self> {
        let at = path.display().to_string();
        connection
            .busy_timeout(options.busy_timeout)
            .context(|| format!("{at}: setting the busy timeout"))?;
        let _mode: String = connection
            .query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))
            .context(|| format!("{at}: switching to WAL"))?;
        let synchronous = if options.full_sync { "FULL" } else { "NORMAL" };
        connection
            .pragma_update(None, "synchronous", synchronous)
            .context(|| format!("{at}: setting synchronous"))?;
        connection
            .pragma_update(None, "foreign_keys", "ON")
            .context(|| format!("{at}: enabling foreign keys"))?;
        migrate(&mut connection, &path)?;
        Ok(SqliteStore { connection, path })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A write transaction that takes the write lock at once (waiting up to the busy timeout).
    pub(crate) fn write(&mut self, what: impl Fn() -> String) -> Result<Transaction<'_>> {
        self.connection
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .context(what)
    }
}

/// The session's row id and last seq, inside a transaction or not.
fn session_row(connection: &Connection, name: &str) -> Result<(i64, u64)> {
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
fn latest_checkpoint(connection: &Connection, name: &str, id: i64) -> Result<Option<Checkpoint>> {
    let sql = format!(
        "SELECT {CHECKPOINT_COLUMNS} FROM checkpoints WHERE session_id = ?1 \
         ORDER BY through_seq DESC LIMIT 1"
    );
    let row = connection
        .prepare_cached(&sql)
        .and_then(|mut statement| statement.query_row([id], checkpoint_from_row).optional())
        .context(|| format!("session {name:?}: reading its latest checkpoint"))?;
    row.map(|row| checked_checkpoint(name, row)).transpose()
}

/// The latest usage anchor of a session.
fn latest_anchor(connection: &Connection, name: &str, id: i64) -> Result<Option<UsageAnchor>> {
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
fn session_state(
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

/// The entries with `seq > after`, in order.
fn entries_after(connection: &Connection, name: &str, id: i64, after: u64) -> Result<Vec<Entry>> {
    let mut statement = connection
        .prepare_cached(
            "SELECT seq, body, tokens FROM messages WHERE session_id = ?1 AND seq > ?2 \
             ORDER BY seq",
        )
        .context(|| format!("session {name:?}: reading its log"))?;
    let mut rows = statement
        .query(params![id, after])
        .context(|| format!("session {name:?}: reading its log"))?;
    let mut entries = Vec::new();
    while let Some(row) = rows
        .next()
        .context(|| format!("session {name:?}: reading its log"))?
    {
        let seq: u64 = row
            .get(0)
            .context(|| format!("session {name:?}: reading a seq"))?;
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
    Ok(entries)
}

/// Checks and inserts a checkpoint inside a write transaction.
fn insert_checkpoint(
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
    if latest.is_some_and(|latest| through <= latest) || through > last_seq || through == 0 {
        return Err(Error::invalid(
            "checkpoint.through_seq",
            format!(
                "session {name:?}: {through} must be after the latest checkpoint ({}) and at \
                 most the last logged seq ({last_seq})",
                latest.map_or_else(|| "none".to_owned(), |l| l.to_string())
            ),
        ));
    }
    transaction
        .prepare_cached(
            "INSERT INTO checkpoints (session_id, through_seq, method, summary, active_tasks, \
             tokens, made_at_turn, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
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
                now
            ])
        })
        .context(|| format!("session {name:?}: storing the checkpoint through seq {through}"))?;
    Ok(())
}

/// Inserts a new, empty session inside a write transaction.
fn insert_session(
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

/// Appends inside a write transaction (see [`SessionStore::append`]).
fn append_in(
    transaction: &Transaction<'_>,
    name: &str,
    entries: &[Entry],
    offloads: &[OffloadRecord],
    now: i64,
) -> Result<()> {
    let what = || format!("session {name:?}: appending {} messages", entries.len());
    let (id, last_seq) = session_row(transaction, name)?;
    if let Some(first) = entries.first().filter(|first| first.seq <= last_seq) {
        return Err(Error::SeqConflict {
            session: name.to_owned(),
            expected: first.seq,
            found: last_seq,
        });
    }
    let mut expected = last_seq.saturating_add(1);
    for entry in entries {
        if entry.seq != expected {
            return Err(Error::invalid(
                format!("entries[seq {}]", entry.seq),
                format!("session {name:?}: expected seq {expected} (seqs have no gaps)"),
            ));
        }
        expected = expected.saturating_add(1);
    }
    for offload in offloads {
        if !entries.iter().any(|entry| entry.seq == offload.seq) {
            return Err(Error::invalid(
                format!("offloads[seq {}]", offload.seq),
                format!("session {name:?}: not one of the appended messages"),
            ));
        }
    }
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
        }
        let mut insert_offload = transaction
            .prepare_cached(
                "INSERT INTO offloads (session_id, seq, tool_call_id, relative_path, bytes, \
                 lines, is_error, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
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
                    now
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
                statement.execute(params![id, expected - 1, entries.len(), tokens, now])
            })
            .context(what)?;
    }
    Ok(())
}

impl SessionStore for SqliteStore {
    fn create_session(&mut self, name: &str, family: ModelFamily, now: i64) -> Result<()> {
        if name.trim().is_empty() {
            return Err(Error::invalid("session", "empty: a session needs a name"));
        }
        let transaction = self.write(|| format!("session {name:?}: creating it"))?;
        insert_session(&transaction, name, family, now)?;
        transaction
            .commit()
            .context(|| format!("session {name:?}: creating it"))
    }

    fn list_sessions(&self) -> Result<Vec<SessionInfo>> {
        let names: Vec<String> = self
            .connection
            .prepare_cached("SELECT name FROM sessions ORDER BY updated_at DESC, name")
            .and_then(|mut statement| {
                statement
                    .query_map([], |row| row.get(0))?
                    .collect::<rusqlite::Result<Vec<String>>>()
            })
            .context(|| "listing sessions".to_owned())?;
        names.iter().map(|name| self.session_info(name)).collect()
    }

    fn session_info(&self, name: &str) -> Result<SessionInfo> {
        let (id, _) = session_row(&self.connection, name)?;
        let (family, nudge_state) = session_state(&self.connection, name, id)?;
        let (created_at, updated_at, messages, last_seq, total_tokens, checkpoints, offloads) =
            self.connection
                .prepare_cached(
                    "SELECT created_at, updated_at, message_count, last_seq, total_tokens, \
                 (SELECT count(*) FROM checkpoints WHERE session_id = s.id), \
                 (SELECT count(*) FROM offloads WHERE session_id = s.id) \
                 FROM sessions s WHERE id = ?1",
                )
                .and_then(|mut statement| {
                    statement.query_row([id], |row| {
                        Ok((
                            row.get(0)?,
                            row.get(1)?,
                            row.get(2)?,
                            row.get(3)?,
                            row.get(4)?,
                            row.get(5)?,
                            row.get(6)?,
                        ))
                    })
                })
                .context(|| format!("session {name:?}: reading its numbers"))?;
        let latest = latest_checkpoint(&self.connection, name, id)?;
        Ok(SessionInfo {
            name: name.to_owned(),
            family,
            created_at,
            updated_at,
            messages,
            last_seq,
            total_tokens,
            checkpoints,
            latest_checkpoint: latest.map(|c| (c.through_seq, c.method)),
            offloads,
            turns: nudge_state.turn,
            usage_anchor: latest_anchor(&self.connection, name, id)?,
        })
    }

    fn session_head(&self, name: &str) -> Result<SessionHead> {
        let row = self
            .connection
            .prepare_cached(
                "SELECT family, last_seq, nudge_turn, nudge_last_seq, \
                 nudge_turns_without_progress, \
                 (SELECT max(through_seq) FROM checkpoints WHERE session_id = s.id), \
                 (SELECT coalesce(max(id), 0) FROM usage_anchors WHERE session_id = s.id) \
                 FROM sessions s WHERE name = ?1",
            )
            .and_then(|mut statement| {
                statement
                    .query_row([name], |row| {
                        Ok((
                            row.get::<_, String>(0)?,
                            row.get(1)?,
                            NudgeState {
                                turn: row.get(2)?,
                                last_seq: row.get(3)?,
                                turns_without_progress: row.get(4)?,
                            },
                            row.get(5)?,
                            row.get(6)?,
                        ))
                    })
                    .optional()
            })
            .context(|| format!("session {name:?}: reading its head"))?;
        let Some((family, last_seq, nudge_state, checkpoint_through, usage_version)) = row else {
            return Err(Error::NoSuchSession(name.to_owned()));
        };
        Ok(SessionHead {
            family: family_from_name(name, &family)?,
            last_seq,
            checkpoint_through,
            nudge_state,
            usage_version,
        })
    }

    fn load_for_turn(&self, name: &str) -> Result<Session> {
        let (id, _) = session_row(&self.connection, name)?;
        let (family, nudge_state) = session_state(&self.connection, name, id)?;
        let checkpoint = latest_checkpoint(&self.connection, name, id)?;
        // After the checkpoint, or from where the previous turn stopped if that is earlier:
        // nudges count every message since then.
        let after = match (&checkpoint, nudge_state.last_seq) {
            (Some(checkpoint), Some(last)) => checkpoint.through_seq.min(last),
            (Some(checkpoint), None) => checkpoint.through_seq,
            (None, _) => 0,
        };
        Ok(Session {
            family,
            entries: entries_after(&self.connection, name, id, after)?,
            checkpoints: checkpoint.into_iter().collect(),
            nudge_state,
            usage_anchor: latest_anchor(&self.connection, name, id)?,
        })
    }

    fn export_session(&self, name: &str) -> Result<Session> {
        let (id, _) = session_row(&self.connection, name)?;
        let (family, nudge_state) = session_state(&self.connection, name, id)?;
        let sql = format!(
            "SELECT {CHECKPOINT_COLUMNS} FROM checkpoints WHERE session_id = ?1 ORDER BY through_seq"
        );
        let rows = self
            .connection
            .prepare_cached(&sql)
            .and_then(|mut statement| {
                statement
                    .query_map([id], checkpoint_from_row)?
                    .collect::<rusqlite::Result<Vec<_>>>()
            })
            .context(|| format!("session {name:?}: reading its checkpoints"))?;
        let checkpoints = rows
            .into_iter()
            .map(|row| checked_checkpoint(name, row))
            .collect::<Result<Vec<_>>>()?;
        Ok(Session {
            family,
            entries: entries_after(&self.connection, name, id, 0)?,
            checkpoints,
            nudge_state,
            usage_anchor: latest_anchor(&self.connection, name, id)?,
        })
    }

    fn append(
        &mut self,
        name: &str,
        entries: &[Entry],
        offloads: &[OffloadRecord],
        now: i64,
    ) -> Result<()> {
        let what = || format!("session {name:?}: appending {} messages", entries.len());
        let transaction = self.write(what)?;
        append_in(&transaction, name, entries, offloads, now)?;
        transaction.commit().context(what)
    }

    fn import_session(
        &mut self,
        name: &str,
        family: ModelFamily,
        entries: &[Entry],
        now: i64,
    ) -> Result<()> {
        if name.trim().is_empty() {
            return Err(Error::invalid("session", "empty: a session needs a name"));
        }
        let what = || format!("session {name:?}: importing {} messages", entries.len());
        let transaction = self.write(what)?;
        insert_session(&transaction, name, family, now)?;
        append_in(&transaction, name, entries, &[], now)?;
        transaction.commit().context(what)
    }

    fn add_checkpoint(&mut self, name: &str, checkpoint: &Checkpoint, now: i64) -> Result<()> {
        let what = || format!("session {name:?}: storing a checkpoint");
        let transaction = self.write(what)?;
        let (id, last_seq) = session_row(&transaction, name)?;
        insert_checkpoint(&transaction, name, id, last_seq, checkpoint, now)?;
        transaction
            .execute(
                "UPDATE sessions SET updated_at = ?2 WHERE id = ?1",
                params![id, now],
            )
            .context(what)?;
        transaction.commit().context(what)
    }

    fn finish_turn(
        &mut self,
        name: &str,
        checkpoint: Option<&Checkpoint>,
        nudge_state: &NudgeState,
        now: i64,
    ) -> Result<()> {
        let what = || format!("session {name:?}: finishing the turn");
        let transaction = self.write(what)?;
        let (id, last_seq) = session_row(&transaction, name)?;
        if let Some(checkpoint) = checkpoint {
            insert_checkpoint(&transaction, name, id, last_seq, checkpoint, now)?;
        }
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
            .context(what)?;
        transaction.commit().context(what)
    }

    fn record_usage(&mut self, name: &str, anchor: &UsageAnchor, now: i64) -> Result<()> {
        let what = || format!("session {name:?}: recording usage");
        let transaction = self.write(what)?;
        let (id, _) = session_row(&transaction, name)?;
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
            .context(what)?;
        transaction.commit().context(what)
    }

    fn offloads(&self, name: &str) -> Result<Vec<OffloadRecord>> {
        let (id, _) = session_row(&self.connection, name)?;
        self.connection
            .prepare_cached(
                "SELECT seq, tool_call_id, relative_path, bytes, lines, is_error FROM offloads \
                 WHERE session_id = ?1 ORDER BY seq",
            )
            .and_then(|mut statement| {
                statement
                    .query_map([id], |row| {
                        Ok(OffloadRecord {
                            seq: row.get(0)?,
                            tool_call_id: row.get(1)?,
                            relative_path: row.get(2)?,
                            bytes: row.get(3)?,
                            lines: row.get(4)?,
                            is_error: row.get(5)?,
                        })
                    })?
                    .collect()
            })
            .context(|| format!("session {name:?}: reading its offloads"))
    }
}
