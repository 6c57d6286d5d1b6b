//! Idle compaction on the proxy's timer: a conversation that has been quiet until just before
//! the provider's cache would expire is compacted then (the engine's
//! `compact_agent_if_idle`, the core's `idle_decision`), so the agent's next request writes the
//! small compacted prefix instead of the whole history again.
//!
//! [`Quiet`] remembers, for each conversation seen since the proxy started, what its idle
//! check needs of the agent's last request (its system prompt and what its tools cost) and
//! when it came. A check that compacts, or finds nothing to do, forgets the conversation
//! until its next request; one told to wait keeps it. Nothing here reads a clock: the timer
//! passes the time in.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::llm::Llm;

/// How the proxy's idle timer runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdleTimer {
    /// The provider's cache lifetime: a conversation is compacted in the margin before it ends.
    pub ttl: Duration,
    /// How often the timer looks at the quiet conversations.
    pub tick: Duration,
}

/// What the idle check of one conversation needs: the agent's last request.
#[derive(Debug, Clone)]
pub struct LastRequest {
    /// The agent's system prompt, as text.
    pub system: String,
    /// What its tool definitions cost, by the estimate.
    pub tool_tokens: u64,
    /// When it came.
    pub at: Instant,
    /// The agent's own model as the summarizer (`--summarizer upstream`), with that request's
    /// credentials, held in memory only; `None`: the extractive summary.
    pub summarizer: Option<Arc<dyn Llm>>,
}

/// The conversations an idle check may compact, each with its last request.
#[derive(Debug, Default)]
pub struct Quiet {
    sessions: HashMap<String, LastRequest>,
}

impl Quiet {
    /// Remembers `request` as `session`'s last.
    pub fn saw(&mut self, session: &str, request: LastRequest) {
        self.sessions.insert(session.to_owned(), request);
    }

    /// Forgets `session` until its next request.
    pub fn forget(&mut self, session: &str) {
        self.sessions.remove(session);
    }

    /// Each remembered session, its last request and how long it has been quiet at `now`, in
    /// whole seconds; by name, so the checks run in a stable order.
    pub fn idle_at(&self, now: Instant) -> Vec<(String, LastRequest, u64)> {
        let mut idle: Vec<(String, LastRequest, u64)> = self
            .sessions
            .iter()
            .map(|(session, last)| {
                let quiet = now.saturating_duration_since(last.at).as_secs();
                (session.clone(), last.clone(), quiet)
            })
            .collect();
        idle.sort_by(|a, b| a.0.cmp(&b.0));
        idle
    }

    /// How many sessions are remembered.
    pub fn len(&self) -> usize {
        self.sessions.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.sessions.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_request_is_kept_until_forgotten() {
        let start = Instant::now();
        let request = |system: &str, at: Instant| LastRequest {
            system: system.to_owned(),
            tool_tokens: 7,
            at,
            summarizer: None,
        };
        let mut quiet = Quiet::default();
        quiet.saw("proxy_2", request("old", start));
        quiet.saw("proxy_1", request("one", start));
        quiet.saw("proxy_2", request("new", start + Duration::from_secs(5)));
        let idle = quiet.idle_at(start + Duration::from_secs(65));
        let seen: Vec<(&str, &str, u64)> = idle
            .iter()
            .map(|(session, last, seconds)| (session.as_str(), last.system.as_str(), *seconds))
            .collect();
        assert_eq!(seen, [("proxy_1", "one", 65), ("proxy_2", "new", 60)]);
        // A clock read before the request counts as no time at all.
        assert_eq!(quiet.idle_at(start)[1].2, 0);
        quiet.forget("proxy_1");
        assert_eq!(quiet.len(), 1);
    }
}
