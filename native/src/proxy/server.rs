//! The proxy's server: the listening socket, one thread per connection, and the path of one
//! request (read, checked, matched, forwarded, answered, recorded).
//!
//! Guarantees: [`Proxy::bind`] refuses a non-loopback address without a token, and an
//! upstream URL with credentials, a query or a scheme other than http(s); with a token, a
//! request without the same `x-ctxkit-token` is refused (401) before its body is looked at.
//! `POST /v1/messages` (Anthropic Messages), `POST /v1/chat/completions` (OpenAI Chat
//! Completions) and `POST /v1/responses` (OpenAI Responses) are rewritten, by the same path
//! over their own readers ([`AgentTurn`], [`AnswerReader`]); a Responses request naming
//! server-side state (`previous_response_id`, `conversation`), `POST
//! /v1/messages/count_tokens`, `/v1/responses/input_tokens` and `/v1/responses/compact` are
//! passed through untouched, storing nothing; every other path is a 404 naming it. The engine is used under one lock, held to match and record a
//! request and to record an answer, never while the upstream answers, so one slow model call
//! does not hold up other conversations; the idle timer ([`super::idle`]) takes the same lock
//! for its checks. The log line per request names the session, the counts and the status,
//! never a header.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use ctxkit_core::tokens::ModelFamily;

use super::answer::{AnswerKeeper, AnswerReader, AnthropicAnswer};
use super::anthropic::AgentRequest;
use super::chat::{self, ChatRequest};
use super::chat_answer::ChatAnswer;
use super::http::{read_request, write_refusal, Refusal, Request};
use super::idle::{IdleTimer, LastRequest};
use super::responses::{self, ResponsesBody, ResponsesRequest};
use super::responses_answer::ResponsesAnswer;
use super::seen::SeenLists;
use super::sessions::{valid_key, AgentTurn, Conversations, MAX_KEY_CHARS};
use super::summarizer::UpstreamSummarizer;
use super::upstream::{agent, forward, Unobserved, FORWARDED_HEADERS};
use crate::engine::{Engine, IdleOutcome};
use crate::llm::Llm;

/// The header an explicit conversation key comes in.
pub const CONVERSATION_HEADER: &str = "x-ctxkit-conversation";
/// The header the proxy's token comes in.
pub const TOKEN_HEADER: &str = "x-ctxkit-token";

/// How the proxy runs.
#[derive(Debug, Clone)]
pub struct ProxyConfig {
    /// Where to listen.
    pub listen: SocketAddr,
    /// The provider's base URL (`https://api.anthropic.com`), without a trailing `/`.
    pub upstream: String,
    /// Required from every request when set; required to listen beyond loopback.
    pub token: Option<String>,
    /// The largest request body accepted, in bytes.
    pub max_body_bytes: usize,
    /// The tokenizer family the budget is counted in.
    pub family: ModelFamily,
    /// How long the upstream may take to begin its answer before the agent gets a 504.
    pub upstream_timeout: std::time::Duration,
    /// The idle timer (see [`super::idle`]); `None`: conversations compact only on requests.
    pub idle: Option<IdleTimer>,
    /// Summaries asked of the agent's own model through the upstream, as the cache-safe
    /// request (see [`super::summarizer`]); `false`: extractive.
    pub summarize_upstream: bool,
}

/// The default [`ProxyConfig::upstream_timeout`]: 10 minutes (a model may think long before
/// its first byte).
pub const DEFAULT_UPSTREAM_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(600);

/// The default [`ProxyConfig::max_body_bytes`]: 32 MiB (a long session with images).
pub const DEFAULT_MAX_BODY_BYTES: usize = 32 * 1024 * 1024;

#[derive(Debug)]
struct Shared {
    config: ProxyConfig,
    conversations: Mutex<Conversations>,
    agent: ureq::Agent,
    /// Recent requests' lists: a re-sent history is compared, not parsed again.
    seen: SeenLists,
}

/// A bound proxy, ready to [`Proxy::serve`].
#[derive(Debug)]
pub struct Proxy {
    listener: TcpListener,
    shared: Arc<Shared>,
}

