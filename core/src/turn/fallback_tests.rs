//! The driver's fallbacks and the summarizer's circuit breaker: every way a call falls back is
//! listed in the ready view's stats with its reason, and a summarizer that keeps failing (any
//! kind of failure) is skipped for a while, then asked again.

use super::*;
use crate::compaction::{Budget, FallbackKind, LlmCall, Policy, SummaryMethod};
use crate::model::{Message, ToolCall};
use crate::tokens::ModelFamily;
use crate::turn::breaker::{BREAKER_FAILURES, BREAKER_SKIPPED_COMPACTIONS};

fn budget() -> Budget {
    Budget {
        context_window: 3_000,
        output_reserve: 0,
        tool_schema_tokens: 0,
        safety_margin: 0,
        ..Budget::default()
    }
}

fn policy() -> Policy {
    Policy {
        max_summary_tokens: 300,
        ..Policy::default()
    }
}

/// Appends turns to `session` until the next turn would compact.
fn grow_until_compaction(session: &mut Session, inputs: &TurnInputs<'_>, next: &mut usize) {
    for _ in 0..200 {
        let turn = *next;
        *next += 1;
        session.append([
            Message::user(format!("step {turn}: look at src/file{turn}.rs")),
            Message::assistant(
                "",
                vec![ToolCall::new(format!("c{turn}"), "read_file", "{}")],
            ),
            Message::tool_result(format!("c{turn}"), "fn main() {}\n".repeat(20), false),
        ]);
        // Probed without the summarizer: an open breaker would compact inside the step.
        let probe_inputs = TurnInputs {
            has_summarizer: false,
            ..*inputs
        };
        let mut probe = TurnDriver::start(&probe_inputs).unwrap();
        if !matches!(probe.step(session).unwrap(), TurnStep::Ready(_)) {
            return;
        }
    }
    panic!("no compaction in 200 turns");
}

/// What a compaction turn's summarizer is: none, it hangs (times out), fails otherwise,
/// refuses, or answers.
#[derive(Clone, Copy)]
enum Summarizer<'a> {
    None,
    Hangs,
    Fails,
    Refuses,
    Answers(&'a str),
}

/// One finished turn; returns its fallbacks (call, kind) and whether the summarizer was asked.
fn turn(
    session: &mut Session,
    inputs: &TurnInputs<'_>,
    summarizer: Summarizer<'_>,
) -> (Vec<(LlmCall, FallbackKind)>, bool, TurnResult) {
    let mut driver = TurnDriver::start(inputs).unwrap();
    let mut asked = false;
    loop {
        match driver.step(session).unwrap() {
            TurnStep::NeedExtraction(_) => driver
                .extraction_failed(FallbackKind::Timeout, "extract: timed out")
                .unwrap(),
            TurnStep::NeedSummary(_) => {
                asked = true;
                match summarizer {
                    Summarizer::None => driver.answer_summary(session, None).unwrap(),
                    Summarizer::Hangs => driver
                        .summary_failed(session, FallbackKind::Timeout, "timed out")
                        .unwrap(),
                    Summarizer::Fails => driver
                        .summary_failed(session, FallbackKind::Error, "HTTP 429")
                        .unwrap(),
                    Summarizer::Refuses => driver
                        .summary_failed(session, FallbackKind::Refused, "the model refused")
                        .unwrap(),
                    Summarizer::Answers(text) => {
                        driver.answer_summary(session, Some(text)).unwrap()
                    }
                }
            }
            TurnStep::Ready(_) => break,
        }
    }
    let (result, _) = driver.finish(session).unwrap();
    let kinds = result
        .stats
        .fallbacks
        .iter()
        .map(|fallback| (fallback.call, fallback.kind))
        .collect();
    (kinds, asked, result)
}

