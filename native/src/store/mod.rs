//! Persistence: sessions (the append-only log, checkpoints, nudge state, usage anchors, offload
//! records) and long-term memories, behind traits.
//!
//! [`SessionStore`], [`MemoryStore`] and [`HistoryStore`] are what the engine needs;
//! [`SqliteStore`] is the embedded implementation (one file, one machine), [`PostgresStore`]
//! the one for fleets of workers on many machines sharing sessions and memory
//! ([`crate::Engine::open`] opens it for a `postgres://` URL). What every implementation
//! guarantees:
//! - **Append-only**: a message, once committed, is never changed or removed; `seq` numbers are
//!   strictly increasing per session and never reused. A write is one transaction: after a
//!   crash or Ctrl-C the log holds exactly the committed appends, never part of one.
//! - **Optimistic concurrency**: an append states the `seq` it writes; if another writer got
//!   there first the append fails with [`crate::Error::SeqConflict`] and writes nothing.
//! - **Checkpoints only move forward** and never cover a message that is not logged.
//! - **The system prompt is never stored**: it is rebuilt every turn.
//! - **Loading for a turn is proportional to the view**: [`SessionStore::load_for_turn`] reads
//!   the latest checkpoint and the entries after it (or after the previous turn's last `seq`,
//!   if earlier, so nudges see every new message); an append reads only the session's head
//!   ([`SessionStore::session_head`]) and, for a tool result whose call it does not hold, that
//!   call ([`SessionStore::call_tool_name`]); [`SessionStore::export_session`] reads all.
//!   [`message_rows_read`] counts the message rows a thread read, for the tests that hold a
//!   turn to this.
//! - **Durability**: a commit survives a crash of the process; [`SessionStore::sync`] makes
//!   everything committed survive a power loss too (the engine calls it once per turn).
//! - Failed calls change nothing.
//! - **Appends can be retried**: an append under an idempotency key
//!   ([`SessionStore::append_keyed`]) stores the key with its batch, so a retry after a lost
//!   acknowledgement returns the first result instead of storing again.
//! - **The log is searchable as it is written**: [`HistoryStore`] finds messages by their
//!   text (the core's [`ctxkit_core::recall::searchable_text`]) and by their offloaded outputs'
//!   full text; whatever indexes them is kept in the transaction of each append and import, so
//!   a committed message (and an offload recorded with its text) is always findable.

mod append_key;
mod append_rule;
mod assembly;
mod columns;
mod fts_query;
mod memory_types;
mod postgres;
mod read_count;
mod sqlite;

pub use append_key::{check_key, derived_key, Appended, MAX_APPEND_KEY_CHARS};
pub use fts_query::{
    fts5_match_expression, fts5_string, like_pattern, query_terms, MAX_QUERY_CHARS,
    MAX_QUERY_TERMS, MIN_TRIGRAM_CHARS,
};
pub use memory_types::{
    AddedMemory, MemoryFilter, MemoryQuery, MemoryRecord, MemoryUpdate, NewMemory,
};
pub use postgres::POSTGRES_SCHEMA_VERSION;
pub use postgres::{is_postgres_url, looks_like_database_url, PostgresOptions, PostgresStore};
pub use read_count::message_rows_read;
pub use sqlite::SCHEMA_VERSION;
pub use sqlite::{SqliteOptions, SqliteStore};

use ctxkit_core::compaction::{Checkpoint, SummaryMethod};
use ctxkit_core::memory::NudgeState;
use ctxkit_core::model::Entry;
use ctxkit_core::prompt::FrozenParts;
use ctxkit_core::recall::{HistoryMessage, ReadRequest, SearchOutcome, SearchRequest};
use ctxkit_core::tokens::{ModelFamily, UsageAnchor};
use ctxkit_core::turn::{Session, TurnChanges};
use serde::{Deserialize, Serialize};

use crate::error::Result;

