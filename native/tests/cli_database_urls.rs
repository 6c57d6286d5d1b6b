//! A `--db` (or `CTXKIT_DATABASE_URL`) that looks like a database URL but is not one ctxkit
//! speaks (another scheme, a case variant of `postgres://`, `postgres:` without `//`) is
//! refused with exit 2 and a message that does not repeat the password, and nothing is
//! created: it is never taken as a SQLite file path (which would make folders named after the
//! URL, password included).

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_ctxkit");

#[test]
fn a_url_ctxkit_does_not_speak_is_refused_with_exit_2_and_creates_nothing() {
    for url in [
        "POSTGRES://user:hunter2@host/db",
        "mysql://user:hunter2@host/db",
        "postgres:user:hunter2@host/db",
        "PostgreSQL://user:hunter2@host/db",
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
