//! The system prompt of a turn, from the config and what the engine reads every turn: the
//! date, `<workdir>/AGENTS.md`, the memory precis, and whether the session has a checkpoint
//! (then the history tools' guidance is added). The core assembles it
//! ([`build_system_prompt`]); it is never stored.
//!
//! AGENTS.md is read up to one byte past its cap (the core cuts it and marks the cut), so a
//! huge file costs no more than the cap; invalid UTF-8 is replaced, not refused. A missing
//! file is no AGENTS.md; an unreadable one is a warning.

use std::io::Read;

use ctxkit_core::memory::render_precis;
use ctxkit_core::prompt::{
    build_system_prompt, OffloadGuidance, PromptParts, DEFAULT_TODO_GUIDANCE,
};
use ctxkit_core::recall::wants_history_guidance;

use super::{Engine, Event, WarningKind};
use crate::error::{Context, Result};
use crate::store::MemoryFilter;

/// The name of the project conventions file read every turn.
pub const AGENTS_MD: &str = "AGENTS.md";

/// The most live memories the precis is ranked from (the precis shows at most 30).
pub(crate) const PRECIS_CANDIDATES: usize = 10_000;

impl Engine {
    /// The memory precis of this project at `now` (ranked and bounded by the core).
    pub(crate) fn precis_at(&self, now: i64) -> Result<String> {
        let filter = MemoryFilter {
            limit: PRECIS_CANDIDATES,
            ..MemoryFilter::default()
        };
        let memories = self.store.list_memories(&self.project, &filter, now)?;
        let entries: Vec<_> = memories.iter().map(|record| record.to_entry()).collect();
        Ok(render_precis(&entries, &self.config.memory.precis))
    }

    /// This turn's system prompt for `session`; warnings go to `events`.
    pub(crate) fn system_prompt(
        &mut self,
        session: &str,
        date: String,
        now: i64,
        events: &mut Vec<Event>,
    ) -> Result<String> {
        let prompt = &self.config.prompt;
        let agents_md = if prompt.read_agents_md {
            self.read_agents_md(session, events)
        } else {
            None
        };
        let memory_precis = if self.config.memory.in_prompt {
            Some(self.precis_at(now)?)
        } else {
            None
        };
        let history_guidance = self.config.prompt.history_guidance
            && wants_history_guidance(self.store.session_head(session)?.checkpoint_through);
        let prompt = &self.config.prompt;
        let parts = PromptParts {
            base: prompt.base.clone(),
            working_directory: prompt
                .working_directory
                .clone()
                .unwrap_or_else(|| self.workdir.display().to_string()),
            date,
            agents_md,
            agents_md_max_bytes: prompt.agents_md_max_bytes,
            skills: prompt.skills.clone(),
            todo_guidance: prompt
                .todo_guidance
                .then(|| DEFAULT_TODO_GUIDANCE.to_owned()),
            offload_guidance: self.config.offload.as_ref().map(OffloadGuidance::from),
            history_guidance,
            memory_precis,
        };
        build_system_prompt(&parts).context(|| format!("session {session:?}: system prompt"))
    }

    fn read_agents_md(&mut self, session: &str, events: &mut Vec<Event>) -> Option<String> {
        let path = self.workdir.join(AGENTS_MD);
        let cap = u64::try_from(self.config.prompt.agents_md_max_bytes)
            .unwrap_or(u64::MAX)
            .saturating_add(1);
        let mut bytes = Vec::new();
        let read = std::fs::File::open(&path)
            .and_then(|file| file.take(cap).read_to_end(&mut bytes).map(|_| ()));
        match read {
            Ok(()) => Some(String::from_utf8_lossy(&bytes).into_owned()),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
            Err(error) => {
                let message = format!("{} not read: {error}", path.display());
                self.emit(
                    events,
                    Event::warning(Some(session), WarningKind::AgentsMdUnreadable, message),
                );
                None
            }
        }
    }
}
