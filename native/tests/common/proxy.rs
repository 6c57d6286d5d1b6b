//! Helpers for the proxy tests: a proxy started in this process over a fresh database, an
//! agent's HTTP client (no redirects, statuses read as answers), a fake Anthropic upstream's
//! answers (JSON and SSE), and a scripted agent that re-sends its growing history each turn as
//! Claude Code does.

use std::path::PathBuf;

use ctxkit::core::compaction::SummaryMode;
use ctxkit::core::offload::OffloadPolicy;
use ctxkit::core::tokens::ModelFamily;
use ctxkit::core::Message;
use ctxkit::proxy::offload::{offload_policy, OffloadPreset};
use ctxkit::proxy::sessions::engine_config;
use ctxkit::proxy::{Proxy, ProxyConfig};
use ctxkit::Engine;
use serde_json::{json, Value};

/// The agent's system prompt, as raw JSON with its own spacing and a `cache_control`: it must
/// reach the upstream byte for byte.
pub const SYSTEM: &str = r#"[{"type": "text",  "text": "You are a coding agent. Be brief.", "cache_control": {"type": "ephemeral"}}]"#;
/// The agent's tools, as raw JSON.
pub const TOOLS: &str = r#"[{"name":"Bash","description":"Run a shell command","input_schema":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}}]"#;
/// The agent's key.
pub const KEY: &str = "sk-ant-test-key-0123456789-secret";

/// A proxy running on a loopback port for the rest of the test process.
pub struct RunningProxy {
    /// `http://127.0.0.1:<port>`.
    pub base_url: String,
    /// The working directory (its `.ctxkit/ctxkit.db` is the store).
    pub dir: tempfile::TempDir,
    window: u64,
    offload: Option<OffloadPolicy>,
}

/// Starts a proxy in front of `upstream` with a `window`-token model.
pub fn start_proxy(upstream: &str, window: u64) -> RunningProxy {
    start_proxy_with(upstream, window, None, 1 << 20)
}

/// [`start_proxy`] with a token and a body cap.
pub fn start_proxy_with(
    upstream: &str,
    window: u64,
    token: Option<&str>,
    max_body_bytes: usize,
) -> RunningProxy {
    start_proxy_configured(upstream, window, |config| {
        config.token = token.map(str::to_owned);
        config.max_body_bytes = max_body_bytes;
    })
}

/// The configuration the tests start from: loopback, any port, a 1 MiB body cap.
pub fn test_config(upstream: &str) -> ProxyConfig {
    ProxyConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        upstream: upstream.to_owned(),
        token: None,
        max_body_bytes: 1 << 20,
        family: ModelFamily::Claude,
        upstream_timeout: ctxkit::proxy::DEFAULT_UPSTREAM_TIMEOUT,
        idle: None,
        summarize_upstream: false,
    }
}

/// [`start_proxy`] with [`test_config`] changed by `adjust`.
pub fn start_proxy_configured(
    upstream: &str,
    window: u64,
    adjust: impl FnOnce(&mut ProxyConfig),
) -> RunningProxy {
    let dir = tempfile::tempdir().unwrap();
    let mut config = test_config(upstream);
    adjust(&mut config);
    start_over(dir, window, None, config)
}

/// A proxy in front of `upstream` with a `window`-token model that offloads as the preset
/// `offload` says, its references naming files under its working directory.
pub fn start_proxy_offloading(upstream: &str, window: u64, offload: OffloadPreset) -> RunningProxy {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let policy = offload_policy(offload, &root, None, None);
    start_over(dir, window, policy, test_config(upstream))
}

/// A proxy in front of `upstream` with a `window`-token model whose summaries are the agent's
/// own model's, asked through the upstream as the cache-safe request.
pub fn start_proxy_summarizing(upstream: &str, window: u64) -> RunningProxy {
    let dir = tempfile::tempdir().unwrap();
    let mut config = test_config(upstream);
    config.summarize_upstream = true;
    start_over(dir, window, None, config)
}

fn start_over(
    dir: tempfile::TempDir,
    window: u64,
    offload: Option<OffloadPolicy>,
    config: ProxyConfig,
) -> RunningProxy {
    let mut engine_config = engine_config(window, ModelFamily::Claude);
    engine_config.offload = offload.clone();
    if config.summarize_upstream {
        engine_config.policy.summary_mode = SummaryMode::CacheSafe;
    }
    let db = dir.path().join(".ctxkit/ctxkit.db");
    let engine = Engine::open(&db, dir.path(), engine_config).unwrap();
    let base_url = serve(config, engine);
    RunningProxy {
        base_url,
        dir,
        window,
        offload,
    }
}

