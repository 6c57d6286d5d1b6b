//! One transcript through the proxy: the calls sent, the upstream's requests validated and
//! billed, the answers compared, and the table's row.

use std::path::Path;
use std::time::Duration;

use ctxkit::core::tokens::ModelFamily;
use ctxkit::core::wire::{validate_anthropic, validate_responses, Violation};
use ctxkit::proxy::sessions::engine_config;
use ctxkit::proxy::{Proxy, ProxyConfig};
use ctxkit::Engine;
use serde_json::Value;

use crate::bill::{bill, Bill};
use crate::calls::{read, Call, Transcript};
use crate::needed::Needed;
use crate::upstream;

/// One transcript's results.
pub struct Row {
    pub name: String,
    calls: usize,
    recorded: Option<f64>,
    own: Bill,
    proxied: Bill,
    compactions: u64,
    sessions: usize,
    agent_compactions: usize,
    needed: Needed,
    pub invalid: usize,
    pub not_identical: usize,
    /// What failed, one line each (at most a few per kind).
    pub problems: Vec<String>,
}

impl Row {
    /// The row of the markdown table.
    pub fn line(&self) -> String {
        let recorded = self.recorded.map_or("-".to_owned(), |r| format!("{r:.0}"));
        let versus = |units: f64| {
            self.recorded
                .filter(|r| *r > 0.0)
                .map_or("-".to_owned(), |r| format!("{:.1}%", 100.0 * units / r))
        };
        let share = |bill: &Bill| 100.0 * bill.cache_read as f64 / bill.tokens.max(1) as f64;
        format!(
            "| {} | {} | {recorded} | {:.0} ({} of recorded) | {:.0} | {} | {:.1}% | {:.0}% / {:.0}% | {} in {} session(s), {} prefix breaks; {} | {} | {} | {} |",
            self.name,
            self.calls,
            self.own.units,
            versus(self.own.units),
            self.proxied.units,
            versus(self.proxied.units),
            100.0 * self.proxied.units / self.own.units.max(1.0),
            share(&self.own),
            share(&self.proxied),
            self.compactions,
            self.sessions,
            self.proxied.prefix_breaks,
            self.agent_compactions,
            self.needed.cell(),
            self.invalid,
            self.not_identical,
        )
    }
}

/// Replays `file` through a proxy keeping requests within `window` tokens, the answers
/// streamed when `streaming`.
pub fn run(file: &Path, window: u64, streaming: bool) -> Result<Row, String> {
    let text = std::fs::read_to_string(file).map_err(|e| e.to_string())?;
    let codex = file
        .file_name()
        .is_some_and(|name| name.to_string_lossy().starts_with("rollout-"));
    let transcript = if codex {
        crate::codex::read(&text, streaming)?
    } else {
        read(&text, streaming)?
    };
    let answers = transcript.calls.iter().map(|c| c.answer.clone()).collect();
    let (upstream_url, received) = upstream::start(answers, streaming)?;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let db = dir.path().join(".ctxkit/ctxkit.db");
    let family = if transcript.responses {
        ModelFamily::OpenAi
    } else {
        ModelFamily::Claude
    };
    let config = engine_config(window, family);
    let engine = Engine::open(&db, dir.path(), config.clone()).map_err(|e| e.to_string())?;
    let proxy = Proxy::bind(
        ProxyConfig {
            listen: "127.0.0.1:0".parse().map_err(|_| "an address")?,
            upstream: upstream_url,
            token: None,
            max_body_bytes: 1 << 30,
            family,
            upstream_timeout: Duration::from_secs(60),
            idle: None,
            summarize_upstream: false,
        },
        engine,
    )?;
    let path = if transcript.responses {
        "/v1/responses"
    } else {
        "/v1/messages"
    };
    let url = format!(
        "http://{}{path}",
        proxy.local_addr().map_err(|e| e.to_string())?
    );
    std::thread::spawn(move || proxy.serve());
    let mut row = Row {
        name: name(file),
        calls: transcript.calls.len(),
        recorded: transcript.recorded_units,
        own: Bill::default(),
        proxied: Bill::default(),
        compactions: 0,
        sessions: 0,
        agent_compactions: transcript.agent_compactions,
        needed: Needed::default(),
        invalid: 0,
        not_identical: 0,
        problems: Vec::new(),
    };
    let answered = send_all(&url, &transcript.calls, &mut row)?;
    let bodies = received.lock().map_err(|_| "the received bodies")?.clone();
    check_answers(&transcript, &answered, &mut row);
    bill_both(&transcript, &bodies, &mut row);
    for (call, body) in transcript.calls.iter().zip(&bodies) {
        let forwarded: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
        row.needed
            .count(&call.request, &call.reply, &forwarded, transcript.responses);
    }
    // A second engine on the same database reads what the proxy stored.
    let store = Engine::open(&db, dir.path(), config).map_err(|e| e.to_string())?;
    let sessions = store.list_sessions().map_err(|e| e.to_string())?;
    row.sessions = sessions.len();
    row.compactions = sessions.iter().map(|s| s.checkpoints).sum();
    Ok(row)
}

