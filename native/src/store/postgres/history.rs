//! [`HistoryStore`] for [`PostgresStore`]: the history tools' search and reads of a session's
//! complete log, assembled by the rules both backends share ([`crate::store::assembly`]) from
//! the reads of [`super::reads`]. A read runs in one read-only snapshot, so a concurrent append
//! never shows half a result. A search runs each statement alone (no `BEGIN`, no `COMMIT`:
//! a frequent word's search is two round trips, its pass and the calls of the tool results it
//! found), the first reading the session's row with its hits and the others bounded by the
//! log's end it read, which is the same snapshot of a log that is only appended to; in a
//! transaction when the store's schema must be set first.

use ctxkit_core::recall::{ReadRequest, SearchOutcome, SearchRequest};

use crate::error::Result;
use crate::store::assembly::{read_history, search_history};
use crate::store::postgres::queries::session_row;
use crate::store::postgres::query::Link;
use crate::store::postgres::reads::{SearchRows, SessionRows};
use crate::store::postgres::PostgresStore;
use crate::store::{HistoryRead, HistoryStore};

impl HistoryStore for PostgresStore {
    fn search_history(&self, name: &str, request: &SearchRequest) -> Result<SearchOutcome> {
        let target = self.pool.target.as_str();
        let alone = self.without_transaction(|client| {
            let link = Link::Alone { client, target };
            search_history(&mut SearchRows::new(link, name, None), request)
        });
        if let Some(outcome) = alone {
            return outcome;
        }
        let what = || format!("session {name:?}: searching its history");
        self.read(&what, |tx| {
            search_history(&mut SearchRows::new(Link::Tx(tx), name, None), request)
        })
    }

    fn read_history(&self, name: &str, request: &ReadRequest) -> Result<HistoryRead> {
        let what = || format!("session {name:?}: reading its history");
        self.read(&what, |tx| {
            let row = session_row(tx, name, false)?;
            read_history(&mut SessionRows::new(tx, name, row), request, row.1)
        })
    }
}
