//! Appending what is new of a framework's whole conversation ([`Engine::append_new`]).
//!
//! A framework adapter hands over the whole conversation at every model call; this appends only
//! the messages the session's log does not hold yet, decided by content with the core's rule
//! ([`ctxkit_core::turn::held_prefix`]: the count, the first message and the last held one), so
//! an adapter made per request or after a restart appends nothing twice. Reads per call: the
//! session's head and its first and last messages, whatever the log's length.
//!
//! A conversation that diverged from the log (edited, truncated, or another conversation under
//! the same name) is never appended to it: the first differing message is found (reading the
//! log from its start only up to there) and the conversation continues in the session the core
//! names for it ([`ctxkit_core::turn::fork_name`]), created with the whole conversation on its
//! first call and found again by every later call. The engine decides nothing: it reads and
//! writes what the core's rule asks.

use ctxkit_core::recall::{ReadRequest, READ_MAX_MESSAGES};
use ctxkit_core::turn::{
    first_difference, fork_name, held_prefix, message_fingerprint, Divergence, HeldEnds, HeldPrefix,
};
use ctxkit_core::Message;

use super::{Engine, RecordOutcome};
use crate::error::{Error, Result};

/// How many forks one call follows before it refuses (each is a divergence from the last).
pub const MAX_FORKS: usize = 16;

/// A conversation that diverged from a session's log, and where it went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fork {
    /// The session whose log it diverged from.
    pub from: String,
    /// The index of the first message that differs (the conversation's length when it is a
    /// prefix of the log).
    pub at: usize,
    /// Which check found it.
    pub reason: Divergence,
}

/// What [`Engine::append_new`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppendedNew {
    /// The session the conversation is in: the one asked for, or the fork it continues in.
    pub session: String,
    /// How many of the messages the log already held.
    pub held: usize,
    /// The new messages, recorded.
    pub recorded: RecordOutcome,
    /// The divergences followed, in order (empty when the conversation continues the log).
    pub forks: Vec<Fork>,
}

impl Engine {
    /// Appends the messages of `messages` (a framework's whole conversation, in order) that
    /// `session`'s log does not hold yet, in one transaction, creating the session if missing
    /// (see the module doc). A conversation that diverged from the log continues in a fork.
    pub fn append_new(&mut self, session: &str, messages: Vec<Message>) -> Result<AppendedNew> {
        let mut name = session.to_owned();
        let mut forks = Vec::new();
        for _ in 0..=MAX_FORKS {
            let Some(ends) = self.held_ends(&name)? else {
                let recorded = self.record_batch(&name, messages, true)?;
                return Ok(AppendedNew {
                    session: name,
                    held: 0,
                    recorded,
                    forks,
                });
            };
            match held_prefix(&ends, &messages) {
                HeldPrefix::Held { held } => {
                    let new: Vec<Message> = messages.into_iter().skip(held).collect();
                    let recorded = self.record_batch(&name, new, true)?;
                    return Ok(AppendedNew {
                        session: name,
                        held,
                        recorded,
                        forks,
                    });
                }
                HeldPrefix::Diverged(reason) => {
                    let at = self.first_difference(&name, ends.count, &messages)?;
                    let next = fork_name(&name, at, messages.get(at));
                    forks.push(Fork {
                        from: std::mem::replace(&mut name, next),
                        at,
                        reason,
                    });
                }
            }
        }
        Err(Error::invalid(
            "messages",
            format!(
                "the conversation diverged from session {session:?} and {MAX_FORKS} of its forks; \
                 give it a session of its own"
            ),
        ))
    }

    /// The count and the first and last messages' fingerprints of `name`'s log; `None` when
    /// there is no such session.
    fn held_ends(&self, name: &str) -> Result<Option<HeldEnds>> {
        let count = match self.store.session_head(name) {
            Ok(head) => head.last_seq,
            Err(Error::NoSuchSession(_)) => return Ok(None),
            Err(error) => return Err(error),
        };
        if count == 0 {
            return Ok(Some(HeldEnds::EMPTY));
        }
        // The log is numbered from 1 without gaps: its length is its last seq.
        let first = self.read_log(name, 1, 1)?;
        let last = self.read_log(name, count, count)?;
        Ok(Some(HeldEnds {
            count,
            first: first.first().map(message_fingerprint),
            last: last.first().map(message_fingerprint),
        }))
    }

    /// Where `messages` first differs from `name`'s log of `count` messages, reading the log a
    /// page at a time from its start and stopping at the first difference.
    fn first_difference(&self, name: &str, count: u64, messages: &[Message]) -> Result<usize> {
        let mut from = 1;
        while from <= count {
            let to = from.saturating_add(READ_MAX_MESSAGES - 1).min(count);
            let page = self.read_log(name, from, to)?;
            let offset = usize::try_from(from - 1).unwrap_or(usize::MAX);
            if let Some(at) = first_difference(&page, offset, messages) {
                return Ok(at);
            }
            if page.is_empty() {
                break;
            }
            from = to.saturating_add(1);
        }
        Ok(usize::try_from(count).unwrap_or(usize::MAX))
    }

    /// The messages `from..=to` of `name`'s log.
    fn read_log(&self, name: &str, from: u64, to: u64) -> Result<Vec<Message>> {
        let request = ReadRequest {
            from,
            to,
            asked_to: None,
        };
        let read = self.store.read_history(name, &request)?;
        Ok(read.messages.into_iter().map(|item| item.message).collect())
    }
}
