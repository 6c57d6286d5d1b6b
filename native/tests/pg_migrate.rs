//! Migrations many workers start at once: 8 stores (threads, each its own connections, so to
//! the server 8 clients) open one empty database at the same moment, directly and through
//! PgBouncer in transaction mode; the schema is migrated once (under the transaction-scoped
//! advisory lock) and all proceed. A schema newer than this build is refused with a message
//! naming the versions, and left as it was. With CI=true a missing server or pooler fails.

mod common;

use std::sync::{Arc, Barrier};

use common::backends::{fresh_database, postgres_url};
use ctxkit::store::{PostgresStore, POSTGRES_SCHEMA_VERSION};

/// The database `direct` names (a URL of the server), through the pooler.
fn pooled(direct: &str) -> String {
    let database = direct.rsplit('/').next().unwrap();
    let pooler = match std::env::var("CTXKIT_TEST_PGBOUNCER_URL") {
        Ok(value) if !value.is_empty() => value,
        _ => panic!("CTXKIT_TEST_PGBOUNCER_URL is not set: source scripts/pg-server.sh"),
    };
    let (base, _) = pooler.rsplit_once('/').unwrap();
    format!("{base}/{database}?sslmode=disable")
}

#[test]
fn eight_stores_opening_an_empty_database_at_once_migrate_it_once() {
    let Some(server) = postgres_url("pg_migrate_at_once") else {
        return;
    };
    for url in [fresh_database(&server, "migrate_direct"), {
        let direct = fresh_database(&server, "migrate_pooled");
        pooled(&direct)
    }] {
        let barrier = Arc::new(Barrier::new(8));
        let opened: Vec<_> = (0..8)
            .map(|_| {
                let (url, barrier) = (url.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    let store = PostgresStore::open(&url)?;
                    store.schema_version()
                })
            })
            .collect();
        for thread in opened {
            assert_eq!(
                thread.join().unwrap().unwrap(),
                POSTGRES_SCHEMA_VERSION,
                "{url}"
            );
        }
        let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
        let rows = client
            .query("SELECT version FROM ctxkit_schema", &[])
            .unwrap();
        assert_eq!(rows.len(), 1, "one version row: migrated once");
        // A newer schema (a later release migrated it) is refused, never written.
        client
            .execute("UPDATE ctxkit_schema SET version = version + 1", &[])
            .unwrap();
        let refused = PostgresStore::open(&url).unwrap_err().to_string();
        assert!(
            refused.contains("newer") || refused.contains("version"),
            "{refused}"
        );
        let version: i32 = client
            .query_one("SELECT version FROM ctxkit_schema", &[])
            .unwrap()
            .get(0);
        assert_eq!(version, POSTGRES_SCHEMA_VERSION + 1, "left as it was");
    }
}
