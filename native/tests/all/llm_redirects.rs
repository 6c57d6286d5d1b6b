//! Credentials stay with their host (issue 34, item 1): an LLM endpoint that answers a 3xx
//! with a `Location` on another host is not followed, by any client ctxkit has.
//!
//! Two loopback servers play the two hosts: the configured one on 127.0.0.1 answers every
//! request with a redirect to the same path on 127.0.0.2, and the other one, on 127.0.0.2,
//! answers whatever it is asked with a valid answer (so a client that followed would take it
//! for the model's). For each redirect status (301, 302, 303, 307, 308) and each client (the
//! four summarizer APIs, both their summary and their plain completion, and the probe's Chat
//! Completions client), the call must fail with an error naming the status and the
//! `Location`, the configured host must have seen exactly one request (a redirect is not
//! retried), and the other host must have accepted no connection at all: no key, no body, no
//! bytes. Then the CLI end to end: `ctxkit compact-if-idle --summarizer anthropic` and
//! `ctxkit probe` against a redirecting base URL fall back or report the error, and nothing
//! reaches the other host.

use crate::common;

use std::process::Command;
use std::time::Duration;

use crate::common::project::BIN;
use crate::common::{
    anthropic_answer, anthropic_compaction_answer, openai_answer, run_until_compaction,
    small_window_config, turn_messages, LoopbackServer, Reply,
};
use ctxkit::core::compaction::SummaryMethod;
use ctxkit::core::Message;
use ctxkit::llm::{
    Api, HttpOptions, LlmEndpoint, LlmRequest, OpenAiChat, Sampling, SummarizerConfig,
    SummarizerError,
};
use ctxkit::{Engine, Event, WarningKind};

/// The redirect statuses a server may answer a POST with.
const STATUSES: [u16; 5] = [301, 302, 303, 307, 308];

/// The key the configured host is given; it must never reach the other host.
const KEY: &str = "sk-redirect-test-secret";

/// What the other host answers: a well-formed summary a follower would store.
const OTHER_ANSWER: &str = "<summary>\n## Goal\nOTHER-HOST-ANSWER\n## Progress\nNone.\n## Key Decisions\nNone.\n## Next Steps\nNone.\n## Critical Context\nNone.\n</summary>";

/// The configured host (127.0.0.1), which redirects every request to the same path on the
/// other host (127.0.0.2), which answers `answer`.
struct Hosts {
    configured: LoopbackServer,
    other: LoopbackServer,
}

impl Hosts {
    fn start(status: u16, answer: String) -> Hosts {
        let other = LoopbackServer::start_on("127.0.0.2", move |_, _| Reply::ok(answer.clone()));
        let target = other.base_url.clone();
        let configured = LoopbackServer::start(move |request, _| Reply::Respond {
            status,
            headers: vec![("location".to_owned(), format!("{target}{}", request.path))],
            body: r#"{"moved":true}"#.to_owned(),
        });
        Hosts { configured, other }
    }

    /// What is wrong with the outcome of one call (nothing when it was refused with the status
    /// and the `Location` named, sent once to the configured host, and the other host was not
    /// connected to).
    fn problems<T: std::fmt::Debug>(
        &self,
        what: &str,
        result: Result<T, SummarizerError>,
        status: u16,
    ) -> Vec<String> {
        let mut problems = Vec::new();
        match result {
            Ok(answer) => problems.push(format!("{what}: followed, answer taken: {answer:?}")),
            Err(error) => {
                let error = error.to_string();
                if !error.contains(&format!("HTTP {status}"))
                    || !error.contains(&self.other.base_url)
                {
                    problems.push(format!(
                        "{what}: the error names no status and Location: {error}"
                    ));
                }
            }
        }
        if self.other.connections() != 0 {
            let keys: Vec<Option<String>> = self
                .other
                .received()
                .iter()
                .map(|sent| {
                    let key = sent.header("x-api-key").or(sent.header("authorization"));
                    key.map(str::to_owned)
                })
                .collect();
            problems.push(format!(
                "{what}: the other host got {} connection(s), keys sent {keys:?}",
                self.other.connections()
            ));
        }
        let sent = self.configured.received();
        if self.configured.connections() != 1 || sent.len() != 1 {
            problems.push(format!(
                "{what}: {} requests to the configured host",
                sent.len()
            ));
        }
        // The configured host is still sent the key: refusing redirects changes nothing there.
        let keyed = sent.iter().all(|request| {
            request.header("x-api-key") == Some(KEY)
                || request.header("authorization") == Some(&format!("Bearer {KEY}"))
        });
        if !keyed {
            problems.push(format!("{what}: the configured host had no key: {sent:?}"));
        }
        problems
    }
}

