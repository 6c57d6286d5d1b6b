//! `ctxkit proxy`'s boundaries: the agent's key reaches the configured upstream only (no
//! redirect followed) and no log line, store byte or error; requests refused for their shape
//! get a clear 4xx and store nothing; a non-loopback address needs a token, and a token, once
//! set, is required.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use crate::common::proxy::{answer_json, post, start_proxy, start_proxy_with, ScriptedAgent, KEY};
use crate::common::{LoopbackServer, Reply};
use ctxkit::core::tokens::ModelFamily;
use ctxkit::proxy::sessions::engine_config;
use ctxkit::proxy::{Proxy, ProxyConfig};

const WINDOW: u64 = 16_000;

#[test]
fn a_redirect_is_not_followed_and_the_key_reaches_no_other_host() {
    let other = LoopbackServer::start_on("127.0.0.2", |_, index| Reply::ok(answer_json(index)));
    let location = format!("{}/v1/messages", other.base_url);
    let upstream = LoopbackServer::start(move |_, _| Reply::Respond {
        status: 307,
        headers: vec![("location".into(), location.clone())],
        body: String::new(),
    });
    let proxy = start_proxy(&upstream.base_url, WINDOW);
    let reply = proxy.post("/v1/messages", &[], &ScriptedAgent::new("hi", false).body());
    assert_eq!(reply.status, 502);
    assert!(reply.text().contains("redirect (307)"), "{}", reply.text());
    assert!(!reply.text().contains(KEY) && !reply.text().contains("127.0.0.2"));
    assert_eq!(upstream.received()[0].header("x-api-key"), Some(KEY));
    assert_eq!(other.connections(), 0, "the redirect was followed");
    assert!(!proxy.stored_bytes().contains(KEY), "the key was stored");
}

