//! Summarizers: who answers a summary request (and a memory extraction request).
//!
//! - [`SummarizerConfig::Extractive`] (the default): the core's extractive summary, offline,
//!   deterministic, no network.
//! - [`SummarizerConfig::Llm`] with [`Api::OpenAiChat`]: any OpenAI-compatible Chat
//!   Completions endpoint (OpenAI, vLLM, llama.cpp's server, Ollama's `/v1`).
//! - [`SummarizerConfig::Llm`] with [`Api::AnthropicMessages`]: the Anthropic Messages API.
//! - [`SummarizerConfig::Llm`] with [`Api::AnthropicCompaction`]: Anthropic's server
//!   compaction (`anthropic-compaction`): the summary is the text of the signed `compaction`
//!   block the API answers with, and the block is kept beside the checkpoint for Anthropic
//!   views ([`AnthropicCompaction`]).
//! - [`SummarizerConfig::Llm`] with [`Api::ResponsesCompaction`]: OpenAI Responses compaction
//!   (`openai-responses-compaction`): the answer is an opaque `compaction` item, kept beside
//!   the checkpoint for Responses views; the checkpoint's plaintext summary is the extractive
//!   one ([`ResponsesCompaction`]).
//!
//! HTTP goes through `ureq` 3: blocking (the engine's turn is synchronous, so no async
//! runtime is pulled in), small, with rustls (no system OpenSSL) and per-phase timeouts.
//! Every call has a connect timeout, read timeouts, a bounded response size, and retries with
//! exponential backoff on 429 and 5xx (a `retry-after` in seconds is honoured up to a cap),
//! all inside one deadline ([`HttpOptions::deadline`], the summary timeout): a call, whatever
//! the server does (stalls, drips, answers 429 or 5xx), ends by then, and in the engine a
//! compaction's calls (the memory extraction and the summary) share one.
//! No call follows a redirect: a 3xx is a [`SummarizerError::Redirect`] naming its
//! `Location`, so the API key and the conversation never leave the configured host.
//! An LLM call returns a [`SummarizerError`]; the engine turns any failure into the extractive
//! fallback and a warning, so a summarizer never aborts a turn.

pub(crate) mod anthropic;
mod anthropic_compaction;
mod http;
pub(crate) mod openai;
mod responses_compaction;

use std::time::{Duration, Instant};

pub use anthropic::AnthropicMessages;
pub use anthropic_compaction::{AnthropicCompaction, COMPACTION_BETA};
pub use openai::{OpenAiChat, Sampling};
pub use responses_compaction::ResponsesCompaction;

/// What went wrong calling an LLM.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SummarizerError {
    /// A setting is missing or wrong (names the option or environment variable).
    #[error("summarizer setting {setting}: {problem}")]
    NotConfigured {
        /// The option or environment variable.
        setting: String,
        /// What is wrong.
        problem: String,
    },
    /// The connection failed or broke.
    #[error("{url}: {problem}")]
    Transport {
        /// The endpoint.
        url: String,
        /// What happened.
        problem: String,
    },
    /// No answer within the timeout.
    #[error("{url}: timed out ({problem})")]
    Timeout {
        /// The endpoint.
        url: String,
        /// Which phase.
        problem: String,
    },
    /// The endpoint answered with an error status (after any retries).
    #[error("{url}: HTTP {status}: {body}")]
    Status {
        /// The endpoint.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The start of the response body.
        body: String,
    },
    /// The endpoint answered with a redirect (3xx), which is not followed: the request holds
    /// the API key and the conversation, which go to the configured host only. Not retried;
    /// set the base URL to the final address.
    #[error("{url}: HTTP {status} redirect to {location}: not followed (the API key and the request go only to the configured host; set the base URL to the final address)")]
    Redirect {
        /// The endpoint.
        url: String,
        /// The HTTP status (301, 302, 303, 307, 308...).
        status: u16,
        /// The `Location` header as the server sent it (its start, on one line), or
        /// `(no Location header)`.
        location: String,
    },
    /// The response was larger than allowed.
    #[error("{url}: response larger than {limit} bytes")]
    TooLarge {
        /// The endpoint.
        url: String,
        /// The limit.
        limit: u64,
    },
    /// The response was not the JSON the API documents.
    #[error("{url}: malformed response: {problem}")]
    Malformed {
        /// The endpoint.
        url: String,
        /// What is wrong.
        problem: String,
    },
    /// The model answered with no text.
    #[error("{url}: the model returned empty content")]
    Empty {
        /// The endpoint.
        url: String,
    },
    /// The model declined to answer (OpenAI's `refusal`, Anthropic's `stop_reason: "refusal"`).
    #[error("{url}: the model refused: {refusal}")]
    Refused {
        /// The endpoint.
        url: String,
        /// The model's words, or what the API said.
        refusal: String,
    },
}

