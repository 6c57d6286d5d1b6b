//! A turn reads what it sends (issue 36): counted, not timed. The store counts the message rows
//! each thread reads (`ctxkit::store::message_rows_read`); a turn of a session of 100 and of
//! 10,000 logged messages, with a checkpoint near the end, must read the same rows (the
//! checkpoint's tail, the new messages, the call a tool result answers), and an append must read
//! no message at all but that call, checkpoint or not. A turn that reads the log fails here.
//!
//! Where a turn must read more: the first compaction of a session with no checkpoint summarizes
//! every message since the start, so it reads them (the tail is the whole log then); after it,
//! the next turns read from its checkpoint. `ctxkit view` stores such a compaction only with
//! `--keep`; a plain view is a preview and stores nothing.

use ctxkit::core::compaction::{Budget, Checkpoint, SummaryMethod};
use ctxkit::core::memory::NudgeState;
use ctxkit::core::model::Entry;
use ctxkit::core::tokens::ModelFamily;
use ctxkit::core::turn::Session;
use ctxkit::core::{Message, ToolCall};
use ctxkit::store::{message_rows_read, SessionImport, SessionStore, SqliteStore};
use ctxkit::{Engine, EngineConfig};

/// Messages after the checkpoint in the stored sessions.
const TAIL: u64 = 10;

fn call(id: &str) -> ToolCall {
    ToolCall {
        id: id.to_owned(),
        name: "read_file".to_owned(),
        arguments: format!("{{\"path\":\"src/{id}.rs\"}}"),
        provider_fields: None,
    }
}

/// Message `seq` of a generated coding session: a request, a call, its result, in turn.
fn message(seq: u64) -> Message {
    match seq % 3 {
        1 => Message::user(format!(
            "Request {seq}: look at the parser and fix the bug."
        )),
        2 => Message::assistant(
            format!("Reading file {seq}."),
            vec![call(&format!("c{seq}"))],
        ),
        _ => Message::tool_result(
            format!("c{}", seq - 1),
            format!("fn parse_{seq}() {{}}\n"),
            false,
        ),
    }
}

/// A database in `dir` holding session `s` of `messages` messages; with `checkpoint`, one
/// through all but the last [`TAIL`] and a previous turn that ended there.
fn stored_session(dir: &std::path::Path, messages: u64, checkpoint: bool) -> std::path::PathBuf {
    let path = dir.join("ctxkit.db");
    let family = ModelFamily::Claude;
    let mut session = Session::new(family);
    session.entries = (1..=messages)
        .map(|seq| Entry::new(seq, message(seq), family))
        .collect();
    if checkpoint {
        let through = messages - TAIL;
        session.checkpoints.push(Checkpoint {
            through_seq: through,
            summary: "## Goal\n- fix the parser".to_owned(),
            method: SummaryMethod::Extractive,
            active_tasks: None,
            tokens: 12,
            made_at_turn: 1,
            pinned: Vec::new(),
            dropped_facts: Default::default(),
            compaction_block: None,
            restore: None,
        });
        session.nudge_state = NudgeState {
            turn: 1,
            last_seq: Some(through),
            turns_without_progress: 0,
        };
    }
    let mut store = SqliteStore::open(&path).unwrap();
    let import = SessionImport {
        name: "s",
        session: &session,
        offloads: &[],
    };
    store.import_sessions(&[import], &[], "p", 0).unwrap();
    path
}

/// The message rows `work` read on this thread.
fn rows_read(work: impl FnOnce()) -> u64 {
    let before = message_rows_read();
    work();
    message_rows_read() - before
}

/// A new engine (a new process's: nothing cached) on the database at `path`.
fn engine(path: &std::path::Path, dir: &std::path::Path) -> Engine {
    Engine::open(path, dir, EngineConfig::default()).unwrap()
}

