//! `.ctxkit` swapped for a symbolic link to another folder while `ctxkit append` runs (someone
//! who can write the working directory, racing): every append that exits 0 is in the real
//! database, the other folder gets nothing of ctxkit's (no database made there, no change to a
//! database planted there, no frame in a `-wal` there, no message in any file), and both
//! databases pass SQLite's integrity check. Before the fix 23 of 64 acknowledged appends
//! were lost (38 of 83 with a database planted outside).
//!
//! The swap is atomic (`renameat2` with `RENAME_EXCHANGE` between `.ctxkit` and a link beside
//! it), so `.ctxkit` is always either the real folder or the link, never missing. Each run is
//! bounded by time (about 2.5 s of appends).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::project::{assert_ok, BIN};
use rustix::fs::{renameat_with, RenameFlags, CWD};

/// How long appends run while the folder is being swapped.
const RUN_FOR: Duration = Duration::from_millis(2_500);
/// Appenders running at once.
const APPENDERS: usize = 2;

/// Every file under `dir` with its bytes (folders as empty entries ending in `/`).
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut found = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            let name = path.strip_prefix(dir).unwrap().display().to_string();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                found.insert(format!("{name}/"), Vec::new());
                pending.push(path);
            } else {
                found.insert(name, std::fs::read(&path).unwrap_or_default());
            }
        }
    }
    found
}

/// `ctxkit append s` in `workdir` with one user message `text` on standard input.
fn append(workdir: &Path, text: &str, create: bool) -> std::process::Output {
    let mut args = vec!["append", "s"];
    if create {
        args.push("--create");
    }
    let mut child = Command::new(BIN)
        .args(&args)
        .current_dir(workdir)
        .env("NO_COLOR", "1")
        .env_remove("CTXKIT_DATABASE_URL")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let message = serde_json::json!({"role": "user", "content": text});
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{message}").unwrap();
    drop(stdin);
    child.wait_with_output().unwrap()
}

