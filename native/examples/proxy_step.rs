//! The proxy's own time per request as the history grows (issue 37's third acceptance point):
//! an agent that re-sends its whole history each turn, as Claude Code does, talks to
//! `ctxkit proxy` (in this process, over a fresh SQLite database, a 32k window) in front of a
//! loopback fake Anthropic upstream that answers at once. For each history size (default
//! 1,000 and 10,000 messages) the first request brings the whole history (stored, compacted),
//! then ten more turns each add the answer and a tool result; the table gives the median turn's
//! time at the agent minus the upstream's own time (the proxy's work: reading the request,
//! finding its conversation, appending, preparing the view, forwarding, recording the answer),
//! and the time the proxy adds over the same request sent by the agent straight to the
//! upstream in the same turn (the baseline: the agent's transfer of its request, which it pays
//! with or without the proxy, cancels out), the request's size, and the ratios between sizes.
//!
//! ```sh
//! cargo run --release -p ctxkit --example proxy_step            # 1k and 10k messages
//! cargo run --release -p ctxkit --example proxy_step -- 1000 5000 20000
//! ```
//!
//! Times are wall clock on whatever machine runs it: read the ratio.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ctxkit::core::tokens::ModelFamily;
use ctxkit::proxy::sessions::engine_config;
use ctxkit::proxy::{Proxy, ProxyConfig};
use ctxkit::Engine;
use serde_json::{json, Value};

const SIZES: [usize; 2] = [1_000, 10_000];
/// Turns measured after the first request (the median is reported).
const TURNS: usize = 10;
const WINDOW: u64 = 32_000;

/// The fake upstream's answer to its `turn`-th request: a line of text and a `Bash` call.
fn answer(turn: usize) -> Value {
    json!({
        "id": format!("msg_{turn}"), "type": "message", "role": "assistant",
        "model": "claude-test",
        "content": [
            {"type": "text", "text": format!("Turn {turn}: checking file_{turn}.txt.")},
            {"type": "tool_use", "id": format!("toolu_{turn:06}"), "name": "Bash",
             "input": {"command": format!("cat file_{turn}.txt")}}
        ],
        "stop_reason": "tool_use", "stop_sequence": null,
        "usage": {"input_tokens": 1000, "output_tokens": 20}
    })
}

/// A loopback upstream answering each request with [`answer`] (its `turn` counts the requests
/// the proxy forwards); the seconds it spent on each of those (from its first byte read to its
/// answer written) are pushed to `spent`. A request to [`DIRECT`] is the agent calling it
/// without the proxy: answered the same way, neither counted nor timed.
fn start_upstream(spent: Arc<Mutex<Vec<f64>>>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let url = format!("http://{}", listener.local_addr().expect("its address"));
    std::thread::spawn(move || {
        let mut turn = 0;
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream);
            let mut line = String::new();
            let mut length = 0usize;
            let started = Instant::now();
            let _ = reader.read_line(&mut line);
            let direct = line.contains(DIRECT);
            line.clear();
            while reader.read_line(&mut line).unwrap_or(0) > 0 && line != "\r\n" {
                if let Some((name, value)) = line.split_once(':') {
                    if name.eq_ignore_ascii_case("content-length") {
                        length = value.trim().parse().unwrap_or(0);
                    }
                }
                line.clear();
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            let text = answer(turn).to_string();
            let reply = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
                 connection: close\r\n\r\n{text}",
                text.len()
            );
            let _ = reader.get_mut().write_all(reply.as_bytes());
            if !direct {
                turn += 1;
                spent
                    .lock()
                    .expect("the timings")
                    .push(started.elapsed().as_secs_f64());
            }
        }
    });
    url
}

/// The path of the agent's direct calls to the upstream (the baseline without the proxy).
const DIRECT: &str = "/direct/v1/messages";