/// Fails listing every problem (so a failing run shows each case, not only the first).
fn assert_none(problems: &[String]) {
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// An endpoint at `base_url` with retries allowed (a redirect must still not be retried).
fn endpoint(api: Api, base_url: &str) -> LlmEndpoint {
    let base_url = match api {
        Api::OpenAiChat | Api::ResponsesCompaction => format!("{base_url}/v1"),
        Api::AnthropicMessages | Api::AnthropicCompaction => base_url.to_owned(),
    };
    LlmEndpoint {
        api,
        base_url,
        api_key: Some(KEY.to_owned()),
        model: "test-model".to_owned(),
        http: HttpOptions {
            connect_timeout: Duration::from_secs(2),
            read_timeout: Duration::from_secs(5),
            max_retries: 3,
            initial_backoff: Duration::from_millis(5),
            max_backoff: Duration::from_millis(20),
            ..HttpOptions::default()
        },
    }
}

/// What the other host answers a summary request of `api` with, in that API's shape.
fn summary_answer(api: Api) -> String {
    match api {
        Api::OpenAiChat => openai_answer(OTHER_ANSWER),
        Api::AnthropicMessages => anthropic_answer(OTHER_ANSWER),
        Api::AnthropicCompaction => {
            let block = serde_json::json!({"type": "compaction", "content": OTHER_ANSWER});
            anthropic_compaction_answer(&block.to_string(), &[])
        }
        Api::ResponsesCompaction => serde_json::json!({"output": [
            {"type": "compaction", "id": "cmp_1", "encrypted_content": "T1RIRVItSE9TVA=="}
        ]})
        .to_string(),
    }
}

/// What the other host answers a plain completion of `api` with.
fn completion_answer(api: Api) -> String {
    match api {
        Api::OpenAiChat | Api::ResponsesCompaction => openai_answer(OTHER_ANSWER),
        Api::AnthropicMessages | Api::AnthropicCompaction => anthropic_answer(OTHER_ANSWER),
    }
}

const APIS: [Api; 4] = [
    Api::OpenAiChat,
    Api::AnthropicMessages,
    Api::AnthropicCompaction,
    Api::ResponsesCompaction,
];

fn request() -> LlmRequest<'static> {
    LlmRequest {
        system: "Summarize.",
        prompt: "The conversation so far.",
        messages: &[],
        anthropic_messages: None,
        responses_input: None,
        max_tokens: 100,
        deadline: None,
    }
}

#[test]
fn no_summarizer_follows_a_redirect_to_another_host() {
    let mut problems = Vec::new();
    for status in STATUSES {
        for api in APIS {
            let hosts = Hosts::start(status, summary_answer(api));
            let client = endpoint(api, &hosts.configured.base_url).client();
            let result = client.summarize(&request());
            problems.extend(hosts.problems(&format!("{api:?} summary, {status}"), result, status));

            let hosts = Hosts::start(status, completion_answer(api));
            let client = endpoint(api, &hosts.configured.base_url).client();
            let result = client.complete(&request());
            let what = format!("{api:?} completion, {status}");
            problems.extend(hosts.problems(&what, result, status));
        }
    }
    assert_none(&problems);
}

#[test]
fn the_probe_client_follows_no_redirect_to_another_host() {
    let mut problems = Vec::new();
    for status in STATUSES {
        let hosts = Hosts::start(status, openai_answer(OTHER_ANSWER));
        let mut endpoint = endpoint(Api::OpenAiChat, &hosts.configured.base_url);
        // As `ctxkit probe` builds it.
        endpoint.http.max_retries = 0;
        let sampling = Sampling {
            temperature: 0.0,
            seed: 1,
        };
        let result = OpenAiChat::new(endpoint).chat(&[Message::user("what?")], 10, sampling);
        problems.extend(hosts.problems(&format!("probe, {status}"), result, status));
    }
    assert_none(&problems);
}

