//! The store tests' two backends: the same test code runs against SQLite (a file in a
//! temporary folder) and PostgreSQL (a fresh schema, or database, of the server
//! `scripts/pg-server.sh` started, named by `CTXKIT_TEST_POSTGRES_URL`), so tests run in
//! parallel without seeing each other's data.
//!
//! Without the URL the PostgreSQL half is skipped with a message, unless `CI=true`: then a
//! missing server fails the test, never skips it.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use ctxkit::store::{PostgresOptions, PostgresStore, SqliteStore, Store};

static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// The server's URL, or `None` (with a message) when the PostgreSQL half is skipped.
pub fn postgres_url(test: &str) -> Option<String> {
    match std::env::var("CTXKIT_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var("CI").is_ok_and(|ci| ci == "true") => panic!(
            "{test}: CTXKIT_TEST_POSTGRES_URL is not set, and CI=true: a missing PostgreSQL \
             server fails the tests (run them through scripts/test.sh, which sources \
             scripts/pg-server.sh)"
        ),
        _ => {
            eprintln!(
                "{test}: PostgreSQL skipped: CTXKIT_TEST_POSTGRES_URL is not set \
                 (source scripts/pg-server.sh first)"
            );
            None
        }
    }
}

/// A name no other test (of this process or another) uses: `prefix`, the process id and a
/// counter, lowercase.
pub fn unique_name(prefix: &str) -> String {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let clean: String = prefix
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    format!("{clean}_{}_{n}", std::process::id())
}

/// A new, empty database on the server at `url`; returns its URL.
pub fn fresh_database(url: &str, prefix: &str) -> String {
    let name = unique_name(prefix);
    let mut admin = postgres::Client::connect(url, postgres::NoTls).unwrap();
    admin
        .batch_execute(&format!("CREATE DATABASE \"{name}\""))
        .unwrap();
    let (base, _) = url.rsplit_once('/').unwrap();
    format!("{base}/{name}")
}

/// Where a test's stores live.
pub enum Backend {
    /// A SQLite file.
    Sqlite {
        /// Its folder (removed with it).
        dir: tempfile::TempDir,
        /// The file.
        path: PathBuf,
    },
    /// A schema of its own on the PostgreSQL server.
    Postgres {
        /// The server's database.
        url: String,
        /// The schema.
        schema: String,
    },
}

impl Backend {
    /// SQLite, and PostgreSQL when a server is there (see the module doc).
    pub fn all(test: &str) -> Vec<Backend> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ctxkit.db");
        let mut backends = vec![Backend::Sqlite { dir, path }];
        if let Some(url) = postgres_url(test) {
            backends.push(Backend::Postgres {
                url,
                schema: unique_name(test),
            });
        }
        backends
    }

    /// A new, empty database of the same kind.
    pub fn fresh(&self) -> Backend {
        match self {
            Backend::Sqlite { .. } => {
                let dir = tempfile::tempdir().unwrap();
                let path = dir.path().join("ctxkit.db");
                Backend::Sqlite { dir, path }
            }
            Backend::Postgres { url, schema } => Backend::Postgres {
                url: url.clone(),
                schema: unique_name(schema),
            },
        }
    }

    /// Which backend, for messages.
    pub fn name(&self) -> &'static str {
        match self {
            Backend::Sqlite { .. } => "sqlite",
            Backend::Postgres { .. } => "postgres",
        }
    }

    /// Whether this is PostgreSQL.
    pub fn is_postgres(&self) -> bool {
        matches!(self, Backend::Postgres { .. })
    }

    /// A new handle on the test's database (a second writer, when called twice).
    pub fn open(&self) -> Box<dyn Store> {
        match self {
            Backend::Sqlite { path, .. } => Box::new(SqliteStore::open(path).unwrap()),
            Backend::Postgres { .. } => Box::new(self.postgres()),
        }
    }

    /// The PostgreSQL store (panics for SQLite).
    pub fn postgres(&self) -> PostgresStore {
        match self {
            Backend::Postgres { url, schema } => PostgresStore::open_with(
                url,
                PostgresOptions {
                    schema: Some(schema.clone()),
                    ..PostgresOptions::default()
                },
            )
            .unwrap(),
            Backend::Sqlite { .. } => panic!("not PostgreSQL"),
        }
    }

    /// Runs `sql` on the test's database directly (to corrupt a row, say).
    pub fn execute_raw(&self, sql: &str) {
        match self {
            Backend::Sqlite { path, .. } => {
                rusqlite::Connection::open(path)
                    .unwrap()
                    .execute_batch(sql)
                    .unwrap();
            }
            Backend::Postgres { url, schema } => {
                let mut client = postgres::Client::connect(url, postgres::NoTls).unwrap();
                client
                    .batch_execute(&format!("SET search_path TO \"{schema}\", public; {sql}"))
                    .unwrap();
            }
        }
    }

    /// The SQLite folder (the PostgreSQL one has none: a new temporary folder).
    pub fn folder(&self) -> Option<&std::path::Path> {
        match self {
            Backend::Sqlite { dir, .. } => Some(dir.path()),
            Backend::Postgres { .. } => None,
        }
    }
}

impl Drop for Backend {
    fn drop(&mut self) {
        if let Backend::Postgres { url, schema } = self {
            // Best effort: the server is a throwaway one anyway.
            if let Ok(mut client) = postgres::Client::connect(url, postgres::NoTls) {
                let _ =
                    client.batch_execute(&format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE"));
            }
        }
    }
}

/// The database `direct` names (a URL of the server), through the pooler.
pub fn pooled(direct: &str) -> String {
    let database = direct.rsplit('/').next().unwrap();
    let pooler = match std::env::var("CTXKIT_TEST_PGBOUNCER_URL") {
        Ok(value) if !value.is_empty() => value,
        _ => panic!("CTXKIT_TEST_PGBOUNCER_URL is not set: source scripts/pg-server.sh"),
    };
    let (base, _) = pooler.rsplit_once('/').unwrap();
    format!("{base}/{database}?sslmode=disable")
}
