//! Calls that run outside any transaction block, each statement its own transaction (one
//! round trip, no `BEGIN`, no `COMMIT`), where the store has no `SET LOCAL` to make first: a
//! memory search (one statement), a history search (statements bounded by the log's end the
//! first read, see [`super::reads::SearchRows`]) and [`PostgresStore::ping`]. Only unnamed
//! statements are sent (`query_typed`), so nothing is left on a server connection that a pooler
//! may hand to another client.

use crate::error::{Error, Result};
use crate::store::postgres::{query, PostgresStore};

impl PostgresStore {
    /// Sends `SELECT 1` on a pooled connection, outside any transaction block: whether the
    /// server (or the pooler in front of it) answers, in one round trip, the least any call
    /// costs (the store benchmark measures it beside the searches).
    pub fn ping(&self) -> Result<()> {
        let what = || "sending SELECT 1".to_owned();
        let query = query::Query::new("SELECT 1");
        match self.alone(&what, &query) {
            Some(rows) => rows.map(drop),
            None => self.read(&what, |tx| query.run(tx, &what).map(drop)),
        }
    }

    /// Runs `query` alone, as its own transaction (one round trip: no `BEGIN`, no `COMMIT`),
    /// when the store has no `SET LOCAL` to make first (no [`PostgresOptions::schema`]);
    /// `None` when it has (the caller runs it in a transaction then). For a statement that is
    /// a whole call by itself, which says in its own text how its commit waits, if it writes.
    pub(super) fn alone(
        &self,
        what: &dyn Fn() -> String,
        query: &query::Query,
    ) -> Option<Result<Vec<postgres::Row>>> {
        let target = self.pool.target.as_str();
        self.without_transaction(|client| {
            query
                .run_alone(client)
                .map_err(|e| Error::postgres(target, what(), e))
        })
    }

    /// Runs `f` on a pooled connection outside any transaction block (each statement its own
    /// transaction), when the store has no `SET LOCAL` to make first; `None` when it has. For
    /// reads whose statements need no shared snapshot (each whole by itself, or bounded by what
    /// the first one read), sent with [`query::Query::run_alone`] or `query_typed` only: nothing
    /// prepared is left on the server connection.
    pub(super) fn without_transaction<T>(
        &self,
        f: impl FnOnce(&mut postgres::Client) -> Result<T>,
    ) -> Option<Result<T>> {
        if self.pool.local_setup.is_some() {
            return None;
        }
        let mut connection = match self.pool.checkout() {
            Ok(connection) => connection,
            Err(error) => return Some(Err(error)),
        };
        let result = f(&mut connection.client);
        self.pool.give_back(connection);
        Some(result)
    }
}
