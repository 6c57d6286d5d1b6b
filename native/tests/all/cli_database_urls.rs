//! A `--db` (or `CTXKIT_DATABASE_URL`) that looks like a database URL but is not one ctxkit
//! speaks (another scheme, a case variant of `postgres://`, `postgres:` without `//`) is
//! refused with exit 2 and a message that does not repeat the password, and nothing is
//! created: it is never taken as a SQLite file path (which would make folders named after the
//! URL, password included).

use crate::common::project::BIN;
use std::process::Command;

#[test]
fn a_url_ctxkit_does_not_speak_is_refused_with_exit_2_and_creates_nothing() {
    for url in [
        "POSTGRES://user:hunter2@host/db",
        "mysql://user:hunter2@host/db",
        "postgres:user:hunter2@host/db",
        "PostgreSQL://user:hunter2@host/db",
        // A leading space, tab or newline before a URL ctxkit speaks is not trimmed silently.
        " postgres://user:hunter2@host/db",
        "\tpostgres://user:hunter2@host/db",
        "\npostgresql://user:hunter2@host/db",
        // An invisible character before it or inside its scheme (found by
        // native/examples/hostile_probe.rs: taken as a SQLite path before).
        "\u{feff}postgres://user:hunter2@host/db",
        "\u{200b}postgresql://user:hunter2@host/db",
        "postgres\u{200b}://user:hunter2@host/db",
        "postgres\u{ad}ql://user:hunter2@host/db",
    ] {
        for by_env in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let mut command = Command::new(BIN);
            command
                .current_dir(dir.path())
                .env_remove("CTXKIT_DATABASE_URL");
            if by_env {
                command.env("CTXKIT_DATABASE_URL", url);
            } else {
                command.args(["--db", url]);
            }
            let output = command.arg("sessions").output().unwrap();
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert_eq!(output.status.code(), Some(2), "{url}: {stderr}");
            assert!(
                stderr.contains("postgres://"),
                "{url}: says what it speaks: {stderr}"
            );
            assert!(!stderr.contains("hunter2"), "{url}: no password: {stderr}");
            let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
            assert!(left.is_empty(), "{url}: nothing created: {left:?}");
        }
    }
}

/// The library's `Engine::open` (what the Python engine opens with) refuses the same shapes:
/// a URL after whitespace, another scheme, a case variant. Nothing is created and the error
/// does not repeat the password.
#[test]
fn the_engine_refuses_the_same_urls_and_creates_nothing() {
    for url in [
        " postgres://user:hunter2@host/db",
        "\tpostgresql://user:hunter2@host/db",
        "mysql://user:hunter2@host/db",
        "POSTGRES://user:hunter2@host/db",
        "\u{feff}postgres://user:hunter2@host/db",
        "postgres\u{2060}://user:hunter2@host/db",
    ] {
        let dir = tempfile::tempdir().unwrap();
        for read_only in [false, true] {
            let opened = if read_only {
                ctxkit::Engine::open_read_only(url, dir.path(), ctxkit::EngineConfig::default())
            } else {
                ctxkit::Engine::open(url, dir.path(), ctxkit::EngineConfig::default())
            };
            let error = match opened {
                Ok(_) => panic!("{url:?}: opened"),
                Err(error) => error.to_string(),
            };
            assert!(
                error.starts_with("db: looks like a database URL"),
                "{url:?}: {error}"
            );
            assert!(!error.contains("hunter2"), "{url:?}: {error}");
        }
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(left.is_empty(), "{url:?}: nothing created: {left:?}");
        // The URL is a relative path from the test's working directory: nothing made there.
        let first = std::path::Path::new(url).components().next().unwrap();
        assert!(
            !std::path::Path::new(first.as_os_str()).exists(),
            "{url:?}: made {first:?}"
        );
    }
}

/// Two connection failures that no retry can cure say so: a URL with no host (refused before
/// any connection, exit 2), and a host name that does not exist (`.invalid` never resolves).
/// Neither says "retry later", and neither repeats the password.
#[test]
fn a_missing_or_unknown_host_is_named_and_not_called_worth_a_retry() {
    let dir = tempfile::tempdir().unwrap();
    let run = |url: &str| {
        Command::new(BIN)
            .current_dir(dir.path())
            .env_remove("CTXKIT_DATABASE_URL")
            .args(["--db", url, "sessions"])
            .output()
            .unwrap()
    };
    let output = run("postgres://");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("the URL names no host"), "{stderr}");
    assert!(!stderr.contains("password?"), "{stderr}");

    let output = run("postgres://user:hunter2@no-such-host.invalid/db?connect_timeout=5");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_ne!(output.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("hunter2"), "{stderr}");
    if stderr.contains("Temporary failure in name resolution") {
        // No resolver could answer on this machine: a later call may get one, so the advice
        // to retry is then the right one.
        assert!(stderr.contains("retry later"), "{stderr}");
    } else {
        assert!(
            stderr.contains("host name does not resolve")
                && stderr.contains("retrying cannot help"),
            "{stderr}"
        );
    }
}
