//! The probes `ctxkit probe` asks, made from two corpus transcripts replayed at a 32k window
//! (a Claude Code session and an OpenHands trajectory): deterministic (snapshots), every key
//! found in the log at its item's `seq`, no question holding its own answer, and the answers
//! the view's kept tail still shows marked.

use ctxkit_core::import::import_transcript;
use ctxkit_core::model::Entry;
use ctxkit_core::{Budget, ModelFamily, Policy, Role, Session, TurnInputs};
use ctxkit_lab::probes::{normalize, session_probes, CheckpointProbes};

/// The session after replaying `file` turn by turn, and the last `seq` each compaction's view
/// showed.
fn replay(file: &str, window: u64) -> (Session, Vec<u64>) {
    let text = std::fs::read_to_string(ctxkit_tests::corpus_dir().join(file))
        .unwrap_or_else(|e| panic!("{file}: {e}"));
    let imported = import_transcript(&text, None).unwrap();
    let family = ModelFamily::Claude;
    let policy = Policy {
        family,
        ..Policy::default()
    };
    let inputs = TurnInputs::new(
        "You are a coding agent.",
        Budget::for_window(window),
        &policy,
    );
    let mut session = Session::new(family);
    let mut tail_ends = Vec::new();
    let turn = |session: &mut Session, tail_ends: &mut Vec<u64>| {
        let before = session.checkpoints.len();
        session.prepare_offline(&inputs).unwrap();
        if session.checkpoints.len() > before {
            tail_ends.push(session.entries.last().map_or(0, |e| e.seq));
        }
    };
    for message in &imported.sessions[0].messages {
        if message.role == Role::Assistant {
            turn(&mut session, &mut tail_ends);
        }
        session.append([message.clone()]);
    }
    turn(&mut session, &mut tail_ends);
    (session, tail_ends)
}

fn text_at(entries: &[Entry], seq: u64) -> String {
    let entry = entries.iter().find(|e| e.seq == seq).unwrap();
    let mut text = entry.message.text_content().into_owned();
    for call in &entry.message.tool_calls {
        text.push_str(&format!("\n{} {}", call.name, call.arguments));
    }
    normalize(&text)
}

/// Checks the generation properties and renders the probes one line each for the snapshot.
fn check_and_render(entries: &[Entry], all: &[CheckpointProbes]) -> String {
    let mut out = String::new();
    for checkpoint in all {
        out.push_str(&format!(
            "checkpoint through {} (view to {})\n",
            checkpoint.through_seq, checkpoint.tail_end_seq
        ));
        for probe in &checkpoint.probes {
            let question = normalize(&probe.question);
            for item in &probe.key.all_of {
                let held = text_at(entries, item.seq);
                assert!(
                    item.variants.iter().any(|v| held.contains(&normalize(v))),
                    "{probe:?}: not in the log at seq {}",
                    item.seq
                );
                for variant in &item.variants {
                    assert!(!question.contains(&normalize(variant)), "{probe:?}");
                }
            }
            let keys: Vec<String> = probe
                .key
                .all_of
                .iter()
                .map(|item| format!("{}@{}", item.variants.join(" | "), item.seq))
                .collect();
            out.push_str(&format!(
                "- {}/{} seq {}{}\n  Q: {}\n  A: {}\n",
                probe.kind.as_str(),
                probe.source,
                probe.source_seq,
                if probe.in_tail { " (in tail)" } else { "" },
                probe.question,
                keys.join(" ; ")
            ));
        }
    }
    out
}

#[test]
fn probes_of_a_claude_code_session() {
    let (session, tail_ends) = replay(
        "claude-code_marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl",
        32_000,
    );
    let all = session_probes(&session.entries, &session.checkpoints, &tail_ends);
    assert!(all.len() >= 2, "{} checkpoints", all.len());
    assert!(all.iter().map(|c| c.probes.len()).sum::<usize>() >= 10);
    insta::assert_snapshot!(check_and_render(&session.entries, &all));
}

#[test]
fn probes_of_an_openhands_trajectory() {
    let (session, tail_ends) = replay("openhands/multi_swe_bench_examples_output.jsonl", 32_000);
    let all = session_probes(&session.entries, &session.checkpoints, &tail_ends);
    assert!(!all.is_empty(), "no checkpoint");
    insta::assert_snapshot!(check_and_render(&session.entries, &all));
}
