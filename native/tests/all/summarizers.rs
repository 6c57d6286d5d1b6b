//! The LLM summarizers against a loopback server that speaks both APIs: every failure (500,
//! a stall past the timeout, malformed JSON, empty content) falls back to the extractive
//! summary and the turn completes; success stores an `llm` checkpoint (and extracted
//! memories); a 429 is retried.

use std::time::Duration;

use crate::common::{
    anthropic_answer, openai_answer, run_until_compaction, small_window_config, LoopbackServer,
    Received, Reply,
};
use ctxkit::core::compaction::SummaryMethod;
use ctxkit::core::memory::MemorySource;
use ctxkit::core::{to_anthropic, validate_anthropic, validate_openai};
use ctxkit::llm::{Api, HttpOptions, LlmEndpoint, SummarizerConfig};
use ctxkit::store::MemoryFilter;
use ctxkit::{Engine, Event, TurnResult, WarningKind};

const SUMMARY: &str = "<analysis>thinking</analysis>\n<summary>\n## Goal\nRead the files.\n## Progress\nRead src/file0.rs onwards.\n## Key Decisions\nNone.\n## Next Steps\nKeep reading.\n## Critical Context\nsrc/file0.rs\n</summary>";
const MEMORIES: &str = r#"[{"title": "Test command", "content": "Run cargo test before committing.", "category": "convention", "importance": 7}]"#;

fn endpoint(api: Api, server: &LoopbackServer) -> LlmEndpoint {
    let base_url = match api {
        Api::OpenAiChat => format!("{}/v1", server.base_url),
        _ => server.base_url.clone(),
    };
    LlmEndpoint {
        api,
        base_url,
        api_key: Some("test-key".to_owned()),
        model: "test-model".to_owned(),
        http: HttpOptions {
            connect_timeout: Duration::from_secs(2),
            read_timeout: Duration::from_millis(400),
            max_response_bytes: 64 * 1024,
            max_retries: 2,
            initial_backoff: Duration::from_millis(5),
            max_backoff: Duration::from_millis(20),
            max_retry_after: Duration::from_millis(50),
            deadline: Duration::from_secs(10),
        },
    }
}

fn answer(api: Api, text: &str) -> Reply {
    Reply::ok(match api {
        Api::OpenAiChat => openai_answer(text),
        _ => anthropic_answer(text),
    })
}

/// Runs a session to its first compaction with the LLM at `server`.
fn compact_with(api: Api, server: &LoopbackServer) -> (Engine, TurnResult, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let config = ctxkit::EngineConfig {
        summarizer: SummarizerConfig::Llm(endpoint(api, server)),
        ..small_window_config()
    };
    let mut engine = Engine::open(dir.path().join("ctxkit.db"), dir.path(), config).unwrap();
    engine.create_session("s").unwrap();
    let view = run_until_compaction(&mut engine, "s");
    let openai = validate_openai(&view.to_openai());
    assert!(openai.is_empty(), "{openai:?}");
    let anthropic = validate_anthropic(&to_anthropic(&view.messages).unwrap());
    assert!(anthropic.is_empty(), "{anthropic:?}");
    (engine, view, dir)
}

fn warnings(view: &TurnResult) -> Vec<WarningKind> {
    view.events
        .iter()
        .filter_map(|event| match event {
            Event::Warning { kind, .. } => Some(*kind),
            _ => None,
        })
        .collect()
}

fn summary_requests(server: &LoopbackServer) -> Vec<Received> {
    server
        .received()
        .into_iter()
        .filter(|request| !request.is_extraction())
        .collect()
}

#[test]
fn openai_success_stores_an_llm_checkpoint_and_extracted_memories() {
    let server = LoopbackServer::start(|request, _| {
        answer(
            Api::OpenAiChat,
            if request.is_extraction() {
                MEMORIES
            } else {
                SUMMARY
            },
        )
    });
    let (engine, view, _dir) = compact_with(Api::OpenAiChat, &server);
    assert_eq!(view.compacted, Some(SummaryMethod::Llm));
    assert!(warnings(&view).is_empty(), "{:?}", view.events);
    let info = engine.session_info("s").unwrap();
    assert_eq!(
        info.latest_checkpoint.map(|c| c.1),
        Some(SummaryMethod::Llm)
    );
    let summary = &view.messages[1];
    assert!(summary
        .text_content()
        .contains("Read src/file0.rs onwards."));
    assert!(
        !summary.text_content().contains("thinking"),
        "analysis dropped"
    );

    let received = server.received();
    assert_eq!(received.len(), 2, "extraction, then the summary");
    assert!(received[0].is_extraction());
    for request in &received {
        assert_eq!(request.path, "/v1/chat/completions");
        assert_eq!(request.header("authorization"), Some("Bearer test-key"));
        let body: serde_json::Value = serde_json::from_str(&request.body).unwrap();
        assert_eq!(body["model"], "test-model");
        assert_eq!(body["messages"][0]["role"], "system");
    }
    let memories = engine.list_memories(&MemoryFilter::default()).unwrap();
    assert_eq!(memories.len(), 1);
    assert_eq!(memories[0].source, MemorySource::Extracted);
    assert!(view
        .events
        .iter()
        .any(|e| matches!(e, Event::MemoriesExtracted { added: 1, .. })));
    let memory_file = engine.workdir().join(".ctxkit/MEMORY.md");
    assert!(std::fs::read_to_string(memory_file)
        .unwrap()
        .contains("Run cargo test before committing."));
}

