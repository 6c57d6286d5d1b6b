//! [`PostgresStore`]: the store for fleets of workers, one PostgreSQL database that many
//! processes on many machines share (the synchronous `postgres` client).
//!
//! A store is a small pool of connections ([`PostgresOptions::pool_size`], default 4: one
//! worker's engine uses one at a time; clones of the store share the pool, so a worker's
//! threads can each hold one). A connection found closed (the server restarted, the network
//! dropped) is discarded and the next call connects again, so after an outage a worker's next
//! call works without reopening anything; the call that met the outage fails with
//! [`crate::Error::Postgres`] naming the server and saying the connection was lost.
//!
//! Every call is one transaction: writes in `READ COMMITTED`, locking the session's row
//! (`SELECT ... FOR UPDATE`) before reading where its log ends, so two writers of one session
//! queue and the second sees the first's commit (a stale `seq` is then
//! [`crate::Error::SeqConflict`], and nothing is written); reads in `REPEATABLE READ READ ONLY`,
//! so a read never mixes two commits. A call that is one statement (a memory search) runs as
//! its own transaction instead, in one round trip (no `BEGIN`, no `COMMIT`), and so does each
//! statement of a history search (the first reads the session's row with its hits, the others
//! are bounded by the log's end it read: the log is only appended to, so they see one snapshot
//! of it), unless the store's schema must be set first. A failed call rolls back: it leaves the
//! database as it was.
//!
//! Durability: by default every commit waits for the server's WAL flush (the server's
//! `synchronous_commit`, `on` unless changed), so an append or a turn that returned success
//! survives a crash of the server. `?ctxkit_sync=turn` in the URL (or
//! [`PostgresOptions::full_sync`] false) is the faster mode: writes commit with
//! `synchronous_commit = off` and [`crate::store::SessionStore::sync`] (the engine calls it once
//! per turn) waits for the flush of everything committed before it; a server crash or power
//! loss can then drop the commits of its last moments, acknowledged ones included (whole
//! transactions, never part of one, never corrupting the database).
//!
//! Connecting: TLS with libpq's `sslmode` and `sslrootcert` in the URL ([`url`], [`tls`];
//! `prefer` by default, as libpq). Nothing is kept on a server connection between transactions
//! (statements are prepared and closed inside the transaction that uses them, the schema and
//! commit mode are `SET LOCAL`, the migration lock is transaction-scoped), so the store runs
//! unchanged through PgBouncer in transaction mode. The searches' plans are kept by the server
//! itself, inside PL/pgSQL functions the schema holds ([`kept`]): its own cache, which no
//! caller sees.
//!
//! SQL is static text with bound parameters; the only name spliced into SQL is the
//! schema ([`PostgresOptions::schema`]), checked to be a plain identifier and quoted.
//!
//! Every text comes back byte for byte, NUL and every control character included, though
//! PostgreSQL `text` cannot hold NUL: free text is written through a reversible escape and
//! searched through a folded search key ([`text`]).

mod alone;
mod history;
mod kept;
mod memory;
mod memory_search;
mod plans;
mod pool;
mod queries;
mod query;
mod reads;
mod schema;
mod search_keys;
mod sessions;
mod text;
mod tls;
pub mod url;

pub use schema::POSTGRES_SCHEMA_VERSION;
pub use url::{is_postgres_url, looks_like_database_url};

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use postgres::{Config, IsolationLevel, Statement, Transaction};

use crate::error::{Error, Result};
use pool::{Connection, Pool, PoolState};
use schema::{check_version, migrate};

/// How to open a PostgreSQL store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostgresOptions {
    /// At most this many connections open at once (the pool's size). Default 4.
    pub pool_size: usize,
    /// How long a call waits for a connection to connect, or for a free one when all are in
    /// use. Default 5 s.
    pub connect_timeout: Duration,
    /// The schema holding ctxkit's tables (created if missing), instead of the connection's
    /// default search path (usually `public`). A plain identifier: letters, digits and `_`.
    pub schema: Option<String>,
    /// Wait for the server's WAL flush at every commit (the server's `synchronous_commit`, `on`
    /// by default) instead of once per [`crate::store::SessionStore::sync`]. Default true; the
    /// URL's `ctxkit_sync` (`commit` or `turn`) overrides it. See the module doc.
    pub full_sync: bool,
    /// Refuse every write (for commands that only read): a write call fails with
    /// [`crate::Error::InvalidInput`] before it reaches the server; the schema must already
    /// be current. Default false.
    pub read_only: bool,
}