#[test]
fn the_breaker_opens_after_timeouts_skips_compactions_then_asks_again() {
    let policy = policy();
    let inputs = TurnInputs {
        has_summarizer: true,
        ..TurnInputs::new("sys", budget(), &policy)
    };
    let mut session = Session::new(ModelFamily::OpenAi);
    let mut next = 0;
    for round in 0..BREAKER_FAILURES {
        grow_until_compaction(&mut session, &inputs, &mut next);
        let (kinds, asked, result) = turn(&mut session, &inputs, Summarizer::Hangs);
        assert!(asked);
        assert_eq!(kinds, vec![(LlmCall::Summary, FallbackKind::Timeout)]);
        assert_eq!(
            result.summary.map(|s| s.method),
            Some(SummaryMethod::Extractive)
        );
        assert_eq!(session.summarizer_breaker.consecutive_failures, round + 1);
    }
    assert_eq!(
        session.summarizer_breaker.skip_compactions,
        BREAKER_SKIPPED_COMPACTIONS
    );
    // A preview or a view (no summarizer) neither skips nor counts down.
    grow_until_compaction(&mut session, &inputs, &mut next);
    let offline = TurnInputs::new("sys", budget(), &policy);
    let mut copy = session.clone();
    let (kinds, _, _) = turn(&mut copy, &offline, Summarizer::None);
    assert!(kinds.is_empty(), "{kinds:?}");
    assert_eq!(copy.summarizer_breaker, session.summarizer_breaker);
    for left in (0..BREAKER_SKIPPED_COMPACTIONS).rev() {
        let (kinds, asked, result) = turn(&mut session, &inputs, Summarizer::Answers("never"));
        assert!(!asked, "skipped");
        assert_eq!(kinds, vec![(LlmCall::Summary, FallbackKind::Skipped)]);
        assert_eq!(
            result.summary.map(|s| s.method),
            Some(SummaryMethod::Extractive)
        );
        assert_eq!(session.summarizer_breaker.skip_compactions, left);
        grow_until_compaction(&mut session, &inputs, &mut next);
    }
    // Asked again; an answer closes the breaker.
    let (kinds, asked, result) = turn(&mut session, &inputs, Summarizer::Answers("## Goal\nok"));
    assert!(asked);
    assert!(kinds.is_empty());
    assert_eq!(result.summary.map(|s| s.method), Some(SummaryMethod::Llm));
    assert!(session.summarizer_breaker.is_closed_and_clear());
}

#[test]
fn every_kind_of_failure_counts_and_only_a_usable_answer_ends_the_run() {
    let policy = policy();
    let inputs = TurnInputs {
        has_summarizer: true,
        ..TurnInputs::new("sys", budget(), &policy)
    };
    // Two failures of any two kinds in a row open the breaker: an error status (a 429, a
    // 5xx, a redirect), a refusal, a connection failure, an unusable answer, a timeout.
    let kinds = [
        Summarizer::Fails,
        Summarizer::Refuses,
        Summarizer::Hangs,
        Summarizer::Answers("   "),
    ];
    for first in kinds {
        for second in kinds {
            let mut session = Session::new(ModelFamily::OpenAi);
            let mut next = 0;
            grow_until_compaction(&mut session, &inputs, &mut next);
            turn(&mut session, &inputs, first);
            assert_eq!(session.summarizer_breaker.consecutive_failures, 1);
            grow_until_compaction(&mut session, &inputs, &mut next);
            let (_, _, result) = turn(&mut session, &inputs, second);
            assert_eq!(
                session.summarizer_breaker.skip_compactions,
                BREAKER_SKIPPED_COMPACTIONS
            );
            let reason = &result.stats.fallbacks[0].reason;
            assert!(
                reason.ends_with("(the summarizer failed 2 times in a row: the next 3 compactions use the extractive summary without asking it)"),
                "{reason}"
            );
            grow_until_compaction(&mut session, &inputs, &mut next);
            let (kinds, asked, _) = turn(&mut session, &inputs, Summarizer::Answers("never"));
            assert!(!asked);
            assert_eq!(kinds, vec![(LlmCall::Summary, FallbackKind::Skipped)]);
        }
    }
    // A usable answer between two failures ends the run.
    let mut session = Session::new(ModelFamily::OpenAi);
    let mut next = 0;
    for summarizer in [
        Summarizer::Fails,
        Summarizer::Answers("## Goal\nok"),
        Summarizer::Hangs,
    ] {
        grow_until_compaction(&mut session, &inputs, &mut next);
        turn(&mut session, &inputs, summarizer);
    }
    assert_eq!(session.summarizer_breaker.consecutive_failures, 1);
    assert!(!session.summarizer_breaker.is_open());
}

