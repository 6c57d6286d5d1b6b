//! `ctxkit append` and `ctxkit replay` killed with SIGKILL at random points while they offload
//! big outputs: the next open leaves no offload file without its row, and every row's file is
//! there and reads back byte for byte. Before the fix, killed runs left files that no row
//! refers to.
//!
//! What an open does with what a writer left is checked on its own too, on SQLite and
//! PostgreSQL: a running process's file in flight is never touched; a dead writer's file is
//! kept (given its name back if it lost it) when a committed row names it, else removed.
//!
//! The kills are seeded (`CTXKIT_TEST_SEED`, else a fixed seed; the seed is printed) and
//! bounded: 15 runs, each killed within the time an unkilled run of its kind takes.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::backends::{fresh_database, postgres_url};
use crate::common::project::{assert_ok, BIN};
use ctxkit::core::{Message, ToolCall};
use ctxkit::store::{SessionStore, SqliteStore};
use ctxkit::{Engine, EngineConfig};

/// How many runs are killed.
const RUNS: u64 = 15;
/// Big outputs per run.
const OUTPUTS: usize = 6;

/// The output of the tool call `id`: 30 KB, so it is offloaded.
fn output(id: &str) -> String {
    format!("output of {id}: one line of it\n").repeat(1_000)
}

/// A seeded xorshift.
struct Random(u64);

impl Random {
    fn below(&mut self, bound: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % bound.max(1)
    }
}

/// `ctxkit append s --create` of one assistant message calling `OUTPUTS` tools and their
/// results (ids `a<run>-<k>`), started.
fn start_append(workdir: &Path, run: u64) -> Child {
    let ids: Vec<String> = (0..OUTPUTS).map(|k| format!("a{run}-{k}")).collect();
    let calls: Vec<_> = ids
        .iter()
        .map(|id| serde_json::json!({"id": id, "name": "bash", "arguments": "{}"}))
        .collect();
    let mut lines =
        vec![serde_json::json!({"role": "assistant", "content": "", "tool_calls": calls})];
    for id in &ids {
        lines.push(serde_json::json!({"role": "tool", "tool_call_id": id, "content": output(id)}));
    }
    let mut child = command(workdir, &["append", "s", "--create"])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for line in lines {
        // The child may be killed before it reads everything.
        let _ = writeln!(stdin, "{line}");
    }
    drop(stdin);
    child
}

/// A transcript (OpenAI chat) whose `OUTPUTS` tool results (ids `r<k>`) are big.
fn transcript(dir: &Path) -> PathBuf {
    let mut messages = vec![serde_json::json!({"role": "user", "content": "start"})];
    for k in 0..OUTPUTS {
        let id = format!("r{k}");
        messages.push(
            serde_json::json!({"role": "assistant", "content": "", "tool_calls": [
            {"id": id, "type": "function", "function": {"name": "bash", "arguments": "{}"}}]}),
        );
        messages
            .push(serde_json::json!({"role": "tool", "tool_call_id": id, "content": output(&id)}));
        messages.push(serde_json::json!({"role": "user", "content": format!("next {k}")}));
    }
    let path = dir.join("transcript.json");
    std::fs::write(&path, serde_json::to_vec(&messages).unwrap()).unwrap();
    path
}

fn command(workdir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(BIN);
    command
        .args(args)
        .current_dir(workdir)
        .env("NO_COLOR", "1")
        .env_remove("CTXKIT_DATABASE_URL")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    command
}

/// Every file under `dir` (relative, `/`-separated), folders left out.
fn files_under(root: &Path, dir: &Path) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(files_under(root, &path));
        } else {
            found.insert(path.strip_prefix(root).unwrap().display().to_string());
        }
    }
    found
}

