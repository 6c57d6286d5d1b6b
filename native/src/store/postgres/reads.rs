//! [`SessionReads`] for PostgreSQL: one session's reads inside one transaction (a read-only
//! snapshot), for the shared assembly of [`crate::store::assembly`]; a history search's reads
//! ([`SearchRows`]), in a transaction or each statement alone, bounded by the log's end its
//! first statement read; and the statements only they use: the history search's passes over each message's search key (`search_text`, see
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
//! pass is one round trip unless the newest messages hold too few (a search's first pass also
//! reads the session's row in it); the older messages' statement is sent only then (planning it costs as much as the newest scan of a frequent
//! word). Every needle is bound as a parameter; no character of it is syntax.

use ctxkit_core::compaction::Checkpoint;
use ctxkit_core::memory::NudgeState;
use ctxkit_core::model::Entry;
use ctxkit_core::tokens::{ModelFamily, UsageAnchor};
use postgres::types::Type;

use crate::error::{Error, Result};
use crate::store::assembly::{OffloadFound, SearchReads, SessionReads};
use crate::store::columns::{entry_from_parts, CHECKPOINT_COLUMNS};
use crate::store::fts_query::like_pattern;
use crate::store::postgres::queries::{
    checkpoint_from_row, entries_between, latest_anchor, latest_checkpoint, session_state,
};
use crate::store::postgres::query::{Link, Query};
use crate::store::postgres::text::{from_column, owned_column, search_key};
use crate::store::postgres::{big, get, unsigned, Tx};
use crate::store::read_count::count_message_rows;

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

impl SessionReads for SessionRows<'_, '_> {
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
}

impl SearchReads for SessionRows<'_, '_> {
    fn name(&self) -> &str {
        self.name
    }

    fn matching(
        &mut self,
        needles: &[&str],
        wanted: usize,
    ) -> Result<(Vec<Entry>, Vec<OffloadFound>)> {
        let session = Some((self.id, self.last_seq));
        SearchRows::new(Link::Tx(self.tx), self.name, session).matching(needles, wanted)
    }

    fn call_candidates(
        &mut self,
        results: &[(u64, String)],
        count: u64,
    ) -> Result<Vec<(u64, u64, String)>> {
        let session = Some((self.id, self.last_seq));
        SearchRows::new(Link::Tx(self.tx), self.name, session).call_candidates(results, count)
    }
}

/// A history search's reads of one session, wherever its statements run ([`Link`]): in a
/// transaction, or each alone. Every statement after the first is bounded by the log's end the
/// first one read (a pass's first statement reads the session's row with its hits when the row
/// is not known yet), and the log is only ever appended to, so they all see one snapshot of it.
pub(super) struct SearchRows<'t, 'a> {
    link: Link<'t, 'a>,
    name: &'t str,
    /// The session's row id and the end of its log as first read; `None` before that.
    session: Option<(i64, u64)>,
}

impl<'t, 'a> SearchRows<'t, 'a> {
    /// The session `name` read through `link`; `session` its row id and log's end when known.
    pub(super) fn new(link: Link<'t, 'a>, name: &'t str, session: Option<(i64, u64)>) -> Self {
        SearchRows {
            link,
            name,
            session,
        }
    }

    /// Runs a part of a pass ([`pass_query`]), adding the messages and the offloaded outputs
    /// it found, in its order, to `messages` and `offloads`; the session's row when the
    /// statement read it.
    fn read_pass(
        &mut self,
        query: &Query,
        messages: &mut Vec<Entry>,
        offloads: &mut Vec<OffloadFound>,
    ) -> Result<Option<(i64, u64)>> {
        let name = self.name;
        let what = || format!("session {name:?}: searching its history");
        let rows = self.link.run(query, &what)?;
        let target = self.link.target();
        let mut session = None;
        for row in &rows {
            let seq = unsigned(get(row, 1, target)?);
            match get::<i32>(row, 0, target)? {
                ROW_SESSION => session = Some((get(row, 5, target)?, seq)),
                ROW_OFFLOAD => {
                    let entry = entry_from_parts(name, seq, get(row, 2, target)?, 0)?;
                    let path: String = get(row, 3, target)?;
                    let text: Option<String> = get(row, 4, target)?;
                    let text = from_column(text.unwrap_or_default());
                    offloads.push((entry, from_column(path), text));
                }
                _ => messages.push(entry_from_parts(name, seq, get(row, 2, target)?, 0)?),
            }
        }
        Ok(session)
    }
}

