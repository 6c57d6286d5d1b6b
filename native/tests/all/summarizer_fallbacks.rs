//! Every fallback of a native turn is in its stats and its events, in the same words, and the
//! summarizer's circuit breaker: against a loopback server that stalls past a 150 ms read
//! timeout, two compactions in a row time out, the next three go straight to the extractive
//! summary without a request (the server receives none), and the one after asks again. Also a
//! model's refusal (OpenAI `refusal`, Anthropic `stop_reason: "refusal"`) and an answer made
//! stale by another worker's checkpoint. About 2 s: six stalled calls of 150 ms.

use std::time::Duration;

use crate::common::warnings;
use crate::common::{
    anthropic_answer, openai_answer, small_window_config, turn_messages, LoopbackServer, Reply,
};
use ctxkit::core::compaction::{FallbackKind, LlmCall, SummaryMethod};
use ctxkit::llm::{Api, HttpOptions, LlmEndpoint, SummarizerConfig};
use ctxkit::{Engine, TurnResult, WarningKind};

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
            read_timeout: Duration::from_millis(150),
            max_retries: 0,
            ..HttpOptions::default()
        },
    }
}

fn engine_with(api: Api, server: &LoopbackServer, dir: &tempfile::TempDir) -> Engine {
    let config = ctxkit::EngineConfig {
        summarizer: SummarizerConfig::Llm(endpoint(api, server)),
        ..small_window_config()
    };
    let mut engine = Engine::open(dir.path().join("ctxkit.db"), dir.path(), config).unwrap();
    engine.create_session("s").unwrap();
    engine
}

/// Records turns until one compacts; `next` numbers the turns across calls.
fn next_compaction(engine: &mut Engine, next: &mut usize) -> TurnResult {
    for _ in 0..200 {
        engine.record("s", turn_messages(*next)).unwrap();
        *next += 1;
        let view = engine.prepare_turn("s").unwrap();
        if view.compacted.is_some() {
            return view;
        }
        assert!(
            view.stats.fallbacks.is_empty(),
            "{:?}",
            view.stats.fallbacks
        );
    }
    panic!("no compaction in 200 turns");
}

/// The (call, kind) of each fallback in the stats.
fn fallbacks(view: &TurnResult) -> Vec<(LlmCall, FallbackKind)> {
    view.stats
        .fallbacks
        .iter()
        .map(|fallback| (fallback.call, fallback.kind))
        .collect()
}

#[test]
fn a_hanging_summarizer_is_skipped_after_two_timeouts_then_asked_again() {
    let server = LoopbackServer::start(|_, _| Reply::Stall(Duration::from_millis(600)));
    let dir = tempfile::tempdir().unwrap();
    let mut engine = engine_with(Api::OpenAiChat, &server, &dir);
    let mut next = 0;
    let timed_out = vec![
        (LlmCall::Extraction, FallbackKind::Timeout),
        (LlmCall::Summary, FallbackKind::Timeout),
    ];
    let skipped = vec![
        (LlmCall::Extraction, FallbackKind::Skipped),
        (LlmCall::Summary, FallbackKind::Skipped),
    ];
    let mut kinds = Vec::new();
    let mut requests = Vec::new();
    for _ in 0..6 {
        let view = next_compaction(&mut engine, &mut next);
        assert_eq!(view.compacted, Some(SummaryMethod::Extractive));
        assert!(view.stats.fits);
        // The events say what the stats say, one warning per fallback, in the same words.
        let told: Vec<String> = view.stats.fallbacks.iter().map(|f| f.describe()).collect();
        let events: Vec<String> = warnings(&view).into_iter().map(|(_, m)| m).collect();
        assert_eq!(told, events);
        kinds.push(fallbacks(&view));
        requests.push(server.received().len());
        if kinds.len() == 2 {
            let summary = &view.stats.fallbacks[1].reason;
            assert!(summary.contains("timed out"), "{summary}");
            assert!(
                summary.ends_with("(the summarizer failed 2 times in a row: the next 3 compactions use the extractive summary without asking it)"),
                "{summary}"
            );
        }
        if kinds.len() == 3 {
            assert_eq!(
                warnings(&view).iter().map(|(k, _)| *k).collect::<Vec<_>>(),
                vec![
                    WarningKind::ExtractionFailed,
                    WarningKind::SummarizerSkipped
                ]
            );
            assert!(view.stats.fallbacks[1]
                .reason
                .starts_with("not asked: the summarizer failed 2 times in a row"));
        }
    }
    assert_eq!(
        kinds,
        vec![
            timed_out.clone(),
            timed_out.clone(),
            skipped.clone(),
            skipped.clone(),
            skipped,
            timed_out
        ]
    );
    // Two requests (extraction, summary) per compaction that asked; none while skipped.
    assert_eq!(requests, vec![2, 4, 4, 4, 4, 6]);
}

