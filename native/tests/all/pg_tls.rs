//! TLS to PostgreSQL with libpq's `sslmode` meanings, against the throwaway server
//! `scripts/pg-server.sh` starts with `ssl=on`, a throwaway CA and a certificate for
//! 127.0.0.1 only. The role `ctxkit_tls` may connect only over TLS. Checked: `disable` refused
//! by that server, `prefer`, `require`, `verify-ca` and `verify-full` connect, a wrong CA is
//! refused under `verify-ca`, a wrong host (`localhost`) under `verify-full` and accepted under
//! `verify-ca`, every refusal one line naming the reason and never the password.
//! With CI=true a missing server or certificate fails, never skips.

use crate::common::backends::postgres_url;
use ctxkit::store::{PostgresStore, SessionStore};

/// The server's port and the CA's and the other CA's PEM files, or `None` (skipped).
fn server(test: &str) -> Option<(String, String, String)> {
    let url = postgres_url(test)?;
    let port = url.rsplit(':').next()?.split('/').next()?.to_owned();
    let var = |name: &str| match std::env::var(name) {
        Ok(value) if !value.is_empty() => value,
        _ => panic!("{test}: {name} is not set: source scripts/pg-server.sh, which makes it"),
    };
    Some((
        port,
        var("CTXKIT_TEST_POSTGRES_CA"),
        var("CTXKIT_TEST_POSTGRES_OTHER_CA"),
    ))
}

fn url(host: &str, port: &str, query: &str) -> String {
    format!("postgres://ctxkit_tls:s3cret-pw@{host}:{port}/ctxkit_test?{query}")
}

/// The one-line refusal of opening `url`.
fn refusal(url: &str) -> String {
    let error = PostgresStore::open(url).expect_err("the connection is refused");
    let text = error.to_string();
    assert!(
        !text.contains("s3cret-pw"),
        "the password is never shown: {text}"
    );
    assert!(!text.contains('\n'), "one line: {text}");
    text
}

#[test]
fn every_sslmode_means_what_it_means_to_libpq() {
    let Some((port, ca, other_ca)) = server("pg_tls") else {
        return;
    };
    // Plain, to a server that requires TLS of this role.
    let plain = refusal(&url("127.0.0.1", &port, "sslmode=disable"));
    assert!(
        plain.contains("no encryption") || plain.contains("pg_hba"),
        "{plain}"
    );

    for query in [
        String::new(),
        "sslmode=prefer".to_owned(),
        "sslmode=require".to_owned(),
        format!("sslmode=verify-ca&sslrootcert={ca}"),
        format!("sslmode=verify-full&sslrootcert={ca}"),
    ] {
        let store = PostgresStore::open(&url("127.0.0.1", &port, &query))
            .unwrap_or_else(|e| panic!("{query}: {e}"));
        assert!(store.list_sessions().is_ok(), "{query}");
    }

    let wrong_ca = refusal(&url(
        "127.0.0.1",
        &port,
        &format!("sslmode=verify-ca&sslrootcert={other_ca}"),
    ));
    assert!(
        wrong_ca.contains("UnknownIssuer") || wrong_ca.contains("issuer"),
        "{wrong_ca}"
    );

    // The certificate names 127.0.0.1 only: `localhost` is the wrong host.
    let wrong_host = refusal(&url(
        "localhost",
        &port,
        &format!("sslmode=verify-full&sslrootcert={ca}"),
    ));
    assert!(wrong_host.to_lowercase().contains("name"), "{wrong_host}");
    let any_host = url(
        "localhost",
        &port,
        &format!("sslmode=verify-ca&sslrootcert={ca}"),
    );
    PostgresStore::open(&any_host).unwrap_or_else(|e| panic!("verify-ca, any host: {e}"));

    let missing = refusal(&url(
        "127.0.0.1",
        &port,
        "sslmode=verify-full&sslrootcert=/nonexistent/ca.pem",
    ));
    assert!(
        missing.contains("sslrootcert /nonexistent/ca.pem"),
        "{missing}"
    );
    let bad_mode = refusal(&url("127.0.0.1", &port, "sslmode=verify"));
    assert!(bad_mode.contains("sslmode"), "{bad_mode}");
}