impl SearchReads for SearchRows<'_, '_> {
    fn name(&self) -> &str {
        self.name
    }

    fn matching(
        &mut self,
        needles: &[&str],
        wanted: usize,
    ) -> Result<(Vec<Entry>, Vec<OffloadFound>)> {
        let keys: Vec<String> = needles.iter().map(|needle| search_key(needle)).collect();
        let (mut messages, mut offloads) = (Vec::new(), Vec::new());
        let of = match self.session {
            Some((id, last_seq)) => Of::Row(id, last_seq),
            None => Of::Name(self.name),
        };
        let query = pass_query(of, &keys, wanted, Part::Newest);
        let read = self.read_pass(&query, &mut messages, &mut offloads)?;
        let (id, last_seq) = match self.session.or(read) {
            Some(session) => session,
            None => return Err(Error::NoSuchSession(self.name.to_owned())),
        };
        self.session = Some((id, last_seq));
        // The offloaded outputs' newest hits first, then the older ones: every newest hit is
        // above the floor, every older one at or below it.
        offloads.sort_by_key(|(entry, _, _)| std::cmp::Reverse(entry.seq));
        offloads.truncate(wanted);
        let rest = wanted.saturating_sub(messages.len());
        if rest > 0 && floor(last_seq) > 0 {
            let query = pass_query(Of::Row(id, last_seq), &keys, rest, Part::OlderMessages);
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
        let Some((id, _)) = self.session else {
            return Err(Error::NoSuchSession(name.to_owned()));
        };
        let seqs: Vec<i64> = results.iter().map(|(seq, _)| big(*seq)).collect();
        let quoted: Vec<String> = results.iter().map(|(_, id)| id.clone()).collect();
        let query = call_candidates_query(id, seqs, quoted, big(count));
        let rows = self.link.run(&query, &what)?;
        count_message_rows(rows.len());
        let target = self.link.target();
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

/// The function that runs a search's first statement ([`pass_query`] of a session by name, one
/// key, the newest part) with its plan kept ([`super::kept`]).
pub(super) const HISTORY_NEWEST: &str = "ctxkit_history_newest";

/// The function that runs [`call_candidates_query`] with its plan kept.
pub(super) const CALL_CANDIDATES: &str = "ctxkit_call_candidates";

/// For each tool result (`seqs`, with its call id as the call quotes it, `quoted`), its
/// candidate calls among the `count` assistant messages of session `id` before it (the partial
/// index `messages_assistant`), in one statement: older than the result, so within the log's
/// end the search read. Rows: (the result's seq, the assistant message's seq, its body).
pub(super) fn call_candidates_query(
    id: i64,
    seqs: Vec<i64>,
    quoted: Vec<String>,
    count: i64,
) -> Query {
    let mut query = Query::new("");
    query.bind(id, Type::INT8);
    query.bind(seqs, Type::INT8_ARRAY);
    query.bind(quoted, Type::TEXT_ARRAY);
    query.bind(count, Type::INT8);
    query.push(
        "SELECT r.seq, a.seq, a.body FROM unnest($2::bigint[], $3::text[]) \
         WITH ORDINALITY AS r (seq, quoted, place) CROSS JOIN LATERAL \
         (SELECT seq, body FROM (SELECT seq, body FROM messages WHERE session_id = $1 \
         AND seq < r.seq AND role = 'assistant' ORDER BY seq DESC LIMIT $4) AS recent \
         WHERE strpos(body, r.quoted) > 0) AS a ORDER BY r.place, a.seq DESC",
    );
    query.kept_in(CALL_CANDIDATES)
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

/// Which session a pass's statement reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Of<'n> {
    /// The session named so: the statement reads its row itself (in the same snapshot as its
    /// hits) and returns it as a row of its own.
    Name(&'n str),
    /// The session whose row id and log's end were read before: the statement reads no
    /// message past that end.
    Row(i64, u64),
}

/// Kinds of the rows a pass's statement returns (its first column).
const ROW_SESSION: i32 = 0;
/// A message the pass found.
const ROW_MESSAGE: i32 = 1;
/// An offloaded output the pass found.
const ROW_OFFLOAD: i32 = 2;

/// Where a pass's newest part ends below: the seq before a log's [`RECENT_MESSAGES`] newest.
pub(super) fn floor(last_seq: u64) -> u64 {
    last_seq.saturating_sub(RECENT_MESSAGES)
}

/// A statement of a history pass, for the session `of` (its floor: [`floor`] of its log's
/// end): with [`Part::Newest`], the messages after the floor whose key holds every one of
/// `keys` (the needles' search keys), scanned newest first by their keys, at most `wanted`, and
/// the offloaded outputs whose key does, the same way after the floor and, when those were
/// fewer than `wanted` (a one-time filter on their count), at or below it through the trigram
/// index (the caller keeps the first `wanted`); with [`Part::OlderMessages`], the messages at or
/// below the floor, through the trigram index, newest first, at most `wanted`. Rows are (kind:
/// [`ROW_SESSION`], [`ROW_MESSAGE`] or [`ROW_OFFLOAD`]; seq, or the log's end for the session's
/// row; the message's body; the output's path; its text as stored; the session's row id). With
/// [`Of::Name`] the statement reads the session's row (by an `InitPlan`, so the scans still
/// stop at their first hits) and returns it, none when there is no such session. A session
/// with no message below the floor has no older part. [`SearchRows`] runs it,
/// [`crate::store::PostgresStore::explain_history_search`] shows its plan.
pub(super) fn pass_query(of: Of<'_>, keys: &[String], wanted: usize, part: Part) -> Query {
    let mut query = Query::new("");
    let limit = query.bind(i64::try_from(wanted).unwrap_or(i64::MAX), Type::INT8);
    let bound = bind_session(&mut query, of);
    let mut key_parts = KeyParts::default();
    for key in keys {
        if part == Part::Newest {
            key_parts.recent.push(query.bind(key.clone(), Type::TEXT));
        }
        if bound.older || part == Part::OlderMessages {
            key_parts
                .older
                .push(query.bind(like_pattern(key), Type::TEXT));
        }
    }
    let SessionParts { id, floor_at, .. } = &bound;
    let mut ctes: Vec<String> = bound.session.iter().cloned().collect();
    let mut selects = Vec::new();
    if bound.session.is_some() {
        selects.push(format!(
            "SELECT {ROW_SESSION}, last_seq, NULL::text, NULL::text, NULL::text, id FROM s"
        ));
    }
    if part == Part::OlderMessages {
        selects.push(format!(
            "(SELECT {ROW_MESSAGE}, seq, body, NULL::text, NULL::text, NULL::bigint \
             FROM messages WHERE session_id = {id} AND seq <= {floor_at}{} \
             ORDER BY seq DESC LIMIT {limit})",
            key_parts.holds("search_text", false)
        ));
    } else {
        newest_parts(&bound, &key_parts, &limit, &mut ctes, &mut selects);
    }
    if !ctes.is_empty() {
        query.push(&format!("WITH {} ", ctes.join(", ")));
    }
    query.push(&selects.join(" UNION ALL "));
    // A search's first statement has this one shape: sent through the function that keeps its
    // plan (planning it took longer than running it for a frequent word).
    match (bound.session, keys.len(), part) {
        (Some(_), 1, Part::Newest) => query.kept_in(HISTORY_NEWEST),
        _ => query,
    }
}

/// A session's placeholders and parts in a pass's statement (see [`pass_query`]).
struct SessionParts {
    /// The session's id: a placeholder, or a subquery of the session's row.
    id: String,
    /// Its floor (see [`floor`]).
    floor_at: String,
    /// The log's end, when read before the statement.
    ceiling: Option<String>,
    /// Whether it may have an older part: known now for a row, else a one-time filter.
    older: bool,
    /// The CTE of the session's row, when it is read by name.
    session: Option<String>,
}

/// Binds the session `of` in `query`.
fn bind_session(query: &mut Query, of: Of<'_>) -> SessionParts {
    match of {
        Of::Name(name) => {
            let name = query.bind(owned_column(name), Type::TEXT);
            let recent = query.bind(big(RECENT_MESSAGES), Type::INT8);
            SessionParts {
                id: "(SELECT id FROM s)".to_owned(),
                floor_at: "(SELECT floor FROM s)".to_owned(),
                ceiling: None,
                older: true,
                session: Some(format!(
                    "s AS (SELECT id, last_seq, greatest(last_seq - {recent}, 0) AS floor \
                     FROM sessions WHERE name = {name})"
                )),
            }
        }
        Of::Row(id, last_seq) => SessionParts {
            id: query.bind(id, Type::INT8),
            floor_at: query.bind(big(floor(last_seq)), Type::INT8),
            ceiling: Some(query.bind(big(last_seq), Type::INT8)),
            older: floor(last_seq) > 0,
            session: None,
        },
    }
}

/// The placeholders of a pass's search keys: as substrings for the newest part, as `LIKE`
/// patterns for the older one.
#[derive(Default)]
struct KeyParts {
    recent: Vec<String>,
    older: Vec<String>,
}

impl KeyParts {
    /// The conditions that `column` holds every key, in the newest part's form or the older's.
    fn holds(&self, column: &str, recent_span: bool) -> String {
        let placeholders = if recent_span {
            &self.recent
        } else {
            &self.older
        };
        placeholders
            .iter()
            .map(|p| match recent_span {
                true => format!(" AND strpos({column}, {p}) > 0"),
                false => format!(" AND {column} LIKE {p}"),
            })
            .collect()
    }
}

/// The newest part's CTE and selects (see [`pass_query`]): the messages and offloaded outputs
/// after the floor, and the older outputs when those were fewer than `limit`.
fn newest_parts(
    bound: &SessionParts,
    keys: &KeyParts,
    limit: &str,
    ctes: &mut Vec<String>,
    selects: &mut Vec<String>,
) {
    let SessionParts { id, floor_at, .. } = bound;
    let below = |column: &str| match &bound.ceiling {
        Some(ceiling) => format!(" AND {column} <= {ceiling}"),
        None => String::new(),
    };
    let offloads = |span: String, recent_span: bool| {
        format!(
            "SELECT o.seq, m.body, o.relative_path, o.content FROM offloads o \
             JOIN messages m ON m.session_id = o.session_id AND m.seq = o.seq \
             WHERE o.session_id = {id} AND o.seq {span}{} ",
            keys.holds("o.search_text", recent_span)
        )
    };
    ctes.push(format!(
        "recent_offloads AS ({}ORDER BY o.seq DESC LIMIT {limit})",
        offloads(format!("> {floor_at}{}", below("o.seq")), true)
    ));
    selects.push(format!(
        "(SELECT {ROW_MESSAGE}, seq, body, NULL::text, NULL::text, NULL::bigint \
         FROM messages WHERE session_id = {id} AND seq > {floor_at}{}{} \
         ORDER BY seq DESC LIMIT {limit})",
        below("seq"),
        keys.holds("search_text", true),
    ));
    selects.push(format!(
        "SELECT {ROW_OFFLOAD}, seq, body, relative_path, content, NULL::bigint \
         FROM recent_offloads"
    ));
    if bound.older {
        // With the session read by name, whether it has an older part is a one-time filter too.
        let gate = match bound.session {
            Some(_) => format!("AND {floor_at} > 0 "),
            None => String::new(),
        };
        selects.push(format!(
            "(SELECT {ROW_OFFLOAD}, seq, body, relative_path, content, NULL::bigint \
             FROM ({}AND (SELECT count(*) FROM recent_offloads) < {limit} {gate}\
             ORDER BY o.seq DESC LIMIT {limit}) older)",
            offloads(format!("<= {floor_at}"), false),
        ));
    }
}
