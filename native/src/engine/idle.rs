//! [`Engine::compact_if_idle`]: compaction ahead of the cache's expiry, for the agent loop's
//! timer while the user is away.
//!
//! The decision is the core's ([`idle_decision`]): the engine measures the next view with a
//! preview, asks, and when the answer is to compact runs a turn planned with the lowered
//! budget the decision carries, answered like any turn (the configured LLM, else the
//! extractive summary) and stored like any turn. So the next real turn starts from the new
//! checkpoint and writes the small prefix. It counts as a turn for the nudges.

use ctxkit_core::compaction::Budget;
use ctxkit_core::turn::{idle_decision, IdleDecision};
use serde::Serialize;

use super::turn::Answers;
use super::{Engine, TurnResult};
use crate::error::Result;

/// What an idle check did.
#[derive(Debug, Serialize)]
pub struct IdleOutcome {
    /// The session.
    pub session: String,
    /// The next view's tokens as the check measured them (calibrated when a usage anchor
    /// applies); a view already over the trigger counts as just over it.
    pub view_tokens: u64,
    /// The core's decision.
    pub decision: IdleDecision,
    /// The compaction's turn, when the decision was to compact.
    #[serde(skip)]
    pub turn: Option<TurnResult>,
}

impl Engine {
    /// Compacts `session` now if it has been idle `idle_seconds` into a cache lifetime of
    /// `ttl_seconds` and its next view is above the policy's floor
    /// ([`ctxkit_core::compaction::Policy::idle_trigger_percent`]); otherwise says when to
    /// ask again or why not. The shell's clock gives `idle_seconds` (the CLI: the time since
    /// the session last changed).
    pub fn compact_if_idle(
        &mut self,
        session: &str,
        idle_seconds: u64,
        ttl_seconds: u64,
    ) -> Result<IdleOutcome> {
        let preview_budget = self.budget_for(session);
        let budget = self.config.budget;
        self.idle_with(session, idle_seconds, ttl_seconds, preview_budget, budget)
    }

    /// The idle check, its view previewed with `preview_budget` and decided with `budget`.
    pub(super) fn idle_with(
        &mut self,
        session: &str,
        idle_seconds: u64,
        ttl_seconds: u64,
        preview_budget: Budget,
        budget: Budget,
    ) -> Result<IdleOutcome> {
        let preview = self.run_turn(session, Answers::Offline, preview_budget)?;
        let stats = &preview.stats;
        let view_tokens = match preview.compacted {
            Some(_) => stats.trigger_tokens.saturating_add(1),
            None => stats.calibrated_tokens.unwrap_or(stats.total_tokens),
        };
        let decision = idle_decision(
            view_tokens,
            idle_seconds,
            ttl_seconds,
            &budget,
            &self.config.policy,
        );
        let turn = match decision {
            IdleDecision::Compact { budget, .. } => {
                Some(self.run_turn(session, Answers::Llm, budget)?)
            }
            IdleDecision::Wait { .. } | IdleDecision::Skip { .. } => None,
        };
        Ok(IdleOutcome {
            session: session.to_owned(),
            view_tokens,
            decision,
            turn,
        })
    }
}
