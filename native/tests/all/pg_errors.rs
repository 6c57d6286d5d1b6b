//! PostgreSQL setups that cannot work are said as what they are, on one line, without the
//! password, and are not retryable ([`ctxkit::Error::is_retryable`] false: a worker that
//! retried would fail the same way forever): a wrong or missing password, a role or database
//! that does not exist, a role whose TLS-only rule refuses a plain connection, a refused TLS
//! handshake (a server without TLS under `sslmode=require`, a certificate from another CA, a
//! certificate for another host), a database without `pg_trgm` that the role may not install
//! it in (the database left as it was). Beside them, a server that does not answer stays
//! retryable. Each made on the throwaway server of `scripts/pg-server.sh` (its role
//! `ctxkit_password` signs in with the password `right-password` only; PgBouncer in front has no
//! TLS). With CI=true a missing server fails, never skips.

use crate::common::backends::{postgres_url, unique_name};
use ctxkit::store::{PostgresStore, SessionStore};

/// The server's `127.0.0.1:PORT`, or `None` (skipped).
fn server(test: &str) -> Option<String> {
    let url = postgres_url(test)?;
    let rest = url.split_once('@').unwrap().1;
    Some(rest.split('/').next().unwrap().to_owned())
}

fn env(name: &str) -> String {
    match std::env::var(name) {
        Ok(value) if !value.is_empty() => value,
        _ => panic!("{name} is not set: source scripts/pg-server.sh, which sets it"),
    }
}

/// Opens `url`, expects a refusal that is one line, never shows `password`, names the server
/// and is not retryable; returns its text.
fn setup_refusal(url: &str, password: &str) -> String {
    let error = PostgresStore::open(url).expect_err("the setup is refused");
    let text = error.to_string();
    assert!(!error.is_retryable(), "not retryable: {text}");
    assert!(!text.contains('\n'), "one line: {text}");
    assert!(
        !text.contains(password),
        "the password is never shown: {text}"
    );
    assert!(text.contains("PostgreSQL at "), "names the server: {text}");
    assert!(!text.contains("retry,"), "never says to retry: {text}");
    text
}

#[test]
fn credentials_and_databases_that_cannot_work_are_named_and_not_retried() {
    let Some(host) = server("pg_errors_credentials") else {
        return;
    };
    let good = format!("postgres://ctxkit_password:right-password@{host}/ctxkit_test");
    PostgresStore::open(&good).unwrap_or_else(|e| panic!("the right password: {e}"));

    let wrong = setup_refusal(
        &format!("postgres://ctxkit_password:wrong-password@{host}/ctxkit_test"),
        "wrong-password",
    );
    assert!(wrong.contains("password authentication failed"), "{wrong}");
    assert!(wrong.contains("check the URL's user, password"), "{wrong}");

    let missing = setup_refusal(
        &format!("postgres://ctxkit_password@{host}/ctxkit_test"),
        "right-password",
    );
    assert!(missing.contains("password missing"), "{missing}");

    let no_role = setup_refusal(
        &format!("postgres://no_such_role:pw-of-no-role@{host}/ctxkit_test"),
        "pw-of-no-role",
    );
    assert!(
        no_role.contains("\"no_such_role\" does not exist"),
        "{no_role}"
    );

    let no_database = setup_refusal(
        &format!("postgres://ctxkit:db-pw@{host}/no_such_database"),
        "db-pw",
    );
    assert!(
        no_database.contains("\"no_such_database\" does not exist"),
        "{no_database}"
    );
    assert!(no_database.contains("create it"), "{no_database}");

    // Nothing listens on port 1: a server that is not there may come back, so a worker retries.
    let error = PostgresStore::open("postgres://ctxkit:pw-1@127.0.0.1:1/none").unwrap_err();
    assert!(error.is_retryable(), "{error}");
    assert!(error.to_string().contains("retry later"), "{error}");
}

#[test]
fn a_refused_tls_handshake_is_named_and_not_retried() {
    let Some(host) = server("pg_errors_tls") else {
        return;
    };
    let (ca, other_ca) = (
        env("CTXKIT_TEST_POSTGRES_CA"),
        env("CTXKIT_TEST_POSTGRES_OTHER_CA"),
    );
    let port = host.split(':').nth(1).unwrap();

    // The role ctxkit_tls may connect only over TLS.
    let plain = setup_refusal(
        &format!("postgres://ctxkit_tls:tls-pw@{host}/ctxkit_test?sslmode=disable"),
        "tls-pw",
    );
    assert!(plain.contains("no encryption"), "{plain}");

    let other_issuer = setup_refusal(
        &format!(
            "postgres://ctxkit_tls:tls-pw@{host}/ctxkit_test?sslmode=verify-ca&sslrootcert={other_ca}"
        ),
        "tls-pw",
    );
    assert!(other_issuer.contains("UnknownIssuer"), "{other_issuer}");
    assert!(other_issuer.contains("TLS was refused"), "{other_issuer}");

    let other_host = setup_refusal(
        &format!(
            "postgres://ctxkit_tls:tls-pw@localhost:{port}/ctxkit_test?sslmode=verify-full&sslrootcert={ca}"
        ),
        "tls-pw",
    );
    assert!(other_host.contains("not valid for name"), "{other_host}");

    // PgBouncer in front has no TLS: sslmode=require cannot be met.
    let pooler = env("CTXKIT_TEST_PGBOUNCER_URL");
    let pooler = pooler
        .replace("sslmode=disable", "sslmode=require")
        .replace("postgres://ctxkit@", "postgres://ctxkit:pooler-pw@");
    let no_tls = setup_refusal(&pooler, "pooler-pw");
    assert!(no_tls.contains("server does not support TLS"), "{no_tls}");
}

#[test]
fn a_database_without_pg_trgm_that_the_role_may_not_install_it_in_is_named_and_left_alone() {
    let Some(url) = postgres_url("pg_errors_trgm") else {
        return;
    };
    let host = url.split_once('@').unwrap().1.split('/').next().unwrap();
    let (database, role) = (unique_name("no_trgm"), unique_name("plain_role"));
    let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    admin
        .batch_execute(&format!("CREATE DATABASE \"{database}\""))
        .unwrap();
    admin
        .batch_execute(&format!("CREATE ROLE \"{role}\" LOGIN NOSUPERUSER"))
        .unwrap();
    // May create tables in the public schema, but not extensions in the database.
    let (base, _) = url.rsplit_once('/').unwrap();
    let mut owner =
        postgres::Client::connect(&format!("{base}/{database}"), postgres::NoTls).unwrap();
    owner
        .batch_execute(&format!("GRANT CREATE ON SCHEMA public TO \"{role}\""))
        .unwrap();

    let text = setup_refusal(
        &format!("postgres://{role}:role-pw@{host}/{database}"),
        "role-pw",
    );
    assert!(text.contains("pg_trgm"), "{text}");
    assert!(text.contains("CREATE EXTENSION pg_trgm"), "{text}");
    assert!(text.contains("permission denied"), "{text}");

    // The failed migration left nothing behind.
    let tables: i64 = owner
        .query_one(
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(tables, 0, "nothing was created");

    // Once the extension is installed, the same role opens the database.
    owner.batch_execute("CREATE EXTENSION pg_trgm").unwrap();
    let store = PostgresStore::open(&format!("postgres://{role}:role-pw@{host}/{database}"))
        .unwrap_or_else(|e| panic!("with pg_trgm installed: {e}"));
    assert!(store.list_sessions().unwrap().is_empty());
}
