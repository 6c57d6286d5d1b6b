//! [`SessionStore`] for [`SqliteStore`]: each call one transaction (writes take the write
//! lock at once with `BEGIN IMMEDIATE`), built from the statements in `sqlite_queries`. Each
//! read ends by checking that a database read without locks was not written meanwhile
//! ([`crate::Error::DatabaseChanged`]; see `sqlite_read_only`).

use ctxkit_core::compaction::Checkpoint;
use ctxkit_core::memory::NudgeState;
use ctxkit_core::model::Entry;
use ctxkit_core::prompt::FrozenParts;
use ctxkit_core::tokens::{ModelFamily, UsageAnchor};
use ctxkit_core::turn::{Session, TurnChanges};
use rusqlite::{params, OptionalExtension};

use crate::error::{Context, Error, Result};
use crate::store::assembly::{call_tool_name, turn_session, whole_session};
use crate::store::columns::{family_from_name, frozen_parts_from_json, frozen_parts_json};
use crate::store::sqlite::memory::add_memory_in;
use crate::store::sqlite::queries::{
    append_in, insert_checkpoint, insert_session, insert_usage_anchor, insert_whole_session,
    keyed_append_in, latest_anchor, latest_checkpoint, session_row, session_state,
    update_nudge_state,
};
use crate::store::sqlite::reads::SessionRows;
use crate::store::sqlite::SqliteStore;
use crate::store::{
    AddedMemory, Appended, NewMemory, OffloadRecord, SessionHead, SessionImport, SessionInfo,
    SessionStore,
};

