//! A real Claude Code session (from the corpus) replayed through the engine as an agent loop
//! would: before each of the session's API calls, record what was logged since and prepare
//! the view. Once a compaction has happened, the process "restarts" (the engine is dropped, a
//! new connection opened): the next view is identical to the one the old engine would have
//! sent, no new summary is requested, and the checkpoints are reused.

use crate::common;

use ctxkit::clock::FixedClock;
use ctxkit::core::compaction::Budget;
use ctxkit::core::compaction::Policy;
use ctxkit::core::import::import_claude_code;
use ctxkit::core::text::{head_bytes, single_line};
use ctxkit::core::tokens::ModelFamily;
use ctxkit::core::{Message, Role};
use ctxkit::{Engine, EngineConfig, Event, PromptConfig, TurnResult};

const SESSION_FILE: &str = "claude-code_marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl";
const NOW: i64 = 1_770_768_000; // 2026-02-11, the session's day

fn config(reserved: u64) -> EngineConfig {
    EngineConfig {
        // Offloading keeps the log far smaller than Claude Code's (whose window was 200k), so
        // a 100k window is what makes this session compact.
        budget: Budget {
            context_window: 100_000,
            tool_schema_tokens: reserved,
            ..Budget::default()
        },
        policy: Policy {
            family: ModelFamily::Claude,
            ..Policy::default()
        },
        prompt: PromptConfig {
            working_directory: Some("/home/USER/spotter".into()),
            ..PromptConfig::default()
        },
        ..EngineConfig::default()
    }
}

/// One line per message: index, role, size, the start of its text.
fn render(view: &TurnResult) -> String {
    let mut out = format!(
        "tier {:?}, {} messages, {} tokens (system {}, summary {}), checkpoint through {:?} ({:?}), {} offload references\n",
        view.stats.tier,
        view.stats.messages,
        view.stats.total_tokens,
        view.stats.system_tokens,
        view.stats.summary_tokens,
        view.stats.checkpoint_through,
        view.stats.checkpoint_method,
        view.stats.offload_references,
    );
    for (index, message) in view.messages.iter().enumerate() {
        let text = message.text_content();
        let calls: Vec<&str> = message.tool_calls.iter().map(|c| c.name.as_str()).collect();
        out.push_str(&format!(
            "{index:03} {:<9} {:>6}B {}{}\n",
            message.role.as_str(),
            text.len(),
            if calls.is_empty() {
                String::new()
            } else {
                format!("calls {calls:?} ")
            },
            single_line(head_bytes(&text, 72)),
        ));
    }
    out
}

fn summary_requests(view: &TurnResult) -> usize {
    view.events
        .iter()
        .filter(|event| matches!(event, Event::SummaryRequested { .. }))
        .count()
}

#[test]
fn a_restart_reuses_checkpoints_and_sends_the_same_view() {
    let text = std::fs::read_to_string(common::corpus_dir().join(SESSION_FILE)).unwrap();
    let transcript = import_claude_code(&text).unwrap();
    let reserved = transcript.api_calls[0].prompt_tokens.unwrap_or(26_450);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join(".ctxkit/ctxkit.db");
    let open = || {
        Engine::open(&db, dir.path(), config(reserved))
            .unwrap()
            .with_clock(FixedClock(NOW))
    };

    let mut engine = open();
    engine.create_session("spotter").unwrap();
    let mut recorded = 0;
    let mut compactions = 0;
    let mut calls = transcript.api_calls.iter();
    for call in calls.by_ref() {
        let new: Vec<Message> = transcript.messages[recorded..call.message_index].to_vec();
        recorded = call.message_index;
        engine.record("spotter", new).unwrap();
        let view = engine.prepare_turn("spotter").unwrap();
        assert!(view.stats.fits, "{:?}", view.stats);
        compactions += summary_requests(&view);
        if compactions > 0 {
            break;
        }
    }
    assert_eq!(compactions, 1, "the replay reached a compaction");
    let next_call = calls.next().unwrap();
    engine
        .record(
            "spotter",
            transcript.messages[recorded..next_call.message_index].to_vec(),
        )
        .unwrap();
    let before = engine.preview_turn("spotter").unwrap();
    assert_eq!(before.compacted, None);
    let info_before = engine.session_info("spotter").unwrap();
    drop(engine);

    // The restart: a new engine on a new connection.
    let mut engine = open();
    let after = engine.prepare_turn("spotter").unwrap();
    assert_eq!(
        summary_requests(&after),
        0,
        "no new summary after reopening"
    );
    assert_eq!(after.compacted, None);
    assert_eq!(
        after.messages, before.messages,
        "the same view as before the restart"
    );
    assert_eq!(after.stats, before.stats);
    let info_after = engine.session_info("spotter").unwrap();
    assert_eq!(info_after.checkpoints, info_before.checkpoints);
    assert_eq!(info_after.latest_checkpoint, info_before.latest_checkpoint);
    assert_eq!(after.messages[0].role, Role::System);
    assert!(after.messages[1]
        .text_content()
        .starts_with("[Context checkpoint]"));
    assert!(
        after.stats.offload_references > 0,
        "big outputs were offloaded"
    );
    insta::assert_snapshot!("restart_view", render(&after));
}
