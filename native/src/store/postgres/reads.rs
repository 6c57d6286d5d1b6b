//! [`SessionReads`] for PostgreSQL: one session's reads inside one transaction (a read-only
//! snapshot), for the shared assembly of [`crate::store::assembly`], and the statements only
//! they use: the history search's passes, over each message's `search_text` (the core's
//! [`ctxkit_core::recall::searchable_text`], written by the append in its transaction, so a
//! committed message is always findable) under a trigram GIN index, and the assistant messages
//! a tool result's call is looked for in.
//!
//! Every needle is a case-insensitive substring (`ILIKE`, the needle escaped by
//! [`like_pattern`] and bound as a parameter): no character of it is syntax, and CJK
//! substrings are found.

use ctxkit_core::compaction::Checkpoint;
use ctxkit_core::memory::NudgeState;
use ctxkit_core::model::Entry;
use ctxkit_core::tokens::{ModelFamily, UsageAnchor};

use crate::error::Result;
use crate::store::assembly::SessionReads;
use crate::store::columns::{entry_from_parts, CHECKPOINT_COLUMNS};
use crate::store::fts_query::like_pattern;
use crate::store::postgres::queries::{
    checkpoint_from_row, entries_between, latest_anchor, latest_checkpoint, session_state,
};
use crate::store::postgres::{big, get, unsigned, without_nul, Param, Query, Tx};

/// One session's rows, read inside a transaction.
pub(super) struct SessionRows<'t, 'a> {
    tx: &'t mut Tx<'a>,
    name: &'t str,
    id: i64,
}

impl<'t, 'a> SessionRows<'t, 'a> {
    /// The session `name`, whose row id is `id`.
    pub(super) fn new(tx: &'t mut Tx<'a>, name: &'t str, id: i64) -> Self {
        SessionRows { tx, name, id }
    }
}

impl SessionReads for SessionRows<'_, '_> {
    fn name(&self) -> &str {
        self.name
    }

    fn state(&mut self) -> Result<(ModelFamily, NudgeState)> {
        session_state(self.tx, self.name, self.id)
    }

    fn latest_checkpoint(&mut self) -> Result<Option<Checkpoint>> {
        latest_checkpoint(self.tx, self.name, self.id)
    }

    fn checkpoints(&mut self) -> Result<Vec<Checkpoint>> {
        let name = self.name;
        let what = || format!("session {name:?}: reading its checkpoints");
        let sql = format!(
            "SELECT {CHECKPOINT_COLUMNS} FROM checkpoints WHERE session_id = $1 \
             ORDER BY through_seq"
        );
        let rows = self.tx.query(&sql, &[&self.id], &what)?;
        let target = self.tx.target;
        rows.iter()
            .map(|row| checkpoint_from_row(name, row, target))
            .collect()
    }

    fn latest_anchor(&mut self) -> Result<Option<UsageAnchor>> {
        latest_anchor(self.tx, self.name, self.id)
    }

    fn entries_between(&mut self, from: u64, to: u64) -> Result<Vec<Entry>> {
        entries_between(self.tx, self.name, self.id, from, to)
    }

    fn matching(&mut self, needles: &[&str], wanted: usize) -> Result<Vec<Entry>> {
        let query = matching_query(self.id, needles, wanted);
        let name = self.name;
        let what = || format!("session {name:?}: searching its history");
        let rows = self.tx.query_planned(&query.sql, &query.params(), &what)?;
        let target = self.tx.target;
        rows.iter()
            .map(|row| {
                let seq = unsigned(get(row, 0, target)?);
                let body: &str = get(row, 1, target)?;
                entry_from_parts(name, seq, body, 0)
            })
            .collect()
    }

    fn assistant_bodies_before(&mut self, seq: u64, count: u64) -> Result<Vec<(u64, String)>> {
        let name = self.name;
        let what = || format!("session {name:?}: finding the call of seq {seq}");
        let rows = self.tx.query(
            "SELECT seq, body FROM messages WHERE session_id = $1 AND seq < $2 \
             AND role = 'assistant' ORDER BY seq DESC LIMIT $3",
            &[&self.id, &big(seq), &big(count)],
            &what,
        )?;
        let target = self.tx.target;
        rows.iter()
            .map(|row| Ok((unsigned(get(row, 0, target)?), get(row, 1, target)?)))
            .collect()
    }
}

/// A history pass as one statement: the session's messages holding every one of `needles`,
/// newest first, at most `wanted`; its SQL holds only placeholders ([`SessionRows`] runs it,
/// [`crate::store::PostgresStore::explain_history_search`] shows its plan).
pub(super) fn matching_query(id: i64, needles: &[&str], wanted: usize) -> Query {
    let wanted = i64::try_from(wanted).unwrap_or(i64::MAX);
    let mut sql =
        "SELECT seq, body FROM messages WHERE session_id = $1 AND search_text <> ''".to_owned();
    let mut params: Vec<Param> = vec![Box::new(id), Box::new(wanted)];
    for needle in needles {
        params.push(Box::new(like_pattern(&without_nul(needle))));
        sql.push_str(&format!(" AND search_text ILIKE ${}", params.len()));
    }
    sql.push_str(" ORDER BY seq DESC LIMIT $2");
    Query { sql, params }
}