/// Binds and serves a proxy on its own thread; its base URL.
fn serve(config: ProxyConfig, engine: Engine) -> String {
    let proxy = Proxy::bind(config, engine).unwrap();
    let base_url = format!("http://{}", proxy.local_addr().unwrap());
    std::thread::spawn(move || proxy.serve());
    base_url
}

/// What the agent received.
#[derive(Debug)]
pub struct AgentReply {
    pub status: u16,
    pub content_type: Option<String>,
    pub body: Vec<u8>,
}

impl AgentReply {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

impl RunningProxy {
    /// POSTs `body` to `path` with the agent's key and `headers`.
    pub fn post(&self, path: &str, headers: &[(&str, &str)], body: &str) -> AgentReply {
        post(
            &format!("{}{path}", self.base_url),
            headers,
            body.as_bytes(),
        )
    }

    /// Another proxy over the same database (as after a restart); its base URL.
    pub fn start_again(&self, upstream: &str) -> String {
        let mut config = engine_config(self.window, ModelFamily::Claude);
        config.offload = self.offload.clone();
        let engine = Engine::open(self.db(), self.dir.path(), config).unwrap();
        serve(test_config(upstream), engine)
    }

    /// The database file.
    pub fn db(&self) -> PathBuf {
        self.dir.path().join(".ctxkit/ctxkit.db")
    }

    /// Every stored session with its log, by name.
    pub fn sessions(&self) -> Vec<(String, Vec<Message>)> {
        let config = engine_config(self.window, ModelFamily::Claude);
        let engine = Engine::open_read_only(self.db(), self.dir.path(), config).unwrap();
        let mut sessions: Vec<(String, Vec<Message>)> = engine
            .list_sessions()
            .unwrap()
            .into_iter()
            .map(|info| {
                let log = engine.export_session(&info.name).unwrap();
                let messages = log.entries.into_iter().map(|entry| entry.message).collect();
                (info.name, messages)
            })
            .collect();
        sessions.sort_by(|a, b| a.0.cmp(&b.0));
        sessions
    }

    /// Every byte under the working directory's `.ctxkit/` (the database, its WAL), lossily
    /// as text: for checks that a secret was never written.
    pub fn stored_bytes(&self) -> String {
        let mut all = String::new();
        for entry in std::fs::read_dir(self.dir.path().join(".ctxkit")).unwrap() {
            let path = entry.unwrap().path();
            if path.is_file() {
                all.push_str(&String::from_utf8_lossy(&std::fs::read(&path).unwrap()));
            }
        }
        all
    }
}

/// An agent's POST: no redirect followed, every status read as an answer.
pub fn post(url: &str, headers: &[(&str, &str)], body: &[u8]) -> AgentReply {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .build()
        .into();
    let mut request = agent
        .post(url)
        .header("content-type", "application/json")
        .header("x-api-key", KEY)
        .header("anthropic-version", "2023-06-01");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let mut response = request.send(body).unwrap();
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    let body = response
        .body_mut()
        .with_config()
        .limit(1 << 30)
        .read_to_vec()
        .unwrap();
    AgentReply {
        status,
        content_type,
        body,
    }
}

/// The content blocks the fake upstream answers its `turn`-th request with: signed thinking,
/// a line of text and a `Bash` call.
pub fn answer_content(turn: usize) -> Value {
    json!([
        {"type": "thinking", "thinking": format!("The overflow may be in file_{turn}.txt."),
         "signature": format!("sig-{turn}-EqQBCgIYAhIM")},
        {"type": "text", "text": format!("Turn {turn}: I will look at file_{turn}.txt.")},
        {"type": "tool_use", "id": format!("toolu_{turn:04}"), "name": "Bash",
         "input": {"command": format!("cat file_{turn}.txt")}}
    ])
}

/// A whole Messages answer holding [`answer_content`].
pub fn answer_json(turn: usize) -> String {
    json!({
        "id": format!("msg_{turn}"), "type": "message", "role": "assistant",
        "model": "claude-test", "content": answer_content(turn),
        "stop_reason": "tool_use", "stop_sequence": null,
        "usage": {"input_tokens": 1000 + turn, "output_tokens": 20}
    })
    .to_string()
}

/// [`answer_content`] as Anthropic's event stream: each block opened empty and filled by
/// deltas (thinking, then its signature; text in two pieces; tool input in two pieces of JSON).
pub fn answer_sse(turn: usize) -> String {
    let text = format!("Turn {turn}: I will look at file_{turn}.txt.");
    let input = json!({"command": format!("cat file_{turn}.txt")}).to_string();
    let blocks = [
        (
            json!({"type": "thinking", "thinking": "", "signature": ""}),
            vec![
                json!({"type": "thinking_delta", "thinking": format!("The overflow may be in file_{turn}.txt.")}),
                json!({"type": "signature_delta", "signature": format!("sig-{turn}-EqQBCgIYAhIM")}),
            ],
        ),
        (
            json!({"type": "text", "text": ""}),
            vec![
                json!({"type": "text_delta", "text": &text[..7]}),
                json!({"type": "text_delta", "text": &text[7..]}),
            ],
        ),
        (
            json!({"type": "tool_use", "id": format!("toolu_{turn:04}"), "name": "Bash", "input": {}}),
            vec![
                json!({"type": "input_json_delta", "partial_json": &input[..5]}),
                json!({"type": "input_json_delta", "partial_json": &input[5..]}),
            ],
        ),
    ];
    let start = json!({"type": "message_start", "message": {"id": format!("msg_{turn}"), "type": "message", "role": "assistant", "model": "claude-test", "content": [], "stop_reason": null, "usage": {"input_tokens": 1000 + turn, "output_tokens": 1}}});
    let mut events = vec![("message_start", start), ("ping", json!({"type": "ping"}))];
    for (index, (block, deltas)) in blocks.into_iter().enumerate() {
        let opened = json!({"type": "content_block_start", "index": index, "content_block": block});
        events.push(("content_block_start", opened));
        for delta in deltas {
            let event = json!({"type": "content_block_delta", "index": index, "delta": delta});
            events.push(("content_block_delta", event));
        }
        let stopped = json!({"type": "content_block_stop", "index": index});
        events.push(("content_block_stop", stopped));
    }
    let delta = json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 20}});
    events.push(("message_delta", delta));
    events.push(("message_stop", json!({"type": "message_stop"})));
    events
        .iter()
        .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n"))
        .collect()
}

