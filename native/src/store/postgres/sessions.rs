//! [`SessionStore`] for [`PostgresStore`]: each call one transaction (see `postgres`), built
//! from the statements in `postgres_queries`. Writes lock the session's row first, so a turn's
//! checkpoint, an append and a usage record of one session never interleave; reads see one
//! snapshot. What a turn loads is the core's rule ([`turn_tail_after`]), as in SQLite.

use ctxkit_core::compaction::Checkpoint;
use ctxkit_core::memory::NudgeState;
use ctxkit_core::model::Entry;
use ctxkit_core::prompt::FrozenParts;
use ctxkit_core::tokens::{ModelFamily, UsageAnchor};
use ctxkit_core::turn::{Session, TurnChanges};

use postgres::types::Type;

use crate::error::{Error, Result};
use crate::store::assembly::{call_tool_name, turn_session, whole_session};
use crate::store::columns::{family_from_name, frozen_parts_from_json, frozen_parts_json};
use crate::store::postgres::memory::add_memory_in;
use crate::store::postgres::queries::{
    append_in, insert_checkpoint, insert_session, insert_usage_anchor, insert_whole_session,
    keyed_append_in, latest_anchor, latest_checkpoint, session_row, session_state,
    update_nudge_state,
};
use crate::store::postgres::reads::SessionRows;
use crate::store::postgres::text::{from_column, to_column};
use crate::store::postgres::{get, unsigned, PostgresStore};
use crate::store::{
    AddedMemory, Appended, NewMemory, OffloadRecord, SessionHead, SessionImport, SessionInfo,
    SessionStore,
};

impl PostgresStore {
    fn info_in(&self, tx: &mut crate::store::postgres::Tx<'_>, name: &str) -> Result<SessionInfo> {
        let (id, _) = session_row(tx, name, false)?;
        let (family, nudge_state) = session_state(tx, name, id)?;
        let what = || format!("session {name:?}: reading its numbers");
        let row = tx
            .query_opt(
                "SELECT created_at, updated_at, message_count, last_seq, total_tokens, \
                 (SELECT count(*) FROM checkpoints WHERE session_id = s.id), \
                 (SELECT count(*) FROM offloads WHERE session_id = s.id) \
                 FROM sessions s WHERE id = $1",
                &[&id],
                &what,
            )?
            .ok_or_else(|| Error::NoSuchSession(name.to_owned()))?;
        let target = tx.target;
        let latest = latest_checkpoint(tx, name, id)?;
        Ok(SessionInfo {
            name: name.to_owned(),
            family,
            created_at: get(&row, 0, target)?,
            updated_at: get(&row, 1, target)?,
            messages: unsigned(get(&row, 2, target)?),
            last_seq: unsigned(get(&row, 3, target)?),
            total_tokens: unsigned(get(&row, 4, target)?),
            checkpoints: unsigned(get(&row, 5, target)?),
            latest_checkpoint: latest.map(|c| (c.through_seq, c.method)),
            offloads: unsigned(get(&row, 6, target)?),
            turns: nudge_state.turn,
            usage_anchor: latest_anchor(tx, name, id)?,
        })
    }
}

impl SessionStore for PostgresStore {
    fn create_session(&mut self, name: &str, family: ModelFamily, now: i64) -> Result<()> {
        self.write(&|| format!("session {name:?}: creating it"), |tx| {
            insert_session(tx, name, family, now)
        })
    }

    fn list_sessions(&self) -> Result<Vec<SessionInfo>> {
        self.read(&|| "listing sessions".to_owned(), |tx| {
            let what = || "listing sessions".to_owned();
            let rows = tx.query(
                "SELECT name FROM sessions ORDER BY updated_at DESC, name",
                &[],
                &what,
            )?;
            let names = rows
                .iter()
                .map(|row| get::<String>(row, 0, tx.target).map(from_column))
                .collect::<Result<Vec<_>>>()?;
            names.iter().map(|name| self.info_in(tx, name)).collect()
        })
    }

    fn session_info(&self, name: &str) -> Result<SessionInfo> {
        self.read(&|| format!("session {name:?}: reading it"), |tx| {
            self.info_in(tx, name)
        })
    }