/// One completion to ask for.
#[derive(Debug, Clone, Copy)]
pub struct LlmRequest<'a> {
    /// The system text.
    pub system: &'a str,
    /// The user prompt.
    pub prompt: &'a str,
    /// When not empty, the whole conversation to send instead of `system` + `prompt` (a
    /// cache-safe summary request: the agent's own request, then the instruction).
    pub messages: &'a [ctxkit_core::Message],
    /// `messages` as the agent's Anthropic requests sent them, when they differ: the previous
    /// checkpoint's server-compaction block in place of its summary's text. Sent by
    /// [`AnthropicCompaction`] (whose beta header the block needs); other clients send
    /// `messages`.
    pub anthropic_messages: Option<&'a [ctxkit_core::Message]>,
    /// The conversation of `messages` (without the final instruction) as the agent's
    /// Responses requests sent it, when it differs from the plain rendering: the previous
    /// checkpoint's Responses `compaction` item in place of its summary message. Sent by
    /// [`ResponsesCompaction`]; other clients send `messages`.
    pub responses_input: Option<&'a serde_json::Value>,
    /// At most this many output tokens.
    pub max_tokens: u64,
    /// When the call must have ended, every attempt and wait included, if that is before the
    /// client's own [`HttpOptions::deadline`] from the call's start (`None`: the client's
    /// own). The engine gives a compaction's memory extraction and summary one deadline.
    pub deadline: Option<Instant>,
}

/// A summarizer's answer to a summary request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummaryAnswer {
    /// The summary's text (the checkpoint's summary, held to the pinned facts).
    pub text: String,
    /// Provider-bound state to keep beside the checkpoint: Anthropic's signed `compaction`
    /// block, as the JSON text it arrived as; or OpenAI Responses' opaque `compaction` item,
    /// wrapped by [`ctxkit_core::compaction::responses_compaction_block`] (then `text` is empty
    /// and the checkpoint's summary is the extractive one).
    pub compaction_block: Option<String>,
    /// What the call cost, when the API said.
    pub usage: Option<SummaryUsage>,
}

/// The tokens a summary call was billed for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SummaryUsage {
    /// Input tokens (summed over the server's iterations, when it listed them).
    pub input_tokens: u64,
    /// Output tokens (summed likewise).
    pub output_tokens: u64,
    /// How many iterations the server reported (1 when it listed none).
    pub iterations: usize,
}

/// A model that completes a prompt. Implemented by [`OpenAiChat`], [`AnthropicMessages`],
/// [`AnthropicCompaction`] and [`ResponsesCompaction`]; a program may bring its own (a local model, a test double).
pub trait Llm: Send + Sync + std::fmt::Debug {
    /// The model's text answer.
    fn complete(&self, request: &LlmRequest<'_>) -> Result<String, SummarizerError>;
    /// The answer to a summary request: by default [`Llm::complete`]'s text, with no state
    /// to keep and no usage.
    fn summarize(&self, request: &LlmRequest<'_>) -> Result<SummaryAnswer, SummarizerError> {
        self.complete(request).map(|text| SummaryAnswer {
            text,
            compaction_block: None,
            usage: None,
        })
    }
    /// A short description for logs (`openai-compatible gpt-4o-mini at http://...`).
    fn describe(&self) -> String;
    /// The summary timeout: how long one compaction's calls (its memory extraction and its
    /// summary) may take together, every attempt and wait included. `None` (the default):
    /// the client bounds its own calls, and the engine sets no shared deadline.
    fn deadline(&self) -> Option<Duration> {
        None
    }
}

/// Which API an endpoint speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// OpenAI-compatible Chat Completions (`POST {base_url}/chat/completions`).
    OpenAiChat,
    /// Anthropic Messages (`POST {base_url}/v1/messages`).
    AnthropicMessages,
    /// Anthropic's server compaction: the same endpoint, summary requests sent with
    /// `compaction: {type: "summarize"}` and the beta header [`COMPACTION_BETA`].
    AnthropicCompaction,
    /// OpenAI Responses compaction (`POST {base_url}/responses` with a `compaction_trigger`
    /// item last); memory extraction goes to Chat Completions at the same base URL.
    ResponsesCompaction,
}