#[test]
fn an_answer_after_timeouts_closes_the_breaker() {
    // Stall the first two summary calls (and their extractions), answer from then on.
    let server = LoopbackServer::start(|request, index| {
        if index < 4 {
            return Reply::Stall(Duration::from_millis(600));
        }
        let text = if request.is_extraction() {
            "[]"
        } else {
            "<summary>## Goal\nRead the files.</summary>"
        };
        Reply::ok(openai_answer(text))
    });
    let dir = tempfile::tempdir().unwrap();
    let mut engine = engine_with(Api::OpenAiChat, &server, &dir);
    let mut next = 0;
    for _ in 0..2 {
        next_compaction(&mut engine, &mut next);
    }
    for _ in 0..3 {
        let view = next_compaction(&mut engine, &mut next);
        assert_eq!(view.stats.fallbacks[1].kind, FallbackKind::Skipped);
    }
    let asked = next_compaction(&mut engine, &mut next);
    assert_eq!(asked.compacted, Some(SummaryMethod::Llm));
    assert!(asked.stats.fallbacks.is_empty(), "{:?}", asked.stats);
    assert!(warnings(&asked).is_empty());
    // Closed: the next compaction asks at once.
    let again = next_compaction(&mut engine, &mut next);
    assert_eq!(again.compacted, Some(SummaryMethod::Llm));
    assert_eq!(server.received().len(), 8);
}

#[test]
fn a_refusal_is_a_refused_fallback_on_both_apis() {
    let refusals = [
        (
            Api::OpenAiChat,
            r#"{"choices":[{"message":{"role":"assistant","content":null,"refusal":"I can't help with that."}}]}"#.to_owned(),
        ),
        (
            Api::AnthropicMessages,
            r#"{"content":[],"stop_reason":"refusal"}"#.to_owned(),
        ),
    ];
    for (api, body) in refusals {
        let server = LoopbackServer::start(move |request, _| {
            if request.is_extraction() {
                Reply::ok(match api {
                    Api::OpenAiChat => openai_answer("[]"),
                    _ => anthropic_answer("[]"),
                })
            } else {
                Reply::ok(body.clone())
            }
        });
        let dir = tempfile::tempdir().unwrap();
        let mut engine = engine_with(api, &server, &dir);
        let view = next_compaction(&mut engine, &mut 0);
        assert_eq!(view.compacted, Some(SummaryMethod::Extractive), "{api:?}");
        assert_eq!(
            fallbacks(&view),
            vec![(LlmCall::Summary, FallbackKind::Refused)],
            "{api:?}"
        );
        assert!(
            view.stats.fallbacks[0].reason.contains("the model refused"),
            "{:?}",
            view.stats.fallbacks
        );
        assert_eq!(warnings(&view)[0].0, WarningKind::SummarizerFailed);
    }
}

#[test]
fn an_answer_made_stale_by_another_worker_is_dropped_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ctxkit.db");
    let (root, db_in_handler) = (dir.path().to_owned(), db.clone());
    // While the summary is being written, another worker (extractive) compacts the session.
    let server = LoopbackServer::start(move |request, _| {
        if request.is_extraction() {
            return Reply::ok(openai_answer("[]"));
        }
        let mut other = Engine::open(&db_in_handler, &root, small_window_config()).unwrap();
        let theirs = other.prepare_turn("s").unwrap();
        assert_eq!(theirs.compacted, Some(SummaryMethod::Extractive));
        Reply::ok(openai_answer("<summary>## Goal\nlate answer</summary>"))
    });
    let mut engine = engine_with(Api::OpenAiChat, &server, &dir);
    let mut next = 0;
    let view = loop {
        engine.record("s", turn_messages(next)).unwrap();
        next += 1;
        let view = engine.prepare_turn("s").unwrap();
        if !server.received().is_empty() {
            break view;
        }
    };
    assert_eq!(
        fallbacks(&view),
        vec![(LlmCall::Summary, FallbackKind::Stale)]
    );
    assert_eq!(
        view.compacted, None,
        "the other worker's checkpoint was kept"
    );
    assert_eq!(
        warnings(&view),
        vec![(
            WarningKind::SummaryStale,
            ctxkit::core::turn::STALE_ANSWER.to_owned()
        )]
    );
    let info = engine.session_info("s").unwrap();
    assert_eq!(
        info.latest_checkpoint.map(|c| c.1),
        Some(SummaryMethod::Extractive)
    );
    drop(db);
}