impl Default for PostgresOptions {
    fn default() -> Self {
        PostgresOptions {
            pool_size: 4,
            connect_timeout: Duration::from_secs(5),
            schema: None,
            full_sync: true,
            read_only: false,
        }
    }
}

/// The PostgreSQL store (see the module doc). Cloning it shares its pool.
#[derive(Debug, Clone)]
pub struct PostgresStore {
    pool: Arc<Pool>,
}

/// A transaction on a pooled connection, with the statements prepared in it. They are
/// closed before the transaction ends (the field is dropped first), since after it a pooler
/// may hand the server connection to another client.
pub(super) struct Tx<'a> {
    statements: HashMap<String, Statement>,
    pub(super) tx: Transaction<'a>,
    /// The server and database, for messages.
    pub(super) target: &'a str,
}

impl Tx<'_> {
    /// `sql` prepared in this transaction, once.
    pub(super) fn prepare(&mut self, sql: &str, what: &dyn Fn() -> String) -> Result<Statement> {
        if let Some(statement) = self.statements.get(sql) {
            return Ok(statement.clone());
        }
        let statement = self
            .tx
            .prepare(sql)
            .map_err(|e| Error::postgres(self.target, what(), e))?;
        self.statements.insert(sql.to_owned(), statement.clone());
        Ok(statement)
    }

    /// Runs `sql` (prepared once per transaction) and returns its rows.
    pub(super) fn query(
        &mut self,
        sql: &str,
        params: &[&(dyn postgres::types::ToSql + Sync)],
        what: &dyn Fn() -> String,
    ) -> Result<Vec<postgres::Row>> {
        let statement = self.prepare(sql, what)?;
        self.tx
            .query(&statement, params)
            .map_err(|e| Error::postgres(self.target, what(), e))
    }

    /// Runs `sql` in one round trip, unprepared (parsed, planned for these parameters and run
    /// at once, the parameters' types given): for [`query::Query`]'s statements, whose patterns
    /// decide whether an index helps, so a plan kept for any pattern would not do.
    pub(super) fn query_typed(
        &mut self,
        sql: &str,
        params: &[(&(dyn postgres::types::ToSql + Sync), postgres::types::Type)],
        what: &dyn Fn() -> String,
    ) -> Result<Vec<postgres::Row>> {
        self.tx
            .query_typed(sql, params)
            .map_err(|e| Error::postgres(self.target, what(), e))
    }

    /// Runs `sql` and returns its row, if any.
    pub(super) fn query_opt(
        &mut self,
        sql: &str,
        params: &[&(dyn postgres::types::ToSql + Sync)],
        what: &dyn Fn() -> String,
    ) -> Result<Option<postgres::Row>> {
        let statement = self.prepare(sql, what)?;
        self.tx
            .query_opt(&statement, params)
            .map_err(|e| Error::postgres(self.target, what(), e))
    }

    /// Runs `sql` and returns how many rows it changed.
    pub(super) fn execute(
        &mut self,
        sql: &str,
        params: &[&(dyn postgres::types::ToSql + Sync)],
        what: &dyn Fn() -> String,
    ) -> Result<u64> {
        let statement = self.prepare(sql, what)?;
        self.tx
            .execute(&statement, params)
            .map_err(|e| Error::postgres(self.target, what(), e))
    }
}

/// What a transaction may do, and when its commit is acknowledged.
#[derive(Debug, Clone, Copy)]
enum Mode {
    /// Read only, one snapshot.
    Read,
    /// Writes, committed as the store's durability says.
    Write,
    /// Writes whose commit does not wait for the WAL flush.
    WriteUnflushed,
}

/// Whether `name` may be spliced into SQL as a schema name: a plain identifier.
fn plain_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && name.len() <= 63
}

impl PostgresStore {
    /// Connects to the database at `url` (`postgres://user:password@host:port/database`) and
    /// brings its schema to [`crate::store::POSTGRES_SCHEMA_VERSION`].
    pub fn open(url: &str) -> Result<Self> {
        PostgresStore::open_with(url, PostgresOptions::default())
    }