/// Timeouts, size bound and retries of HTTP calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpOptions {
    /// The summary timeout: a call ends within this, every phase of every attempt, every
    /// retry and back-off included; a retry whose wait would end past it is not made. In the
    /// engine, a compaction's extraction and summary share one such deadline. Default 180 s;
    /// `CTXKIT_SUMMARY_TIMEOUT` (seconds) sets it for the endpoints read from the environment.
    pub deadline: Duration,
    /// Connecting (TCP and TLS). Default 10 s.
    pub connect_timeout: Duration,
    /// Sending the request, then waiting for the response headers, then reading the body
    /// (each phase). Default 180 s: a long summary takes a while to generate.
    pub read_timeout: Duration,
    /// Largest response body read. Default 4 MiB.
    pub max_response_bytes: u64,
    /// Retries after a 429 or 5xx. Default 3.
    pub max_retries: u32,
    /// First backoff, doubled each retry. Default 1 s.
    pub initial_backoff: Duration,
    /// Longest backoff. Default 20 s.
    pub max_backoff: Duration,
    /// A `retry-after` longer than this waits only this long. Default 60 s.
    pub max_retry_after: Duration,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            deadline: Duration::from_secs(180),
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(180),
            max_response_bytes: 4 << 20,
            max_retries: 3,
            initial_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(20),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

/// An LLM endpoint.
#[derive(Clone, PartialEq, Eq)]
pub struct LlmEndpoint {
    /// The API it speaks.
    pub api: Api,
    /// The base URL: for OpenAI-compatible servers up to and including `/v1`
    /// (`https://api.openai.com/v1`, `http://localhost:11434/v1`); for Anthropic the host
    /// (`https://api.anthropic.com`).
    pub base_url: String,
    /// The API key (`None` for local servers that need none).
    pub api_key: Option<String>,
    /// The model name.
    pub model: String,
    /// Timeouts, size bound, retries.
    pub http: HttpOptions,
}

impl std::fmt::Debug for LlmEndpoint {
    // The key is a secret: never printed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmEndpoint")
            .field("api", &self.api)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("model", &self.model)
            .field("http", &self.http)
            .finish()
    }
}

/// The default OpenAI base URL.
pub const OPENAI_DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
/// The default Anthropic base URL.
pub const ANTHROPIC_DEFAULT_BASE_URL: &str = "https://api.anthropic.com";

impl LlmEndpoint {
    /// An OpenAI-compatible endpoint from the environment as `lookup` reads it:
    /// `OPENAI_BASE_URL` (default [`OPENAI_DEFAULT_BASE_URL`]), `OPENAI_API_KEY` (optional),
    /// `CTXKIT_MODEL` (required), `CTXKIT_SUMMARY_TIMEOUT` (optional, seconds: the
    /// [`HttpOptions::deadline`]).
    pub fn openai_from_env(
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, SummarizerError> {
        Ok(LlmEndpoint {
            api: Api::OpenAiChat,
            base_url: non_blank(lookup("OPENAI_BASE_URL"))
                .unwrap_or_else(|| OPENAI_DEFAULT_BASE_URL.to_owned()),
            api_key: non_blank(lookup("OPENAI_API_KEY")),
            model: required(&lookup, "CTXKIT_MODEL")?,
            http: http_from_env(&lookup)?,
        })
    }

    /// An Anthropic endpoint from the environment: `ANTHROPIC_BASE_URL` (default
    /// [`ANTHROPIC_DEFAULT_BASE_URL`]), `ANTHROPIC_API_KEY` (required), `CTXKIT_MODEL`
    /// (required).
    pub fn anthropic_from_env(
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, SummarizerError> {
        Ok(LlmEndpoint {
            api: Api::AnthropicMessages,
            base_url: non_blank(lookup("ANTHROPIC_BASE_URL"))
                .unwrap_or_else(|| ANTHROPIC_DEFAULT_BASE_URL.to_owned()),
            api_key: Some(required(&lookup, "ANTHROPIC_API_KEY")?),
            model: required(&lookup, "CTXKIT_MODEL")?,
            http: http_from_env(&lookup)?,
        })
    }

    /// The client for this endpoint.
    pub fn client(&self) -> Box<dyn Llm> {
        match self.api {
            Api::OpenAiChat => Box::new(OpenAiChat::new(self.clone())),
            Api::AnthropicMessages => Box::new(AnthropicMessages::new(self.clone())),
            Api::AnthropicCompaction => Box::new(AnthropicCompaction::new(self.clone())),
            Api::ResponsesCompaction => Box::new(ResponsesCompaction::new(self.clone())),
        }
    }
}

/// The default options with `CTXKIT_SUMMARY_TIMEOUT` (seconds, decimals allowed, above 0
/// and at most a day) as the deadline, when set.
fn http_from_env(lookup: &impl Fn(&str) -> Option<String>) -> Result<HttpOptions, SummarizerError> {
    let Some(value) = non_blank(lookup("CTXKIT_SUMMARY_TIMEOUT")) else {
        return Ok(HttpOptions::default());
    };
    let deadline = value
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|seconds| *seconds > 0.0 && *seconds <= 86_400.0)
        .and_then(|seconds| Duration::try_from_secs_f64(seconds).ok())
        .ok_or_else(|| SummarizerError::NotConfigured {
            setting: "CTXKIT_SUMMARY_TIMEOUT".to_owned(),
            problem: format!("{value:?}: expected seconds, above 0 and at most 86400"),
        })?;
    Ok(HttpOptions {
        deadline,
        ..HttpOptions::default()
    })
}

fn non_blank(value: Option<String>) -> Option<String> {
    value.filter(|v| !v.trim().is_empty())
}

fn required(
    lookup: &impl Fn(&str) -> Option<String>,
    name: &str,
) -> Result<String, SummarizerError> {
    non_blank(lookup(name)).ok_or_else(|| SummarizerError::NotConfigured {
        setting: name.to_owned(),
        problem: "not set".to_owned(),
    })
}

/// Who answers summary requests.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum SummarizerConfig {
    /// The core's extractive summary (offline). The default.
    #[default]
    Extractive,
    /// An LLM, with the extractive summary as the fallback; memory extraction runs before
    /// each compaction.
    Llm(LlmEndpoint),
}

