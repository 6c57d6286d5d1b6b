//! The assistant's answer kept in the log as it passes to the agent (an [`Observer`] of the
//! forwarding): a 2xx JSON answer's message, or a stream's reassembled, recorded at the end of
//! the conversation's session before the agent receives the last of it. How an answer is
//! read is its API's ([`AnswerReader`]: [`AnthropicAnswer`] here, Chat Completions' in
//! `chat_answer.rs`).
//!
//! Guarantees: only a 2xx answer is kept; a stream is kept once it said it ended well
//! (Anthropic's `message_stop`, Chat Completions' `[DONE]`) and had no error (the piece holding
//! the end reaches the agent only after the record), a cut or broken one is not; an answer
//! with no message (empty content) records nothing. A failure to record is said in the
//! request's log line and never changes what the agent receives.

use std::sync::Mutex;

use ctxkit_core::Message;

use super::anthropic::answer_messages;
use super::sessions::Conversations;
use super::sse::Reassembly;
use super::upstream::Observer;

/// An answer's assistant messages: `None` when there is no complete answer to keep.
pub type Answered = Option<Result<Vec<Message>, String>>;

/// How one API's answers are read: a stream fed as it passes, or a whole body.
pub trait AnswerReader {
    /// Reads the next bytes of a stream.
    fn feed(&mut self, bytes: &[u8]);
    /// Whether the stream said it ended or broke (nothing after it changes the answer).
    fn ended(&self) -> bool;
    /// The streamed answer, once [`AnswerReader::ended`].
    fn streamed(&self) -> Answered;
    /// The answer in a whole (not streamed) body.
    fn whole(&self, body: &[u8]) -> Answered;
}

/// Anthropic Messages answers: a body's `content`, or the stream's events reassembled.
#[derive(Debug, Default)]
pub struct AnthropicAnswer(Reassembly);

impl AnswerReader for AnthropicAnswer {
    fn feed(&mut self, bytes: &[u8]) {
        self.0.feed(bytes);
    }

    fn ended(&self) -> bool {
        self.0.ended()
    }

    fn streamed(&self) -> Answered {
        self.0.content().map(|content| answer_messages(&content))
    }

    fn whole(&self, body: &[u8]) -> Answered {
        let content = serde_json::from_slice::<serde_json::Value>(body)
            .ok()
            .and_then(|body| body.get("content").cloned())?;
        Some(answer_messages(&content))
    }
}

/// Keeps one request's answer in `session`.
pub struct AnswerKeeper<'a> {
    conversations: &'a Mutex<Conversations>,
    session: &'a str,
    keep: bool,
    reader: Box<dyn AnswerReader>,
    /// What became of the answer, for the log line (empty: kept, or nothing to keep).
    pub outcome: String,
    done: bool,
}

impl<'a> AnswerKeeper<'a> {
    /// A keeper for `session`'s answer, read by `reader`.
    pub fn new(
        conversations: &'a Mutex<Conversations>,
        session: &'a str,
        reader: Box<dyn AnswerReader>,
    ) -> Self {
        AnswerKeeper {
            conversations,
            session,
            keep: false,
            reader,
            outcome: String::new(),
            done: false,
        }
    }

    /// Whether the answer was looked at to the end (kept, or found not to be kept).
    pub fn finished(&self) -> bool {
        self.done || !self.keep
    }

    fn record(&mut self, answered: Answered) {
        self.done = true;
        let Some(answered) = answered else {
            self.outcome = ", answer not kept (no complete content)".to_owned();
            return;
        };
        let messages = match answered {
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

impl std::fmt::Debug for AnswerKeeper<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnswerKeeper")
            .field("session", &self.session)
            .field("keep", &self.keep)
            .field("done", &self.done)
            .finish_non_exhaustive()
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
        self.reader.feed(bytes);
        if self.reader.ended() {
            let answered = self.reader.streamed();
            self.record(answered);
        }
    }

    fn whole(&mut self, body: &[u8]) {
        if !self.keep {
            return;
        }
        let answered = self.reader.whole(body);
        self.record(answered);
    }
}
