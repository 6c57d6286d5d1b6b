//! [`Query`]: a statement built with its parameters and their types by one function, so the
//! search that runs it and the plan an operator reads of it ([`super::plans`]) are of the same
//! text, and sent in one round trip (parsed, planned for these very parameters and run at
//! once), or as a call of the function that keeps its plan ([`Query::kept_in`], [`super::kept`]).
//! The SQL holds only placeholders; every value is bound. [`Link`]: where a call's statements
//! run (its transaction, or each alone).

use std::borrow::Cow;

use postgres::types::{ToSql, Type};

use crate::error::{Error, Result};
use crate::store::postgres::Tx;

/// A statement and its parameters.
pub(super) struct Query {
    sql: String,
    params: Vec<(Box<dyn ToSql + Sync>, Type)>,
    /// The function that runs `sql` with its plan kept, when the statement is sent as a call
    /// of it.
    kept_in: Option<&'static str>,
}

impl Query {
    /// A statement starting with `sql`.
    pub(super) fn new(sql: impl Into<String>) -> Query {
        Query {
            sql: sql.into(),
            params: Vec::new(),
            kept_in: None,
        }
    }

    /// The same statement, sent as a call of `function` (created by migration 8 from this
    /// very statement, [`super::kept`]), which PostgreSQL runs with a plan it keeps.
    pub(super) fn kept_in(mut self, function: &'static str) -> Query {
        self.kept_in = Some(function);
        self
    }

    /// The function that runs this statement with its plan kept, if it is sent so.
    pub(super) fn kept_function(&self) -> Option<&'static str> {
        self.kept_in
    }

    /// The statement itself (what a kept function runs).
    pub(super) fn statement(&self) -> &str {
        &self.sql
    }

    /// The PostgreSQL names of the parameters' types, in order.
    pub(super) fn type_names(&self) -> Vec<String> {
        self.params
            .iter()
            .map(|(_, ty)| ty.name().to_owned())
            .collect()
    }

    /// What is sent: the statement, or the call of the function that keeps its plan.
    fn sent(&self) -> Cow<'_, str> {
        match self.kept_in {
            None => Cow::Borrowed(&self.sql),
            Some(function) => {
                let arguments: Vec<String> =
                    (1..=self.params.len()).map(|n| format!("${n}")).collect();
                Cow::Owned(format!(
                    "SELECT * FROM {function}({})",
                    arguments.join(", ")
                ))
            }
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
        tx.query_typed(&format!("{prefix}{}", self.sent()), &self.params(), what)
    }

    /// Runs the statement on `client` outside any transaction block: it is its own
    /// transaction (committed when it ends), in one round trip.
    pub(super) fn run_alone(
        &self,
        client: &mut postgres::Client,
    ) -> std::result::Result<Vec<postgres::Row>, postgres::Error> {
        client.query_typed(&self.sent(), &self.params())
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