#[test]
fn anthropic_success_stores_an_llm_checkpoint() {
    let server = LoopbackServer::start(|request, _| {
        answer(
            Api::AnthropicMessages,
            if request.is_extraction() {
                "[]"
            } else {
                SUMMARY
            },
        )
    });
    let (_engine, view, _dir) = compact_with(Api::AnthropicMessages, &server);
    assert_eq!(view.compacted, Some(SummaryMethod::Llm));
    for request in server.received() {
        assert_eq!(request.path, "/v1/messages");
        assert_eq!(request.header("x-api-key"), Some("test-key"));
        assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
        let body: serde_json::Value = serde_json::from_str(&request.body).unwrap();
        assert!(body["system"].is_string());
        assert_eq!(body["messages"][0]["role"], "user");
    }
}

/// Each failure, on each API, falls back to the extractive summary with a warning.
#[test]
fn every_failure_falls_back_to_the_extractive_summary() {
    type MakeReply = fn(Api) -> Reply;
    let failures: Vec<(&str, MakeReply)> = vec![
        ("500", |_| Reply::status(500, r#"{"error": "boom"}"#)),
        ("stall", |_| Reply::Stall(Duration::from_millis(1_500))),
        ("malformed JSON", |_| Reply::ok("{\"choices\": [")),
        ("empty content", |api| answer(api, "")),
        ("wrong shape", |_| Reply::ok(r#"{"unexpected": true}"#)),
        ("400", |_| Reply::status(400, r#"{"error": "bad request"}"#)),
    ];
    for api in [Api::OpenAiChat, Api::AnthropicMessages] {
        for (name, reply) in &failures {
            let reply = *reply;
            let server = LoopbackServer::start(move |_, _| reply(api));
            let started = std::time::Instant::now();
            let (engine, view, _dir) = compact_with(api, &server);
            assert_eq!(
                view.compacted,
                Some(SummaryMethod::Extractive),
                "{api:?} {name}"
            );
            let kinds = warnings(&view);
            assert!(
                kinds.contains(&WarningKind::SummarizerFailed),
                "{api:?} {name}: {:?}",
                view.events
            );
            assert!(
                kinds.contains(&WarningKind::ExtractionFailed),
                "{api:?} {name}"
            );
            let info = engine.session_info("s").unwrap();
            assert_eq!(
                info.latest_checkpoint.map(|c| c.1),
                Some(SummaryMethod::Extractive)
            );
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "{api:?} {name} took {:?}",
                started.elapsed()
            );
            if *name == "500" {
                // The first call and two retries, for extraction and for the summary.
                assert_eq!(server.received().len(), 6, "{api:?}");
            }
        }
    }
}

#[test]
fn a_429_then_success_is_retried_and_retry_after_is_capped() {
    let server = LoopbackServer::start(|request, index| {
        if request.is_extraction() {
            return answer(Api::OpenAiChat, "[]");
        }
        if index == 1 {
            // Retry-after far beyond the cap (50 ms): the client waits only the cap.
            return Reply::Respond {
                status: 429,
                headers: vec![("retry-after".to_owned(), "3600".to_owned())],
                body: r#"{"error": "rate limited"}"#.to_owned(),
            };
        }
        if index == 2 {
            return Reply::status(503, r#"{"error": "overloaded"}"#);
        }
        answer(Api::OpenAiChat, SUMMARY)
    });
    let started = std::time::Instant::now();
    let (_engine, view, _dir) = compact_with(Api::OpenAiChat, &server);
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(view.compacted, Some(SummaryMethod::Llm));
    assert_eq!(summary_requests(&server).len(), 3, "429, 503, then success");
    assert!(warnings(&view).is_empty());
}

#[test]
fn extraction_failing_never_blocks_the_llm_summary() {
    let server = LoopbackServer::start(|request, _| {
        if request.is_extraction() {
            Reply::status(500, "{}")
        } else {
            answer(Api::OpenAiChat, SUMMARY)
        }
    });
    let (engine, view, _dir) = compact_with(Api::OpenAiChat, &server);
    assert_eq!(view.compacted, Some(SummaryMethod::Llm));
    assert_eq!(warnings(&view), vec![WarningKind::ExtractionFailed]);
    assert!(engine
        .list_memories(&MemoryFilter::default())
        .unwrap()
        .is_empty());
}

#[test]
fn an_oversized_summary_is_rejected_for_the_extractive_one() {
    let long = format!("<summary>{}</summary>", "word ".repeat(5_000));
    let server = LoopbackServer::start(move |request, _| {
        answer(
            Api::OpenAiChat,
            if request.is_extraction() { "[]" } else { &long },
        )
    });
    let (_engine, view, _dir) = compact_with(Api::OpenAiChat, &server);
    assert_eq!(view.compacted, Some(SummaryMethod::Extractive));
    assert_eq!(warnings(&view), vec![WarningKind::SummaryRejected]);
}

#[test]
fn a_response_over_the_size_bound_falls_back() {
    let huge = openai_answer(&"x".repeat(100 * 1024));
    let server = LoopbackServer::start(move |_, _| Reply::ok(huge.clone()));
    let (_engine, view, _dir) = compact_with(Api::OpenAiChat, &server);
    assert_eq!(view.compacted, Some(SummaryMethod::Extractive));
    let too_large = view.events.iter().any(
        |event| matches!(event, Event::Warning { message, .. } if message.contains("larger than")),
    );
    assert!(too_large, "{:?}", view.events);
}
