//! `Engine::append_new`'s cost does not grow with the conversation (issue 33 item 8): counted,
//! not timed. A store that counts every message it reads back (history reads, turn loads,
//! exports) shows that, in an agent loop (a turn between two calls), handing over a
//! 2,000-message conversation plus one new message reads the log's first and last message and
//! nothing else (the turn's tail is the one the engine keeps from the turn): the same few
//! messages at 200 and at 2,000.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use ctxkit::core::compaction::Checkpoint;
use ctxkit::core::model::Entry;
use ctxkit::core::prompt::FrozenParts;
use ctxkit::core::recall::{ReadRequest, SearchOutcome, SearchRequest};
use ctxkit::core::tokens::{ModelFamily, UsageAnchor};
use ctxkit::core::turn::{Session, TurnChanges};
use ctxkit::core::{Message, Role};
use ctxkit::store::{
    AddedMemory, HistoryRead, HistoryStore, MemoryFilter, MemoryQuery, MemoryRecord, MemoryStore,
    MemoryUpdate, NewMemory, OffloadRecord, SessionHead, SessionImport, SessionInfo, SessionStore,
    SqliteStore, Store,
};
use ctxkit::{Engine, EngineConfig, Result};

/// A store that counts the messages it reads back.
struct CountingStore {
    inner: Box<dyn Store>,
    messages_read: Arc<AtomicUsize>,
}

impl SessionStore for CountingStore {
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
        let session = self.inner.load_for_turn(name)?;
        self.messages_read
            .fetch_add(session.entries.len(), Ordering::SeqCst);
        Ok(session)
    }
    fn export_session(&self, name: &str) -> Result<Session> {
        let session = self.inner.export_session(name)?;
        self.messages_read
            .fetch_add(session.entries.len(), Ordering::SeqCst);
        Ok(session)
    }
    fn append(
        &mut self,
        name: &str,
        entries: &[Entry],
        offloads: &[OffloadRecord],
        now: i64,
    ) -> Result<()> {
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

impl MemoryStore for CountingStore {
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

impl HistoryStore for CountingStore {
    fn search_history(&self, name: &str, request: &SearchRequest) -> Result<SearchOutcome> {
        self.inner.search_history(name, request)
    }
    fn read_history(&self, name: &str, request: &ReadRequest) -> Result<HistoryRead> {
        let read = self.inner.read_history(name, request)?;
        self.messages_read
            .fetch_add(read.messages.len(), Ordering::SeqCst);
        Ok(read)
    }
}

fn conversation(length: usize) -> Vec<Message> {
    (0..length)
        .map(|i| {
            let role = if i % 2 == 0 {
                Role::User
            } else {
                Role::Assistant
            };
            Message::text(role, format!("message {i} of the conversation"))
        })
        .collect()
}

/// The messages read back by one `append_new` of a `length`-message conversation plus one.
fn read_for_one_new(length: usize) -> usize {
    let dir = tempfile::tempdir().unwrap();
    let counter = Arc::new(AtomicUsize::new(0));
    let store = CountingStore {
        inner: Box::new(SqliteStore::open(dir.path().join("db")).unwrap()),
        messages_read: counter.clone(),
    };
    let mut engine =
        Engine::with_store(Box::new(store), dir.path(), EngineConfig::default()).unwrap();
    let mut history = conversation(length);
    engine.append_new("chat", history.clone()).unwrap();
    // The loop's turn: it reads the tail the next turn needs and keeps it.
    engine.prepare_turn("chat").unwrap();
    history.push(Message::text(Role::User, "one more question"));
    counter.store(0, Ordering::SeqCst);
    let outcome = engine.append_new("chat", history).unwrap();
    assert_eq!((outcome.held, outcome.recorded.recorded.len()), (length, 1));
    counter.load(Ordering::SeqCst)
}

#[test]
fn one_new_message_reads_the_same_few_messages_at_any_length() {
    let short = read_for_one_new(200);
    let long = read_for_one_new(2_000);
    assert!(
        short <= 4,
        "{short} messages read for one new message after 200"
    );
    assert_eq!(short, long, "the reads grew with the conversation");
}
