//! The engine: the context half of an agent loop, over a store and a working directory.
//!
//! Per session, an agent loop calls:
//! 1. [`Engine::prepare_turn`]: reads the clock and AGENTS.md, renders memory, builds the
//!    system prompt, plans, answers a summary request (LLM or extractive) and stores the
//!    checkpoint, stores the nudge state, and returns the view to send;
//! 2. [`Engine::record_batch`]: what came back (the assistant message, tool results), each
//!    message offloaded if big, all appended in one transaction (or [`Engine::record`]: each
//!    in its own);
//!    A framework adapter, which holds the whole conversation, calls [`Engine::append_new`]
//!    instead: only what the log does not hold yet is appended (decided by content).
//! 3. [`Engine::record_usage`]: the real input tokens the API reported for the view, the
//!    calibration anchor of the next turns.
//!
//! While the user is away, the loop's timer may call [`Engine::compact_if_idle`]: it compacts
//! a big session just before the provider's cache of it expires, so the next turn writes the
//! small prefix.
//!
//! When the model calls a history tool ([`Engine::history_tools`]: `search_history`,
//! `read_history`, `read_offload`), [`Engine::execute_tool`] answers it from the session's
//! complete log; the system prompt tells the model about them once the session has a checkpoint.
//!
//! Every decision is a core call: a turn is the core's [`ctxkit_core::TurnDriver`], which the
//! engine answers with the store, files and the LLM; it reads, writes and calls, and decides
//! nothing. The engine keeps each session's tail (what
//! the next turn reads) in memory, and checks with one small query per call that no other
//! process changed the session meanwhile; if one did, the tail is read again.
//!
//! Guarantees: a call that fails leaves the store as it was (earlier messages of an
//! [`Engine::record`] call stay recorded: each is its own transaction; a
//! [`Engine::record_batch`] stores all or nothing); a summarizer or an
//! offload never fails a turn (they fall back and report a [`Event::Warning`]); the system
//! prompt is never stored.

mod agent_turn;
mod append_new;
mod background;
mod config;
mod events;
mod history;
mod idle;
mod import;
mod keyed;
mod memory;
mod prompt;
mod record;
mod tool_budget;
mod turn;
mod turn_llm;
mod usage;
mod view;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ctxkit_core::turn::{turn_tail_after, Session};

pub use append_new::{AppendedNew, Fork};
pub use config::{EngineConfig, MemoryOptions, PromptConfig};
pub use events::{Event, WarningKind};
pub use idle::IdleOutcome;
pub use keyed::AppendKey;
pub use record::{RecordOutcome, RecordedMessage, APPEND_ATTEMPTS};
pub use turn::TurnResult;

use crate::clock::{Clock, SystemClock};
use crate::error::{Error, Result};
use crate::files::prepare_database_inside;
use crate::llm::{Llm, SummarizerConfig};
use crate::offload::{
    offload_page_of_text, read_offload_page, remove_orphaned_offloads, OffloadPage,
};
use crate::store::{
    is_postgres_url, PostgresOptions, PostgresStore, SessionHead, SessionInfo, SqliteOptions,
    SqliteStore, Store,
};

/// A session's tail kept between calls, with the usage version it was read at.
#[derive(Debug)]
struct CachedSession {
    session: Session,
    usage_version: i64,
}

impl CachedSession {
    /// True when the store's head says nothing changed since this was read or written.
    fn is_current(&self, head: &SessionHead) -> bool {
        let session = &self.session;
        session.family == head.family
            && session.next_seq().saturating_sub(1) == head.last_seq
            && session.latest_checkpoint().map(|c| c.through_seq) == head.checkpoint_through
            && session.nudge_state == head.nudge_state
            && self.usage_version == head.usage_version
    }

    /// Drops the entries the next turn will not read (what
    /// [`crate::store::SessionStore::load_for_turn`] would not load: the core's
    /// [`turn_tail_after`] rule), so a long session's cache stays the size of its view.
    fn trim_to_turn_tail(&mut self) {
        let session = &mut self.session;
        let through = session.latest_checkpoint().map(|c| c.through_seq);
        if let Some(after) = turn_tail_after(through, &session.nudge_state) {
            let keep_from = session.entries.partition_point(|entry| entry.seq <= after);
            session.entries.drain(..keep_from);
        }
    }
}