    /// Connects with `options` (see [`PostgresStore::open`]).
    pub fn open_with(url: &str, options: PostgresOptions) -> Result<Self> {
        if !is_postgres_url(url) {
            return Err(Error::invalid(
                "database",
                "a PostgreSQL URL starts with postgres:// or postgresql://",
            ));
        }
        let settings = url::parse(url)?;
        let mut config: Config = settings.client_url.parse().map_err(|e: postgres::Error| {
            Error::invalid("database", format!("not a valid PostgreSQL URL: {e}"))
        })?;
        config.ssl_mode(match settings.ssl_mode {
            url::SslMode::Disable => postgres::config::SslMode::Disable,
            url::SslMode::Prefer => postgres::config::SslMode::Prefer,
            _ => postgres::config::SslMode::Require,
        });
        let full_sync = match settings.sync {
            Some(mode) => mode == url::SyncMode::Commit,
            None => options.full_sync,
        };
        config.connect_timeout(options.connect_timeout);
        config.application_name("ctxkit");
        let setup = match &options.schema {
            None => None,
            Some(schema) if plain_identifier(schema) => Some(schema.clone()),
            Some(schema) => {
                return Err(Error::invalid(
                    "schema",
                    format!("{schema:?}: a schema name is lowercase letters, digits and _"),
                ))
            }
        };
        let target = describe(&config);
        let pool = Pool {
            config,
            target,
            tls: tls::connector(&settings)?,
            local_setup: setup
                .as_ref()
                .map(|schema| format!("SET LOCAL search_path TO \"{schema}\", public;")),
            write_setup: {
                let mut sql = String::new();
                if let Some(schema) = &setup {
                    sql.push_str(&format!("SET LOCAL search_path TO \"{schema}\", public;"));
                }
                if !full_sync {
                    sql.push_str("SET LOCAL synchronous_commit TO off;");
                }
                Some(sql).filter(|sql| !sql.is_empty())
            },
            unflushed_setup: {
                let mut sql = String::new();
                if let Some(schema) = &setup {
                    sql.push_str(&format!("SET LOCAL search_path TO \"{schema}\", public;"));
                }
                sql.push_str("SET LOCAL synchronous_commit TO off;");
                sql
            },
            size: options.pool_size.max(1),
            wait: options.connect_timeout,
            read_only: options.read_only,
            state: Mutex::new(PoolState {
                idle: Vec::new(),
                open: 0,
            }),
            freed: std::sync::Condvar::new(),
        };
        let store = PostgresStore {
            pool: Arc::new(pool),
        };
        let mut connection = store.pool.checkout()?;
        if let Some(schema) = &setup {
            let sql = format!("CREATE SCHEMA IF NOT EXISTS \"{schema}\"");
            let created = connection.client.batch_execute(&sql);
            if let Err(error) = created {
                // Two workers creating it at once: the loser's error is harmless.
                let exists = connection
                    .client
                    .query_opt("SELECT 1 FROM pg_namespace WHERE nspname = $1", &[schema]);
                if !matches!(exists, Ok(Some(_))) {
                    return Err(Error::postgres(
                        &store.pool.target,
                        format!("creating schema {schema}"),
                        error,
                    ));
                }
            }
        }
        let local = store.pool.local_setup.as_deref();
        let migrated = if options.read_only {
            check_version(&mut connection.client, &store.pool.target, local)
        } else {
            migrate(&mut connection.client, &store.pool.target, local)
        };
        store.pool.give_back(connection);
        migrated?;
        Ok(store)
    }

    /// The server and database, as messages name them (`host:port/database`).
    pub fn target(&self) -> &str {
        &self.pool.target
    }

    /// The schema version recorded in the database.
    pub fn schema_version(&self) -> Result<i32> {
        self.read(&|| "reading the schema version".to_owned(), |tx| {
            let what = || "reading the schema version".to_owned();
            let row = tx.query_opt("SELECT version FROM ctxkit_schema", &[], &what)?;
            match row {
                Some(row) => get(&row, 0, tx.target),
                None => Ok(0),
            }
        })
    }

