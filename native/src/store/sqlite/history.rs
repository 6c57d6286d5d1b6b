//! [`HistoryStore`] for [`SqliteStore`], over `message_texts`, one row per message (its id the
//! message's `messages.id`) holding the core's searchable text ([`super::search_index`] writes
//! it). It was a trigram FTS5 table (`messages_fts`) until migration 10: the search below never
//! used its `MATCH`, so its index, most of the database, went.
//!
//! A search is the core's two passes, each one statement returning at most `limit + 1` rows,
//! newest first, then handed to [`SearchOutcome::from_passes`]: the exact pass requires the
//! whole query, the every-word pass each distinct word. Both scan the session's own messages
//! only (the `messages` key, session then seq, newest first), checking each message's indexed
//! text with `ctxkit_contains` ([`super::search_index::register_search_function`]: the core's
//! [`ctxkit_core::recall::contains_folded`],
//! the same case fold as the in-memory search, linear in the text). Why not the index's
//! `MATCH`: FTS5 matches a phrase across every session's rows at once, and a phrase of
//! repeated trigrams against another session's long run of one character cost seconds and
//! gigabytes (a 1,000-byte query against 1 MB of `a` elsewhere: 6.6 s, 0.99 GB); a search
//! now costs what the session itself holds, whatever the others hold. Every needle is a bound
//! parameter; the SQL holds only placeholders. Reads run in one read transaction, so a
//! concurrent append never shows half a result.

use ctxkit_core::recall::{ReadRequest, SearchOutcome, SearchRequest};

use crate::error::{Context, Result};
use crate::store::assembly::{read_history, search_history};
use crate::store::sqlite::queries::session_row;
use crate::store::sqlite::reads::SessionRows;
use crate::store::sqlite::SqliteStore;
use crate::store::{HistoryRead, HistoryStore};

impl HistoryStore for SqliteStore {
    fn search_history(&self, name: &str, request: &SearchRequest) -> Result<SearchOutcome> {
        let what = || format!("session {name:?}: searching its history");
        let read = self.connection.unchecked_transaction().context(what)?;
        let (id, _) = session_row(&read, name)?;
        search_history(&mut SessionRows::new(&read, name, id), request)
    }

    fn read_history(&self, name: &str, request: &ReadRequest) -> Result<HistoryRead> {
        let what = || format!("session {name:?}: reading its history");
        let read = self.connection.unchecked_transaction().context(what)?;
        let (id, last_seq) = session_row(&read, name)?;
        read_history(&mut SessionRows::new(&read, name, id), request, last_seq)
    }
}
