//! [`HistoryStore`] for [`SqliteStore`], over the index `messages_fts`, a trigram FTS5 table
//! with one row per message (its rowid the message's `messages.id`) holding the core's
//! searchable text ([`super::search_index`] writes it).
//!
//! A search is the core's two passes, each one statement returning at most `limit + 1` rows,
//! newest first, then handed to [`SearchOutcome::from_passes`]: the exact pass requires the
//! whole query, the every-word pass each distinct word. Both scan the session's own messages
//! only (the `messages` key, session then seq, newest first), checking each message's indexed
//! text with `ctxkit_contains` ([`register_search_function`]: the core's [`contains_folded`],
//! the same case fold as the in-memory search, linear in the text). Why not the index's
//! `MATCH`: FTS5 matches a phrase across every session's rows at once, and a phrase of
//! repeated trigrams against another session's long run of one character cost seconds and
//! gigabytes (a 1,000-byte query against 1 MB of `a` elsewhere: 6.6 s, 0.99 GB); a search
//! now costs what the session itself holds, whatever the others hold. Every needle is a bound
//! parameter; the SQL holds only placeholders. Reads run in one read transaction, so a
//! concurrent append never shows half a result.

use ctxkit_core::model::Entry;
use ctxkit_core::recall::{
    contains_folded, fold_for_search, read_entries, HistoryHit, HistoryMessage, ReadRequest,
    SearchOutcome, SearchRequest,
};
use ctxkit_core::{Message, Role};
use rusqlite::types::Value;
use rusqlite::{params, params_from_iter, Connection};

use crate::error::{Context, Result};
use crate::store::columns::entry_from_parts;
use crate::store::sqlite::queries::session_row;
use crate::store::sqlite::SqliteStore;
use crate::store::{HistoryRead, HistoryStore};
use rusqlite::functions::FunctionFlags;

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

/// The session's messages (at most `wanted`, newest first) whose indexed text holds every one
/// of `needles` under the search's case fold.
fn matching(
    connection: &Connection,
    name: &str,
    id: i64,
    needles: &[&str],
    wanted: usize,
) -> Result<Vec<Entry>> {
    let mut values: Vec<Value> = vec![id.into(), i64::try_from(wanted).unwrap_or(i64::MAX).into()];
    let mut sql = "SELECT m.seq, m.body FROM messages m JOIN messages_fts f ON f.rowid = m.id \
                   WHERE m.session_id = ?1"
        .to_owned();
    for needle in needles {
        values.push(fold_for_search(needle).into());
        sql.push_str(&format!(" AND ctxkit_contains(f.text, ?{})", values.len()));
    }
    sql.push_str(" ORDER BY m.seq DESC LIMIT ?2");
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

/// Registers `ctxkit_contains(text, folded_needle)` on `connection`: 1 when `text` holds the
/// needle (folded by [`fold_for_search`]) under the core's case fold ([`contains_folded`]),
/// else 0; NULL text is 0. Deterministic and pure, so SQLite may use it anywhere.
pub(crate) fn register_search_function(connection: &Connection) -> rusqlite::Result<()> {
    connection.create_scalar_function(
        "ctxkit_contains",
        2,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |context| {
            let text: Option<String> = context.get(0)?;
            let needle: String = context.get(1)?;
            Ok(text.is_some_and(|text| contains_folded(&text, &needle)))
        },
    )
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