/// The rows of session `name` (read through `connection`).
fn session_rows<'c>(
    connection: &'c rusqlite::Connection,
    name: &'c str,
) -> Result<SessionRows<'c>> {
    let (id, _) = session_row(connection, name)?;
    Ok(SessionRows::new(connection, name, id))
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
        let result = (|| -> Result<Vec<SessionInfo>> {
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
        })();
        self.checked(result)
    }

    fn session_info(&self, name: &str) -> Result<SessionInfo> {
        let result = (|| -> Result<SessionInfo> {
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
        })();
        self.checked(result)
    }

    fn session_head(&self, name: &str) -> Result<SessionHead> {
        let result = (|| -> Result<SessionHead> {
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
            let Some((family, last_seq, nudge_state, checkpoint_through, usage_version)) = row
            else {
                return Err(Error::NoSuchSession(name.to_owned()));
            };
            Ok(SessionHead {
                family: family_from_name(name, &family)?,
                last_seq,
                checkpoint_through,
                nudge_state,
                usage_version,
            })
        })();
        self.checked(result)
    }

    fn load_for_turn(&self, name: &str) -> Result<Session> {
        let result =
            session_rows(&self.connection, name).and_then(|mut rows| turn_session(&mut rows));
        self.checked(result)
    }

    fn export_session(&self, name: &str) -> Result<Session> {
        let result =
            session_rows(&self.connection, name).and_then(|mut rows| whole_session(&mut rows));
        self.checked(result)
    }

    fn call_tool_name(&self, name: &str, seq: u64, call_id: &str) -> Result<Option<String>> {
        let result = session_rows(&self.connection, name)
            .and_then(|mut rows| call_tool_name(&mut rows, seq, call_id));
        self.checked(result)
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

    fn append_keyed(
        &mut self,
        name: &str,
        key: &str,
        create: Option<ModelFamily>,
        entries: &[Entry],
        offloads: &[OffloadRecord],
        now: i64,
    ) -> Result<Appended> {
        if create.is_some() && name.trim().is_empty() {
            return Err(Error::invalid("session", "empty: a session needs a name"));
        }
        let what = || format!("session {name:?}: appending {} messages", entries.len());
        let transaction = self.write(what)?;
        let appended = keyed_append_in(&transaction, name, key, create, entries, offloads, now)?;
        transaction.commit().context(what)?;
        Ok(appended)
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

    fn import_sessions(
        &mut self,
        sessions: &[SessionImport<'_>],
        memories: &[NewMemory],
        project: &str,
        now: i64,
    ) -> Result<Vec<AddedMemory>> {
        let what = || format!("importing {} session(s)", sessions.len());
        let transaction = self.write(what)?;
        for import in sessions {
            insert_whole_session(&transaction, import, now)?;
        }
        let added = memories
            .iter()
            .map(|memory| add_memory_in(&transaction, project, memory, now))
            .collect::<Result<Vec<_>>>()?;
        transaction.commit().context(what)?;
        Ok(added)
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
        changes: &TurnChanges,
        memories: &[NewMemory],
        project: &str,
        now: i64,
    ) -> Result<Vec<AddedMemory>> {
        let what = || format!("session {name:?}: finishing the turn");
        let transaction = self.write(what)?;
        let (id, last_seq) = session_row(&transaction, name)?;
        if let Some(checkpoint) = &changes.checkpoint {
            insert_checkpoint(&transaction, name, id, last_seq, checkpoint, now)?;
        }
        update_nudge_state(&transaction, name, id, &changes.nudge_state, now)?;
        let added = memories
            .iter()
            .map(|memory| add_memory_in(&transaction, project, memory, now))
            .collect::<Result<Vec<_>>>()?;
        transaction.commit().context(what)?;
        Ok(added)
    }

    fn record_usage(&mut self, name: &str, anchor: &UsageAnchor, now: i64) -> Result<i64> {
        let what = || format!("session {name:?}: recording usage");
        let transaction = self.write(what)?;
        let (id, _) = session_row(&transaction, name)?;
        let version = insert_usage_anchor(&transaction, name, id, anchor, now)?;
        transaction.commit().context(what)?;
        Ok(version)
    }

    fn frozen_prompt(&self, name: &str) -> Result<Option<FrozenParts>> {
        let result = (|| -> Result<Option<FrozenParts>> {
            let (id, _) = session_row(&self.connection, name)?;
            let json: Option<String> = self
                .connection
                .prepare_cached("SELECT parts FROM frozen_prompts WHERE session_id = ?1")
                .and_then(|mut statement| statement.query_row([id], |row| row.get(0)).optional())
                .context(|| format!("session {name:?}: reading its frozen prompt"))?;
            json.map(|json| frozen_parts_from_json(name, &json))
                .transpose()
        })();
        self.checked(result)
    }

    fn store_frozen_prompt(&mut self, name: &str, parts: &FrozenParts) -> Result<()> {
        let json = frozen_parts_json(name, parts)?;
        let what = || format!("session {name:?}: storing its frozen prompt");
        let transaction = self.write(what)?;
        let (id, _) = session_row(&transaction, name)?;
        transaction
            .execute(
                "INSERT INTO frozen_prompts (session_id, parts) VALUES (?1, ?2) \
                 ON CONFLICT (session_id) DO UPDATE SET parts = excluded.parts",
                params![id, json],
            )
            .context(what)?;
        transaction.commit().context(what)
    }

    fn offloads(&self, name: &str) -> Result<Vec<OffloadRecord>> {
        let result = (|| -> Result<Vec<OffloadRecord>> {
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
                            content: None,
                        })
                    })?
                    .collect()
            })
            .context(|| format!("session {name:?}: reading its offloads"))
        })();
        self.checked(result)
    }

    fn offload_recorded(&self, relative_path: &str) -> Result<bool> {
        let result = self
            .connection
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM offloads WHERE relative_path = ?1)",
                [relative_path],
                |row| row.get(0),
            )
            .context(|| format!("looking for the offload record of {relative_path}"));
        self.checked(result)
    }

    fn sync(&mut self) -> Result<()> {
        // PASSIVE: copies what it can without waiting for readers; a later sync finishes.
        let path = self.path().display().to_string();
        self.connection
            .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |row| {
                row.get::<_, i64>(0)
            })
            .context(|| format!("{path}: checkpointing the WAL"))?;
        Ok(())
    }
}