impl SummarizerConfig {
    /// From the environment: `CTXKIT_SUMMARIZER` = `extractive` (or unset), `openai`,
    /// `anthropic`, `anthropic-compaction` or `openai-responses-compaction`, then that
    /// endpoint's variables (see [`LlmEndpoint::openai_from_env`]; `anthropic-compaction`
    /// reads Anthropic's, `openai-responses-compaction` OpenAI's).
    ///
    /// ```
    /// use ctxkit::llm::{Api, SummarizerConfig};
    /// let env = |name: &str| match name {
    ///     "CTXKIT_SUMMARIZER" => Some("openai".to_owned()),
    ///     "OPENAI_BASE_URL" => Some("http://localhost:11434/v1".to_owned()),
    ///     "CTXKIT_MODEL" => Some("qwen3:8b".to_owned()),
    ///     _ => None,
    /// };
    /// let SummarizerConfig::Llm(endpoint) = SummarizerConfig::from_env(env).unwrap() else {
    ///     panic!("expected an LLM");
    /// };
    /// assert_eq!((endpoint.api, endpoint.model.as_str()), (Api::OpenAiChat, "qwen3:8b"));
    /// assert_eq!(SummarizerConfig::from_env(|_| None).unwrap(), SummarizerConfig::Extractive);
    /// ```
    pub fn from_env(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, SummarizerError> {
        let choice = non_blank(lookup("CTXKIT_SUMMARIZER")).unwrap_or_default();
        match choice.trim().to_ascii_lowercase().as_str() {
            "" | "extractive" => Ok(SummarizerConfig::Extractive),
            "openai" => LlmEndpoint::openai_from_env(lookup).map(SummarizerConfig::Llm),
            "anthropic" => LlmEndpoint::anthropic_from_env(lookup).map(SummarizerConfig::Llm),
            "anthropic-compaction" => LlmEndpoint::anthropic_from_env(lookup).map(|endpoint| {
                SummarizerConfig::Llm(LlmEndpoint {
                    api: Api::AnthropicCompaction,
                    ..endpoint
                })
            }),
            "openai-responses-compaction" => {
                LlmEndpoint::openai_from_env(lookup).map(|endpoint| {
                    SummarizerConfig::Llm(LlmEndpoint {
                        api: Api::ResponsesCompaction,
                        ..endpoint
                    })
                })
            }
            other => Err(SummarizerError::NotConfigured {
                setting: "CTXKIT_SUMMARIZER".to_owned(),
                problem: format!(
                    "{other:?}: expected extractive, openai, anthropic, anthropic-compaction or openai-responses-compaction"
                ),
            }),
        }
    }
}