#[test]
fn the_command_serves_and_never_logs_the_key() {
    let upstream = LoopbackServer::start(|_, index| Reply::ok(answer_json(index)));
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ctxkit"))
        .args(["--workdir", dir.path().to_str().unwrap(), "proxy"])
        .args(["--listen", "127.0.0.1:0", "--upstream", &upstream.base_url])
        .args(["--window", "16000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let base = line
        .trim()
        .strip_prefix("ctxkit proxy listening on ")
        .unwrap();
    let ok = post(
        &format!("{base}/v1/messages"),
        &[("authorization", &format!("Bearer {KEY}"))],
        ScriptedAgent::new("hi", false).body().as_bytes(),
    );
    let refused = post(&format!("{base}/v1/messages"), &[], b"{not json");
    // The proxy logs a request after the agent has its answer, from the request's own thread:
    // read its log until both requests' lines are there before stopping it (killing it at once
    // could lose a line not yet written). The bound only keeps a broken proxy from hanging the
    // test; it is no measure of speed.
    let (lines, logged) = std::sync::mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let mut log = String::new();
    while !(log.contains("proxy_1 +1 messages") && log.contains("refused 400")) {
        match logged.recv_timeout(std::time::Duration::from_secs(120)) {
            Ok(line) => {
                log.push_str(&line);
                log.push('\n');
            }
            Err(_) => break,
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!((ok.status, ok.text()), (200, answer_json(0)));
    assert_eq!(refused.status, 400);
    assert_eq!(
        upstream.received()[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert!(log.contains("proxy_1 +1 messages"), "{log}");
    assert!(!log.contains(KEY), "the key was logged: {log}");
}

#[test]
fn malformed_unknown_or_oversized_requests_get_a_clear_4xx_and_store_nothing() {
    let upstream = LoopbackServer::start(|_, index| Reply::ok(answer_json(index)));
    let proxy = start_proxy_with(&upstream.base_url, WINDOW, None, 4_096);
    let cases: [(&str, String, u16, &str); 8] = [
        ("/v1/messages", "{not json".into(), 400, "not a JSON object"),
        (
            "/v1/messages",
            r#"{"model":"m"}"#.into(),
            400,
            "no `messages` field",
        ),
        (
            "/v1/messages",
            r#"{"messages":[{"role":"user","content":[{"type":"tool_result"}]}]}"#.into(),
            400,
            "tool_use_id",
        ),
        ("/v1/messages", r#"{"messages":[]}"#.into(), 400, "empty"),
        (
            "/v1/chat/completions",
            r#"{"messages":[]}"#.into(),
            400,
            "empty",
        ),
        ("/v1/responses", r#"{"input":[]}"#.into(), 400, "empty"),
        (
            "/v1/embeddings",
            r#"{"input":"hi"}"#.into(),
            404,
            "/v1/embeddings",
        ),
        (
            "/v1/messages",
            format!(r#"{{"messages":"{}"}}"#, "x".repeat(5_000)),
            413,
            "4096",
        ),
    ];
    for (path, body, status, names) in cases {
        let reply = proxy.post(path, &[], &body);
        assert_eq!(reply.status, status, "{path} {body:.40}: {}", reply.text());
        let error: serde_json::Value = serde_json::from_slice(&reply.body).unwrap();
        let message = error["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(names),
            "{message:?} does not name {names:?}"
        );
    }
    assert!(upstream.received().is_empty());
    assert!(proxy.sessions().is_empty());
}

#[test]
fn a_non_loopback_address_needs_a_token_and_a_set_token_is_required() {
    let dir = tempfile::tempdir().unwrap();
    let engine = || {
        let config = engine_config(WINDOW, ModelFamily::Claude);
        ctxkit::Engine::open(dir.path().join(".ctxkit/ctxkit.db"), dir.path(), config).unwrap()
    };
    let config = ProxyConfig {
        listen: "0.0.0.0:0".parse().unwrap(),
        upstream: "http://127.0.0.1:9".into(),
        token: None,
        max_body_bytes: 1 << 20,
        family: ModelFamily::Claude,
        upstream_timeout: ctxkit::proxy::DEFAULT_UPSTREAM_TIMEOUT,
        idle: None,
        summarize_upstream: false,
    };
    let refused = Proxy::bind(config.clone(), engine()).unwrap_err();
    assert!(refused.contains("--token"), "{refused}");
    let with_key_in_url = ProxyConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        upstream: "https://user:secret@example.com".into(),
        ..config
    };
    let refused = Proxy::bind(with_key_in_url, engine()).unwrap_err();
    assert!(
        refused.contains("credentials") && !refused.contains("secret"),
        "{refused}"
    );

    let upstream = LoopbackServer::start(|_, index| Reply::ok(answer_json(index)));
    let proxy = start_proxy_with(&upstream.base_url, WINDOW, Some("s3cret-token"), 1 << 20);
    let body = ScriptedAgent::new("hi", false).body();
    let missing = proxy.post("/v1/messages", &[], &body);
    let wrong = proxy.post("/v1/messages", &[("x-ctxkit-token", "nope")], &body);
    assert_eq!((missing.status, wrong.status), (401, 401));
    assert!(proxy.sessions().is_empty() && upstream.received().is_empty());
    let right = proxy.post("/v1/messages", &[("x-ctxkit-token", "s3cret-token")], &body);
    assert_eq!(right.status, 200);
    assert_eq!(upstream.received()[0].header("x-ctxkit-token"), None);
}

#[test]
fn a_window_too_small_for_the_request_is_a_400_naming_it_and_nothing_goes_upstream() {
    let upstream = LoopbackServer::start(|_, index| Reply::ok(answer_json(index)));
    let proxy = start_proxy(&upstream.base_url, 300);
    let body = ScriptedAgent::new(&"a long task statement ".repeat(200), false).body();
    let reply = proxy.post("/v1/messages", &[], &body);
    assert_eq!(reply.status, 400, "{}", reply.text());
    assert!(
        reply.text().contains("ctxkit could not make the view"),
        "{}",
        reply.text()
    );
    assert!(
        reply.text().contains("300"),
        "the window is not named: {}",
        reply.text()
    );
    assert!(upstream.received().is_empty());
}
