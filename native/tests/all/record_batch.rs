//! `Engine::record_batch`: a batch is stored whole or not at all. A race lost to another
//! writer is retried (renumbered, offloaded again), a failure leaves no offload file behind,
//! and a missing session is created in the same transaction only when asked.
//!
//! The races are made, not waited for: a store that lets a rival connection append to the
//! session just before each of its first appends. Every test runs on SQLite and on PostgreSQL
//! ([`common::backends`]).

use std::path::{Path, PathBuf};

use crate::common::backends::Backend;
use ctxkit::core::compaction::Checkpoint;
use ctxkit::core::model::Entry;
use ctxkit::core::prompt::FrozenParts;
use ctxkit::core::recall::{ReadRequest, SearchOutcome, SearchRequest};
use ctxkit::core::tokens::{ModelFamily, UsageAnchor};
use ctxkit::core::turn::{Session, TurnChanges};
use ctxkit::core::{Message, ToolCall};
use ctxkit::store::{
    AddedMemory, HistoryRead, HistoryStore, MemoryFilter, MemoryQuery, MemoryRecord, MemoryStore,
    MemoryUpdate, NewMemory, OffloadRecord, SessionHead, SessionImport, SessionInfo, SessionStore,
    Store,
};
use ctxkit::{Engine, EngineConfig, Error, Result, APPEND_ATTEMPTS};

/// A store whose first `races` appends are each preceded by a rival's append of one message;
/// `fail` makes every append fail as a full disk would.
struct RacingStore {
    inner: Box<dyn Store>,
    rival: Box<dyn Store>,
    races: usize,
    fail: bool,
}

impl SessionStore for RacingStore {
    fn create_session(&mut self, name: &str, family: ModelFamily, now: i64) -> Result<()> {
        self.inner.create_session(name, family, now)
    }
    fn list_sessions(&self) -> Result<Vec<SessionInfo>> {
        self.inner.list_sessions()
    }
    fn session_info(&self, name: &str) -> Result<SessionInfo> {
        self.inner.session_info(name)
    }
    fn session_head(&self, name: &str) -> Result<SessionHead> {
        self.inner.session_head(name)
    }
    fn load_for_turn(&self, name: &str) -> Result<Session> {
        self.inner.load_for_turn(name)
    }
    fn export_session(&self, name: &str) -> Result<Session> {
        self.inner.export_session(name)
    }
    fn append(
        &mut self,
        name: &str,
        entries: &[Entry],
        offloads: &[OffloadRecord],
        now: i64,
    ) -> Result<()> {
        if self.fail {
            return Err(Error::invalid("disk", "full"));
        }
        if self.races > 0 {
            self.races -= 1;
            let info = self.rival.session_info(name)?;
            let entry = Entry::new(info.last_seq + 1, Message::user("rival"), info.family);
            self.rival.append(name, &[entry], &[], now)?;
        }
        self.inner.append(name, entries, offloads, now)
    }
    fn import_session(
        &mut self,
        name: &str,
        family: ModelFamily,
        entries: &[Entry],
        now: i64,
    ) -> Result<()> {
        self.inner.import_session(name, family, entries, now)
    }
    fn import_sessions(
        &mut self,
        sessions: &[SessionImport<'_>],
        memories: &[NewMemory],
        project: &str,
        now: i64,
    ) -> Result<Vec<AddedMemory>> {
        if self.races > 0 {
            // The rival creates the session first.
            self.races -= 1;
            for import in sessions {
                self.rival
                    .create_session(import.name, import.session.family, now)?;
            }
        }
        self.inner.import_sessions(sessions, memories, project, now)
    }
    fn add_checkpoint(&mut self, name: &str, checkpoint: &Checkpoint, now: i64) -> Result<()> {
        self.inner.add_checkpoint(name, checkpoint, now)
    }
    fn finish_turn(
        &mut self,
        name: &str,
        changes: &TurnChanges,
        memories: &[NewMemory],
        project: &str,
        now: i64,
    ) -> Result<Vec<AddedMemory>> {
        self.inner
            .finish_turn(name, changes, memories, project, now)
    }
    fn record_usage(&mut self, name: &str, anchor: &UsageAnchor, now: i64) -> Result<i64> {
        self.inner.record_usage(name, anchor, now)
    }
    fn frozen_prompt(&self, name: &str) -> Result<Option<FrozenParts>> {
        self.inner.frozen_prompt(name)
    }
    fn store_frozen_prompt(&mut self, name: &str, parts: &FrozenParts) -> Result<()> {
        self.inner.store_frozen_prompt(name, parts)
    }
    fn offloads(&self, name: &str) -> Result<Vec<OffloadRecord>> {
        self.inner.offloads(name)
    }
    fn offload_recorded(&self, relative_path: &str) -> Result<bool> {
        self.inner.offload_recorded(relative_path)
    }
    fn sync(&mut self) -> Result<()> {
        self.inner.sync()
    }
}

impl MemoryStore for RacingStore {
    fn add_memory(&mut self, project: &str, memory: &NewMemory, now: i64) -> Result<AddedMemory> {
        self.inner.add_memory(project, memory, now)
    }
    fn update_memory(&mut self, id: i64, update: &MemoryUpdate, now: i64) -> Result<MemoryRecord> {
        self.inner.update_memory(id, update, now)
    }
    fn get_memory(&self, id: i64) -> Result<Option<MemoryRecord>> {
        self.inner.get_memory(id)
    }
    fn search_memories(
        &mut self,
        project: &str,
        query: &MemoryQuery,
        now: i64,
    ) -> Result<Vec<MemoryRecord>> {
        self.inner.search_memories(project, query, now)
    }
    fn list_memories(
        &self,
        project: &str,
        filter: &MemoryFilter,
        now: i64,
    ) -> Result<Vec<MemoryRecord>> {
        self.inner.list_memories(project, filter, now)
    }
    fn disable_memory(&mut self, id: i64, now: i64) -> Result<bool> {
        self.inner.disable_memory(id, now)
    }

