//! Background compaction in the native engine, with an in-process summarizer that takes its
//! time (a stand-in for a slow model, which a real server cannot be made to be on demand):
//! past the soft threshold a turn starts a background summary on a worker thread and returns
//! at once; the turn that reaches the trigger uses the finished checkpoint (no summary call
//! on the critical path, an LLM checkpoint stored); a summarizer that fails in the background
//! leaves the trigger to compact synchronously, as without it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::common::{small_window_config, turn_messages};
use ctxkit::core::compaction::{Policy, SummaryMethod};
use ctxkit::llm::{Llm, LlmRequest, SummarizerError};
use ctxkit::{Engine, EngineConfig, Event};

const SUMMARY: &str = "<summary>\n## Goal\nRead the files.\n## Progress\nRead src/file0.rs onwards.\n## Key Decisions\nNone.\n## Next Steps\nKeep reading.\n## Critical Context\nsrc/file0.rs\n</summary>";

/// Answers every summary after `delay`; fails every call when `fail`. Counts the calls.
#[derive(Debug)]
struct SlowSummarizer {
    delay: Duration,
    fail: bool,
    calls: Arc<AtomicUsize>,
}

impl Llm for SlowSummarizer {
    fn complete(&self, request: &LlmRequest<'_>) -> Result<String, SummarizerError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        std::thread::sleep(self.delay);
        if self.fail {
            return Err(SummarizerError::Empty {
                url: "in-process".to_owned(),
            });
        }
        // Answer in the request's own tag, as the prompt asks.
        let tag = request
            .prompt
            .rsplit("wrapped in <")
            .next()
            .and_then(|rest| rest.split('>').next())
            .unwrap_or("summary");
        Ok(SUMMARY.replace("summary>", &format!("{tag}>")))
    }

    fn describe(&self) -> String {
        "slow in-process summarizer".to_owned()
    }
}

fn config() -> EngineConfig {
    let small = small_window_config();
    EngineConfig {
        policy: Policy {
            background_percent: Some(60),
            ..small.policy.clone()
        },
        memory: ctxkit::MemoryOptions {
            extract_before_compaction: false,
            ..small.memory
        },
        ..small
    }
}

/// Runs turns (the agent's own model call taking `think` between them) until one compacts;
/// returns the events of every turn and the compacting turn's result method.
fn run(fail: bool, think: Duration) -> (Vec<Vec<Event>>, Option<SummaryMethod>, usize) {
    let dir = tempfile::tempdir().unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let llm = SlowSummarizer {
        delay: Duration::from_millis(200),
        fail,
        calls: Arc::clone(&calls),
    };
    let mut engine = Engine::open(dir.path().join("ctxkit.db"), dir.path(), config())
        .unwrap()
        .with_llm(Box::new(llm));
    engine.create_session("s").unwrap();
    let mut events = Vec::new();
    for turn in 0..200 {
        engine.record("s", turn_messages(turn)).unwrap();
        let view = engine.prepare_turn("s").unwrap();
        assert!(view.stats.fits, "turn {turn}: {:?}", view.stats);
        events.push(view.events.clone());
        if view.compacted.is_some() {
            return (events, view.compacted, calls.load(Ordering::SeqCst));
        }
        std::thread::sleep(think);
    }
    panic!("no compaction in 200 turns");
}

fn started(events: &[Event]) -> bool {
    events
        .iter()
        .any(|e| matches!(e, Event::BackgroundSummaryStarted { .. }))
}

fn requested(events: &[Event]) -> bool {
    events
        .iter()
        .any(|e| matches!(e, Event::SummaryRequested { .. }))
}

#[test]
fn the_trigger_turn_uses_the_background_checkpoint() {
    let (events, method, calls) = run(false, Duration::from_millis(300));
    let last = events.last().unwrap();
    assert!(
        events[..events.len() - 1].iter().any(|turn| started(turn)),
        "a turn before the trigger started a background summary"
    );
    assert!(!requested(last), "no summary call at the trigger: {last:?}");
    assert_eq!(method, Some(SummaryMethod::Llm));
    assert_eq!(calls, 1, "one summary call, in the background");
}

#[test]
fn a_failed_background_summary_leaves_the_trigger_to_compact_synchronously() {
    let (events, method, calls) = run(true, Duration::from_millis(300));
    assert!(events.iter().any(|turn| started(turn)));
    assert!(
        requested(events.last().unwrap()),
        "the trigger asked for the summary itself"
    );
    // The synchronous call fails too: the extractive summary.
    assert_eq!(method, Some(SummaryMethod::Extractive));
    assert!(calls >= 2, "{calls}");
}