/// Right after a kill, before any open: every offload file has its row or its writer's
/// pending mark (so an open can tell what to remove). Returns how many have only the mark.
fn marked_only(workdir: &Path) -> usize {
    let store = SqliteStore::open_read_only(workdir.join(".ctxkit/ctxkit.db")).unwrap();
    let mut rows = BTreeSet::new();
    for session in store.list_sessions().unwrap() {
        for record in store.offloads(&session.name).unwrap() {
            rows.insert(record.relative_path);
        }
    }
    let files = files_under(workdir, &workdir.join(".ctxkit/tool_results"));
    let mut marked = 0;
    for file in files.iter().filter(|path| !path.contains("/.pending-")) {
        if rows.contains(file) {
            continue;
        }
        let (folder, name) = file.rsplit_once('/').unwrap();
        let mark = format!("{folder}/.pending-");
        let has_mark = files
            .iter()
            .any(|other| other.starts_with(&mark) && other.ends_with(&format!("-{name}")));
        assert!(has_mark, "{file}: neither a row nor a pending mark");
        marked += 1;
    }
    marked
}

/// Opens the project (the open that finds what killed runs left), then checks every offload
/// file against the rows: no file without a row, no row without its file, each file whole.
fn check_offloads(workdir: &Path) -> (usize, usize) {
    let left = files_under(workdir, &workdir.join(".ctxkit/tool_results"));
    let marks = left
        .iter()
        .filter(|path| path.contains("/.pending-"))
        .count();
    eprintln!(
        "before the open: {} files, {marks} of them pending marks",
        left.len()
    );
    let db = workdir.join(".ctxkit/ctxkit.db");
    drop(Engine::open(&db, workdir, EngineConfig::default()).unwrap());
    let store = SqliteStore::open(&db).unwrap();
    let mut rows = BTreeSet::new();
    for session in store.list_sessions().unwrap() {
        for record in store.offloads(&session.name).unwrap() {
            let path = workdir.join(&record.relative_path);
            let id = record.tool_call_id.clone().unwrap();
            let bytes = std::fs::read(&path)
                .unwrap_or_else(|e| panic!("row {}: its file: {e}", record.relative_path));
            assert!(
                bytes == output(&id).as_bytes(),
                "{}: not the output of {id} byte for byte",
                record.relative_path
            );
            rows.insert(record.relative_path);
        }
    }
    let files = files_under(workdir, &workdir.join(".ctxkit/tool_results"));
    let orphans: Vec<&String> = files.difference(&rows).collect();
    assert!(
        orphans.is_empty(),
        "{} offload file(s) without a row: {orphans:?}",
        orphans.len()
    );
    (rows.len(), files.len())
}

#[test]
fn killed_appends_and_replays_leave_no_offload_without_its_row() {
    let seed = std::env::var("CTXKIT_TEST_SEED")
        .ok()
        .and_then(|seed| seed.parse().ok())
        .unwrap_or(0x5eed_0ff1_0ad5_u64);
    eprintln!("CTXKIT_TEST_SEED={seed}");
    let mut random = Random(seed | 1);
    let workdir = tempfile::tempdir().unwrap();
    let workdir = workdir.path();
    let inputs = tempfile::tempdir().unwrap();
    let transcript = transcript(inputs.path());
    let transcript = transcript.to_str().unwrap();

    // One whole run of each kind: how long one takes, and rows whose files must survive.
    let timed = |mut child: Child| {
        let started = Instant::now();
        assert!(child.wait().unwrap().success());
        started.elapsed()
    };
    let append_takes = timed(start_append(workdir, 1_000));
    let replay_takes = timed(
        command(workdir, &["replay", transcript, "--json"])
            .spawn()
            .unwrap(),
    );

    let (mut killed, mut marks) = (0, 0);
    for run in 0..RUNS {
        let replay = random.below(2) == 0;
        let takes = if replay { replay_takes } else { append_takes };
        let mut child = if replay {
            command(workdir, &["replay", transcript, "--json"])
                .spawn()
                .unwrap()
        } else {
            start_append(workdir, run)
        };
        let wait = random.below(u64::try_from(takes.as_micros()).unwrap());
        std::thread::sleep(Duration::from_micros(wait));
        let _ = child.kill();
        let status = child.wait().unwrap();
        killed += usize::from(!status.success());
        marks += marked_only(workdir);
    }
    let (rows, files) = check_offloads(workdir);
    eprintln!(
        "{RUNS} runs ({killed} killed, {marks} files left pending by them; an append takes \
         {append_takes:?}, a replay {replay_takes:?}): {rows} rows, {files} files"
    );
    assert!(killed > 0, "no run was killed");
    assert_ok(
        &command(workdir, &["sessions"])
            .stdout(Stdio::piped())
            .output()
            .unwrap(),
        "sessions after the kills",
    );
}