/// Receives every event the engine produces.
pub type EventSink = Box<dyn FnMut(&Event) + Send>;

/// The per-turn engine (see the module doc).
pub struct Engine {
    store: Box<dyn Store>,
    workdir: PathBuf,
    /// The project key of project-scoped memories: the canonical working directory.
    project: String,
    config: EngineConfig,
    llm: Option<Arc<dyn Llm>>,
    /// Background compaction, per session (in memory).
    background: background::Jobs,
    /// When each session's last prepared turn was (the agent's model call follows it), for
    /// the core's [`ctxkit_core::turn::cache_expired`] rule; in memory, so a new process takes
    /// its first turn as warm.
    last_turn_at: BTreeMap<String, i64>,
    /// The sessions whose next turn refreshes the frozen prompt parts
    /// ([`Engine::refresh_prompt`]).
    prompt_refresh: BTreeSet<String>,
    /// The sessions whose prompt is only ctxkit's parts about the context
    /// ([`Engine::set_context_prompt`]; in memory: the adapter says so before every turn).
    context_prompts: BTreeSet<String>,
    /// The tool definitions' tokens per session ([`Engine::set_tool_schemas`]; in memory).
    tool_schema_tokens: BTreeMap<String, u64>,
    clock: Box<dyn Clock>,
    sessions: BTreeMap<String, CachedSession>,
    sink: Option<EventSink>,
    /// Offload files stay pending after this engine's store commits their rows (a replay's
    /// scratch engine: the rows reach the database only when the session is adopted).
    offloads_pending: bool,
    /// The agent's own system prompt for the turn being prepared
    /// ([`Engine::prepare_agent_turn`]); `None`: ctxkit builds the prompt.
    agent_system: Option<String>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("workdir", &self.workdir)
            .field("config", &self.config)
            .field("llm", &self.llm.as_ref().map(|llm| llm.describe()))
            .field("clock", &self.clock)
            .field("cached_sessions", &self.sessions.len())
            .finish_non_exhaustive()
    }
}

impl Engine {
    /// Opens the SQLite database at `db_path` (created if missing) for the project in
    /// `workdir` (which must exist). A `db_path` that is a `postgres://` (or `postgresql://`)
    /// URL opens that PostgreSQL database instead ([`PostgresStore`], its schema migrated),
    /// the store a fleet of workers shares.
    pub fn open(
        db_path: impl AsRef<Path>,
        workdir: impl AsRef<Path>,
        config: EngineConfig,
    ) -> Result<Self> {
        if let Some(url) = postgres_url(db_path.as_ref())? {
            let store = PostgresStore::open(url)?;
            return Engine::with_store(Box::new(store), workdir, config).map(Engine::after_open);
        }
        // Under the working directory the database's folders are opened through held handles
        // first, refusing links: a linked `.ctxkit` must not get the database made where it
        // leads.
        // SQLite opens it through that held folder, and the files it opened are checked to be
        // the folder's before anything is written (a `.ctxkit` swapped for a link meanwhile:
        // `Error::FolderChanged`).
        let mut store = match prepare_database_inside(workdir.as_ref(), db_path.as_ref(), true)? {
            Some(folder) => SqliteStore::open_in(folder, SqliteOptions::default())?,
            None => SqliteStore::open(db_path)?,
        };
        // Outputs offloaded before the store kept their text (schema 5) become searchable.
        let workdir_path: &Path = workdir.as_ref();
        store.index_offload_files(&mut |path| {
            crate::offload::read_offload_text(workdir_path, path).ok()
        })?;
        Engine::with_store(Box::new(store), workdir, config).map(Engine::after_open)
    }

    /// What an open that may write does first: offload files that killed writers left without
    /// a row are removed. Best effort: an open never fails for it (the files stay, and the
    /// next open tries again).
    fn after_open(self) -> Engine {
        let _ = self.remove_orphaned_offloads();
        self
    }

