//! Helpers shared by the native integration tests: the corpus, a loopback HTTP server that
//! plays an LLM endpoint, a workload that reaches a compaction quickly, and ([`project`]) a
//! project folder to run the real binary in.
#![allow(dead_code)]

pub mod backends;
pub mod fleet;
pub mod probe_rows;
pub mod project;
pub mod provider_compaction;
pub mod proxy;
pub mod responses;
pub mod steady_dir;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use ctxkit::core::compaction::Budget;
use ctxkit::core::compaction::Policy;
use ctxkit::core::{Message, ToolCall};
use ctxkit::{Engine, EngineConfig, Event, TurnResult, WarningKind};

/// The name libtest gives test `test` of module `module` (`module_path!()` there): its path
/// without the test binary's crate name, for `--exact` when a test runs its own binary as a
/// child process.
pub fn test_name(module: &str, test: &str) -> String {
    match module.split_once("::") {
        Some((_crate, path)) => format!("{path}::{test}"),
        None => test.to_owned(),
    }
}

/// The raw corpus of real transcripts: `../shared/corpus/raw` from the project root, found
/// the way every cross-crate test finds it ([`ctxkit_tests::corpus_dir`]).
pub fn corpus_dir() -> PathBuf {
    ctxkit_tests::corpus_dir()
}

/// A request the loopback server received.
#[derive(Debug, Clone)]
pub struct Received {
    /// The request path.
    pub path: String,
    /// Header names lower-cased, with values.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: String,
}

impl Received {
    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    /// True for a memory extraction request (the core's extraction system text).
    pub fn is_extraction(&self) -> bool {
        self.body.contains("extract durable memories")
    }
}

/// What the server does with one request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// Answers with this status, extra headers and body.
    Respond {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// Says nothing for this long, then closes the connection.
    Stall(Duration),
    /// Sends the head of a 200 answer announcing a body of `length` bytes, then one byte of
    /// it every `every`, until the client hangs up or `for_at_most` has passed: a server
    /// that never leaves a read waiting long enough for a per-read timeout.
    Drip {
        length: usize,
        every: Duration,
        for_at_most: Duration,
    },
}

impl Reply {
    /// A 200 with a JSON body.
    pub fn ok(body: impl Into<String>) -> Self {
        Reply::Respond {
            status: 200,
            headers: Vec::new(),
            body: body.into(),
        }
    }

    /// An error status.
    pub fn status(status: u16, body: &str) -> Self {
        Reply::Respond {
            status,
            headers: Vec::new(),
            body: body.to_owned(),
        }
    }
}

/// A Chat Completions answer.
pub fn openai_answer(text: &str) -> String {
    serde_json::json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]})
        .to_string()
}

/// A Messages API answer.
pub fn anthropic_answer(text: &str) -> String {
    serde_json::json!({"type": "message", "role": "assistant", "content": [{"type": "text", "text": text}]})
        .to_string()
}

/// An answer of Anthropic's server compaction (beta `compact-2026-09-04`), as the documented
/// shape has it: `stop_reason: "compaction"`, `content` holding `block` (JSON text, written
/// into the answer byte for byte), and `usage` listing one entry per `(input, output)` of
/// `iterations` beside totals that differ from their sum.
pub fn anthropic_compaction_answer(block: &str, iterations: &[(u64, u64)]) -> String {
    let iterations: Vec<serde_json::Value> = iterations
        .iter()
        .map(|(input, output)| {
            serde_json::json!({"type": "compaction", "input_tokens": input, "output_tokens": output})
        })
        .collect();
    let usage =
        serde_json::json!({"input_tokens": 1, "output_tokens": 1, "iterations": iterations});
    format!(
        r#"{{"id":"msg_compact","type":"message","role":"assistant","model":"agent-model","content":[{block}],"stop_reason":"compaction","stop_sequence":null,"usage":{usage}}}"#
    )
}

type Handler = dyn Fn(&Received, usize) -> Reply + Send + Sync;

/// An HTTP/1.1 server on 127.0.0.1 (or another loopback address: [`LoopbackServer::start_on`])
/// answering each request with `handler(request, index)`.
pub struct LoopbackServer {
    /// `http://127.0.0.1:<port>`, or the address it was started on.
    pub base_url: String,
    received: Arc<Mutex<Vec<Received>>>,
    /// Connections accepted, counted before a byte is read (so a client that connects and
    /// sends nothing still counts).
    connections: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    accept_loop: Option<JoinHandle<()>>,
}

impl LoopbackServer {
    /// Starts the server.
    pub fn start(handler: impl Fn(&Received, usize) -> Reply + Send + Sync + 'static) -> Self {
        Self::start_on("127.0.0.1", handler)
    }

    /// Starts the server on another loopback address (`127.0.0.2`: a second host, for a test
    /// of what may cross from one host to another; Linux answers the whole 127/8 range).
    pub fn start_on(
        ip: &str,
        handler: impl Fn(&Received, usize) -> Reply + Send + Sync + 'static,
    ) -> Self {
        let listener = TcpListener::bind((ip, 0)).unwrap();
        listener.set_nonblocking(true).unwrap();
        let base_url = format!("http://{}", listener.local_addr().unwrap());
        let received = Arc::new(Mutex::new(Vec::new()));
        let connections = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let handler: Arc<Handler> = Arc::new(handler);
        let accept_loop = {
            let (received, connections, stop) =
                (received.clone(), connections.clone(), stop.clone());
            std::thread::spawn(move || {
                // Bounded: the server stops when dropped, and after two minutes regardless.
                let deadline = std::time::Instant::now() + Duration::from_secs(120);
                while !stop.load(Ordering::SeqCst) && std::time::Instant::now() < deadline {
                    match listener.accept() {
                        Ok((stream, _)) => {
                            connections.fetch_add(1, Ordering::SeqCst);
                            let (received, handler) = (received.clone(), handler.clone());
                            std::thread::spawn(move || serve(stream, &received, handler.as_ref()));
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(2)),
                    }
                }
            })
        };
        LoopbackServer {
            base_url,
            received,
            connections,
            stop,
            accept_loop: Some(accept_loop),
        }
    }

