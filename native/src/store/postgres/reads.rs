//! [`SessionReads`] for PostgreSQL: one session's reads inside one transaction (a read-only
//! snapshot), for the shared assembly of [`crate::store::assembly`], and the statements only
//! they use: the history search's passes over each message's search key (`search_text`, see
//! [`super::text`]: written by the append in its transaction, so a committed message is always
//! findable), and the assistant messages a tool result's call is looked for in.
//!
//! A pass looks first among the session's newest [`RECENT_MESSAGES`], newest first by its key
//! (`strpos`: the needle's key in the message's, stopping at the hits it wants), as SQLite's
//! scan does: a word in many messages is found there at once. Only when those hold too few
//! does it look at the older messages, through the trigram GIN index (`LIKE`, the needle's key
//! escaped by [`like_pattern`]), so a rare word or a miss costs its matches, not the session's
//! length. The offloaded outputs' keys (`offloads.search_text`, written with each offload's
//! row) are searched the same way, over the same spans of seqs. Every needle is bound as a
//! parameter; no character of it is syntax.

use ctxkit_core::compaction::Checkpoint;
use ctxkit_core::memory::NudgeState;
use ctxkit_core::model::Entry;
use ctxkit_core::tokens::{ModelFamily, UsageAnchor};
use postgres::types::Type;

use crate::error::Result;
use crate::store::assembly::{OffloadFound, SessionReads};
use crate::store::columns::{entry_from_parts, CHECKPOINT_COLUMNS};
use crate::store::fts_query::like_pattern;
use crate::store::postgres::queries::{
    checkpoint_from_row, entries_between, latest_anchor, latest_checkpoint, session_state,
};
use crate::store::postgres::query::Query;
use crate::store::postgres::text::{from_column, search_key};
use crate::store::postgres::{big, get, unsigned, Tx};

/// How many of the newest messages a pass scans before it turns to the index.
pub(super) const RECENT_MESSAGES: u64 = 1_000;

/// One session's rows, read inside a transaction.
pub(super) struct SessionRows<'t, 'a> {
    tx: &'t mut Tx<'a>,
    name: &'t str,
    id: i64,
    last_seq: u64,
}

impl<'t, 'a> SessionRows<'t, 'a> {
    /// The session `name`, whose row id is `id` and whose log ends at `last_seq`.
    pub(super) fn new(tx: &'t mut Tx<'a>, name: &'t str, (id, last_seq): (i64, u64)) -> Self {
        SessionRows {
            tx,
            name,
            id,
            last_seq,
        }
    }

    /// A pass's statements over what `searched` names, in order: the newest rows (after the
    /// floor, scanned by their keys), then the older ones (through the trigram index), each
    /// built for the hits still wanted; the older only when the session has any.
    fn passes(&self, searched: Searched, needles: &[&str]) -> Vec<Box<dyn Fn(usize) -> Query>> {
        let keys: Vec<String> = needles.iter().map(|needle| search_key(needle)).collect();
        let floor = self.last_seq.saturating_sub(RECENT_MESSAGES);
        let id = self.id;
        let mut spans = vec![Span::Recent(floor)];
        if floor > 0 {
            spans.push(Span::Older(floor));
        }
        spans
            .into_iter()
            .map(|span| {
                let keys = keys.clone();
                Box::new(move |rest| searched_query(searched, id, &keys, rest, span))
                    as Box<dyn Fn(usize) -> Query>
            })
            .collect()
    }

    /// The entries `query` selects (seq and body).
    fn entries(&mut self, query: &Query) -> Result<Vec<Entry>> {
        let name = self.name;
        let what = || format!("session {name:?}: searching its history");
        let rows = query.run(self.tx, &what)?;
        let target = self.tx.target;
        rows.iter()
            .map(|row| {
                let seq = unsigned(get(row, 0, target)?);
                let body: &str = get(row, 1, target)?;
                entry_from_parts(name, seq, body, 0)
            })
            .collect()
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
        let mut found = Vec::new();
        for query in self.passes(Searched::Messages, needles) {
            let rest = wanted.saturating_sub(found.len());
            if rest == 0 {
                break;
            }
            found.extend(self.entries(&query(rest))?);
        }
        Ok(found)
    }

    fn matching_offloads(&mut self, needles: &[&str], wanted: usize) -> Result<Vec<OffloadFound>> {
        let name = self.name;
        let what = || format!("session {name:?}: searching its offloaded outputs");
        let mut found = Vec::new();
        for query in self.passes(Searched::Offloads, needles) {
            let rest = wanted.saturating_sub(found.len());
            if rest == 0 {
                break;
            }
            let rows = query(rest).run(self.tx, &what)?;
            let target = self.tx.target;
            for row in &rows {
                let seq = unsigned(get(row, 0, target)?);
                let body: &str = get(row, 1, target)?;
                let path: String = get(row, 2, target)?;
                let text: Option<String> = get(row, 3, target)?;
                found.push((
                    entry_from_parts(name, seq, body, 0)?,
                    from_column(path),
                    from_column(text.unwrap_or_default()),
                ));
            }
        }
        Ok(found)
    }