/// What a session is, in numbers (for `sessions` and `stats`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionInfo {
    /// The session's name.
    pub name: String,
    /// The tokenizer family its cached estimates are for.
    pub family: ModelFamily,
    /// When it was created (unix seconds).
    pub created_at: i64,
    /// When it last changed (unix seconds).
    pub updated_at: i64,
    /// Messages in its log.
    pub messages: u64,
    /// The last `seq` (0 for an empty log).
    pub last_seq: u64,
    /// The sum of the messages' cached estimates.
    pub total_tokens: u64,
    /// Checkpoints stored.
    pub checkpoints: u64,
    /// The latest checkpoint's `through_seq` and method.
    pub latest_checkpoint: Option<(u64, SummaryMethod)>,
    /// Outputs offloaded to files.
    pub offloads: u64,
    /// Turns prepared so far (the nudge counter).
    pub turns: u64,
    /// The last usage the API reported.
    pub usage_anchor: Option<UsageAnchor>,
}

/// The few numbers that tell whether a session cached in memory is still current.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionHead {
    /// The tokenizer family.
    pub family: ModelFamily,
    /// The last `seq` (0 for an empty log).
    pub last_seq: u64,
    /// The latest checkpoint's `through_seq`.
    pub checkpoint_through: Option<u64>,
    /// The nudge state.
    pub nudge_state: NudgeState,
    /// The newest usage anchor's row id (changes whenever usage is recorded).
    pub usage_version: i64,
}

/// A tool output written to a file in place of the log's copy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OffloadRecord {
    /// The `seq` of the tool message whose output was offloaded.
    pub seq: u64,
    /// The call it answered.
    pub tool_call_id: Option<String>,
    /// The file, relative to the working directory.
    pub relative_path: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// Its lines.
    pub lines: u64,
    /// Whether the tool reported a failure.
    pub is_error: bool,
    /// The output's full text (the file's contents), when the writer passes it: every store
    /// indexes it for the history search, in the append's transaction; a store that keeps
    /// offloaded outputs ([`PostgresStore`]) also stores it, so a worker on another machine can
    /// page it ([`SessionStore::offload_text`]). Never read back by
    /// [`SessionStore::offloads`], never serialized.
    #[serde(skip)]
    pub content: Option<String>,
}

/// A whole session to store at once ([`SessionStore::import_sessions`]): a transcript from
/// elsewhere, or a session another store played.
#[derive(Debug, Clone, Copy)]
pub struct SessionImport<'a> {
    /// Its name, which must not be taken.
    pub name: &'a str,
    /// Its family, its log (numbered from 1, without gaps), its checkpoints (in order), its
    /// nudge state and its latest usage anchor.
    pub session: &'a Session,
    /// The offload records of some of its entries.
    pub offloads: &'a [OffloadRecord],
}

/// Sessions: the log, checkpoints, nudge state, usage anchors and offload records.
pub trait SessionStore {
    /// Creates an empty session. Fails with [`crate::Error::SessionExists`] if the name is
    /// taken, and on an empty name.
    fn create_session(&mut self, name: &str, family: ModelFamily, now: i64) -> Result<()>;

    /// Every session, most recently updated first.
    fn list_sessions(&self) -> Result<Vec<SessionInfo>>;

    /// One session's numbers; [`crate::Error::NoSuchSession`] if there is none.
    fn session_info(&self, name: &str) -> Result<SessionInfo>;

    /// The numbers that tell whether a cached copy of the session is current.
    fn session_head(&self, name: &str) -> Result<SessionHead>;

    /// What a turn needs: the latest checkpoint, the entries after it (or after the nudge
    /// state's `last_seq`, if that is earlier), the nudge state and the latest usage anchor.
    fn load_for_turn(&self, name: &str) -> Result<Session>;

    /// The whole session: every entry and every checkpoint.
    fn export_session(&self, name: &str) -> Result<Session>;