    fn approve_memory(&mut self, id: i64, now: i64) -> Result<MemoryRecord> {
        self.inner.approve_memory(id, now)
    }
}

impl HistoryStore for RacingStore {
    fn search_history(&self, name: &str, request: &SearchRequest) -> Result<SearchOutcome> {
        self.inner.search_history(name, request)
    }
    fn read_history(&self, name: &str, request: &ReadRequest) -> Result<HistoryRead> {
        self.inner.read_history(name, request)
    }
}

/// An engine over a racing store on `backend`, working in `dir`, with session `s` holding one
/// message.
fn racing_engine(backend: &Backend, dir: &Path, races: usize, fail: bool) -> Engine {
    let mut setup = backend.open();
    setup.create_session("s", ModelFamily::Claude, 1).unwrap();
    let first = Entry::new(1, Message::user("start"), ModelFamily::Claude);
    setup.append("s", &[first], &[], 1).unwrap();
    let store = RacingStore {
        inner: backend.open(),
        rival: backend.open(),
        races,
        fail,
    };
    Engine::with_store(Box::new(store), dir, EngineConfig::default()).unwrap()
}

/// A call and its big result (offloaded), then a short answer.
fn batch() -> Vec<Message> {
    vec![
        Message::assistant("", vec![ToolCall::new("c1", "bash", "{}")]),
        Message::tool_result("c1", "log line\n".repeat(3_000), false),
        Message::assistant("done", vec![]),
    ]
}

fn offload_files(dir: &Path) -> Vec<PathBuf> {
    match std::fs::read_dir(dir.join(".ctxkit/tool_results/s")) {
        Ok(entries) => entries.map(|entry| entry.unwrap().path()).collect(),
        Err(_) => Vec::new(),
    }
}

fn log_texts(backend: &Backend) -> Vec<String> {
    let store = backend.open();
    store
        .export_session("s")
        .unwrap()
        .entries
        .iter()
        .map(|entry| entry.message.text_content().into_owned())
        .collect()
}

#[test]
fn a_lost_race_is_renumbered_and_retried_and_its_stale_offload_removed() {
    for backend in
        Backend::all("a_lost_race_is_renumbered_and_retried_and_its_stale_offload_removed")
    {
        let dir = tempfile::tempdir().unwrap();
        let mut engine = racing_engine(&backend, dir.path(), 2, false);
        let outcome = engine.record_batch("s", batch(), false).unwrap();
        // Two rivals appended seq 2 and 3 first; the batch landed whole after them.
        let seqs: Vec<u64> = outcome.recorded.iter().map(|r| r.seq).collect();
        assert_eq!(seqs, [4, 5, 6]);
        let texts = log_texts(&backend);
        assert_eq!(&texts[..3], ["start", "rival", "rival"]);
        assert_eq!(texts.len(), 6);
        // The offload written for the lost attempts (seq 3, then 4) went; only seq 5's is left.
        let files = offload_files(dir.path());
        assert_eq!(files.len(), 1, "{files:?}");
        let name = files[0].file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with("0000000005-"), "{name}");
        assert!(texts[4].contains(&name), "the reference names the file");
        assert_eq!(outcome.recorded[1].offload.as_ref().unwrap().seq, 5);
    }
}