/// A big tool output for `turn` (about 2,000 tokens).
pub fn tool_output(turn: usize) -> String {
    (0..120)
        .map(|line| {
            format!("file_{turn}.txt line {line}: value_{turn}_{line} = compute({line});\n")
        })
        .collect()
}

/// An agent that re-sends its whole history each turn, as Claude Code does (with its
/// `cache_control` marker moved to the newest block each time).
pub struct ScriptedAgent {
    /// The conversation so far (the agent's own copy, without markers).
    pub history: Vec<Value>,
    /// Whether it asks for streamed answers.
    pub stream: bool,
}

impl ScriptedAgent {
    /// An agent whose first message is `task`.
    pub fn new(task: &str, stream: bool) -> Self {
        ScriptedAgent {
            history: vec![json!({"role": "user", "content": [{"type": "text", "text": task}]})],
            stream,
        }
    }

    /// The next request's body.
    pub fn body(&self) -> String {
        let mut messages = self.history.clone();
        if let Some(block) = messages
            .last_mut()
            .and_then(|message| message.get_mut("content"))
            .and_then(Value::as_array_mut)
            .and_then(|blocks| blocks.last_mut())
        {
            block["cache_control"] = json!({"type": "ephemeral"});
        }
        let messages = Value::Array(messages);
        let stream = if self.stream { r#","stream":true"# } else { "" };
        format!(
            r#"{{"model":"claude-test","max_tokens":1024,"system":{SYSTEM},"tools":{TOOLS},"messages":{messages},"metadata":{{"user_id":"u1"}}{stream}}}"#
        )
    }

    /// Takes the answer's content as the agent keeps it, and runs its tool calls (each result
    /// a big output), as the next user message.
    pub fn take_answer(&mut self, content: &Value, turn: usize) {
        self.history
            .push(json!({"role": "assistant", "content": content.clone()}));
        let results: Vec<Value> = content
            .as_array()
            .unwrap()
            .iter()
            .filter(|block| block["type"] == "tool_use")
            .map(|block| {
                json!({"type": "tool_result", "tool_use_id": block["id"], "content": tool_output(turn)})
            })
            .collect();
        if !results.is_empty() {
            self.history
                .push(json!({"role": "user", "content": results}));
        }
    }

    /// The history in the core's model, as the proxy should have logged it.
    pub fn logged(&self) -> Vec<Message> {
        ctxkit::core::wire::from_anthropic(&Value::Array(self.history.clone())).unwrap()
    }
}
