//! The assistant's answer kept in the log as it passes to the agent (an [`Observer`] of the
//! forwarding): a 2xx JSON answer's `content`, or a stream's content reassembled, recorded at
//! the end of the conversation's session before the agent receives the last of it.
//!
//! Guarantees: only a 2xx answer is kept; a stream is kept once it ended with `message_stop`
//! and no `error` event (the piece holding that event reaches the agent only after the
//! record), a cut or broken one is not; an answer with no message (empty content) records
//! nothing. A failure to record is said in the request's log line and never changes what the
//! agent receives.

use std::sync::Mutex;

use super::anthropic::answer_messages;
use super::sessions::Conversations;
use super::sse::Reassembly;
use super::upstream::Observer;

/// Keeps one request's answer in `session`.
#[derive(Debug)]
pub struct AnswerKeeper<'a> {
    conversations: &'a Mutex<Conversations>,
    session: &'a str,
    keep: bool,
    stream: Reassembly,
    /// What became of the answer, for the log line (empty: kept, or nothing to keep).
    pub outcome: String,
    done: bool,
}

impl<'a> AnswerKeeper<'a> {
    /// A keeper for `session`'s answer.
    pub fn new(conversations: &'a Mutex<Conversations>, session: &'a str) -> Self {
        AnswerKeeper {
            conversations,
            session,
            keep: false,
            stream: Reassembly::default(),
            outcome: String::new(),
            done: false,
        }
    }

    /// Whether the answer was looked at to the end (kept, or found not to be kept).
    pub fn finished(&self) -> bool {
        self.done || !self.keep
    }

    fn record(&mut self, content: Option<serde_json::Value>) {
        self.done = true;
        let Some(content) = content else {
            self.outcome = ", answer not kept (no complete content)".to_owned();
            return;
        };
        let messages = match answer_messages(&content) {
            Ok(messages) => messages,
            Err(problem) => {
                self.outcome = format!(", answer not kept: {problem}");
                return;
            }
        };
        let recorded = match self.conversations.lock() {
            Ok(mut conversations) => conversations
                .answered(self.session, messages)
                .map_err(|error| error.to_string()),
            Err(_) => Err("the proxy's store is unusable after an earlier failure".to_owned()),
        };
        if let Err(problem) = recorded {
            self.outcome = format!(", answer not kept: {problem}");
        }
    }
}

impl Observer for AnswerKeeper<'_> {
    fn started(&mut self, status: u16, _streamed: bool) {
        self.keep = (200..300).contains(&status);
    }

    fn piece(&mut self, bytes: &[u8]) {
        if !self.keep || self.done {
            return;
        }
        self.stream.feed(bytes);
        if self.stream.ended() {
            let content = self.stream.content();
            self.record(content);
        }
    }

    fn whole(&mut self, body: &[u8]) {
        if !self.keep {
            return;
        }
        let content = serde_json::from_slice::<serde_json::Value>(body)
            .ok()
            .and_then(|body| body.get("content").cloned());
        self.record(content);
    }
}
