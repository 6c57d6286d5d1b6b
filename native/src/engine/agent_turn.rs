//! A turn for an agent that brings its own system prompt and tools (the proxy,
//! `crate::proxy`): the view is planned with the agent's system text as the system prompt,
//! byte for byte (nothing of ctxkit's prompt is added, nothing is frozen or stored for it), and
//! with the agent's tool definitions counted in the budget, so the request the agent's
//! provider receives fits the window with them. The idle check (the proxy's timer) measures
//! and compacts that same view.

use super::idle::IdleOutcome;
use super::{Engine, TurnResult};
use crate::error::Result;

impl Engine {
    /// Prepares the next turn of `session` as [`Engine::prepare_turn`] does, but with
    /// `system` (the agent's own system prompt, as text) in place of the prompt ctxkit builds,
    /// and `tool_schema_tokens` (what the agent's tool definitions cost) counted in the
    /// budget. The view's first message is that system text; a caller that sends the agent's
    /// own `system` field sends the rest of the view.
    pub fn prepare_agent_turn(
        &mut self,
        session: &str,
        system: &str,
        tool_schema_tokens: u64,
    ) -> Result<TurnResult> {
        let budget = self.agent_budget(tool_schema_tokens);
        self.as_agent(system, |engine| {
            engine.run_turn(session, super::turn::Answers::Llm, budget)
        })
    }

    /// [`Engine::compact_if_idle`] for an agent that brings its own system prompt and tools
    /// (the proxy's timer): the view measured, and compacted when the core's rule says so, as
    /// [`Engine::prepare_agent_turn`] plans it with `system` and `tool_schema_tokens`.
    pub fn compact_agent_if_idle(
        &mut self,
        session: &str,
        idle_seconds: u64,
        ttl_seconds: u64,
        system: &str,
        tool_schema_tokens: u64,
    ) -> Result<IdleOutcome> {
        let budget = self.agent_budget(tool_schema_tokens);
        self.as_agent(system, |engine| {
            engine.idle_with(session, idle_seconds, ttl_seconds, budget, budget)
        })
    }

    /// The configured budget with the agent's tools counted.
    fn agent_budget(&self, tool_schema_tokens: u64) -> ctxkit_core::compaction::Budget {
        ctxkit_core::compaction::Budget {
            tool_schema_tokens,
            ..self.config.budget
        }
    }

    /// Runs `turn` with `system` as the system prompt in place of ctxkit's.
    fn as_agent<T>(
        &mut self,
        system: &str,
        turn: impl FnOnce(&mut Self) -> Result<T>,
    ) -> Result<T> {
        self.agent_system = Some(system.to_owned());
        let result = turn(self);
        // Cleared whatever happened, so a later `prepare_turn` builds ctxkit's prompt again.
        self.agent_system = None;
        result
    }
}
