//! The tool definitions a framework sends with each request, counted in a session's budget.
//!
//! A framework adapter knows the agent's tools (its own and the history tools it adds), which
//! every request carries and the window must hold; the configured budget does not. The adapter
//! hands their definitions over before each turn ([`Engine::set_tool_schemas`]); the core
//! estimates them ([`ctxkit_core::tokens::estimate_tool_schemas`]) and the session's turns plan
//! with that many tokens reserved (`Budget::tool_schema_tokens`) in place of the configured
//! number. Kept in memory, per session: the adapter says it before every turn.

use ctxkit_core::compaction::Budget;
use ctxkit_core::tokens::estimate_tool_schemas;
use serde_json::Value;

use super::Engine;

impl Engine {
    /// Reserves room in `session`'s budget for `tools` (OpenAI `{type, function}` or Anthropic
    /// `{name, description, input_schema}` definitions, as the core estimates them), or, with
    /// `None`, the configured reserve again. Returns the tokens reserved.
    pub fn set_tool_schemas(&mut self, session: &str, tools: Option<&Value>) -> u64 {
        match tools {
            Some(tools) => {
                let tokens = estimate_tool_schemas(tools, self.config.policy.family);
                self.tool_schema_tokens.insert(session.to_owned(), tokens);
                tokens
            }
            None => {
                self.tool_schema_tokens.remove(session);
                self.config.budget.tool_schema_tokens
            }
        }
    }

    /// The budget `session`'s turns plan with: the configured one, with the tool definitions
    /// the adapter reported ([`Engine::set_tool_schemas`]) in place of its tool reserve.
    pub(crate) fn budget_for(&self, session: &str) -> Budget {
        let mut budget = self.config.budget;
        if let Some(tokens) = self.tool_schema_tokens.get(session) {
            budget.tool_schema_tokens = *tokens;
        }
        budget
    }
}