    fn session_head(&self, name: &str) -> Result<SessionHead> {
        let what = || format!("session {name:?}: reading its head");
        self.read(&what, |tx| {
            let name_column = to_column(name);
            let rows = tx.query_typed(
                "SELECT family, last_seq, nudge_turn, nudge_last_seq, \
                 nudge_turns_without_progress, \
                 (SELECT max(through_seq) FROM checkpoints WHERE session_id = s.id), \
                 (SELECT coalesce(max(id), 0) FROM usage_anchors WHERE session_id = s.id) \
                 FROM sessions s WHERE name = $1",
                &[(&name_column, Type::TEXT)],
                &what,
            )?;
            let row = rows
                .first()
                .ok_or_else(|| Error::NoSuchSession(name.to_owned()))?;
            let target = tx.target;
            let family: String = get(row, 0, target)?;
            Ok(SessionHead {
                family: family_from_name(name, &family)?,
                last_seq: unsigned(get(row, 1, target)?),
                checkpoint_through: get::<Option<i64>>(row, 5, target)?.map(unsigned),
                nudge_state: NudgeState {
                    turn: unsigned(get(row, 2, target)?),
                    last_seq: get::<Option<i64>>(row, 3, target)?.map(unsigned),
                    turns_without_progress: u32::try_from(get::<i64>(row, 4, target)?)
                        .unwrap_or(u32::MAX),
                },
                usage_version: get(row, 6, target)?,
            })
        })
    }

    fn load_for_turn(&self, name: &str) -> Result<Session> {
        self.read(&|| format!("session {name:?}: loading it"), |tx| {
            let row = session_row(tx, name, false)?;
            turn_session(&mut SessionRows::new(tx, name, row))
        })
    }

    fn export_session(&self, name: &str) -> Result<Session> {
        self.read(&|| format!("session {name:?}: exporting it"), |tx| {
            let row = session_row(tx, name, false)?;
            whole_session(&mut SessionRows::new(tx, name, row))
        })
    }

    fn call_tool_name(&self, name: &str, seq: u64, call_id: &str) -> Result<Option<String>> {
        self.read(
            &|| format!("session {name:?}: finding call {call_id:?}"),
            |tx| {
                let row = session_row(tx, name, false)?;
                call_tool_name(&mut SessionRows::new(tx, name, row), seq, call_id)
            },
        )
    }

    fn append(
        &mut self,
        name: &str,
        entries: &[Entry],
        offloads: &[OffloadRecord],
        now: i64,
    ) -> Result<()> {
        let what = || format!("session {name:?}: appending {} messages", entries.len());
        self.write(&what, |tx| append_in(tx, name, entries, offloads, now))
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
        self.write(&what, |tx| {
            keyed_append_in(tx, name, key, create, entries, offloads, now)
        })
    }

    fn import_session(
        &mut self,
        name: &str,
        family: ModelFamily,
        entries: &[Entry],
        now: i64,
    ) -> Result<()> {
        let what = || format!("session {name:?}: importing {} messages", entries.len());
        self.write(&what, |tx| {
            insert_session(tx, name, family, now)?;
            append_in(tx, name, entries, &[], now)
        })
    }

