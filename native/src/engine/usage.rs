//! Recording the usage the API reported for a view: the calibration anchor of the next turns,
//! when the core finds it plausible for the view ([`ctxkit_core::tokens::check_usage`]).

use ctxkit_core::compaction::ViewStats;
use ctxkit_core::tokens::{check_usage, full_input_tokens, UsageShape};

use super::{Engine, Event};
use crate::error::{Context, Result};

impl Engine {
    /// Records the real input tokens the API reported for `view`: the calibration anchor of
    /// the next turns, when plausible for the view ([`ctxkit_core::tokens::check_usage`]). A
    /// count outside the band is refused: nothing is stored and the event is
    /// [`Event::UsageRefused`]. Returns the usage event (also sent to the sink).
    pub fn record_usage(
        &mut self,
        session: &str,
        stats: &ViewStats,
        input_tokens: u64,
    ) -> Result<Event> {
        let event = match check_usage(stats.total_tokens, stats.budget_tokens, input_tokens) {
            Err(refused) => {
                if let Some(cached) = self.sessions.get_mut(session) {
                    cached.session.refused_usage = Some(refused);
                }
                Event::UsageRefused {
                    session: session.to_owned(),
                    input_tokens,
                    estimated_tokens: stats.total_tokens,
                    reason: refused.to_string(),
                }
            }
            Ok(()) => {
                let now = self.clock.now_unix();
                let anchor = stats.usage_anchor(input_tokens);
                let version = self.store.record_usage(session, &anchor, now)?;
                if let Some(cached) = self.sessions.get_mut(session) {
                    // Checked above with the same rule, so the session takes it too.
                    let _ = cached.session.record_usage(stats, input_tokens);
                    cached.usage_version = version;
                }
                Event::TokensReported {
                    session: session.to_owned(),
                    input_tokens,
                    estimated_tokens: stats.total_tokens,
                }
            }
        };
        let mut events = Vec::new();
        self.emit(&mut events, event.clone());
        Ok(event)
    }

    /// [`Engine::record_usage`] with the provider's usage object as it came back (`shape`:
    /// Anthropic's, OpenAI's or the AI SDK's), counting its whole input: uncached + cache
    /// reads + cache writes ([`ctxkit_core::tokens::full_input_tokens`]).
    pub fn record_provider_usage(
        &mut self,
        session: &str,
        stats: &ViewStats,
        usage: &serde_json::Value,
        shape: UsageShape,
    ) -> Result<Event> {
        let input_tokens = full_input_tokens(shape, usage)
            .context(|| format!("recording the usage of session {session:?}"))?;
        self.record_usage(session, stats, input_tokens)
    }
}