#[test]
fn a_race_lost_every_time_fails_after_the_bound_and_leaves_nothing() {
    for backend in Backend::all("a_race_lost_every_time_fails_after_the_bound_and_leaves_nothing") {
        let dir = tempfile::tempdir().unwrap();
        let mut engine = racing_engine(&backend, dir.path(), usize::MAX, false);
        let error = engine.record_batch("s", batch(), false).unwrap_err();
        assert!(matches!(error, Error::SeqConflict { .. }), "{error}");
        assert!(error.to_string().contains("another writer appended first"));
        let texts = log_texts(&backend);
        assert_eq!(
            texts.len(),
            1 + APPEND_ATTEMPTS,
            "only the rivals' messages"
        );
        assert!(texts[1..].iter().all(|text| text == "rival"));
        assert_eq!(offload_files(dir.path()), Vec::<PathBuf>::new());
    }
}

#[test]
fn a_failed_append_is_not_retried_and_removes_its_offload_files() {
    for backend in Backend::all("a_failed_append_is_not_retried_and_removes_its_offload_files") {
        let dir = tempfile::tempdir().unwrap();
        let mut engine = racing_engine(&backend, dir.path(), 0, true);
        let error = engine.record_batch("s", batch(), false).unwrap_err();
        assert!(error.to_string().contains("disk: full"), "{error}");
        assert_eq!(log_texts(&backend), ["start"]);
        assert_eq!(offload_files(dir.path()), Vec::<PathBuf>::new());
    }
}

#[test]
fn a_missing_session_is_created_with_the_batch_only_when_asked() {
    for backend in Backend::all("a_missing_session_is_created_with_the_batch_only_when_asked") {
        let dir = tempfile::tempdir().unwrap();
        let mut engine = racing_engine(&backend, dir.path(), 0, false);
        let error = engine.record_batch("new", batch(), false).unwrap_err();
        assert!(matches!(error, Error::NoSuchSession(_)), "{error}");
        let outcome = engine.record_batch("new", batch(), true).unwrap();
        assert_eq!(outcome.recorded.len(), 3);
        let info = engine.session_info("new").unwrap();
        assert_eq!((info.messages, info.offloads), (3, 1));

        // A rival creating the session first is a lost race too: the batch is appended after.
        let dir = tempfile::tempdir().unwrap();
        let backend = backend.fresh();
        let mut engine = racing_engine(&backend, dir.path(), 1, false);
        let outcome = engine.record_batch("other", batch(), true).unwrap();
        assert_eq!(outcome.recorded[0].seq, 1);
        assert_eq!(engine.session_info("other").unwrap().messages, 3);
    }
}