    fn call_candidates(
        &mut self,
        results: &[(u64, String)],
        count: u64,
    ) -> Result<Vec<(u64, u64, String)>> {
        let name = self.name;
        let what = || format!("session {name:?}: finding the calls of tool results");
        let seqs: Vec<i64> = results.iter().map(|(seq, _)| big(*seq)).collect();
        let quoted: Vec<&str> = results.iter().map(|(_, id)| id.as_str()).collect();
        let count = big(count);
        // For each result, its candidates among the assistant messages before it (the
        // partial index messages_assistant), in one statement.
        let rows = self.tx.query_typed(
            "SELECT r.seq, a.seq, a.body FROM unnest($2::bigint[], $3::text[]) \
             WITH ORDINALITY AS r (seq, quoted, place) CROSS JOIN LATERAL \
             (SELECT seq, body FROM (SELECT seq, body FROM messages WHERE session_id = $1 \
             AND seq < r.seq AND role = 'assistant' ORDER BY seq DESC LIMIT $4) AS recent \
             WHERE strpos(body, r.quoted) > 0) AS a ORDER BY r.place, a.seq DESC",
            &[
                (&self.id, Type::INT8),
                (&seqs, Type::INT8_ARRAY),
                (&quoted, Type::TEXT_ARRAY),
                (&count, Type::INT8),
            ],
            &what,
        )?;
        let target = self.tx.target;
        rows.iter()
            .map(|row| {
                Ok((
                    unsigned(get(row, 0, target)?),
                    unsigned(get(row, 1, target)?),
                    get(row, 2, target)?,
                ))
            })
            .collect()
    }
}

/// Which of a session's messages a pass looks at: the ones after seq `floor` (the newest, by
/// their keys), or the ones up to it (the older, through the index).
#[derive(Debug, Clone, Copy)]
pub(super) enum Span {
    /// The messages after this seq: scanned newest first by their keys.
    Recent(u64),
    /// The messages up to this seq: found through the trigram index.
    Older(u64),
}

/// A history pass over `span` as one statement: the session's messages whose key holds every
/// one of `keys` (the needles' search keys), newest first, at most `wanted` ([`SessionRows`]
/// runs it, [`crate::store::PostgresStore::explain_history_search`] shows its plan).
pub(super) fn matching_query(id: i64, keys: &[String], wanted: usize, span: Span) -> Query {
    searched_query(Searched::Messages, id, keys, wanted, span)
}

/// What a pass looks in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Searched {
    /// The messages' keys; rows are (seq, body).
    Messages,
    /// The offloaded outputs' keys (`offloads.search_text`); rows are (seq, the reference's
    /// body, the output's path, its text as stored).
    Offloads,
}

/// A pass over `span` of what `searched` names, as one statement (see [`matching_query`]).
pub(super) fn searched_query(
    searched: Searched,
    id: i64,
    keys: &[String],
    wanted: usize,
    span: Span,
) -> Query {
    let (select, table) = match searched {
        Searched::Messages => ("SELECT seq, body FROM messages WHERE session_id = ", ""),
        Searched::Offloads => (
            "SELECT o.seq, m.body, o.relative_path, o.content FROM offloads o \
             JOIN messages m ON m.session_id = o.session_id AND m.seq = o.seq \
             WHERE o.session_id = ",
            "o.",
        ),
    };
    let mut query = Query::new(select);
    let id = query.bind(id, Type::INT8);
    query.push(&id);
    let (floor, recent) = match span {
        Span::Recent(floor) => (floor, true),
        Span::Older(floor) => (floor, false),
    };
    let floor = query.bind(big(floor), Type::INT8);
    query.push(&format!(
        " AND {table}seq {} {floor}",
        if recent { ">" } else { "<=" }
    ));
    for key in keys {
        if recent {
            let key = query.bind(key.clone(), Type::TEXT);
            query.push(&format!(" AND strpos({table}search_text, {key}) > 0"));
        } else {
            let pattern = query.bind(like_pattern(key), Type::TEXT);
            query.push(&format!(" AND {table}search_text LIKE {pattern}"));
        }
    }
    let wanted = query.bind(i64::try_from(wanted).unwrap_or(i64::MAX), Type::INT8);
    query.push(&format!(" ORDER BY {table}seq DESC LIMIT {wanted}"));
    query
}