    /// Makes everything committed so far durable: one transaction that waits for the server's
    /// fsync (it gets a transaction id, so its commit is flushed, and every commit before it).
    pub(super) fn flush(&self) -> Result<()> {
        if self.pool.read_only {
            return Ok(());
        }
        let what = || "making the commits durable".to_owned();
        self.transaction(&what, Mode::Write, |tx| {
            tx.execute("SET LOCAL synchronous_commit TO on", &[], &what)?;
            tx.query("SELECT txid_current()", &[], &what)?;
            Ok(())
        })
    }

    /// Runs `f` in one read-only transaction with a consistent snapshot.
    pub(super) fn read<T>(
        &self,
        what: &dyn Fn() -> String,
        f: impl FnOnce(&mut Tx<'_>) -> Result<T>,
    ) -> Result<T> {
        self.transaction(what, Mode::Read, f)
    }

    /// Runs `f` in one write transaction, committed when it succeeds, rolled back when not.
    pub(super) fn write<T>(
        &self,
        what: &dyn Fn() -> String,
        f: impl FnOnce(&mut Tx<'_>) -> Result<T>,
    ) -> Result<T> {
        if self.pool.read_only {
            return Err(Error::invalid(
                "database",
                format!("{}: opened read-only; {} writes", self.pool.target, what()),
            ));
        }
        self.transaction(what, Mode::Write, f)
    }

    /// Runs `f` in one write transaction whose commit does not wait for the WAL flush: for
    /// writes a server crash may lose at no cost (a memory's use count), never for the log.
    pub(super) fn write_unflushed<T>(
        &self,
        what: &dyn Fn() -> String,
        f: impl FnOnce(&mut Tx<'_>) -> Result<T>,
    ) -> Result<T> {
        if self.pool.read_only {
            return self.write(what, f);
        }
        self.transaction(what, Mode::WriteUnflushed, f)
    }

    fn transaction<T>(
        &self,
        what: &dyn Fn() -> String,
        mode: Mode,
        f: impl FnOnce(&mut Tx<'_>) -> Result<T>,
    ) -> Result<T> {
        let target = self.pool.target.as_str();
        let mut connection = self.pool.checkout()?;
        let result = (|| {
            let Connection { client } = &mut connection;
            let mut builder = client.build_transaction();
            builder = match mode {
                Mode::Read => builder
                    .isolation_level(IsolationLevel::RepeatableRead)
                    .read_only(true),
                Mode::Write | Mode::WriteUnflushed => {
                    builder.isolation_level(IsolationLevel::ReadCommitted)
                }
            };
            let mut tx = builder
                .start()
                .map_err(|e| Error::postgres(target, what(), e))?;
            let setup = match mode {
                Mode::Read => self.pool.local_setup.as_deref(),
                Mode::Write => self.pool.write_setup.as_deref(),
                Mode::WriteUnflushed => Some(self.pool.unflushed_setup.as_str()),
            };
            if let Some(setup) = setup {
                tx.batch_execute(setup)
                    .map_err(|e| Error::postgres(target, what(), e))?;
            }
            let mut tx = Tx {
                statements: HashMap::new(),
                tx,
                target,
            };
            let value = f(&mut tx)?;
            let Tx { statements, tx, .. } = tx;
            // Closed before the commit, on the server connection that prepared them.
            drop(statements);
            tx.commit()
                .map_err(|e| Error::postgres(target, format!("{}: committing", what()), e))?;
            Ok(value)
        })();
        self.pool.give_back(connection);
        result
    }
}

/// Column `index` of `row`.
pub(super) fn get<'a, T: postgres::types::FromSql<'a>>(
    row: &'a postgres::Row,
    index: usize,
    target: &str,
) -> Result<T> {
    row.try_get(index)
        .map_err(|e| Error::postgres(target, format!("reading column {index} of a row"), e))
}

/// `value` as a BIGINT (values past `i64::MAX`, which no log reaches, saturate).
pub(super) fn big(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// A BIGINT as a count or seq (negative values, which the schema never stores, read as 0).
pub(super) fn unsigned(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

/// `host:port/database` of `config`, for messages.
fn describe(config: &Config) -> String {
    let host = match config.get_hosts().first() {
        Some(postgres::config::Host::Tcp(host)) => host.clone(),
        Some(postgres::config::Host::Unix(path)) => path.display().to_string(),
        None => "localhost".to_owned(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let database = config.get_dbname().unwrap_or("");
    format!("{host}:{port}/{database}")
}