    /// The name of the tool whose call `call_id` a tool result to be logged at `seq` answers:
    /// the call among the assistant messages of the [`ctxkit_core::turn::CALL_LOOKBACK`] seqs
    /// before it (the core's [`ctxkit_core::turn::tool_name_for_result`] bound), newest first;
    /// `None` when none there makes it. Both backends read those messages only, never the
    /// log; this default (for other stores) looks in what a turn loads.
    fn call_tool_name(&self, name: &str, seq: u64, call_id: &str) -> Result<Option<String>> {
        let _ = seq;
        let session = self.load_for_turn(name)?;
        Ok(ctxkit_core::turn::tool_name_for_result(&session.entries, call_id).map(str::to_owned))
    }

    /// Appends `entries` (their `seq`s must continue the log: the first is `last_seq + 1`)
    /// and the offload records of some of them, in one transaction.
    fn append(
        &mut self,
        name: &str,
        entries: &[Entry],
        offloads: &[OffloadRecord],
        now: i64,
    ) -> Result<()>;

    /// [`SessionStore::append`] under the idempotency key `key` (see [`Appended`]), in one
    /// transaction: when the session already holds a batch stored under `key`, nothing is
    /// written and that batch's seqs come back ([`Appended::Repeated`]); else the entries and
    /// the key are stored. With `create` (the family), a missing session is created in the same
    /// transaction. Both backends keep keys; this default (for other stores) refuses.
    fn append_keyed(
        &mut self,
        name: &str,
        key: &str,
        create: Option<ModelFamily>,
        entries: &[Entry],
        offloads: &[OffloadRecord],
        now: i64,
    ) -> Result<Appended> {
        let _ = (name, create, entries, offloads, now);
        Err(crate::Error::invalid(
            "key",
            format!("{key:?}: this store keeps no append keys"),
        ))
    }

    /// Creates a session holding `entries` (numbered from 1), in one transaction: either the
    /// whole session is stored or nothing is.
    fn import_session(
        &mut self,
        name: &str,
        family: ModelFamily,
        entries: &[Entry],
        now: i64,
    ) -> Result<()>;

    /// Creates every session of `sessions`, whole, and adds `memories` (in `project`, each
    /// deduplicated as [`MemoryStore::add_memory`] does), in one transaction: everything is
    /// stored or, on any failure (a name taken, by the store or twice in `sessions`:
    /// [`crate::Error::SessionExists`]), nothing. Returns what happened to each memory.
    fn import_sessions(
        &mut self,
        sessions: &[SessionImport<'_>],
        memories: &[NewMemory],
        project: &str,
        now: i64,
    ) -> Result<Vec<AddedMemory>>;

    /// Stores a checkpoint; it must move forward and cover only logged messages.
    fn add_checkpoint(&mut self, name: &str, checkpoint: &Checkpoint, now: i64) -> Result<()>;

    /// Ends a turn in one transaction: stores the checkpoint the turn made (if any), the nudge
    /// state for the next turn, and `memories` (what extraction found, in `project`; each
    /// deduplicated as [`MemoryStore::add_memory`] does). Returns what happened to each memory.
    /// On any failure nothing is stored.
    fn finish_turn(
        &mut self,
        name: &str,
        changes: &TurnChanges,
        memories: &[NewMemory],
        project: &str,
        now: i64,
    ) -> Result<Vec<AddedMemory>>;

    /// Records the real usage the API reported (the calibration anchor of later turns);
    /// returns the session's new [`SessionHead::usage_version`].
    fn record_usage(&mut self, name: &str, anchor: &UsageAnchor, now: i64) -> Result<i64>;

    /// The system prompt's parts frozen for the session (the core's
    /// [`ctxkit_core::prompt::freeze_prompt`]), byte for byte as stored; `None` before its
    /// first turn stored them.
    fn frozen_prompt(&self, name: &str) -> Result<Option<FrozenParts>>;

    /// Stores `parts` as the session's frozen prompt parts, in place of any before.
    fn store_frozen_prompt(&mut self, name: &str, parts: &FrozenParts) -> Result<()>;

    /// The session's offload records, in `seq` order.
    fn offloads(&self, name: &str) -> Result<Vec<OffloadRecord>>;

    /// The full text of the output offloaded to `relative_path` (an [`OffloadRecord`]'s) in
    /// session `name`, when this store keeps offloaded outputs ([`PostgresStore`] does, so an
    /// output is readable on every machine); `None` when it does not (SQLite: the file is the
    /// only copy) or holds no such output.
    fn offload_text(&self, name: &str, relative_path: &str) -> Result<Option<String>> {
        let _ = (name, relative_path);
        Ok(None)
    }

    /// Whether any session's offload record names `relative_path` (a committed row: how an
    /// open tells a killed writer's offload file that reached the store from one that did
    /// not, see [`crate::offload::remove_orphaned_offloads`]).
    fn offload_recorded(&self, relative_path: &str) -> Result<bool>;

    /// Makes every commit so far durable against power loss, not only against a crash of the
    /// process (SQLite: a WAL checkpoint). Cheap to call when there is nothing new.
    fn sync(&mut self) -> Result<()>;
}

/// Long-term memories. `project` is the project the caller works in (its working directory);
/// project-scoped memories of other projects are invisible to it. `now` decides expiry.
pub trait MemoryStore {
    /// Adds a memory, or finds the live duplicate it would repeat (normalized content equal,
    /// visible in `project`) and returns that instead, unchanged.
    fn add_memory(&mut self, project: &str, memory: &NewMemory, now: i64) -> Result<AddedMemory>;