#[test]
fn the_breaker_skips_the_extraction_too_and_travels_in_the_session_json() {
    let policy = policy();
    let inputs = TurnInputs {
        has_summarizer: true,
        extract_memories: true,
        ..TurnInputs::new("sys", budget(), &policy)
    };
    let mut session = Session::new(ModelFamily::OpenAi);
    let mut next = 0;
    grow_until_compaction(&mut session, &inputs, &mut next);
    let (kinds, ..) = turn(&mut session, &inputs, Summarizer::Hangs);
    assert_eq!(
        kinds,
        vec![
            (LlmCall::Extraction, FallbackKind::Timeout),
            (LlmCall::Summary, FallbackKind::Timeout)
        ]
    );
    let json = serde_json::to_value(&session).unwrap();
    assert_eq!(
        json["summarizer_breaker"],
        serde_json::json!({"consecutive_failures": 1, "skip_compactions": 0})
    );
    let mut session: Session = serde_json::from_value(json).unwrap();
    grow_until_compaction(&mut session, &inputs, &mut next);
    turn(&mut session, &inputs, Summarizer::Hangs);
    grow_until_compaction(&mut session, &inputs, &mut next);
    let (kinds, asked, result) = turn(&mut session, &inputs, Summarizer::Hangs);
    assert!(!asked);
    assert_eq!(
        kinds,
        vec![
            (LlmCall::Extraction, FallbackKind::Skipped),
            (LlmCall::Summary, FallbackKind::Skipped)
        ]
    );
    let reason = &result.stats.fallbacks[1].reason;
    assert_eq!(reason, "not asked: the summarizer failed 2 times in a row, so the extractive summary is used for this compaction and 2 more before it is asked again");
    // Closed and clear: not written at all.
    let fresh = serde_json::to_value(Session::new(ModelFamily::OpenAi)).unwrap();
    assert!(fresh.get("summarizer_breaker").is_none());
}

#[test]
fn unusable_and_stale_answers_are_listed_with_their_reasons() {
    let policy = policy();
    let inputs = TurnInputs {
        has_summarizer: true,
        ..TurnInputs::new("sys", budget(), &policy)
    };
    let mut session = Session::new(ModelFamily::OpenAi);
    grow_until_compaction(&mut session, &inputs, &mut 0);
    let (kinds, _, result) = turn(&mut session.clone(), &inputs, Summarizer::Answers("   "));
    assert_eq!(kinds, vec![(LlmCall::Summary, FallbackKind::Unusable)]);
    assert_eq!(
        result.stats.fallbacks[0].reason,
        "summary: the summarizer returned an empty summary"
    );
    // Stale: another turn stores a checkpoint while this one's summarizer writes.
    let mut driver = TurnDriver::start(&inputs).unwrap();
    assert!(matches!(
        driver.step(&session).unwrap(),
        TurnStep::NeedSummary(_)
    ));
    session.prepare_offline(&inputs).unwrap();
    driver
        .answer_summary(&session, Some("## Goal\nlate"))
        .unwrap();
    assert!(matches!(driver.step(&session).unwrap(), TurnStep::Ready(_)));
    let (result, changes) = driver.finish(&mut session).unwrap();
    assert!(changes.checkpoint.is_none());
    assert_eq!(result.stats.fallbacks.len(), 1);
    assert_eq!(result.stats.fallbacks[0].kind, FallbackKind::Stale);
    assert_eq!(result.stats.fallbacks[0].reason, STALE_ANSWER);
    // Reporting a failure out of order is refused.
    let mut idle = TurnDriver::start(&inputs).unwrap();
    assert!(idle
        .summary_failed(&session, FallbackKind::Timeout, "x")
        .is_err());
    assert!(idle.extraction_failed(FallbackKind::Error, "x").is_err());
}
