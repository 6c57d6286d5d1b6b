//! [`HistoryStore`] for [`PostgresStore`]: the history tools' search and reads of a session's
//! complete log, over each message's `search_text` (the core's
//! [`ctxkit_core::recall::searchable_text`], written by the append in its transaction, so a
//! committed message is always findable) under a trigram GIN index.
//!
//! A search is the core's two passes, as in SQLite (`sqlite_history`): each one statement
//! returning at most `limit + 1` rows, newest first (by seq), handed to
//! [`SearchOutcome::from_passes`]. Every needle is a case-insensitive substring (`ILIKE`, the
//! needle escaped by [`like_pattern`] and bound as a parameter): no character of it is syntax,
//! and CJK substrings are found. Reads run in one snapshot, so a concurrent append never shows
//! half a result.

use ctxkit_core::model::Entry;
use ctxkit_core::recall::{
    read_entries, HistoryHit, HistoryMessage, ReadRequest, SearchOutcome, SearchRequest,
};
use ctxkit_core::{Message, Role};

use crate::error::Result;
use crate::store::columns::entry_from_parts;
use crate::store::fts_query::like_pattern;
use crate::store::postgres::queries::{entries_between, session_row};
use crate::store::postgres::{big, get, unsigned, without_nul, PostgresStore, Tx};
use crate::store::{HistoryRead, HistoryStore};

/// How many assistant messages before a tool result are read to find the call it answers.
const CALL_LOOKBACK_MESSAGES: i64 = 64;

impl HistoryStore for PostgresStore {
    fn search_history(&self, name: &str, request: &SearchRequest) -> Result<SearchOutcome> {
        let what = || format!("session {name:?}: searching its history");
        self.read(&what, |tx| {
            let (id, _) = session_row(tx, name, false)?;
            let wanted = request.limit.saturating_add(1);
            let exact = matching(tx, name, id, &[request.query.as_str()], wanted)?;
            let words = if exact.len() < wanted && request.has_word_pass() {
                let terms: Vec<&str> = request.terms.iter().map(String::as_str).collect();
                matching(tx, name, id, &terms, wanted.saturating_add(exact.len()))?
            } else {
                Vec::new()
            };
            let mut hits = |entries: Vec<Entry>, exact: bool| -> Result<Vec<HistoryHit>> {
                entries
                    .into_iter()
                    .map(|entry| {
                        Ok(HistoryHit {
                            item: with_tool_name(tx, name, id, entry)?,
                            exact,
                        })
                    })
                    .collect()
            };
            let exact = hits(exact, true)?;
            let words = hits(words, false)?;
            Ok(SearchOutcome::from_passes(request, exact, words))
        })
    }

    fn read_history(&self, name: &str, request: &ReadRequest) -> Result<HistoryRead> {
        let what = || format!("session {name:?}: reading its history");
        self.read(&what, |tx| {
            let (id, last_seq) = session_row(tx, name, false)?;
            let entries = entries_between(tx, name, id, request.from, request.to)?;
            let mut messages = read_entries(&entries, request);
            for item in &mut messages {
                if item.tool_name.is_none() {
                    item.tool_name = calling_tool(tx, name, id, item.seq, &item.message)?;
                }
            }
            Ok(HistoryRead { messages, last_seq })
        })
    }
}

/// The session's messages holding every one of `needles`, newest first, at most `wanted`.
fn matching(
    tx: &mut Tx<'_>,
    name: &str,
    id: i64,
    needles: &[&str],
    wanted: usize,
) -> Result<Vec<Entry>> {
    let patterns: Vec<String> = needles
        .iter()
        .map(|needle| like_pattern(&without_nul(needle)))
        .collect();
    let wanted = i64::try_from(wanted).unwrap_or(i64::MAX);
    // One placeholder per needle; the SQL holds only placeholders.
    let mut sql =
        "SELECT seq, body FROM messages WHERE session_id = $1 AND search_text <> ''".to_owned();
    for index in 0..patterns.len() {
        sql.push_str(&format!(" AND search_text ILIKE ${}", index + 3));
    }
    sql.push_str(" ORDER BY seq DESC LIMIT $2");
    let mut params: Vec<&(dyn postgres::types::ToSql + Sync)> = vec![&id, &wanted];
    params.extend(
        patterns
            .iter()
            .map(|p| p as &(dyn postgres::types::ToSql + Sync)),
    );
    let what = || format!("session {name:?}: searching its history");
    let rows = tx.query_planned(&sql, &params, &what)?;
    let target = tx.target;
    rows.iter()
        .map(|row| {
            let seq = unsigned(get(row, 0, target)?);
            let body: &str = get(row, 1, target)?;
            entry_from_parts(name, seq, body, 0)
        })
        .collect()
}

/// `entry` as the history tools show it, its tool's name looked up.
fn with_tool_name(tx: &mut Tx<'_>, name: &str, id: i64, entry: Entry) -> Result<HistoryMessage> {
    let tool_name = match entry.message.name.as_deref().filter(|n| !n.is_empty()) {
        Some(own) => Some(own.to_owned()),
        None => calling_tool(tx, name, id, entry.seq, &entry.message)?,
    };
    Ok(HistoryMessage {
        seq: entry.seq,
        message: entry.message,
        tool_name,
    })
}

/// For a tool result without a name: the name of the call it answers, among the last
/// [`CALL_LOOKBACK_MESSAGES`] assistant messages before it.
fn calling_tool(
    tx: &mut Tx<'_>,
    name: &str,
    id: i64,
    seq: u64,
    message: &Message,
) -> Result<Option<String>> {
    let Some(call_id) = message.tool_call_id.as_deref() else {
        return Ok(None);
    };
    if message.role != Role::Tool {
        return Ok(None);
    }
    let what = || format!("session {name:?}: finding the call of seq {seq}");
    let rows = tx.query(
        "SELECT seq, body FROM messages WHERE session_id = $1 AND seq < $2 \
         AND role = 'assistant' ORDER BY seq DESC LIMIT $3",
        &[&id, &big(seq), &CALL_LOOKBACK_MESSAGES],
        &what,
    )?;
    let target = tx.target;
    for row in &rows {
        let call_seq = unsigned(get(row, 0, target)?);
        let body: &str = get(row, 1, target)?;
        let entry = entry_from_parts(name, call_seq, body, 0)?;
        if let Some(call) = entry.message.tool_calls.iter().find(|c| c.id == call_id) {
            return Ok(Some(call.name.clone()));
        }
    }
    Ok(None)
}
