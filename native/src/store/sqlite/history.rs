//! [`HistoryStore`] for [`SqliteStore`], over the index `messages_fts`, a trigram FTS5 table
//! with one row per message (its rowid the message's `messages.id`) holding the core's
//! searchable text ([`super::search_index`] writes it).
//!
//! A search is the core's two passes, each one statement returning at most `limit + 1` rows,
//! newest first, then handed to [`SearchOutcome::from_passes`]: the exact pass requires the
//! whole query, the every-word pass each distinct word. A needle of at least
//! [`MIN_TRIGRAM_CHARS`] characters is an FTS5 string ([`fts5_string`]: the trigram tokenizer
//! makes it a case-insensitive substring match, and no character of it is syntax); a shorter
//! one is a `LIKE` pattern ([`like_pattern`]), checked on the indexed text of the session's
//! messages only. Every needle is a bound parameter; the SQL holds only placeholders.
//!
//! "Newest first" is rowid order: within a session, messages are inserted in seq order and
//! never deleted, so a later seq has a larger rowid, and FTS5 walks its matches in descending
//! rowid order without sorting them. Reads run in one read transaction, so a concurrent append
//! never shows half a result.

use ctxkit_core::model::Entry;
use ctxkit_core::recall::{
    read_entries, HistoryHit, HistoryMessage, ReadRequest, SearchOutcome, SearchRequest,
};
use ctxkit_core::{Message, Role};
use rusqlite::types::Value;
use rusqlite::{params, params_from_iter, Connection};

use crate::error::{Context, Result};
use crate::store::columns::entry_from_parts;
use crate::store::fts_query::{fts5_string, like_pattern, MIN_TRIGRAM_CHARS};
use crate::store::sqlite::queries::session_row;
use crate::store::sqlite::SqliteStore;
use crate::store::{HistoryRead, HistoryStore};

/// How many assistant messages before a tool result are read to find the call it answers.
const CALL_LOOKBACK_MESSAGES: i64 = 64;

impl HistoryStore for SqliteStore {
    fn search_history(&self, name: &str, request: &SearchRequest) -> Result<SearchOutcome> {
        let what = || format!("session {name:?}: searching its history");
        let read = self.connection.unchecked_transaction().context(what)?;
        let (id, _) = session_row(&read, name)?;
        let wanted = request.limit.saturating_add(1);
        let exact = matching(&read, name, id, &[request.query.as_str()], wanted)?;
        let words = if exact.len() < wanted && request.has_word_pass() {
            let terms: Vec<&str> = request.terms.iter().map(String::as_str).collect();
            matching(&read, name, id, &terms, wanted.saturating_add(exact.len()))?
        } else {
            Vec::new()
        };
        let hits = |entries: Vec<Entry>, exact: bool| -> Result<Vec<HistoryHit>> {
            entries
                .into_iter()
                .map(|entry| {
                    Ok(HistoryHit {
                        item: with_tool_name(&read, name, id, entry)?,
                        exact,
                    })
                })
                .collect()
        };
        let exact = hits(exact, true)?;
        let words = hits(words, false)?;
        Ok(SearchOutcome::from_passes(request, exact, words))
    }

    fn read_history(&self, name: &str, request: &ReadRequest) -> Result<HistoryRead> {
        let what = || format!("session {name:?}: reading its history");
        let read = self.connection.unchecked_transaction().context(what)?;
        let (id, last_seq) = session_row(&read, name)?;
        let entries = entries_between(&read, name, id, request.from, request.to)?;
        let mut messages = read_entries(&entries, request);
        for item in &mut messages {
            if item.tool_name.is_none() {
                item.tool_name = calling_tool(&read, name, id, item.seq, &item.message)?;
            }
        }
        Ok(HistoryRead { messages, last_seq })
    }
}

