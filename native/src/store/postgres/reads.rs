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
//! row) are searched the same way, over the same spans of seqs. A pass's first statement
//! ([`pass_query`]) reads the newest messages and all the offloaded outputs' hits at once (the
//! older outputs only when the newest held too few: a one-time filter on their count), so a
//! pass is one round trip unless the newest messages hold too few; the older messages'
//! statement is sent only then (planning it costs as much as the newest scan of a frequent
//! word). Every needle is bound as a parameter; no character of it is syntax.

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
}

impl SessionRows<'_, '_> {
    /// Runs a part of a pass ([`pass_query`]), adding the messages and the offloaded outputs
    /// it found, in its order, to `messages` and `offloads`.
    fn read_pass(
        &mut self,
        query: &Query,
        messages: &mut Vec<Entry>,
        offloads: &mut Vec<OffloadFound>,
    ) -> Result<()> {
        let name = self.name;
        let what = || format!("session {name:?}: searching its history");
        let rows = query.run(self.tx, &what)?;
        let target = self.tx.target;
        for row in &rows {
            let seq = unsigned(get(row, 1, target)?);
            let entry = entry_from_parts(name, seq, get(row, 2, target)?, 0)?;
            if get::<bool>(row, 0, target)? {
                let path: String = get(row, 3, target)?;
                let text: Option<String> = get(row, 4, target)?;
                let text = from_column(text.unwrap_or_default());
                offloads.push((entry, from_column(path), text));
            } else {
                messages.push(entry);
            }
        }
        Ok(())
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

    fn matching(
        &mut self,
        needles: &[&str],
        wanted: usize,
    ) -> Result<(Vec<Entry>, Vec<OffloadFound>)> {
        let keys: Vec<String> = needles.iter().map(|needle| search_key(needle)).collect();
        let floor = self.last_seq.saturating_sub(RECENT_MESSAGES);
        let (mut messages, mut offloads) = (Vec::new(), Vec::new());
        let query = pass_query(self.id, &keys, wanted, floor, Part::Newest);
        self.read_pass(&query, &mut messages, &mut offloads)?;
        // The offloaded outputs' newest hits first, then the older ones: every newest hit is
        // above the floor, every older one at or below it.
        offloads.sort_by_key(|(entry, _, _)| std::cmp::Reverse(entry.seq));
        offloads.truncate(wanted);
        let rest = wanted.saturating_sub(messages.len());
        if rest > 0 && floor > 0 {
            let query = pass_query(self.id, &keys, rest, floor, Part::OlderMessages);
            self.read_pass(&query, &mut messages, &mut offloads)?;
        }
        // Newest first: the hits after the floor, then the older ones.
        messages.sort_by_key(|entry| std::cmp::Reverse(entry.seq));
        Ok((messages, offloads))
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

/// The statements of a history pass ([`pass_query`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Part {
    /// The newest messages (after the floor) and every offloaded output: the pass's first
    /// statement.
    Newest,
    /// The older messages (at or below the floor), through the trigram index: run only when
    /// the newest held too few.
    OlderMessages,
}

/// A statement of a history pass, for the session whose row id is `id`: with
/// [`Part::Newest`], the messages after seq `floor` whose key holds every one of `keys` (the
/// needles' search keys), scanned newest first by their keys, at most `wanted`, and the
/// offloaded outputs whose key does, the same way after the floor and, when those were fewer
/// than `wanted` (a one-time filter on their count), at or below it through the trigram index
/// (the caller keeps the first `wanted`); with [`Part::OlderMessages`], the messages at or below
/// the floor, through the trigram index, newest first, at most `wanted`. Rows are (whether it
/// is an offloaded output, seq, the message's body, the output's path, its text as stored).
/// A session with no message below the floor (`floor` 0) has no older part. [`SessionRows`]
/// runs it, [`crate::store::PostgresStore::explain_history_search`] shows its plan.
pub(super) fn pass_query(id: i64, keys: &[String], wanted: usize, floor: u64, part: Part) -> Query {
    let mut query = Query::new("");
    // $1, $2 and $3.
    query.bind(id, Type::INT8);
    query.bind(big(floor), Type::INT8);
    query.bind(i64::try_from(wanted).unwrap_or(i64::MAX), Type::INT8);
    let (mut recent, mut older) = (Vec::new(), Vec::new());
    for key in keys {
        match part {
            Part::Newest => recent.push(query.bind(key.clone(), Type::TEXT)),
            Part::OlderMessages => {}
        }
        if floor > 0 || part == Part::OlderMessages {
            older.push(query.bind(like_pattern(key), Type::TEXT));
        }
    }
    let holds = |column: &str, recent_span: bool| -> String {
        let placeholders = if recent_span { &recent } else { &older };
        placeholders
            .iter()
            .map(|p| match recent_span {
                true => format!(" AND strpos({column}, {p}) > 0"),
                false => format!(" AND {column} LIKE {p}"),
            })
            .collect()
    };
    if part == Part::OlderMessages {
        query.push(&format!(
            "SELECT false, seq, body, NULL::text, NULL::text FROM messages \
             WHERE session_id = $1 AND seq <= $2{} ORDER BY seq DESC LIMIT $3",
            holds("search_text", false)
        ));
        return query;
    }
    let offloads = |span: &str, recent_span: bool| {
        format!(
            "SELECT o.seq, m.body, o.relative_path, o.content FROM offloads o \
             JOIN messages m ON m.session_id = o.session_id AND m.seq = o.seq \
             WHERE o.session_id = $1 AND o.seq {span} $2{} ",
            holds("o.search_text", recent_span)
        )
    };
    query.push(&format!(
        "WITH recent_offloads AS ({}ORDER BY o.seq DESC LIMIT $3) \
         (SELECT false, seq, body, NULL::text, NULL::text FROM messages \
         WHERE session_id = $1 AND seq > $2{} ORDER BY seq DESC LIMIT $3) \
         UNION ALL SELECT true, seq, body, relative_path, content FROM recent_offloads",
        offloads(">", true),
        holds("search_text", true),
    ));
    if floor > 0 {
        query.push(&format!(
            " UNION ALL (SELECT true, seq, body, relative_path, content FROM ({}\
             AND (SELECT count(*) FROM recent_offloads) < $3 ORDER BY o.seq DESC LIMIT $3) older)",
            offloads("<=", false),
        ));
    }
    query
}