/// The request's violations by its API's validator.
fn validate(transcript: &Transcript, request: &Value) -> Vec<Violation> {
    if transcript.responses {
        validate_responses(request)
    } else {
        validate_anthropic(request)
    }
}

fn name(file: &Path) -> String {
    let folder = file
        .parent()
        .and_then(Path::file_name)
        .map(|f| f.to_string_lossy().replace("claude-code_", ""))
        .unwrap_or_default();
    // A Codex rollout (`rollout-<time>-<id>`) is named by its id's last part.
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = match stem.strip_prefix("rollout-") {
        Some(rest) => rest.rsplit('-').next().unwrap_or_default(),
        None => stem.as_str(),
    };
    let stem: String = stem.chars().take(8).collect();
    format!("{folder}/{stem}")
}

/// Sends every call as the agent; the answer bodies it received (`None` for a refused call).
fn send_all(url: &str, calls: &[Call], row: &mut Row) -> Result<Vec<Option<Vec<u8>>>, String> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .build()
        .into();
    let mut answers = Vec::new();
    for (index, call) in calls.iter().enumerate() {
        let mut response = agent
            .post(url)
            .header("content-type", "application/json")
            .header("x-api-key", "sk-ant-replay")
            .header("authorization", "Bearer sk-replay")
            .header("anthropic-version", "2023-06-01")
            .send(call.request.to_string().as_bytes())
            .map_err(|e| e.to_string())?;
        let status = response.status().as_u16();
        let body = response
            .body_mut()
            .with_config()
            .limit(1 << 30)
            .read_to_vec()
            .map_err(|e| e.to_string())?;
        if status == 200 {
            answers.push(Some(body));
        } else {
            let text = String::from_utf8_lossy(&body)
                .chars()
                .take(300)
                .collect::<String>();
            row.problems
                .push(format!("call {index}: the proxy answered {status}: {text}"));
            answers.push(None);
        }
    }
    Ok(answers)
}

/// Counts the agent-facing answers that are not the upstream's bytes (a refused call counts).
fn check_answers(transcript: &Transcript, answered: &[Option<Vec<u8>>], row: &mut Row) {
    for (index, (call, got)) in transcript.calls.iter().zip(answered).enumerate() {
        if got.as_deref() != Some(call.answer.as_bytes()) {
            row.not_identical += 1;
            if row.not_identical <= 3 {
                row.problems
                    .push(format!("call {index}: the answer differs"));
            }
        }
    }
}

/// Validates the upstream's requests and bills them and the agent's own.
fn bill_both(transcript: &Transcript, bodies: &[Vec<u8>], row: &mut Row) {
    let own: Vec<(&Value, Option<i64>)> = transcript
        .calls
        .iter()
        .map(|call| (&call.request, call.at))
        .collect();
    row.own = bill(&own, &transcript.pricing, transcript.warm_start);
    // The agent's own requests go through the same validator: a failure there would be this
    // program's reconstruction, not the proxy (reported, not counted in the proxy's column).
    for (index, call) in transcript.calls.iter().enumerate() {
        if let Some(first) = validate(transcript, &call.request).first() {
            row.problems.push(format!(
                "the agent's own request {index} does not validate: {first}"
            ));
        }
    }
    if bodies.len() != transcript.calls.len() {
        row.problems.push(format!(
            "the upstream got {} requests for {} calls",
            bodies.len(),
            transcript.calls.len()
        ));
    }
    let parsed: Vec<Value> = bodies
        .iter()
        .map(|body| serde_json::from_slice(body).unwrap_or(Value::Null))
        .collect();
    for (index, request) in parsed.iter().enumerate() {
        let violations = validate(transcript, request);
        if !violations.is_empty() {
            row.invalid += 1;
            if row.invalid <= 3 {
                let first = violations
                    .first()
                    .map(ToString::to_string)
                    .unwrap_or_default();
                row.problems
                    .push(format!("upstream request {index}: {first}"));
            }
        }
    }
    // The upstream got one request per call answered; each is billed at its call's time.
    let proxied: Vec<(&Value, Option<i64>)> = parsed
        .iter()
        .zip(transcript.calls.iter())
        .map(|(request, call)| (request, call.at))
        .collect();
    row.proxied = bill(&proxied, &transcript.pricing, transcript.warm_start);
}
