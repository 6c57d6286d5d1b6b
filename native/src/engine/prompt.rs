//! The system prompt of a turn, from the config and what the engine reads every turn: the
//! date, `<workdir>/AGENTS.md`, the memory precis, and whether the session has a checkpoint
//! (then the history tools' guidance is added). The core assembles it
//! ([`build_system_prompt`]); it is never stored, but the parts that change between
//! compactions (the date, AGENTS.md, the precis) are frozen with the session's checkpoint in
//! the store: the core decides which parts a turn uses ([`freeze_prompt`]: the frozen ones
//! until a compaction, or a refresh the caller asks for with [`Engine::refresh_prompt`]), and
//! the turn stores what it decided ([`FrozenPrompt::after_turn`]).
//!
//! AGENTS.md is read up to one byte past its cap (the core cuts it and marks the cut), so a
//! huge file costs no more than the cap; invalid UTF-8 is replaced, not refused. A missing
//! file is no AGENTS.md; an unreadable one is a warning.

use std::io::Read;

use ctxkit_core::memory::render_precis;
use ctxkit_core::prompt::{
    build_system_prompt, context_only, freeze_prompt, FrozenPrompt, OffloadGuidance, PromptParts,
    DEFAULT_TODO_GUIDANCE,
};
use ctxkit_core::recall::wants_history_guidance;

use super::{Engine, Event, WarningKind};
use crate::error::{Context, Result};
use crate::store::MemoryFilter;

/// The name of the project conventions file read every turn.
pub const AGENTS_MD: &str = "AGENTS.md";

/// The most live memories the precis is ranked from (the precis shows at most 30).
pub(crate) const PRECIS_CANDIDATES: usize = 10_000;

/// A turn's system prompts and the core's decision about its frozen parts.
pub(crate) struct TurnPrompt {
    /// The prompt the turn plans with: from the frozen parts, or from the fresh ones.
    pub(crate) prompt: String,
    /// The prompt of the parts read this turn, for a view planned from a new checkpoint.
    pub(crate) refreshed: String,
    /// What the core decided, to store after the turn; `None` for an agent's own system
    /// prompt ([`Engine::prepare_agent_turn`]), which ctxkit neither builds nor freezes.
    pub(crate) frozen: Option<FrozenPrompt>,
}

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

    /// The next turn of `session` uses the date, AGENTS.md and memory precis it reads, and
    /// freezes them anew, instead of the parts frozen at the session's latest checkpoint
    /// (which a turn uses until the next compaction, so the prompt's prefix stays cached).
    pub fn refresh_prompt(&mut self, session: &str) {
        self.prompt_refresh.insert(session.to_owned());
    }

    /// Makes `session`'s system prompt only ctxkit's parts about the context (the core's
    /// [`ctxkit_core::prompt::context_only`]: no coding-agent role, working directory,
    /// AGENTS.md, skills or todo guidance), for an agent that brings its own instructions, or,
    /// with `on` false, the whole prompt again. Kept in memory: a framework adapter says it
    /// before every turn.
    pub fn set_context_prompt(&mut self, session: &str, on: bool) {
        if on {
            self.context_prompts.insert(session.to_owned());
        } else {
            self.context_prompts.remove(session);
        }
    }

    /// This turn's system prompts for `session` (see [`TurnPrompt`]); warnings go to `events`.
    pub(crate) fn system_prompt(
        &mut self,
        session: &str,
        date: String,
        now: i64,
        events: &mut Vec<Event>,
    ) -> Result<TurnPrompt> {
        if let Some(agent) = &self.agent_system {
            // The agent's prompt, byte for byte: nothing of ctxkit's is added or frozen.
            return Ok(TurnPrompt {
                prompt: agent.clone(),
                refreshed: agent.clone(),
                frozen: None,
            });
        }
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
        let latest_checkpoint = self.store.session_head(session)?.checkpoint_through;
        let history_guidance =
            self.config.prompt.history_guidance && wants_history_guidance(latest_checkpoint);
        let prompt = &self.config.prompt;
        let read = PromptParts {
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
        let read = if self.context_prompts.contains(session) {
            context_only(read)
        } else {
            read
        };
        let stored = self.store.frozen_prompt(session)?;
        let refresh = self.prompt_refresh.contains(session);
        let frozen = freeze_prompt(&read, stored.as_ref(), latest_checkpoint, refresh);
        let what = || format!("session {session:?}: system prompt");
        let prompt = build_system_prompt(&frozen.parts).context(what)?;
        // Used for a view planned from a checkpoint this turn makes: the history tools'
        // guidance comes with it.
        let fresh = PromptParts {
            history_guidance: self.config.prompt.history_guidance,
            ..frozen.fresh.clone()
        };
        let refreshed = build_system_prompt(&fresh).context(what)?;
        Ok(TurnPrompt {
            prompt,
            refreshed,
            frozen: Some(frozen),
        })
    }

    /// Stores what a turn froze (the core's [`FrozenPrompt::after_turn`]) and ends a refresh
    /// the caller asked for.
    pub(crate) fn store_frozen_prompt(
        &mut self,
        session: &str,
        frozen: &FrozenPrompt,
        prompt_refreshed: bool,
    ) -> Result<()> {
        let checkpoint = self.store.session_head(session)?.checkpoint_through;
        if let Some(parts) = frozen.after_turn(prompt_refreshed, checkpoint) {
            self.store.store_frozen_prompt(session, &parts)?;
        }
        self.prompt_refresh.remove(session);
        Ok(())
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