    /// Changes the fields `update` sets on a live memory and returns it.
    fn update_memory(&mut self, id: i64, update: &MemoryUpdate, now: i64) -> Result<MemoryRecord>;

    /// One memory, live or not (`None` when the id was never used).
    fn get_memory(&self, id: i64) -> Result<Option<MemoryRecord>>;

    /// Live memories matching `query` (full text, trigram; a LIKE for queries too short for
    /// trigrams), best match first. Increments the use count of what it returns.
    fn search_memories(
        &mut self,
        project: &str,
        query: &MemoryQuery,
        now: i64,
    ) -> Result<Vec<MemoryRecord>>;

    /// Memories visible in `project`, newest first; disabled and expired ones only when the
    /// filter asks.
    fn list_memories(
        &self,
        project: &str,
        filter: &MemoryFilter,
        now: i64,
    ) -> Result<Vec<MemoryRecord>>;

    /// Soft-deletes a memory (it stays in the database, disabled). False when it was not live.
    fn disable_memory(&mut self, id: i64, now: i64) -> Result<bool>;

    /// Approves a live memory for the precis: a quarantined one (text from outside that
    /// addresses the model) is shown from now on, until its text changes. Approving an
    /// approved memory changes nothing. [`crate::Error::NoSuchMemory`] when it is not live.
    fn approve_memory(&mut self, id: i64, now: i64) -> Result<MemoryRecord>;
}

/// A read of a session's log by seq.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryRead {
    /// The messages of the range that exist, in order, with their tools' names.
    pub messages: Vec<HistoryMessage>,
    /// The session's last seq (0 for an empty log).
    pub last_seq: u64,
}

/// The history tools' reads of a session's complete log.
pub trait HistoryStore {
    /// The messages of `name` matching `request`, by the core's two passes (the whole query,
    /// then every word of it; case-insensitive substrings of the searchable text, and of the
    /// full text of the outputs offloaded from them: such a hit carries its
    /// [`ctxkit_core::recall::OffloadMatch`]), newest first, with their tools' names. Query text
    /// is data, never search syntax.
    fn search_history(&self, name: &str, request: &SearchRequest) -> Result<SearchOutcome>;

    /// The messages of `name` in `request`'s range, with their tools' names.
    fn read_history(&self, name: &str, request: &ReadRequest) -> Result<HistoryRead>;
}

/// Everything the engine needs from a store.
pub trait Store: SessionStore + MemoryStore + HistoryStore + Send {}

impl<T: SessionStore + MemoryStore + HistoryStore + Send> Store for T {}