    /// Every request so far, in arrival order.
    pub fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    /// How many connections were accepted so far.
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

impl Drop for LoopbackServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(handle) = self.accept_loop.take() {
            let _ = handle.join();
        }
    }
}

fn serve(stream: TcpStream, received: &Mutex<Vec<Received>>, handler: &Handler) {
    stream.set_nonblocking(false).ok();
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok();
    let mut reader = BufReader::new(stream);
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or_default()
        .to_owned();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).is_err() || line.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
        }
    }
    let length: usize = headers
        .iter()
        .find(|(name, _)| name == "content-length")
        .and_then(|(_, value)| value.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let request = Received {
        path,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    };
    let index = {
        let mut all = received.lock().unwrap();
        all.push(request.clone());
        all.len() - 1
    };
    let mut stream = reader.into_inner();
    match handler(&request, index) {
        Reply::Stall(duration) => std::thread::sleep(duration),
        Reply::Drip {
            length,
            every,
            for_at_most,
        } => drip(&mut stream, length, every, for_at_most),
        Reply::Respond {
            status,
            headers,
            body,
        } => {
            // A reply that names its own content-type (an SSE stream) gets only that one.
            let content_type = if headers.iter().any(|(name, _)| name == "content-type") {
                ""
            } else {
                "content-type: application/json\r\n"
            };
            let mut response = format!(
                "HTTP/1.1 {status} Status\r\n{content_type}content-length: {}\r\nconnection: close\r\n",
                body.len()
            );
            for (name, value) in headers {
                response.push_str(&format!("{name}: {value}\r\n"));
            }
            response.push_str("\r\n");
            response.push_str(&body);
            let _ = stream.write_all(response.as_bytes());
            let _ = stream.flush();
        }
    }
}

/// [`Reply::Drip`]: the head, then a byte every `every` until a write fails (the client hung
/// up) or `for_at_most` has passed.
fn drip(stream: &mut TcpStream, length: usize, every: Duration, for_at_most: Duration) {
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {length}\r\nconnection: close\r\n\r\n"
    );
    if stream.write_all(head.as_bytes()).is_err() {
        return;
    }
    let until = std::time::Instant::now() + for_at_most;
    while std::time::Instant::now() < until {
        if stream
            .write_all(b" ")
            .and_then(|()| stream.flush())
            .is_err()
        {
            return;
        }
        std::thread::sleep(every);
    }
}

/// A configuration whose tiny window compacts after a few turns.
pub fn small_window_config() -> EngineConfig {
    EngineConfig {
        budget: Budget {
            context_window: 3_000,
            output_reserve: 0,
            tool_schema_tokens: 0,
            safety_margin: 0,
            ..Budget::default()
        },
        policy: Policy {
            max_summary_tokens: 300,
            ..Policy::default()
        },
        prompt: ctxkit::PromptConfig {
            read_agents_md: false,
            ..ctxkit::PromptConfig::default()
        },
        memory: ctxkit::MemoryOptions {
            in_prompt: false,
            ..ctxkit::MemoryOptions::default()
        },
        ..EngineConfig::default()
    }
}

/// One turn's worth of messages: a request, a call and its result.
pub fn turn_messages(turn: usize) -> Vec<Message> {
    vec![
        Message::user(format!("step {turn}: look at src/file{turn}.rs")),
        Message::assistant(
            "",
            vec![ToolCall::new(
                format!("c{turn}"),
                "read_file",
                format!(r#"{{"path":"src/file{turn}.rs"}}"#),
            )],
        ),
        Message::tool_result(format!("c{turn}"), "fn main() {}\n".repeat(20), false),
    ]
}

/// Runs [`turn_messages`] turns on session `s` until one compacts; returns the views of the
/// turn before and of that turn.
pub fn until_compaction(engine: &mut Engine) -> (TurnResult, TurnResult) {
    let mut previous = None;
    for turn in 0..200 {
        engine.record("s", turn_messages(turn)).unwrap();
        let view = engine.prepare_turn("s").unwrap();
        if view.compacted.is_some() {
            return (previous.expect("not the first turn"), view);
        }
        previous = Some(view);
    }
    panic!("no compaction in 200 turns");
}

/// Records turns and prepares views until a turn compacts; returns that turn's view.
pub fn run_until_compaction(engine: &mut Engine, session: &str) -> TurnResult {
    for turn in 0..200 {
        engine.record(session, turn_messages(turn)).unwrap();
        let view = engine.prepare_turn(session).unwrap();
        assert!(view.stats.fits, "turn {turn}: {:?}", view.stats);
        if view.compacted.is_some() {
            return view;
        }
    }
    panic!("no compaction in 200 turns");
}

/// The warnings a turn reported, as (kind, message).
pub fn warnings(view: &TurnResult) -> Vec<(WarningKind, String)> {
    view.events
        .iter()
        .filter_map(|event| match event {
            Event::Warning { kind, message, .. } => Some((*kind, message.clone())),
            _ => None,
        })
        .collect()
}

/// A call and its big result.
pub fn exchange(call_id: &str, output: String) -> Vec<Message> {
    vec![
        Message::assistant("", vec![ToolCall::new(call_id, "bash", "{}")]),
        Message::tool_result(call_id, output, false),
    ]
}
