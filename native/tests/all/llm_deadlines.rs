//! Every wait has a deadline (issue 34, item 3). Against servers that stall (accept and never
//! answer), drip (a byte every 500 ms, forever), answer `429 retry-after: 60` every time, or
//! answer 500 every time: one summarizer call of each API, given a 2 s summary timeout
//! ([`HttpOptions::deadline`]) and every other option at its default (180 s per phase, 3
//! retries, `retry-after` honoured up to 60 s), returns an error within 3x the deadline; an
//! engine compaction (memory extraction, then the summary) falls back to the extractive
//! summary within the same bound; a turn sequence against a 429 storm sends the summarizer
//! only the breaker's threshold of calls before skipping it; `ctxkit probe` against a stalled
//! server ends by its `--deadline`, and against a 429 storm stops after the breaker's
//! threshold of requests. Before the fix these took 180 s a call, 360 s a compaction (two
//! calls), and the breaker counted timeouts only. About 10 s: the cases run side by side.

use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::project::BIN;
use crate::common::{corpus_dir, small_window_config, turn_messages, LoopbackServer, Reply};
use ctxkit::core::compaction::{FallbackKind, LlmCall, SummaryMethod};
use ctxkit::core::turn::breaker::{BREAKER_FAILURES, BREAKER_SKIPPED_COMPACTIONS};
use ctxkit::llm::{Api, HttpOptions, LlmEndpoint, LlmRequest, SummarizerConfig, SummarizerError};
use ctxkit::{Engine, TurnResult};
use serde_json::Value;

/// The summary timeout every case is given.
const DEADLINE: Duration = Duration::from_secs(2);

/// The bound every case must end within: generous, for a loaded CI machine (before the fix,
/// the same cases took 90x the deadline and more).
const BOUND: Duration = Duration::from_secs(3 * 2);

const CLAUDE_CODE: &str = "claude-code_marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl";

/// A hostile server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hostile {
    /// Accepts, reads the request, never answers.
    Stall,
    /// Answers a 200 head, then a body byte every 500 ms.
    Drip,
    /// `429 Too Many Requests` with `retry-after: 60`, every time.
    RateLimited,
    /// 500, every time.
    Down,
}

const HOSTILE: [Hostile; 4] = [
    Hostile::Stall,
    Hostile::Drip,
    Hostile::RateLimited,
    Hostile::Down,
];