#[test]
fn the_engine_falls_back_with_a_warning_naming_the_location() {
    // 302: the status that was followed (as a GET); 308: the one that failed unnamed.
    for (status, api) in [302, 308]
        .into_iter()
        .flat_map(|s| APIS.map(|api| (s, api)))
    {
        let hosts = Hosts::start(status, summary_answer(api));
        let dir = tempfile::tempdir().unwrap();
        let config = ctxkit::EngineConfig {
            summarizer: SummarizerConfig::Llm(endpoint(api, &hosts.configured.base_url)),
            ..small_window_config()
        };
        let mut engine = Engine::open(dir.path().join("ctxkit.db"), dir.path(), config).unwrap();
        engine.create_session("s").unwrap();
        let view = run_until_compaction(&mut engine, "s");
        let what = format!("{api:?}, {status}");
        assert_eq!(view.compacted, Some(SummaryMethod::Extractive), "{what}");
        let failed = view.events.iter().find_map(|event| match event {
            Event::Warning {
                kind: WarningKind::SummarizerFailed,
                message,
                ..
            } => Some(message.as_str()),
            _ => None,
        });
        let failed = failed.unwrap_or_else(|| panic!("{what}: no warning: {:?}", view.events));
        let named = format!("HTTP {status} redirect to {}", hosts.other.base_url);
        assert!(failed.contains(&named), "{what}: {failed}");
        assert_eq!(hosts.other.connections(), 0, "{what}");
    }
}

/// Runs the CLI in `dir` with `env`; its standard output (it must succeed).
fn ctxkit(dir: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> String {
    let mut command = Command::new(BIN);
    command
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY");
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{args:?}: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

#[test]
fn compact_if_idle_with_a_redirecting_anthropic_url_falls_back_and_keeps_the_key_home() {
    let dir = tempfile::tempdir().unwrap();
    let messages: Vec<_> = (0..40).flat_map(turn_messages).collect();
    let file = dir.path().join("log.json");
    std::fs::write(&file, serde_json::to_string(&messages).unwrap()).unwrap();
    ctxkit(
        dir.path(),
        &["append", "s", file.to_str().unwrap(), "--create"],
        &[],
    );
    let hosts = Hosts::start(302, anthropic_answer(OTHER_ANSWER));
    let env = [
        ("ANTHROPIC_BASE_URL", hosts.configured.base_url.as_str()),
        ("ANTHROPIC_API_KEY", KEY),
        ("CTXKIT_MODEL", "test-model"),
    ];
    let args = [
        "compact-if-idle",
        "s",
        "--window",
        "4000",
        "--idle",
        "280",
        "--summarizer",
        "anthropic",
        "--json",
    ];
    let outcome: serde_json::Value =
        serde_json::from_str(ctxkit(dir.path(), &args, &env).trim()).unwrap();
    assert_eq!(outcome["decision"]["action"], "compact", "{outcome}");
    // The fallback (the command prints no warnings; the error's words are checked above).
    assert_eq!(outcome["compacted"], "extractive", "{outcome}");
    assert_eq!(hosts.other.connections(), 0, "{:?}", hosts.other.received());
    // The summary request (and the memory extraction before it) each sent once.
    let summaries = hosts
        .configured
        .received()
        .iter()
        .filter(|request| !request.is_extraction())
        .count();
    assert_eq!(summaries, 1);
    let view = ctxkit(dir.path(), &["view", "s", "--window", "4000"], &[]);
    assert!(!view.contains("OTHER-HOST-ANSWER"), "{view}");
}

#[test]
fn probe_with_a_redirecting_base_url_reports_the_location_and_sends_nothing_away() {
    let dir = tempfile::tempdir().unwrap();
    let hosts = Hosts::start(302, openai_answer(OTHER_ANSWER));
    let base_url = format!("{}/v1", hosts.configured.base_url);
    let transcript = common::corpus_dir()
        .join("claude-code_marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl");
    let args = [
        "probe",
        transcript.to_str().unwrap(),
        "--strategy",
        "full",
        "--max-probes",
        "2",
        "--json",
    ];
    let env = [
        ("OPENAI_BASE_URL", base_url.as_str()),
        ("OPENAI_API_KEY", KEY),
        ("CTXKIT_MODEL", "test-model"),
    ];
    let stdout = ctxkit(dir.path(), &args, &env);
    let rows: Vec<serde_json::Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let requests = &rows[..rows.len() - 1];
    assert_eq!(requests.len(), 2, "{stdout}");
    for row in requests {
        assert_eq!(row["outcome"]["status"], "error", "{row}");
        let message = row["outcome"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(&hosts.other.base_url), "{row}");
    }
    assert_eq!(hosts.other.connections(), 0, "{:?}", hosts.other.received());
    assert_eq!(
        hosts.configured.received().len(),
        2,
        "one request per probe"
    );
}