/// The user messages' texts in session `s` of the database at `db`, and its integrity check.
fn stored(db: &Path) -> (Vec<String>, String) {
    let connection = rusqlite::Connection::open_with_flags(
        db,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .unwrap();
    let integrity: String = connection
        .query_row("PRAGMA integrity_check", [], |row| row.get(0))
        .unwrap();
    drop(connection);
    let store = ctxkit::store::SqliteStore::open_read_only(db).unwrap();
    use ctxkit::store::SessionStore;
    let texts = store
        .export_session("s")
        .unwrap()
        .entries
        .iter()
        .map(|entry| entry.message.text_content().into_owned())
        .collect();
    (texts, integrity)
}

/// Swaps `workdir/.ctxkit` with `workdir/.ctxkit-link` (a link to `outside`) until `stop`,
/// then leaves the real folder at `.ctxkit`.
fn swapper(workdir: PathBuf, outside: PathBuf, stop: Arc<AtomicBool>) -> usize {
    let real = workdir.join(".ctxkit");
    let link = workdir.join(".ctxkit-link");
    std::os::unix::fs::symlink(&outside, &link).unwrap();
    let mut swapped = false;
    let mut swaps = 0;
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    while !stop.load(Ordering::Relaxed) {
        renameat_with(CWD, &real, CWD, &link, RenameFlags::EXCHANGE).unwrap();
        swapped = !swapped;
        swaps += 1;
        // xorshift: a wait of 0-255 µs, so the swaps land at every point of an append.
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        std::thread::sleep(Duration::from_micros(state % 256));
    }
    if swapped {
        renameat_with(CWD, &real, CWD, &link, RenameFlags::EXCHANGE).unwrap();
    }
    std::fs::remove_file(&link).unwrap();
    swaps
}

/// Runs appends against `workdir` while `.ctxkit` is swapped for a link to `outside`; checks
/// that every acknowledged append is in the real database and `outside` is as it was.
fn appends_under_swaps(plant: bool) {
    let workdir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let workdir_path = workdir.path().canonicalize().unwrap();
    assert_ok(&append(&workdir_path, "first", true), "first append");
    if plant {
        // A database of ctxkit's with the same session, made elsewhere and closed (its WAL
        // checkpointed into the file), planted where the link leads.
        let elsewhere = tempfile::tempdir().unwrap();
        assert_ok(&append(elsewhere.path(), "planted", true), "planted append");
        std::fs::copy(
            elsewhere.path().join(".ctxkit/ctxkit.db"),
            outside.path().join("ctxkit.db"),
        )
        .unwrap();
    }
    let before = snapshot(outside.path());

    let stop = Arc::new(AtomicBool::new(false));
    let swapping = {
        let (workdir, outside, stop) = (
            workdir_path.clone(),
            outside.path().to_path_buf(),
            stop.clone(),
        );
        std::thread::spawn(move || swapper(workdir, outside, stop))
    };
    let started = Instant::now();
    let appenders: Vec<_> = (0..APPENDERS)
        .map(|writer| {
            let workdir = workdir_path.clone();
            std::thread::spawn(move || {
                let mut results = Vec::new();
                for i in 0.. {
                    if started.elapsed() > RUN_FOR {
                        break;
                    }
                    let text = format!("append {writer}-{i}");
                    let output = append(&workdir, &text, false);
                    results.push((text, output));
                }
                results
            })
        })
        .collect();
    let results: Vec<_> = appenders
        .into_iter()
        .flat_map(|appender| appender.join().unwrap())
        .collect();
    stop.store(true, Ordering::Relaxed);
    let swaps = swapping.join().unwrap();

    let acknowledged: Vec<&String> = results
        .iter()
        .filter(|(_, output)| output.status.success())
        .map(|(text, _)| text)
        .collect();
    let refused: Vec<String> = results
        .iter()
        .filter(|(_, output)| !output.status.success())
        .map(|(_, output)| String::from_utf8_lossy(&output.stderr).into_owned())
        .collect();
    eprintln!(
        "plant {plant}: {} appends ({} acknowledged, {} refused), {swaps} swaps; first refusal: {:?}",
        results.len(),
        acknowledged.len(),
        refused.len(),
        refused.first()
    );

    let (texts, integrity) = stored(&workdir_path.join(".ctxkit/ctxkit.db"));
    assert_eq!(integrity, "ok", "the real database is corrupt");
    let lost: Vec<&&String> = acknowledged
        .iter()
        .filter(|text| !texts.contains(text))
        .collect();
    assert!(
        lost.is_empty(),
        "{} of {} acknowledged appends are not in the real database: {lost:?}",
        lost.len(),
        acknowledged.len()
    );
    // Nothing of ctxkit's reached the other folder: no database made there, a planted one
    // unchanged byte for byte, no frame in a `-wal` there. (SQLite opens `-wal` and `-shm` by
    // a path it resolved itself; led there in the microseconds after the resolution it may
    // create them, empty, before ctxkit sees that they are not the checked folder's and
    // refuses: see native/src/db_folder.rs.)
    let after = snapshot(outside.path());
    for (name, bytes) in &after {
        match before.get(name) {
            Some(was) => assert!(was == bytes, "{name} outside was changed"),
            None => {
                assert!(
                    name == "ctxkit.db-wal" || name == "ctxkit.db-shm",
                    "ctxkit made {name} in the folder the link leads to"
                );
                if name == "ctxkit.db-wal" {
                    assert!(bytes.is_empty(), "a frame was written to {name} outside");
                }
                let text = String::from_utf8_lossy(bytes);
                assert!(!text.contains("append "), "{name} outside holds a message");
            }
        }
    }
    assert!(
        before.keys().all(|name| after.contains_key(name)),
        "a file outside was removed"
    );
    if plant {
        let (planted, integrity) = stored(&outside.path().join("ctxkit.db"));
        assert_eq!(integrity, "ok", "the planted database is corrupt");
        assert_eq!(planted, ["planted"]);
    }
    assert!(swaps > 100 && !refused.is_empty(), "the race was not run");
    // Every refusal says what happened; none is a crash.
    for message in &refused {
        assert!(!message.contains("panicked"), "{message}");
    }
}

#[test]
fn appends_while_ctxkit_is_swapped_for_a_link_to_an_empty_folder() {
    appends_under_swaps(false);
}

#[test]
fn appends_while_ctxkit_is_swapped_for_a_link_to_a_planted_database() {
    appends_under_swaps(true);
}
