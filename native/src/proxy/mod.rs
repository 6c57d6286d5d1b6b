//! `ctxkit proxy`: the kernel in front of an agent nobody has to change. An HTTP/1.1 server an
//! agent points its base URL at (`ANTHROPIC_BASE_URL`, `OPENAI_BASE_URL`); each model call it
//! makes is matched to a stored conversation by content, its new messages recorded, and
//! forwarded to the real provider with ctxkit's compacted view in place of the agent's `messages`; the provider's
//! answer goes back to the agent byte for byte, and its assistant message is recorded.
//!
//! One concept per file: [`http`] the agent-facing HTTP, `body` a request body's fields kept
//! raw, `split` a body read field by field, [`seen`] recent requests' lists (so a re-sent
//! history is compared, not parsed again), [`anthropic`], [`chat`] and [`responses`] the request read and rewritten (Anthropic
//! Messages, OpenAI Chat Completions, OpenAI Responses), [`conversation`] the rule for which
//! conversation a request continues, [`held`] what each session holds of the agent's wire
//! messages, [`idle`] the quiet conversations the timer compacts before the cache expires,
//! [`offload`] which of the agent's tools an offload reference names, `openai_marks` OpenAI's
//! cache marks in place of the agent's, [`sessions`]
//! those rules over the engine, [`summarizer`] the agent's own model asked for summaries
//! through the upstream, [`sse`], `chat_answer` and
//! `responses_answer` an answer reassembled, [`answer`] the answer kept in the log,
//! [`upstream`] the forwarding, [`server`] the accept loop and one request's path.
//!
//! Guarantees (each file says its own): loopback only unless a token is configured (then
//! every request must carry it); the agent's credentials reach only the configured upstream
//! (no redirect followed) and are never logged, stored or put in an error; a request refused
//! for its shape (unknown path, malformed body, over the size cap) stores nothing.

pub mod answer;
pub mod anthropic;
pub(crate) mod body;
pub mod chat;
pub(crate) mod chat_answer;
pub mod conversation;
pub mod held;
pub mod http;
pub mod idle;
pub mod offload;
mod openai_marks;
pub mod responses;
pub(crate) mod responses_answer;
pub mod seen;
pub mod server;
pub mod sessions;
mod split;
pub mod sse;
pub mod summarizer;
pub mod upstream;

pub use body::RawList;
pub use idle::IdleTimer;
pub use server::{Proxy, ProxyConfig, DEFAULT_UPSTREAM_TIMEOUT};