impl Proxy {
    /// Checks `config`, opens the conversations over `engine` and binds the address.
    pub fn bind(mut config: ProxyConfig, engine: Engine) -> Result<Proxy, String> {
        if !config.listen.ip().is_loopback() && config.token.is_none() {
            return Err(format!(
                "--listen {}: not a loopback address; anyone who reaches it could use the \
                 upstream with the agents' keys, so give --token (then every request must \
                 send it in {TOKEN_HEADER})",
                config.listen
            ));
        }
        if config.token.as_deref().is_some_and(str::is_empty) {
            return Err("--token: empty".to_owned());
        }
        config.upstream = check_upstream(&config.upstream)?;
        let conversations = Conversations::open(engine).map_err(|error| error.to_string())?;
        let listener = TcpListener::bind(config.listen)
            .map_err(|error| format!("--listen {}: {error}", config.listen))?;
        let agent = agent(config.upstream_timeout);
        Ok(Proxy {
            listener,
            shared: Arc::new(Shared {
                config,
                conversations: Mutex::new(conversations),
                agent,
                seen: SeenLists::default(),
            }),
        })
    }

    /// The address it listens on (the port chosen when 0 was asked).
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves connections until the listener fails, each on its own thread, and runs the
    /// idle timer on one more when it is configured.
    pub fn serve(self) -> std::io::Result<()> {
        if let Some(timer) = self.shared.config.idle {
            let shared = self.shared.clone();
            std::thread::spawn(move || run_idle_timer(&shared, timer));
        }
        for stream in self.listener.incoming() {
            let Ok(stream) = stream else {
                continue;
            };
            let shared = self.shared.clone();
            std::thread::spawn(move || handle(&shared, stream));
        }
        Ok(())
    }
}

/// Every `timer.tick`, the idle check of the quiet conversations (see [`super::idle`]); each
/// compaction is one line on standard error. Ends when the conversations are unusable.
fn run_idle_timer(shared: &Shared, timer: IdleTimer) {
    let ttl_seconds = timer.ttl.as_secs().max(1);
    loop {
        std::thread::sleep(timer.tick);
        let Ok(mut conversations) = shared.conversations.lock() else {
            return;
        };
        for (session, outcome) in conversations.compact_idle(Instant::now(), ttl_seconds) {
            match outcome {
                Ok(IdleOutcome {
                    turn: Some(turn),
                    view_tokens,
                    ..
                }) => eprintln!(
                    "ctxkit proxy: {session} quiet before the cache expires: compacted, \
                     view {view_tokens} -> {} tokens",
                    turn.stats.total_tokens
                ),
                Ok(_) => {}
                Err(error) => {
                    eprintln!("ctxkit proxy: {session} idle compaction failed: {error}");
                }
            }
        }
    }
}

/// The upstream URL, checked and without its trailing `/`.
fn check_upstream(url: &str) -> Result<String, String> {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
        .ok_or_else(|| format!("--upstream {url:?}: expected an http:// or https:// URL"))?;
    let authority = rest.split('/').next().unwrap_or_default();
    if authority.is_empty() {
        return Err(format!("--upstream {url:?}: no host"));
    }
    if authority.contains('@') {
        return Err(
            "--upstream: a URL with credentials in it is refused (the agent's own \
                    headers carry them)"
                .to_owned(),
        );
    }
    if rest.contains(['?', '#']) {
        return Err(format!(
            "--upstream {url:?}: a base URL has no query or fragment"
        ));
    }
    Ok(url.trim_end_matches('/').to_owned())
}

/// How long an agent's connection may send nothing before it is dropped (a client that
/// connects and stalls would otherwise hold its thread for ever).
const AGENT_READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