fn server(hostile: Hostile) -> LoopbackServer {
    LoopbackServer::start(move |_, _| match hostile {
        Hostile::Stall => Reply::Stall(Duration::from_secs(60)),
        Hostile::Drip => Reply::Drip {
            length: 1 << 20,
            every: Duration::from_millis(500),
            for_at_most: Duration::from_secs(60),
        },
        Hostile::RateLimited => Reply::Respond {
            status: 429,
            headers: vec![("retry-after".to_owned(), "60".to_owned())],
            body: r#"{"error":"rate limited"}"#.to_owned(),
        },
        Hostile::Down => Reply::status(500, r#"{"error":"down"}"#),
    })
}

/// An endpoint with the summary timeout [`DEADLINE`] and every other option at its default.
fn endpoint(api: Api, server: &LoopbackServer) -> LlmEndpoint {
    let base_url = match api {
        Api::OpenAiChat | Api::ResponsesCompaction => format!("{}/v1", server.base_url),
        _ => server.base_url.clone(),
    };
    LlmEndpoint {
        api,
        base_url,
        api_key: Some("test-key".to_owned()),
        model: "test-model".to_owned(),
        http: HttpOptions {
            deadline: DEADLINE,
            ..HttpOptions::default()
        },
    }
}

const APIS: [Api; 4] = [
    Api::OpenAiChat,
    Api::AnthropicMessages,
    Api::AnthropicCompaction,
    Api::ResponsesCompaction,
];

/// Runs `case` for every item at once, each in its own thread (the cases mostly wait), and
/// returns their results in order.
fn side_by_side<T: Send + Copy, R: Send>(items: &[T], case: impl Fn(T) -> R + Sync) -> Vec<R> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .iter()
            .map(|&item| {
                let case = &case;
                scope.spawn(move || case(item))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

#[test]
fn one_call_ends_within_its_deadline_whatever_the_server_does() {
    let cases: Vec<(Hostile, Api)> = HOSTILE
        .iter()
        .flat_map(|hostile| APIS.iter().map(move |api| (*hostile, *api)))
        .collect();
    let results = side_by_side(&cases, |(hostile, api)| {
        let server = server(hostile);
        let client = endpoint(api, &server).client();
        let messages = turn_messages(0);
        let started = Instant::now();
        let result = client.summarize(&LlmRequest {
            system: "Summarize.",
            prompt: "the conversation",
            messages: &messages,
            anthropic_messages: None,
            responses_input: None,
            max_tokens: 64,
            deadline: None,
        });
        (started.elapsed(), result.err(), server.received().len())
    });
    let mut problems = Vec::new();
    for ((hostile, api), (elapsed, error, requests)) in cases.iter().zip(results) {
        let expected = match (hostile, &error) {
            (Hostile::Stall | Hostile::Drip, Some(SummarizerError::Timeout { problem, .. })) => {
                problem.contains("deadline")
            }
            // The retry-after of 60 s ends past the deadline: not waited for, not retried.
            (Hostile::RateLimited, Some(SummarizerError::Status { status: 429, .. })) => {
                requests == 1
            }
            // Backoff 1 s, then 2 s: the second wait would end past the deadline.
            (Hostile::Down, Some(SummarizerError::Status { status: 500, .. })) => {
                (1..=2).contains(&requests)
            }
            _ => false,
        };
        if !expected || elapsed >= BOUND {
            problems.push(format!(
                "{hostile:?} {api:?}: {:.1} s, {requests} request(s), {error:?}",
                elapsed.as_secs_f64()
            ));
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

/// A caller's deadline earlier than the client's own wins, and one already passed sends
/// nothing.
#[test]
fn a_callers_earlier_deadline_wins_and_a_passed_one_sends_nothing() {
    let server = server(Hostile::Stall);
    let client = endpoint(Api::OpenAiChat, &server).client();
    let request = |deadline| LlmRequest {
        system: "s",
        prompt: "p",
        messages: &[],
        anthropic_messages: None,
        responses_input: None,
        max_tokens: 8,
        deadline,
    };
    let started = Instant::now();
    let error = client
        .complete(&request(Some(Instant::now() + Duration::from_millis(300))))
        .unwrap_err();
    assert!(matches!(error, SummarizerError::Timeout { .. }), "{error}");
    assert!(started.elapsed() < DEADLINE, "{:?}", started.elapsed());
    let error = client.complete(&request(Some(Instant::now()))).unwrap_err();
    assert!(
        error.to_string().contains("before attempt 1 was sent"),
        "{error}"
    );
    assert_eq!(
        server.received().len(),
        1,
        "the passed deadline sent nothing"
    );
}

fn engine_with(config: SummarizerConfig, dir: &tempfile::TempDir) -> Engine {
    let config = ctxkit::EngineConfig {
        summarizer: config,
        ..small_window_config()
    };
    let mut engine = Engine::open(dir.path().join("ctxkit.db"), dir.path(), config).unwrap();
    engine.create_session("s").unwrap();
    engine
}

/// Records turns until one compacts; returns it and how long its `prepare_turn` took.
fn next_compaction(engine: &mut Engine, next: &mut usize) -> (TurnResult, Duration) {
    for _ in 0..200 {
        engine.record("s", turn_messages(*next)).unwrap();
        *next += 1;
        let started = Instant::now();
        let view = engine.prepare_turn("s").unwrap();
        if view.compacted.is_some() {
            return (view, started.elapsed());
        }
    }
    panic!("no compaction in 200 turns");
}

#[test]
fn a_compaction_falls_back_within_the_deadline_whatever_the_server_does() {
    let results = side_by_side(&HOSTILE, |hostile| {
        let server = server(hostile);
        let dir = tempfile::tempdir().unwrap();
        let summarizer = SummarizerConfig::Llm(endpoint(Api::AnthropicMessages, &server));
        let mut engine = engine_with(summarizer, &dir);
        let (view, elapsed) = next_compaction(&mut engine, &mut 0);
        let fallbacks: Vec<(LlmCall, FallbackKind)> = view
            .stats
            .fallbacks
            .iter()
            .map(|f| (f.call, f.kind))
            .collect();
        (view.compacted, fallbacks, elapsed)
    });
    for (hostile, (compacted, fallbacks, elapsed)) in HOSTILE.iter().zip(results) {
        assert_eq!(compacted, Some(SummaryMethod::Extractive), "{hostile:?}");
        // The extraction and the summary both fell back (the summary's deadline is the
        // extraction's: a stalled extraction leaves it no time at all).
        let calls: Vec<LlmCall> = fallbacks.iter().map(|(call, _)| *call).collect();
        assert_eq!(
            calls,
            vec![LlmCall::Extraction, LlmCall::Summary],
            "{hostile:?}: {fallbacks:?}"
        );
        assert!(
            elapsed < BOUND,
            "{hostile:?}: the compaction took {:.1} s",
            elapsed.as_secs_f64()
        );
    }
}

#[test]
fn a_429_storm_gets_only_the_breakers_threshold_of_summary_calls() {
    let server = server(Hostile::RateLimited);
    let dir = tempfile::tempdir().unwrap();
    let summarizer = SummarizerConfig::Llm(endpoint(Api::OpenAiChat, &server));
    let mut engine = engine_with(summarizer, &dir);
    let mut next = 0;
    let started = Instant::now();
    let mut kinds = Vec::new();
    for _ in 0..BREAKER_FAILURES + BREAKER_SKIPPED_COMPACTIONS {
        let (view, _) = next_compaction(&mut engine, &mut next);
        assert_eq!(view.compacted, Some(SummaryMethod::Extractive));
        let summary = view
            .stats
            .fallbacks
            .iter()
            .find(|f| f.call == LlmCall::Summary)
            .unwrap();
        kinds.push(summary.kind);
    }
    let summary_requests = server
        .received()
        .iter()
        .filter(|request| !request.is_extraction())
        .count();
    assert_eq!(summary_requests, BREAKER_FAILURES as usize);
    let mut expected = vec![FallbackKind::Error; BREAKER_FAILURES as usize];
    expected.extend(vec![
        FallbackKind::Skipped;
        BREAKER_SKIPPED_COMPACTIONS as usize
    ]);
    assert_eq!(kinds, expected);
    assert!(started.elapsed() < BOUND, "{:?}", started.elapsed());
}

/// `ctxkit probe` of the Claude Code transcript against `server`; its rows, and how long it
/// took.
fn probe(server: &LoopbackServer, args: &[&str]) -> (Vec<Value>, Duration) {
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let output = Command::new(BIN)
        .current_dir(dir.path())
        .arg("probe")
        .arg(corpus_dir().join(CLAUDE_CODE))
        .args(["--max-probes", "4", "--json"])
        .args(args)
        .env("OPENAI_BASE_URL", format!("{}/v1", server.base_url))
        .env("CTXKIT_MODEL", "fake")
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    let elapsed = started.elapsed();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    let mut rows: Vec<Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    rows.pop();
    (rows, elapsed)
}

fn statuses(rows: &[Value]) -> Vec<String> {
    rows.iter()
        .map(|row| {
            let outcome = &row["outcome"];
            outcome["error"]
                .as_str()
                .unwrap_or(outcome["status"].as_str().unwrap())
                .to_owned()
        })
        .collect()
}

#[test]
fn probe_ends_by_its_deadline_and_stops_at_the_breaker() {
    let (stalled, storm) = (server(Hostile::Stall), server(Hostile::RateLimited));
    let runs = side_by_side(&[0, 1], |which| match which {
        // Each answer may wait 60 s; the run may take 3.
        0 => probe(&stalled, &["--timeout", "60", "--deadline", "3"]),
        _ => probe(&storm, &[]),
    });
    let (rows, elapsed) = &runs[0];
    let said = statuses(rows);
    assert_eq!(said.len(), 12, "4 probes over 3 views");
    assert_eq!(said[0], "timeout", "{said:?}");
    assert!(said[1..].iter().all(|s| s == "skipped"), "{said:?}");
    let reason = rows[1]["outcome"]["reason"].as_str().unwrap();
    assert_eq!(
        reason,
        "not sent: the run's deadline of 3 s (--deadline) passed"
    );
    assert_eq!(stalled.received().len(), 1);
    // The replay before the run takes its own time: the bound is generous, where before the
    // run took 12 requests x 60 s.
    assert!(*elapsed < Duration::from_secs(30), "{elapsed:?}");

    let (rows, _) = &runs[1];
    let said = statuses(rows);
    let failed = BREAKER_FAILURES as usize;
    assert!(said[..failed].iter().all(|s| s == "http"), "{said:?}");
    assert!(said[failed..].iter().all(|s| s == "skipped"), "{said:?}");
    let reason = rows[failed]["outcome"]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("not sent: the last 2 requests failed in a row")
            && reason.contains("HTTP 429"),
        "{reason}"
    );
    assert_eq!(storm.received().len(), failed);
}