/// The session's messages holding every one of `needles`, newest first, at most `wanted`.
fn matching(
    connection: &Connection,
    name: &str,
    id: i64,
    needles: &[&str],
    wanted: usize,
) -> Result<Vec<Entry>> {
    let (long, short): (Vec<&str>, Vec<&str>) = needles
        .iter()
        .partition(|needle| needle.chars().count() >= MIN_TRIGRAM_CHARS);
    let mut values: Vec<Value> = vec![id.into(), i64::try_from(wanted).unwrap_or(i64::MAX).into()];
    let mut sql = if long.is_empty() {
        // No needle the index can look up: walk the session's messages, newest first.
        "SELECT m.seq, m.body FROM messages m JOIN messages_fts f ON f.rowid = m.id \
         WHERE m.session_id = ?1"
            .to_owned()
    } else {
        let expression: Vec<String> = long.iter().map(|needle| fts5_string(needle)).collect();
        values.push(expression.join(" ").into());
        "SELECT m.seq, m.body FROM messages_fts f JOIN messages m ON m.id = f.rowid \
         WHERE messages_fts MATCH ?3 AND m.session_id = ?1"
            .to_owned()
    };
    for needle in short {
        values.push(like_pattern(needle).into());
        sql.push_str(&format!(" AND f.text LIKE ?{} ESCAPE '\\'", values.len()));
    }
    sql.push_str(if long.is_empty() {
        " ORDER BY m.seq DESC LIMIT ?2"
    } else {
        " ORDER BY f.rowid DESC LIMIT ?2"
    });
    let what = || format!("session {name:?}: searching its history");
    let rows: Vec<(u64, String)> = connection
        .prepare_cached(&sql)
        .and_then(|mut statement| {
            statement
                .query_map(params_from_iter(values), |row| {
                    Ok((row.get(0)?, row.get(1)?))
                })?
                .collect()
        })
        .context(what)?;
    rows.into_iter()
        .map(|(seq, body)| entry_from_parts(name, seq, &body, 0))
        .collect()
}

/// The session's entries with `from <= seq <= to`, in order.
fn entries_between(
    connection: &Connection,
    name: &str,
    id: i64,
    from: u64,
    to: u64,
) -> Result<Vec<Entry>> {
    let rows: Vec<(u64, String, u64)> = connection
        .prepare_cached(
            "SELECT seq, body, tokens FROM messages WHERE session_id = ?1 AND seq >= ?2 \
             AND seq <= ?3 ORDER BY seq",
        )
        .and_then(|mut statement| {
            statement
                .query_map(params![id, from, to], |row| {
                    Ok((row.get(0)?, row.get(1)?, row.get(2)?))
                })?
                .collect()
        })
        .context(|| format!("session {name:?}: reading seq {from} to {to}"))?;
    rows.into_iter()
        .map(|(seq, body, tokens)| entry_from_parts(name, seq, &body, tokens))
        .collect()
}

/// `entry` as the history tools show it, its tool's name looked up.
fn with_tool_name(
    connection: &Connection,
    name: &str,
    id: i64,
    entry: Entry,
) -> Result<HistoryMessage> {
    let tool_name = match entry.message.name.as_deref().filter(|n| !n.is_empty()) {
        Some(own) => Some(own.to_owned()),
        None => calling_tool(connection, name, id, entry.seq, &entry.message)?,
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
    connection: &Connection,
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
    let mut statement = connection
        .prepare_cached(
            "SELECT seq, body FROM messages WHERE session_id = ?1 AND seq < ?2 \
             AND role = 'assistant' ORDER BY seq DESC LIMIT ?3",
        )
        .context(what)?;
    let mut rows = statement
        .query(params![id, seq, CALL_LOOKBACK_MESSAGES])
        .context(what)?;
    // Newest first, stopping at the call: usually the first row.
    while let Some(row) = rows.next().context(what)? {
        let call_seq: u64 = row.get(0).context(what)?;
        let body = row
            .get_ref(1)
            .and_then(|value| value.as_str().map_err(Into::into))
            .context(what)?;
        let entry = entry_from_parts(name, call_seq, body, 0)?;
        if let Some(call) = entry.message.tool_calls.iter().find(|c| c.id == call_id) {
            return Ok(Some(call.name.clone()));
        }
    }
    Ok(None)
}
