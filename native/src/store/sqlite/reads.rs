//! [`SessionReads`] for SQLite: one session's reads over a connection (inside the caller's
//! transaction, so they see one snapshot), answered by the statements of [`super::queries`]
//! and [`super::search_index`], for the shared assembly of [`crate::store::assembly`].

use ctxkit_core::compaction::Checkpoint;
use ctxkit_core::memory::NudgeState;
use ctxkit_core::model::Entry;
use ctxkit_core::tokens::{ModelFamily, UsageAnchor};
use rusqlite::Connection;

use crate::error::Result;
use crate::store::assembly::{OffloadFound, SearchReads, SessionReads};
use crate::store::sqlite::queries::{
    call_candidates, checkpoints, entries_between, latest_anchor, latest_checkpoint, session_state,
};
use crate::store::sqlite::search_index::{matching, matching_offloads};

/// One session's rows, read through `connection`.
pub(super) struct SessionRows<'c> {
    connection: &'c Connection,
    name: &'c str,
    id: i64,
}

impl<'c> SessionRows<'c> {
    /// The session `name`, whose row id is `id`.
    pub(super) fn new(connection: &'c Connection, name: &'c str, id: i64) -> Self {
        SessionRows {
            connection,
            name,
            id,
        }
    }
}

impl SessionReads for SessionRows<'_> {
    fn state(&mut self) -> Result<(ModelFamily, NudgeState)> {
        session_state(self.connection, self.name, self.id)
    }

    fn latest_checkpoint(&mut self) -> Result<Option<Checkpoint>> {
        latest_checkpoint(self.connection, self.name, self.id)
    }

    fn checkpoints(&mut self) -> Result<Vec<Checkpoint>> {
        checkpoints(self.connection, self.name, self.id)
    }

    fn latest_anchor(&mut self) -> Result<Option<UsageAnchor>> {
        latest_anchor(self.connection, self.name, self.id)
    }

    fn entries_between(&mut self, from: u64, to: u64) -> Result<Vec<Entry>> {
        entries_between(self.connection, self.name, self.id, from, to)
    }
}

impl SearchReads for SessionRows<'_> {
    fn name(&self) -> &str {
        self.name
    }

    fn matching(
        &mut self,
        needles: &[&str],
        wanted: usize,
    ) -> Result<(Vec<Entry>, Vec<OffloadFound>)> {
        let (connection, name, id) = (self.connection, self.name, self.id);
        Ok((
            matching(connection, name, id, needles, wanted)?,
            matching_offloads(connection, name, id, needles, wanted)?,
        ))
    }

    fn call_candidates(
        &mut self,
        results: &[(u64, String)],
        count: u64,
    ) -> Result<Vec<(u64, u64, String)>> {
        call_candidates(self.connection, self.name, self.id, results, count)
    }
}
