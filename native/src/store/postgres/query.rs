//! [`Query`]: a statement built with its parameters and their types by one function, so the
//! search that runs it and the plan an operator reads of it ([`super::plans`]) are of the same
//! text, and sent in one round trip (parsed, planned for these very parameters and run at
//! once). The SQL holds only placeholders; every value is bound. [`Link`]: where a call's
//! statements run (its transaction, or each alone).

use postgres::types::{ToSql, Type};

use crate::error::{Error, Result};
use crate::store::postgres::Tx;

/// A statement and its parameters.
pub(super) struct Query {
    sql: String,
    params: Vec<(Box<dyn ToSql + Sync>, Type)>,
}

impl Query {
    /// A statement starting with `sql`.
    pub(super) fn new(sql: impl Into<String>) -> Query {
        Query {
            sql: sql.into(),
            params: Vec::new(),
        }
    }

    /// Binds `value` (of PostgreSQL type `ty`) as the next parameter; returns its placeholder.
    pub(super) fn bind(&mut self, value: impl ToSql + Sync + 'static, ty: Type) -> String {
        self.params.push((Box::new(value), ty));
        format!("${}", self.params.len())
    }

    /// Appends `sql` to the statement.
    pub(super) fn push(&mut self, sql: &str) {
        self.sql.push_str(sql);
    }

    /// The parameters, as the client takes them.
    fn params(&self) -> Vec<(&(dyn ToSql + Sync), Type)> {
        self.params
            .iter()
            .map(|(value, ty)| (value.as_ref(), ty.clone()))
            .collect()
    }

    /// Runs the statement with `prefix` before it (`EXPLAIN `, or nothing) inside `tx`.
    pub(super) fn run_with(
        &self,
        tx: &mut Tx<'_>,
        prefix: &str,
        what: &dyn Fn() -> String,
    ) -> Result<Vec<postgres::Row>> {
        tx.query_typed(&format!("{prefix}{}", self.sql), &self.params(), what)
    }

    /// Runs the statement on `client` outside any transaction block: it is its own
    /// transaction (committed when it ends), in one round trip.
    pub(super) fn run_alone(
        &self,
        client: &mut postgres::Client,
    ) -> std::result::Result<Vec<postgres::Row>, postgres::Error> {
        client.query_typed(&self.sql, &self.params())
    }

    /// Runs the statement inside `tx`.
    pub(super) fn run(
        &self,
        tx: &mut Tx<'_>,
        what: &dyn Fn() -> String,
    ) -> Result<Vec<postgres::Row>> {
        self.run_with(tx, "", what)
    }
}

/// Where a call's statements run.
pub(super) enum Link<'t, 'a> {
    /// Inside the call's transaction.
    Tx(&'t mut Tx<'a>),
    /// On a pooled connection outside any transaction block: each statement is its own
    /// transaction (see [`crate::store::postgres::PostgresStore`]'s module doc for when).
    Alone {
        /// The connection.
        client: &'t mut postgres::Client,
        /// The server and database, for messages.
        target: &'t str,
    },
}

impl Link<'_, '_> {
    /// The server and database, for messages.
    pub(super) fn target(&self) -> &str {
        match self {
            Link::Tx(tx) => tx.target,
            Link::Alone { target, .. } => target,
        }
    }

    /// Runs `query` here, in one round trip.
    pub(super) fn run(
        &mut self,
        query: &Query,
        what: &dyn Fn() -> String,
    ) -> Result<Vec<postgres::Row>> {
        match self {
            Link::Tx(tx) => query.run(tx, what),
            Link::Alone { client, target } => query
                .run_alone(client)
                .map_err(|e| Error::postgres(target, what(), e)),
        }
    }
}