/// The agent's history: a task, then `count - 1` messages of calls and their results.
fn history(count: usize) -> Vec<Value> {
    let mut messages = vec![json!({"role": "user", "content": [
        {"type": "text", "text": "Find why the totals overflow and fix it."}]})];
    let mut turn = 0;
    while messages.len() < count {
        let id = format!("toolu_old_{turn:06}");
        messages.push(json!({"role": "assistant", "content": [
            {"type": "text", "text": format!("Looking at part {turn}.")},
            {"type": "tool_use", "id": id, "name": "Bash",
             "input": {"command": format!("sed -n {turn},+5p src/totals.rs")}}]}));
        let output: String = (0..5)
            .map(|line| format!("{}: let total_{turn}_{line} = a + b;\n", turn + line))
            .collect();
        messages.push(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": id, "content": output}]}));
        turn += 1;
    }
    messages.truncate(count);
    messages
}

fn body(messages: &[Value]) -> String {
    json!({"model": "claude-test", "max_tokens": 1024,
           "system": "You are a coding agent.", "messages": messages})
    .to_string()
}

/// Posts `body` as the agent; the seconds until the whole answer was read.
fn post(agent: &ureq::Agent, url: &str, body: &str) -> Result<f64, String> {
    let started = Instant::now();
    let mut response = agent
        .post(url)
        .header("content-type", "application/json")
        .header("x-api-key", "sk-ant-example")
        .header("anthropic-version", "2023-06-01")
        .send(body.as_bytes())
        .map_err(|e| e.to_string())?;
    let status = response.status().as_u16();
    let text = response
        .body_mut()
        .read_to_string()
        .map_err(|e| e.to_string())?;
    if status != 200 {
        return Err(format!("the proxy answered {status}: {text}"));
    }
    Ok(started.elapsed().as_secs_f64())
}

/// What one history size measured: the first request's and the median turn's proxy time, and
/// the last request's size.
struct Row {
    messages: usize,
    first: f64,
    turn: f64,
    added: f64,
    bytes: usize,
}

fn measure(count: usize) -> Result<Row, String> {
    let spent = Arc::new(Mutex::new(Vec::new()));
    let upstream = start_upstream(spent.clone());
    let upstream_url = upstream.clone();
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let config = engine_config(WINDOW, ModelFamily::Claude);
    let engine = Engine::open(dir.path().join(".ctxkit/ctxkit.db"), dir.path(), config)
        .map_err(|e| e.to_string())?;
    let proxy = Proxy::bind(
        ProxyConfig {
            listen: "127.0.0.1:0".parse().map_err(|_| "an address")?,
            upstream,
            token: None,
            max_body_bytes: 1 << 30,
            family: ModelFamily::Claude,
            upstream_timeout: Duration::from_secs(60),
            idle: None,
            summarize_upstream: false,
        },
        engine,
    )?;
    let url = format!(
        "http://{}/v1/messages",
        proxy.local_addr().map_err(|e| e.to_string())?
    );
    let direct_url = format!("{}{DIRECT}", upstream_url);
    std::thread::spawn(move || proxy.serve());
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .build()
        .into();
    let own = |total: f64, turn: usize| -> f64 {
        total
            - spent
                .lock()
                .map_or(0.0, |s| s.get(turn).copied().unwrap_or(0.0))
    };
    let mut messages = history(count);
    let first = own(post(&agent, &url, &body(&messages))?, 0);
    let mut times = Vec::new();
    let mut added = Vec::new();
    let mut bytes = 0;
    for turn in 0..TURNS {
        let answer = answer(turn);
        let id = format!("toolu_{turn:06}");
        messages.push(json!({"role": "assistant", "content": answer["content"].clone()}));
        messages.push(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": id, "content": format!("file {turn}: ok")}]}));
        let text = body(&messages);
        bytes = text.len();
        let direct = post(&agent, &direct_url, &text)?;
        let proxied = post(&agent, &url, &text)?;
        times.push(own(proxied, turn + 1));
        added.push(proxied - direct);
    }
    let median = |mut values: Vec<f64>| {
        values.sort_by(f64::total_cmp);
        values.get(TURNS / 2).copied().unwrap_or_default()
    };
    Ok(Row {
        messages: count,
        first,
        turn: median(times),
        added: median(added),
        bytes,
    })
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let sizes: Vec<usize> = if args.is_empty() {
        SIZES.to_vec()
    } else {
        args.iter()
            .map(|a| a.parse().map_err(|_| format!("not a size: {a}")))
            .collect::<Result<_, _>>()?
    };
    println!(
        "| history (messages) | request body | first request (stores, compacts) | a turn: \
         the agent's time minus the upstream's, median of {TURNS} | a turn: added over the \
         same request sent straight to the upstream, median of {TURNS} |"
    );
    println!("|---|---|---|---|---|");
    let mut before: Option<Row> = None;
    for size in sizes {
        let row = measure(size)?;
        let ratio = |now: f64, then: f64| format!(" (×{:.2})", now / then);
        let (turn_ratio, added_ratio) = match &before {
            Some(b) => (ratio(row.turn, b.turn), ratio(row.added, b.added)),
            None => (String::new(), String::new()),
        };
        println!(
            "| {} | {:.2} MB | {:.1} ms | {:.2} ms{turn_ratio} | {:.2} ms{added_ratio} |",
            row.messages,
            row.bytes as f64 / 1e6,
            row.first * 1e3,
            row.turn * 1e3,
            row.added * 1e3,
        );
        before = Some(row);
    }
    Ok(())
}
