//! Long-term memory through the engine: the store's memory calls for this project, each
//! write followed by a fresh `<workdir>/.ctxkit/MEMORY.md`.
//!
//! MEMORY.md is the core's precis ([`ctxkit_core::render_precis`]: ranked, at most 5,120
//! bytes by default), written atomically (temporary file in the same folder, then rename),
//! mode 0600. The memory is stored first: if the file cannot be written the write still
//! succeeded, and a [`WarningKind::MemoryFileFailed`] goes to the event sink.

use std::path::{Path, PathBuf};

use super::{Engine, Event, WarningKind};
use crate::error::Result;
use crate::files::{write_atomically_inside, CTXKIT_DIR, MEMORY_FILE};
use crate::store::{AddedMemory, MemoryFilter, MemoryQuery, MemoryRecord, MemoryUpdate, NewMemory};

impl Engine {
    /// Adds a memory to this project (or globally), unless a live duplicate exists.
    pub fn add_memory(&mut self, memory: &NewMemory) -> Result<AddedMemory> {
        let now = self.clock.now_unix();
        let added = self.store.add_memory(&self.project, memory, now)?;
        if matches!(added, AddedMemory::Added(_)) {
            self.refresh_memory_file(&mut Vec::new());
        }
        Ok(added)
    }

    /// Changes a live memory.
    pub fn update_memory(&mut self, id: i64, update: &MemoryUpdate) -> Result<MemoryRecord> {
        let now = self.clock.now_unix();
        let record = self.store.update_memory(id, update, now)?;
        self.refresh_memory_file(&mut Vec::new());
        Ok(record)
    }

    /// Soft-deletes a memory; false when it was already deleted or never existed.
    pub fn remove_memory(&mut self, id: i64) -> Result<bool> {
        let now = self.clock.now_unix();
        let removed = self.store.disable_memory(id, now)?;
        if removed {
            self.refresh_memory_file(&mut Vec::new());
        }
        Ok(removed)
    }

    /// Approves a live memory for the precis: a quarantined one (outside text that addresses
    /// the model) goes into MEMORY.md and the system prompt from now on, until its text
    /// changes. Returns it.
    pub fn approve_memory(&mut self, id: i64) -> Result<MemoryRecord> {
        let now = self.clock.now_unix();
        let record = self.store.approve_memory(id, now)?;
        self.refresh_memory_file(&mut Vec::new());
        Ok(record)
    }

    /// Live memories of this project and global ones matching `query`, best first.
    pub fn search_memories(&mut self, query: &MemoryQuery) -> Result<Vec<MemoryRecord>> {
        let now = self.clock.now_unix();
        self.store.search_memories(&self.project, query, now)
    }

    /// Memories of this project and global ones, newest first.
    pub fn list_memories(&self, filter: &MemoryFilter) -> Result<Vec<MemoryRecord>> {
        self.store
            .list_memories(&self.project, filter, self.clock.now_unix())
    }

    /// The memory precis as the system prompt and MEMORY.md show it now.
    pub fn memory_precis(&self) -> Result<String> {
        self.precis_at(self.clock.now_unix())
    }

    /// Writes `<workdir>/.ctxkit/MEMORY.md` now; returns its path.
    pub fn write_memory_file(&self) -> Result<PathBuf> {
        let precis = self.memory_precis()?;
        let relative = Path::new(CTXKIT_DIR).join(MEMORY_FILE);
        write_atomically_inside(&self.workdir, &relative, precis.as_bytes())
    }

    /// Rewrites MEMORY.md after a memory write, if configured; a failure is a warning.
    pub(crate) fn refresh_memory_file(&mut self, events: &mut Vec<Event>) {
        if !self.config.memory.write_memory_file {
            return;
        }
        if let Err(error) = self.write_memory_file() {
            let warning = Event::warning(
                None,
                WarningKind::MemoryFileFailed,
                format!("MEMORY.md not rewritten: {error}"),
            );
            self.emit(events, warning);
        }
    }
}