    fn import_sessions(
        &mut self,
        sessions: &[SessionImport<'_>],
        memories: &[NewMemory],
        project: &str,
        now: i64,
    ) -> Result<Vec<AddedMemory>> {
        let what = || format!("importing {} session(s)", sessions.len());
        self.write(&what, |tx| {
            for import in sessions {
                insert_whole_session(tx, import, now)?;
            }
            memories
                .iter()
                .map(|memory| add_memory_in(tx, project, memory, now))
                .collect()
        })
    }

    fn add_checkpoint(&mut self, name: &str, checkpoint: &Checkpoint, now: i64) -> Result<()> {
        let what = || format!("session {name:?}: storing a checkpoint");
        self.write(&what, |tx| {
            let (id, last_seq) = session_row(tx, name, true)?;
            insert_checkpoint(tx, name, id, last_seq, checkpoint, now)?;
            tx.execute(
                "UPDATE sessions SET updated_at = $2 WHERE id = $1",
                &[&id, &now],
                &what,
            )?;
            Ok(())
        })
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
        self.write(&what, |tx| {
            let (id, last_seq) = session_row(tx, name, true)?;
            if let Some(checkpoint) = &changes.checkpoint {
                insert_checkpoint(tx, name, id, last_seq, checkpoint, now)?;
            }
            update_nudge_state(tx, name, id, &changes.nudge_state, now)?;
            memories
                .iter()
                .map(|memory| add_memory_in(tx, project, memory, now))
                .collect()
        })
    }

    fn record_usage(&mut self, name: &str, anchor: &UsageAnchor, now: i64) -> Result<i64> {
        self.write(&|| format!("session {name:?}: recording usage"), |tx| {
            let (id, _) = session_row(tx, name, true)?;
            insert_usage_anchor(tx, name, id, anchor, now)
        })
    }

    fn frozen_prompt(&self, name: &str) -> Result<Option<FrozenParts>> {
        let what = || format!("session {name:?}: reading its frozen prompt");
        self.read(&what, |tx| {
            let (id, _) = session_row(tx, name, false)?;
            let row = tx.query_opt(
                "SELECT parts FROM frozen_prompts WHERE session_id = $1",
                &[&id],
                &what,
            )?;
            let target = tx.target;
            row.map(|row| {
                let json: String = get(&row, 0, target)?;
                frozen_parts_from_json(name, &from_column(json))
            })
            .transpose()
        })
    }

    fn store_frozen_prompt(&mut self, name: &str, parts: &FrozenParts) -> Result<()> {
        let json = to_column(&frozen_parts_json(name, parts)?).into_owned();
        let what = || format!("session {name:?}: storing its frozen prompt");
        self.write(&what, |tx| {
            let (id, _) = session_row(tx, name, true)?;
            tx.execute(
                "INSERT INTO frozen_prompts (session_id, parts) VALUES ($1, $2) \
                 ON CONFLICT (session_id) DO UPDATE SET parts = excluded.parts",
                &[&id, &json],
                &what,
            )?;
            Ok(())
        })
    }

    fn offloads(&self, name: &str) -> Result<Vec<OffloadRecord>> {
        let what = || format!("session {name:?}: reading its offloads");
        self.read(&what, |tx| {
            let (id, _) = session_row(tx, name, false)?;
            let rows = tx.query(
                "SELECT seq, tool_call_id, relative_path, bytes, lines, is_error FROM offloads \
                 WHERE session_id = $1 ORDER BY seq",
                &[&id],
                &what,
            )?;
            let target = tx.target;
            rows.iter()
                .map(|row| {
                    Ok(OffloadRecord {
                        seq: unsigned(get(row, 0, target)?),
                        tool_call_id: get::<Option<String>>(row, 1, target)?.map(from_column),
                        relative_path: from_column(get(row, 2, target)?),
                        bytes: unsigned(get(row, 3, target)?),
                        lines: unsigned(get(row, 4, target)?),
                        is_error: get(row, 5, target)?,
                        content: None,
                    })
                })
                .collect()
        })
    }

    fn offload_text(&self, name: &str, relative_path: &str) -> Result<Option<String>> {
        let what = || format!("session {name:?}: reading the offloaded {relative_path}");
        self.read(&what, |tx| {
            let (id, _) = session_row(tx, name, false)?;
            let row = tx.query_opt(
                "SELECT content FROM offloads WHERE session_id = $1 AND relative_path = $2 \
                 AND content IS NOT NULL ORDER BY seq LIMIT 1",
                &[&id, &to_column(relative_path)],
                &what,
            )?;
            row.map(|row| get(&row, 0, tx.target).map(from_column))
                .transpose()
        })
    }

    fn offload_recorded(&self, relative_path: &str) -> Result<bool> {
        let what = || format!("looking for the offload record of {relative_path}");
        self.read(&what, |tx| {
            let row = tx.query_opt(
                "SELECT 1 FROM offloads WHERE relative_path = $1 LIMIT 1",
                &[&to_column(relative_path)],
                &what,
            )?;
            Ok(row.is_some())
        })
    }

    fn sync(&mut self) -> Result<()> {
        self.flush()
    }
}