/// A process id that no longer runs (a child that exited and was reaped).
fn dead_pid() -> u32 {
    let mut child = Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

#[test]
fn an_open_resolves_dead_writers_marks_and_leaves_running_ones_alone() {
    let workdir = tempfile::tempdir().unwrap();
    let mut databases = vec![workdir
        .path()
        .join(".ctxkit/ctxkit.db")
        .display()
        .to_string()];
    if let Some(url) = postgres_url("offload_kill") {
        databases.push(fresh_database(&url, "offload_kill"));
    }
    for (index, db) in databases.iter().enumerate() {
        let session = format!("s{index}");
        let folder = workdir.path().join(".ctxkit/tool_results").join(&session);
        let mut engine = Engine::open(db, workdir.path(), EngineConfig::default()).unwrap();
        engine.create_session(&session).unwrap();
        let mut recorded = Vec::new();
        for id in ["kept", "renamed"] {
            let outcome = engine
                .record(
                    &session,
                    vec![
                        Message::assistant("", vec![ToolCall::new(id, "bash", "{}")]),
                        Message::tool_result(id, output(id), false),
                    ],
                )
                .unwrap();
            let record = outcome.recorded[1].offload.clone().unwrap();
            recorded.push(workdir.path().join(&record.relative_path));
        }
        drop(engine);
        let name = |path: &Path| path.file_name().unwrap().to_str().unwrap().to_owned();
        let (dead, alive) = (dead_pid(), std::process::id());
        // A writer killed after its row committed, before it dropped its mark; another whose
        // file lost its name since (only the mark holds it).
        std::fs::hard_link(
            &recorded[0],
            folder.join(format!(".pending-{dead}-{}", name(&recorded[0]))),
        )
        .unwrap();
        std::fs::rename(
            &recorded[1],
            folder.join(format!(".pending-{dead}-{}", name(&recorded[1]))),
        )
        .unwrap();
        // A writer killed before its row: file and mark, no row.
        let orphan = folder.join("0000000090-orphan.txt");
        std::fs::write(&orphan, output("orphan")).unwrap();
        std::fs::hard_link(
            &orphan,
            folder.join(format!(".pending-{dead}-0000000090-orphan.txt")),
        )
        .unwrap();
        // A mark whose name was taken by another file since: that file is not the mark's.
        let other = folder.join("0000000091-other.txt");
        std::fs::write(&other, "someone else's").unwrap();
        std::fs::write(
            folder.join(format!(".pending-{dead}-0000000091-other.txt")),
            "x",
        )
        .unwrap();
        // A running writer's file in flight (this process): untouched.
        let in_flight = folder.join("0000000092-in-flight.txt");
        std::fs::write(&in_flight, output("in-flight")).unwrap();
        let in_flight_mark = folder.join(format!(".pending-{alive}-0000000092-in-flight.txt"));
        std::fs::hard_link(&in_flight, &in_flight_mark).unwrap();

        let engine = Engine::open(db, workdir.path(), EngineConfig::default()).unwrap();
        let mut left: Vec<String> = std::fs::read_dir(&folder)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_str().unwrap().to_owned())
            .collect();
        left.sort();
        let mut expected = vec![
            name(&recorded[0]),
            name(&recorded[1]),
            "0000000091-other.txt".to_owned(),
            "0000000092-in-flight.txt".to_owned(),
            format!(".pending-{alive}-0000000092-in-flight.txt"),
        ];
        expected.sort();
        assert_eq!(left, expected, "{db}");
        for (path, id) in recorded.iter().zip(["kept", "renamed"]) {
            assert_eq!(std::fs::read_to_string(path).unwrap(), output(id));
        }
        assert_eq!(std::fs::read_to_string(&other).unwrap(), "someone else's");
        // Once this process's mark is gone (as after its commit), nothing is left to resolve.
        std::fs::remove_file(&in_flight_mark).unwrap();
        assert_eq!(engine.remove_orphaned_offloads().unwrap(), 0);
    }
}
