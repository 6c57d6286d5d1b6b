//! Whole sessions in, each call one transaction: transcripts from elsewhere
//! ([`Engine::import_session`], [`Engine::import_sessions`]) and a session another engine
//! played ([`Engine::adopt_session`]: how `ctxkit replay` stores its session only once it is
//! complete).
//!
//! Guarantee: a call that fails stores nothing; a call that succeeds stored every session it
//! was given, whole.

use ctxkit_core::model::Entry;
use ctxkit_core::turn::Session;
use ctxkit_core::Message;

use super::Engine;
use crate::error::Result;
use crate::offload::{commit_offload, read_offload_text};
use crate::store::{AddedMemory, MemoryFilter, NewMemory, SessionImport, SessionInfo};

impl Engine {
    /// Creates a session holding `messages` (a transcript from elsewhere), in one
    /// transaction. The messages are stored as they are: nothing is offloaded.
    pub fn import_session(&mut self, name: &str, messages: Vec<Message>) -> Result<SessionInfo> {
        let now = self.clock.now_unix();
        let family = self.config.policy.family;
        let entries = Entry::number(messages, 1, family);
        self.store.import_session(name, family, &entries, now)?;
        self.store.session_info(name)
    }

    /// Creates one session per `(name, messages)` (the conversations of one transcript
    /// file), all in one transaction: on any failure (a name taken, by the store or twice in
    /// `sessions`) none is stored. Nothing is offloaded. Returns each session's numbers, in
    /// order.
    pub fn import_sessions(
        &mut self,
        sessions: Vec<(String, Vec<Message>)>,
    ) -> Result<Vec<SessionInfo>> {
        let now = self.clock.now_unix();
        let family = self.config.policy.family;
        let built: Vec<(String, Session)> = sessions
            .into_iter()
            .map(|(name, messages)| {
                let mut session = Session::new(family);
                session.append(messages);
                (name, session)
            })
            .collect();
        let imports: Vec<SessionImport<'_>> = built
            .iter()
            .map(|(name, session)| SessionImport {
                name,
                session,
                offloads: &[],
            })
            .collect();
        self.store
            .import_sessions(&imports, &[], &self.project, now)?;
        built
            .iter()
            .map(|(name, _)| self.store.session_info(name))
            .collect()
    }

    /// Stores session `name` as `from` holds it (its whole log, checkpoints, nudge state,
    /// latest usage anchor and offload records), with the live memories `from` holds for this
    /// project (deduplicated against this store's), in one transaction. `from` is typically an
    /// engine over a scratch store in memory that played the session; its offload files are
    /// already in the working directory, which both engines share. MEMORY.md is rewritten
    /// when a memory was added (a failure there is only a warning, as for every memory write).
    pub fn adopt_session(&mut self, from: &Engine, name: &str) -> Result<SessionInfo> {
        let now = self.clock.now_unix();
        let session = from.store.export_session(name)?;
        // Each output's text goes with its record (a store that keeps it, PostgreSQL, stores
        // it; both index it for the history search): from `from`'s copy, else the file.
        let mut offloads = from.store.offloads(name)?;
        for record in &mut offloads {
            if record.content.is_none() {
                record.content = match from.store.offload_text(name, &record.relative_path)? {
                    Some(text) => Some(text),
                    None => read_offload_text(&self.workdir, &record.relative_path).ok(),
                };
            }
        }
        let filter = MemoryFilter {
            limit: usize::MAX,
            ..MemoryFilter::default()
        };
        let memories: Vec<NewMemory> = from
            .store
            .list_memories(&from.project, &filter, now)?
            .into_iter()
            .map(|record| NewMemory {
                title: record.title,
                content: record.content,
                category: record.category,
                importance: i64::from(record.importance),
                tags: record.tags,
                scope: record.scope,
                source: record.source,
                expires_at: record.expires_at,
            })
            .collect();
        let import = SessionImport {
            name,
            session: &session,
            offloads: &offloads,
        };
        let added = self
            .store
            .import_sessions(&[import], &memories, &self.project, now)?;
        // The rows are stored: the files `from` wrote (kept pending, in this process) are
        // theirs alone now.
        for record in &offloads {
            commit_offload(&self.workdir, &record.relative_path);
        }
        if added
            .iter()
            .any(|memory| matches!(memory, AddedMemory::Added(_)))
        {
            self.refresh_memory_file(&mut Vec::new());
        }
        self.store.session_info(name)
    }
}
