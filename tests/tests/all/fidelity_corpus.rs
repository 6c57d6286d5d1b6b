//! Every corpus transcript replayed turn by turn at 32k, 64k and 100k windows: every
//! checkpoint keeps 100% of the pinned paths and user requests of what it covers (and of the
//! checkpoint before), at least 95% of the error lines, stays within the summary's size cap,
//! and a history search finds at least 99% of the facts a cap dropped.

use ctxkit_core::compaction::FactKind;
use ctxkit_core::import::import_transcript;
use ctxkit_core::{Budget, ModelFamily, Policy};
use ctxkit_tests::fidelity::{fidelity, replay};

const FILES: [&str; 8] = [
    "claude-code_marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl",
    "claude-code_marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-a2898e3.jsonl",
    "claude-code_marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-acompact-e1f845.jsonl",
    "tau-bench/gpt-4o-airline.json",
    "swe-agent/marshmallow-1867__function_calling_replace_from_source.traj",
    "swe-agent/pydicom-1458__gpt4_default.traj",
    "openhands/multi_swe_bench_examples_output.jsonl",
    "openhands/runtime_trajs_basic.json",
];

const WINDOWS: [u64; 3] = [32_000, 64_000, 100_000];

#[derive(Default)]
struct Totals {
    checkpoints: usize,
    expected: [usize; 3],
    kept: [usize; 3],
    dropped: usize,
    found_again: usize,
}

#[test]
fn every_corpus_checkpoint_keeps_its_pinned_facts() {
    let family = ModelFamily::Claude;
    let mut totals = Totals::default();
    for file in FILES {
        let text = std::fs::read_to_string(ctxkit_tests::corpus_dir().join(file))
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        let imported = import_transcript(&text, None).unwrap_or_else(|e| panic!("{file}: {e}"));
        for window in WINDOWS {
            let cap = Policy::default()
                .summary_caps(&Budget::for_window(window))
                .max_bytes;
            for (index, session) in imported.sessions.iter().enumerate() {
                let what = format!("{file} session {index} at {window}");
                let replayed = replay(&session.messages, window, family);
                for checkpoint in fidelity(&replayed) {
                    totals.checkpoints += 1;
                    let at = format!("{what}, checkpoint through {}", checkpoint.through_seq);
                    for (slot, kind) in [FactKind::Path, FactKind::Request, FactKind::Error]
                        .into_iter()
                        .enumerate()
                    {
                        let counts = checkpoint.of(kind);
                        totals.expected[slot] += counts.expected;
                        totals.kept[slot] += counts.kept;
                        if kind != FactKind::Error {
                            assert_eq!(counts.kept, counts.expected, "{at}: {kind:?} {counts:?}");
                        }
                    }
                    for (_, counts) in &checkpoint.kinds {
                        totals.dropped += counts.dropped;
                        totals.found_again += counts.found_again;
                    }
                    assert!(
                        checkpoint.summary_bytes <= cap,
                        "{at}: {} bytes over the cap of {cap}",
                        checkpoint.summary_bytes
                    );
                }
            }
        }
    }
    assert!(
        totals.checkpoints >= 5,
        "{} checkpoints",
        totals.checkpoints
    );
    let [_, _, errors_expected] = totals.expected;
    let [_, _, errors_kept] = totals.kept;
    assert!(
        errors_kept * 100 >= errors_expected * 95,
        "error lines kept: {errors_kept} of {errors_expected}"
    );
    assert!(
        totals.found_again * 100 >= totals.dropped * 99,
        "dropped facts found again: {} of {}",
        totals.found_again,
        totals.dropped
    );
    eprintln!(
        "{} checkpoints; paths {}/{}, requests {}/{}, errors {}/{}; dropped {} (found again {})",
        totals.checkpoints,
        totals.kept[0],
        totals.expected[0],
        totals.kept[1],
        totals.expected[1],
        errors_kept,
        errors_expected,
        totals.dropped,
        totals.found_again
    );
}

/// Windows so small that caps must drop pinned facts: the drops are counted, oldest first,
/// and a history search over the log finds at least 99% of them again.
#[test]
fn facts_a_small_window_drops_are_found_again_in_the_log() {
    let family = ModelFamily::Claude;
    let (mut dropped, mut found, mut counted) = (0, 0, 0);
    for file in FILES {
        let text = std::fs::read_to_string(ctxkit_tests::corpus_dir().join(file))
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        let imported = import_transcript(&text, None).unwrap_or_else(|e| panic!("{file}: {e}"));
        for window in [6_000, 12_000] {
            for session in imported.sessions.iter().take(40) {
                let replayed = replay(&session.messages, window, family);
                for checkpoint in fidelity(&replayed) {
                    for (_, counts) in &checkpoint.kinds {
                        dropped += counts.dropped;
                        found += counts.found_again;
                    }
                }
                counted += replayed.latest_checkpoint().map_or(0, |c| {
                    let d = c.dropped_facts;
                    d.paths + d.errors + d.requests + d.identifiers
                });
            }
        }
    }
    eprintln!("small windows: {dropped} facts dropped, {found} found again, {counted} counted by the stats");
    assert!(dropped > 0, "the windows are small enough to drop facts");
    assert!(counted > 0, "the stats count drops");
    assert!(
        found * 100 >= dropped * 99,
        "found again: {found} of {dropped}"
    );
}

/// The needed-next figure (`lab/src/needed_next/`) of every corpus transcript's
/// checkpoints at 32k, 100k and 200k windows, beside the transcript's own compactions (Claude
/// Code's continuation summaries) where it has them, printed: at least 80% overall (377/406
/// with the files named in tool output and identifiers ranked by prose and call targets,
/// 334/408 with the restore block before, 321/401 when first written; the main Claude Code
/// session's own compaction holds 13/14, which this replay, offloading off, does not yet reach
/// at 100k and 200k: 89/97).
#[test]
fn corpus_checkpoints_hold_what_the_agent_needed_next() {
    use ctxkit_lab::needed_next::{checkpoint_summaries, needed_next, transcript_summaries};
    let family = ModelFamily::Claude;
    let (mut needed, mut held) = (0, 0);
    for file in FILES {
        let text = std::fs::read_to_string(ctxkit_tests::corpus_dir().join(file))
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        let imported = import_transcript(&text, None).unwrap_or_else(|e| panic!("{file}: {e}"));
        for window in [32_000, 100_000, 200_000] {
            for (index, session) in imported.sessions.iter().enumerate().take(3) {
                let replayed = replay(&session.messages, window, family);
                let ours = needed_next(
                    &replayed.entries,
                    &checkpoint_summaries(&replayed.checkpoints),
                );
                let theirs =
                    needed_next(&replayed.entries, &transcript_summaries(&replayed.entries));
                let sum = |figures: &[ctxkit_lab::needed_next::NeededNext]| {
                    figures
                        .iter()
                        .fold((0, 0), |(n, h), f| (n + f.needed, h + f.held))
                };
                let (our_needed, our_held) = sum(&ours);
                let (their_needed, their_held) = sum(&theirs);
                if our_needed + their_needed > 0 {
                    eprintln!(
                        "{file} #{index} at {window}: ctxkit {our_held}/{our_needed}, transcript {their_held}/{their_needed}"
                    );
                }
                needed += our_needed;
                held += our_held;
            }
        }
    }
    eprintln!("needed next overall: {held}/{needed}");
    assert!(needed > 0, "the corpus has later calls to grade");
    assert!(
        held * 100 >= needed * 80,
        "needed-next recall {held}/{needed} under 80%"
    );
}
