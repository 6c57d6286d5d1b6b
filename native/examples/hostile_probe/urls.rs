//! Finding 5, the database URL part, through the `ctxkit` binary: an `sslrootcert` that is
//! `/dev/zero` or a FIFO (against a fake server that accepts TLS, so the certificate is
//! needed; the time to the error must be bounded), a URL after leading whitespace or an
//! invisible character (refused with exit 2, nothing created, no password shown, by `--db`,
//! `CTXKIT_DATABASE_URL` and `Engine::open`), and URLs naming no host or an unknown one (the
//! message must say so, not "retry").

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::time::Duration;

use crate::setup::{ctxkit, watched};
use crate::Row;

/// An error later than this is a failure.
const BOUND: Duration = Duration::from_secs(5);

/// A fake PostgreSQL server: answers an `SSLRequest` with `S` (go on with TLS), then waits.
fn accepts_tls() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("address").port();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut request = [0u8; 8];
                if stream.read_exact(&mut request).is_ok() {
                    let _ = stream.write_all(b"S");
                }
                std::thread::sleep(Duration::from_secs(30));
            });
        }
    });
    port
}

/// `sslrootcert=/dev/zero` and a FIFO: the worst time to the error, and the failures.
pub fn root_certs(bin: &Path, runs: usize) -> Row {
    let port = accepts_tls();
    let (mut cases, mut failures, mut worst, mut notes) = (0, 0, Duration::ZERO, Vec::new());
    for _ in 0..runs {
        let dir = tempfile::tempdir().expect("a folder");
        let fifo = dir.path().join("ca.fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|status| status.success()), "mkfifo");
        for cert in [Path::new("/dev/zero"), fifo.as_path()] {
            let url = format!(
                "postgres://u:hunter2@127.0.0.1:{port}/db?sslmode=verify-ca&sslrootcert={}&connect_timeout=20",
                cert.display()
            );
            let ran = watched(
                &mut ctxkit(bin, dir.path(), &["--db", &url, "sessions"], &[]),
                Duration::from_secs(30),
            );
            cases += 1;
            worst = worst.max(ran.elapsed);
            let stderr = ran.stderr();
            let named = stderr.contains("sslrootcert") && !stderr.contains("hunter2");
            if ran.code().is_none_or(|code| code == 0) || !named || ran.elapsed > BOUND {
                failures += 1;
                notes.push(format!(
                    "{}: {:.1} s, {:?}: {}",
                    cert.display(),
                    ran.elapsed.as_secs_f64(),
                    ran.code(),
                    stderr.trim()
                ));
            }
        }
    }
    Row {
        finding: "5. sslrootcert=/dev/zero and a FIFO (CLI, server accepting TLS)".to_owned(),
        cases,
        failure: format!(
            "no error naming sslrootcert within {} s (or the password shown)",
            BOUND.as_secs()
        ),
        failures,
        figure: format!("worst time to the error: {:.2} s", worst.as_secs_f64()),
        notes,
    }
}

/// What may come before `postgres` (the prefix) and inside the scheme (the infix).
const VARIANTS: [(&str, &str, &str); 11] = [
    ("space", " ", ""),
    ("tab", "\t", ""),
    ("newline", "\n", ""),
    ("carriage return", "\r", ""),
    ("no-break space", "\u{a0}", ""),
    ("em space", "\u{2003}", ""),
    ("byte order mark", "\u{feff}", ""),
    ("zero-width space", "\u{200b}", ""),
    ("word joiner", "\u{2060}", ""),
    ("zero-width space in the scheme", "", "\u{200b}"),
    ("soft hyphen in the scheme", "", "\u{ad}"),
];

/// Whether `dir` holds nothing.
fn empty(dir: &Path) -> bool {
    std::fs::read_dir(dir)
        .map(|mut entries| entries.next().is_none())
        .unwrap_or(false)
}

/// A URL after a prefix or with an infix: refused (exit 2, nothing created, no password) by
/// `ctxkit append --create` given it by `--db` or `CTXKIT_DATABASE_URL`, and by
/// `Engine::open`.
pub fn leading(bin: &Path, runs: usize) -> Row {
    let (mut cases, mut failures, mut notes) = (0, 0, Vec::new());
    let input = tempfile::tempdir().expect("a folder");
    let messages = input.path().join("messages.json");
    std::fs::write(&messages, r#"[{"role":"user","content":"hi"}]"#).expect("write the messages");
    let append = ["append", "s", messages.to_str().expect("UTF-8"), "--create"];
    for run in 0..runs {
        for (name, prefix, infix) in VARIANTS {
            let url = format!("{prefix}postgres{infix}://user{run}:hunter2@db.example/app");
            for by_env in [false, true] {
                let dir = tempfile::tempdir().expect("a folder");
                let mut command = if by_env {
                    ctxkit(
                        bin,
                        dir.path(),
                        &append,
                        &[("CTXKIT_DATABASE_URL", url.as_str())],
                    )
                } else {
                    let mut args = vec!["--db", url.as_str()];
                    args.extend_from_slice(&append);
                    ctxkit(bin, dir.path(), &args, &[])
                };
                let ran = watched(&mut command, Duration::from_secs(30));
                cases += 1;
                let shown = ran.stderr().contains("hunter2") || ran.stdout().contains("hunter2");
                if ran.code() != Some(2) || !empty(dir.path()) || shown {
                    failures += 1;
                    let how = if by_env {
                        "CTXKIT_DATABASE_URL"
                    } else {
                        "--db"
                    };
                    notes.push(format!(
                        "{name} by {how}: exit {:?}, folder empty: {}, password shown: {shown}",
                        ran.code(),
                        empty(dir.path())
                    ));
                }
            }
            // The library, from inside an empty folder (a relative path would be made there).
            let dir = tempfile::tempdir().expect("a folder");
            let home = std::env::current_dir().expect("the working directory");
            std::env::set_current_dir(dir.path()).expect("enter the folder");
            let opened =
                ctxkit::Engine::open(&url, dir.path(), ctxkit::EngineConfig::default()).map(|_| ());
            let left_empty = empty(dir.path());
            std::env::set_current_dir(home).expect("back");
            cases += 1;
            let refused = opened
                .as_ref()
                .is_err_and(|e| !e.to_string().contains("hunter2"));
            if !refused || !left_empty {
                failures += 1;
                notes.push(format!(
                    "{name} by Engine::open: {opened:?}, folder empty: {left_empty}"
                ));
            }
        }
    }
    Row {
        finding: "5. a URL after whitespace or an invisible character, or one inside its scheme (11 forms; append --create by --db and by env, Engine::open)".to_owned(),
        cases,
        failure: "not refused (exit 2 / an error), a file or folder created, or the password shown".to_owned(),
        failures,
        figure: format!("refused with nothing created: {} of {cases}", cases - failures),
        notes,
    }
}

/// `postgres://` and other URLs naming no host, and an unknown host.
pub fn hosts(bin: &Path, runs: usize) -> Row {
    let (mut cases, mut failures, mut worst, mut notes) = (0, 0, Duration::ZERO, Vec::new());
    for run in 0..runs {
        let dir = tempfile::tempdir().expect("a folder");
        let no_host = [
            "postgres://",
            "postgresql://",
            "postgres://user:hunter2@/db",
            "postgres://:5432/db",
        ];
        for url in no_host {
            let ran = watched(
                &mut ctxkit(bin, dir.path(), &["--db", url, "sessions"], &[]),
                Duration::from_secs(30),
            );
            cases += 1;
            worst = worst.max(ran.elapsed);
            let stderr = ran.stderr();
            if ran.code() != Some(2)
                || !stderr.contains("names no host")
                || stderr.contains("hunter2")
            {
                failures += 1;
                notes.push(format!("{url:?}: exit {:?}: {}", ran.code(), stderr.trim()));
            }
        }
        let url =
            format!("postgres://user:hunter2@no-such-host-{run}.invalid/db?connect_timeout=5");
        let ran = watched(
            &mut ctxkit(bin, dir.path(), &["--db", &url, "sessions"], &[]),
            Duration::from_secs(30),
        );
        cases += 1;
        worst = worst.max(ran.elapsed);
        let stderr = ran.stderr();
        let advice = if stderr.contains("Temporary failure in name resolution") {
            stderr.contains("retry later")
        } else {
            stderr.contains("does not resolve") && stderr.contains("retrying cannot help")
        };
        if ran.code().is_none_or(|code| code == 0) || !advice || stderr.contains("hunter2") {
            failures += 1;
            notes.push(format!(
                "unknown host: exit {:?}: {}",
                ran.code(),
                stderr.trim()
            ));
        }
    }
    Row {
        finding: "5. postgres:// and URLs naming no host; an unknown host (.invalid)".to_owned(),
        cases,
        failure: "no host: not exit 2 naming it; unknown host: advice other than \"does not resolve, retrying cannot help\"; a password shown".to_owned(),
        failures,
        figure: format!("right message: {} of {cases}; worst time to it: {:.2} s", cases - failures, worst.as_secs_f64()),
        notes,
    }
}
