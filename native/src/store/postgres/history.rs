//! [`HistoryStore`] for [`PostgresStore`]: the history tools' search and reads of a session's
//! complete log, assembled by the rules both backends share ([`crate::store::assembly`]) from
//! the reads of [`super::reads`], in one read-only snapshot, so a concurrent append never
//! shows half a result.

use ctxkit_core::recall::{ReadRequest, SearchOutcome, SearchRequest};

use crate::error::Result;
use crate::store::assembly::{read_history, search_history};
use crate::store::postgres::queries::session_row;
use crate::store::postgres::reads::SessionRows;
use crate::store::postgres::PostgresStore;
use crate::store::{HistoryRead, HistoryStore};

impl HistoryStore for PostgresStore {
    fn search_history(&self, name: &str, request: &SearchRequest) -> Result<SearchOutcome> {
        let what = || format!("session {name:?}: searching its history");
        self.read(&what, |tx| {
            let row = session_row(tx, name, false)?;
            search_history(&mut SessionRows::new(tx, name, row), request)
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