fn handle(shared: &Shared, stream: TcpStream) {
    // Best effort: without the timeout the request is still served.
    let _ = stream.set_read_timeout(Some(AGENT_READ_TIMEOUT));
    let mut out = match stream.try_clone() {
        Ok(out) => out,
        Err(_) => return,
    };
    let request = match read_request(&stream, shared.config.max_body_bytes) {
        Ok(request) => request,
        Err(refusal) => {
            log_refusal("?", &refusal);
            let _ = write_refusal(&mut out, &refusal);
            return;
        }
    };
    let path = request
        .path
        .split('?')
        .next()
        .unwrap_or_default()
        .to_owned();
    if let Err(refusal) = route(shared, &request, &path, &mut out) {
        log_refusal(&path, &refusal);
        let _ = write_refusal(&mut out, &refusal);
    }
}

fn route(
    shared: &Shared,
    request: &Request,
    path: &str,
    out: &mut TcpStream,
) -> Result<(), Refusal> {
    if let Some(token) = &shared.config.token {
        if request.header(TOKEN_HEADER) != Some(token.as_str()) {
            return Err(Refusal::new(
                401,
                format!("this proxy needs its token in the {TOKEN_HEADER} header"),
            ));
        }
    }
    match (request.method.as_str(), path) {
        ("POST", "/v1/messages") => {
            let parsed =
                AgentRequest::parse_with(&request.body, shared.config.family, &shared.seen)
                    .map_err(|problem| {
                        Refusal::new(400, format!("POST /v1/messages: {problem}"))
                    })?;
            let body = |view: &serde_json::Value| parsed.upstream_body(view);
            rewritten(
                shared,
                request,
                out,
                &parsed,
                &body,
                Box::<AnthropicAnswer>::default(),
            )
        }
        ("POST", chat::PATH) => {
            let parsed = ChatRequest::parse_with(&request.body, shared.config.family, &shared.seen)
                .map_err(|problem| Refusal::new(400, format!("POST {}: {problem}", chat::PATH)))?;
            let body = |view: &serde_json::Value| parsed.upstream_body(view);
            rewritten(
                shared,
                request,
                out,
                &parsed,
                &body,
                Box::<ChatAnswer>::default(),
            )
        }
        ("POST", responses::PATH) => {
            let parsed = match ResponsesRequest::parse_with(
                &request.body,
                shared.config.family,
                &shared.seen,
            ) {
                Ok(ResponsesBody::Turn(parsed)) => parsed,
                Ok(ResponsesBody::Stateful) => return untouched(shared, request, out),
                Err(problem) => {
                    return Err(Refusal::new(
                        400,
                        format!("POST {}: {problem}", responses::PATH),
                    ))
                }
            };
            let body = |view: &serde_json::Value| parsed.upstream_body(view);
            rewritten(
                shared,
                request,
                out,
                &parsed,
                &body,
                Box::<ResponsesAnswer>::default(),
            )
        }
        ("POST", path) if PASSED_THROUGH.contains(&path) => untouched(shared, request, out),
        (_, path) if REWRITTEN.contains(&path) || PASSED_THROUGH.contains(&path) => Err(
            Refusal::new(405, format!("{path} takes POST, not {}", request.method)),
        ),
        _ => Err(Refusal::new(
            404,
            format!(
                "{path}: not served; ctxkit proxy serves POST /v1/messages (Anthropic \
                 Messages), POST /v1/chat/completions (OpenAI Chat Completions) and POST \
                 /v1/responses (OpenAI Responses)"
            ),
        )),
    }
}

/// The paths whose requests are rewritten.
const REWRITTEN: [&str; 3] = ["/v1/messages", chat::PATH, responses::PATH];

/// The paths passed through untouched (the agent's full history counted or compacted by the
/// provider, as without the proxy).
const PASSED_THROUGH: [&str; 3] = [
    "/v1/messages/count_tokens",
    "/v1/responses/input_tokens",
    "/v1/responses/compact",
];

/// A request forwarded as the agent sent it, its answer passed back; nothing is stored.
fn untouched(shared: &Shared, request: &Request, out: &mut TcpStream) -> Result<(), Refusal> {
    let url = format!("{}{}", shared.config.upstream, request.path);
    let passed = forward(
        &shared.agent,
        &url,
        &request.headers,
        &request.body,
        out,
        &mut Unobserved,
    )?;
    eprintln!(
        "ctxkit proxy: {} passed through untouched -> {}",
        request.path.split('?').next().unwrap_or_default(),
        passed.status
    );
    Ok(())
}