    /// Opens the existing SQLite database at `db_path` read-only
    /// ([`SqliteStore::open_read_only`]: nothing is created, migrated or written) for the
    /// project in `workdir`. Reads work; every write fails. For programs that only look:
    /// a read that overlapped a writer fails with [`Error::DatabaseChanged`], and reading
    /// again from a new engine gives a consistent answer. A `postgres://` URL opens that
    /// PostgreSQL database with every write refused ([`PostgresOptions::read_only`]; each read
    /// is one snapshot, so it never overlaps a writer).
    pub fn open_read_only(
        db_path: impl AsRef<Path>,
        workdir: impl AsRef<Path>,
        config: EngineConfig,
    ) -> Result<Self> {
        if let Some(url) = postgres_url(db_path.as_ref())? {
            let options = PostgresOptions {
                read_only: true,
                ..PostgresOptions::default()
            };
            let store = PostgresStore::open_with(url, options)?;
            return Engine::with_store(Box::new(store), workdir, config);
        }
        let store = match prepare_database_inside(workdir.as_ref(), db_path.as_ref(), false)? {
            Some(folder) => SqliteStore::open_read_only_in(folder, SqliteOptions::default())?,
            None => SqliteStore::open_read_only(db_path)?,
        };
        Engine::with_store(Box::new(store), workdir, config)
    }

    /// An engine over any store.
    pub fn with_store(
        store: Box<dyn Store>,
        workdir: impl AsRef<Path>,
        config: EngineConfig,
    ) -> Result<Self> {
        let workdir = workdir
            .as_ref()
            .canonicalize()
            .map_err(|e| Error::io("resolve the working directory", workdir.as_ref(), e))?;
        let llm = match &config.summarizer {
            SummarizerConfig::Extractive => None,
            SummarizerConfig::Llm(endpoint) => Some(Arc::from(endpoint.client())),
        };
        Ok(Engine {
            store,
            project: workdir.to_string_lossy().into_owned(),
            workdir,
            config,
            llm,
            background: background::Jobs::default(),
            last_turn_at: BTreeMap::new(),
            prompt_refresh: BTreeSet::new(),
            context_prompts: BTreeSet::new(),
            tool_schema_tokens: BTreeMap::new(),
            clock: Box::new(SystemClock),
            sessions: BTreeMap::new(),
            sink: None,
            offloads_pending: false,
            agent_system: None,
        })
    }

    /// Keeps the offload files this engine writes pending (their marks in place) after its
    /// store commits their rows: for an engine over a scratch store whose session another
    /// engine adopts ([`Engine::adopt_session`] drops the marks once the rows are in its
    /// store). If this process dies first, the next open removes the files.
    pub fn keep_offloads_pending(mut self) -> Self {
        self.offloads_pending = true;
        self
    }

    /// Resolves what killed writers left in the offload folder
    /// ([`crate::offload::remove_orphaned_offloads`]: a file whose writer died keeps its name
    /// when a committed row names it, else is removed); returns how many files were removed.
    /// [`Engine::open`] calls it; files of running processes are never touched.
    pub fn remove_orphaned_offloads(&self) -> Result<usize> {
        let Some(policy) = &self.config.offload else {
            return Ok(0);
        };
        let store = self.store.as_ref();
        remove_orphaned_offloads(&self.workdir, &policy.folder, |path| {
            store.offload_recorded(path)
        })
    }

    /// Uses `clock` instead of the system clock.
    pub fn with_clock(mut self, clock: impl Clock + 'static) -> Self {
        self.clock = Box::new(clock);
        self
    }

    /// Uses `llm` as the summarizer (and memory extractor), whatever the config says.
    pub fn with_llm(mut self, llm: Box<dyn Llm>) -> Self {
        self.llm = Some(Arc::from(llm));
        self
    }

    /// Uses `llm` as the summarizer from now on (`None`: the configured one's place is
    /// empty, and summaries are extractive), for a caller whose summarizer changes between
    /// turns (the proxy asks each agent's own model with that agent's credentials).
    pub fn set_llm(&mut self, llm: Option<Arc<dyn Llm>>) {
        self.llm = llm;
    }

    /// Passes every event to `sink` as it happens.
    pub fn on_event(&mut self, sink: impl FnMut(&Event) + Send + 'static) {
        self.sink = Some(Box::new(sink));
    }

    /// The working directory (canonical).
    pub fn workdir(&self) -> &Path {
        &self.workdir
    }