/// The rows one turn of an agent loop reads in a fresh engine: the model's answer and a tool
/// result appended (the result answers a call logged before the batch), then the view.
fn turn_rows(messages: u64) -> u64 {
    let dir = tempfile::tempdir().unwrap();
    let path = stored_session(dir.path(), messages, true);
    let mut engine = engine(&path, dir.path());
    let last_call = format!("c{}", (messages - 2) / 3 * 3 + 2);
    rows_read(|| {
        let batch = vec![
            Message::tool_result(last_call, "late output", false),
            Message::assistant("Next.", vec![call("new")]),
            Message::tool_result("new", "fn new() {}", false),
        ];
        engine.record_batch("s", batch, false).unwrap();
        let turn = engine.prepare_turn("s").unwrap();
        assert_eq!(turn.stats.checkpoint_through, Some(messages - TAIL));
    })
}

#[test]
fn a_turn_reads_the_same_rows_at_100_and_10_000_messages() {
    let small = turn_rows(100);
    let large = turn_rows(10_000);
    assert_eq!(small, large, "a turn read {large} rows at 10,000 messages");
    // The tail after the checkpoint, the 3 appended messages, the one call looked up.
    assert!(large <= TAIL + 3 + 1, "a turn read {large} message rows");
}

#[test]
fn an_append_reads_no_message_but_the_call_it_names() {
    let dir = tempfile::tempdir().unwrap();
    // No checkpoint: a turn's tail would be the whole log, which an append must not load.
    let path = stored_session(dir.path(), 10_000, false);
    let mut engine = engine(&path, dir.path());
    let batch = rows_read(|| {
        let messages = vec![Message::tool_result("c9998", "late output", false)];
        engine.record_batch("s", messages, false).unwrap();
    });
    assert_eq!(batch, 1, "the batch read {batch} message rows");
    let one = rows_read(|| {
        engine.record("s", vec![Message::user("go on")]).unwrap();
    });
    assert_eq!(one, 0, "a recorded message read {one} message rows");
    assert_eq!(engine.session_info("s").unwrap().last_seq, 10_002);
}

#[test]
fn after_a_kept_compaction_turns_read_from_its_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let path = stored_session(dir.path(), 3_000, false);
    let config = EngineConfig {
        budget: Budget::for_window(32_000),
        ..EngineConfig::default()
    };
    let mut first = Engine::open(&path, dir.path(), config.clone()).unwrap();
    // The compaction summarizes the log from its start: it reads it, once.
    let compaction = rows_read(|| {
        assert!(first.prepare_turn("s").unwrap().compacted.is_some());
    });
    assert_eq!(compaction, 3_000);
    let info = first.session_info("s").unwrap();
    let (through, _) = info.latest_checkpoint.unwrap();
    let mut next = Engine::open(&path, dir.path(), config).unwrap();
    let turn = rows_read(|| {
        next.record_batch("s", vec![Message::user("and now?")], false)
            .unwrap();
        next.prepare_turn("s").unwrap();
    });
    assert_eq!(turn, 3_000 - through + 1, "the next turn read {turn} rows");
}

/// `ctxkit view` in `dir` on the database at `path`, with `extra` arguments: its standard error.
fn ctxkit_view(dir: &std::path::Path, path: &std::path::Path, extra: &[&str]) -> String {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_ctxkit"))
        .arg("--db")
        .arg(path)
        .arg("--workdir")
        .arg(dir)
        .args(["view", "s", "--window", "16000"])
        .args(extra)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stderr).unwrap()
}

#[test]
fn a_cli_view_stores_its_compaction_only_when_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = stored_session(dir.path(), 1_000, false);
    let preview = ctxkit_view(dir.path(), &path, &[]);
    assert!(
        preview.contains("compacted in memory (extractive): not stored"),
        "{preview}"
    );
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.session_info("s").unwrap().checkpoints, 0);
    let kept = ctxkit_view(dir.path(), &path, &["--keep"]);
    assert!(kept.contains("compacted (extractive): stored"), "{kept}");
    let info = store.session_info("s").unwrap();
    assert_eq!(info.checkpoints, 1);
    assert_eq!(info.turns, 1);
    // The next view starts from the stored checkpoint: nothing left to compact.
    let next = ctxkit_view(dir.path(), &path, &[]);
    assert!(!next.contains("compacted"), "{next}");
}