/// A request of a rewritten API, read as `parsed`: matched, recorded, forwarded with ctxkit's
/// view in the body `upstream_body` writes around it, the answer read by `reader` and recorded.
fn rewritten(
    shared: &Shared,
    request: &Request,
    out: &mut TcpStream,
    parsed: &dyn AgentTurn,
    upstream_body: &dyn Fn(&serde_json::Value) -> Vec<u8>,
    reader: Box<dyn AnswerReader>,
) -> Result<(), Refusal> {
    let key = match request.header(CONVERSATION_HEADER) {
        None => "",
        Some(key) if valid_key(key) => key,
        Some(_) => {
            return Err(Refusal::new(
                400,
                format!(
                    "{CONVERSATION_HEADER}: expected 1 to {MAX_KEY_CHARS} ASCII letters, \
                     digits or '-'"
                ),
            ))
        }
    };
    let url = format!("{}{}", shared.config.upstream, request.path);
    let summarizer = shared
        .config
        .summarize_upstream
        .then(|| upstream_summarizer(shared, request, parsed, &url));
    let mut conversations = lock(shared)?;
    conversations.use_summarizer(summarizer.clone());
    let admitted = conversations.admit(key, parsed);
    conversations.use_summarizer(None);
    let admitted = admitted.map_err(|error| {
        // The core refusing the conversation (one that cannot fit the window) is the
        // request's; a store failure is the proxy's.
        match error {
            // A message the core cannot read (named with its index).
            crate::Error::InvalidInput { .. } => Refusal::new(400, error.to_string()),
            crate::Error::Core { .. } => {
                Refusal::new(400, format!("ctxkit could not make the view: {error}"))
            }
            _ => Refusal::new(500, format!("ctxkit could not make the view: {error}")),
        }
    })?;
    conversations.saw(
        &admitted.session,
        LastRequest {
            system: parsed.system_text().to_owned(),
            tool_tokens: parsed.tool_tokens(),
            at: Instant::now(),
            summarizer,
        },
    );
    drop(conversations);
    let body = upstream_body(&admitted.view);
    let mut keeper = AnswerKeeper::new(&shared.conversations, &admitted.session, reader);
    let passed = forward(
        &shared.agent,
        &url,
        &request.headers,
        &body,
        out,
        &mut keeper,
    )?;
    if passed.delivered && !keeper.finished() {
        keeper.outcome = ", answer not kept (the stream did not end)".to_owned();
    }
    eprintln!(
        "ctxkit proxy: {} +{} messages (read {} of {}), view {} tokens -> {}{}",
        admitted.session,
        admitted.new_messages,
        admitted.wire_read,
        parsed.wire().len(),
        admitted.view_tokens,
        passed.status,
        keeper.outcome
    );
    Ok(())
}

/// The agent's own model as this request's summarizer: its cache-safe summary request goes
/// to `url` (where the request itself goes) with the request's credential headers.
fn upstream_summarizer(
    shared: &Shared,
    request: &Request,
    parsed: &dyn AgentTurn,
    url: &str,
) -> Arc<dyn Llm> {
    let headers = FORWARDED_HEADERS
        .iter()
        .filter_map(|name| {
            request
                .header(name)
                .map(|value| ((*name).to_owned(), value.to_owned()))
        })
        .collect();
    Arc::new(UpstreamSummarizer::new(
        parsed.summary_shape(),
        url.to_owned(),
        headers,
        shared.agent.clone(),
        shared.config.upstream_timeout,
    ))
}

fn lock(shared: &Shared) -> Result<std::sync::MutexGuard<'_, Conversations>, Refusal> {
    shared.conversations.lock().map_err(|_| {
        Refusal::new(
            500,
            "the proxy's store is unusable after an earlier failure",
        )
    })
}

fn log_refusal(path: &str, refusal: &Refusal) {
    eprintln!(
        "ctxkit proxy: {path} refused {}: {}",
        refusal.status, refusal.message
    );
}