    /// The configuration.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// Creates an empty session whose estimates are for the policy's family.
    pub fn create_session(&mut self, name: &str) -> Result<SessionInfo> {
        let now = self.clock.now_unix();
        self.store
            .create_session(name, self.config.policy.family, now)?;
        self.store.session_info(name)
    }

    /// Every session, most recently updated first.
    pub fn list_sessions(&self) -> Result<Vec<SessionInfo>> {
        self.store.list_sessions()
    }

    /// One session's numbers.
    pub fn session_info(&self, name: &str) -> Result<SessionInfo> {
        self.store.session_info(name)
    }

    /// `limit` lines from line `offset` (from 0) of the output offloaded from `session`'s
    /// message `seq`, read through held folders (a symbolic link on the way is refused; see
    /// [`crate::offload::read_offload_page`]). When the file is not there (the output was
    /// offloaded by a worker on another machine) and the store keeps offloaded outputs
    /// ([`crate::store::SessionStore::offload_text`]: PostgreSQL), the page is read from the
    /// store. A message that was not offloaded is [`Error::InvalidInput`] naming it.
    pub fn read_offload(
        &self,
        session: &str,
        seq: u64,
        offset: u64,
        limit: u64,
    ) -> Result<OffloadPage> {
        let records = self.store.offloads(session)?;
        let Some(record) = records.iter().find(|record| record.seq == seq) else {
            return Err(Error::invalid(
                "seq",
                format!("message {seq} of session {session:?} was not offloaded"),
            ));
        };
        match read_offload_page(&self.workdir, &record.relative_path, offset, limit) {
            Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                match self.store.offload_text(session, &record.relative_path)? {
                    Some(text) => Ok(offload_page_of_text(&text, offset, limit)),
                    None => read_offload_page(&self.workdir, &record.relative_path, offset, limit),
                }
            }
            other => other,
        }
    }

    /// The whole session: every message and checkpoint.
    pub fn export_session(&self, name: &str) -> Result<Session> {
        self.store.export_session(name)
    }

    /// The store (for reads the engine does not wrap).
    pub fn store(&self) -> &dyn Store {
        self.store.as_ref()
    }

    /// Reports `event` to the sink and adds it to `events`.
    fn emit(&mut self, events: &mut Vec<Event>, event: Event) {
        if let Some(sink) = &mut self.sink {
            sink(&event);
        }
        events.push(event);
    }
}

/// The URL in `db`, when it names a PostgreSQL database rather than a SQLite file; an error
/// when `db` has the shape of a database URL ctxkit does not speak (another scheme, a case
/// variant, whitespace before `postgres://`), which must never become a SQLite path (folders
/// named after the URL, password included). The message does not repeat the URL.
fn postgres_url(db: &Path) -> Result<Option<&str>> {
    let Some(text) = db.to_str() else {
        return Ok(None);
    };
    if is_postgres_url(text) {
        return Ok(Some(text));
    }
    if crate::store::looks_like_database_url(text) {
        return Err(Error::InvalidInput {
            field: "db".to_owned(),
            problem: "looks like a database URL, but ctxkit speaks only postgres:// and \
                      postgresql:// (lowercase, with nothing before them, not even a space) URLs \
                      and SQLite file paths"
                .to_owned(),
        });
    }
    Ok(None)
}

/// The session's tail, from the cache when the store says it is current, else read again.
fn cached_session<'c>(
    store: &dyn Store,
    cache: &'c mut BTreeMap<String, CachedSession>,
    name: &str,
) -> Result<&'c mut Session> {
    let head = store.session_head(name)?;
    let current = cache
        .get(name)
        .is_some_and(|cached| cached.is_current(&head));
    if !current {
        let mut session = store.load_for_turn(name)?;
        // The summarizer's circuit breaker is this process's, not the store's: a reload keeps it.
        if let Some(cached) = cache.get(name) {
            session.summarizer_breaker = cached.session.summarizer_breaker;
        }
        cache.insert(
            name.to_owned(),
            CachedSession {
                session,
                usage_version: head.usage_version,
            },
        );
    }
    cache
        .get_mut(name)
        .map(|cached| &mut cached.session)
        .ok_or_else(|| Error::NoSuchSession(name.to_owned()))
}
