//! The probes' unit tests: each kind made from a small log, every key found in the log at its
//! own `seq`, no question holding its answer, and the grading of answers against keys.

use super::*;
use ctxkit_core::compaction::{Checkpoint, SummaryMethod};
use ctxkit_core::model::{Message, ToolCall};
use ctxkit_core::tokens::ModelFamily;

fn key(variants: &[&str]) -> AnswerKey {
    AnswerKey {
        all_of: vec![KeyItem {
            variants: variants.iter().map(|v| (*v).to_owned()).collect(),
            seq: 1,
        }],
    }
}

#[test]
fn an_answer_that_contains_the_key_holds_it_whatever_its_case_and_spacing() {
    let key = key(&["error[E0308]: mismatched types"]);
    assert!(grade(
        "The build said:\n  ERROR[E0308]:   mismatched\ttypes, in src/a.rs",
        &key
    ));
    assert!(grade("`error[E0308]: mismatched types`.", &key));
}

#[test]
fn a_variant_is_accepted() {
    let key = key(&["/home/u/app/src/parser.rs", "src/parser.rs"]);
    assert!(grade("It lives in src/parser.rs", &key));
    assert!(grade("/home/u/app/src/parser.rs", &key));
}

#[test]
fn a_near_miss_and_an_empty_answer_do_not_hold() {
    let parser = key(&["src/parser.rs"]);
    assert!(!grade("src/parsers.rs", &parser));
    assert!(!grade("src/parse.rs", &parser));
    assert!(!grade("parser.rs", &parser));
    assert!(!grade("", &parser));
    assert!(!grade("   \n ", &parser));
    assert!(!grade("anything", &AnswerKey { all_of: vec![] }));
    assert!(!grade("anything", &key(&[""])));
}

#[test]
fn every_item_of_a_key_must_be_held() {
    let two = AnswerKey {
        all_of: vec![
            KeyItem {
                variants: vec!["a.rs".into()],
                seq: 1,
            },
            KeyItem {
                variants: vec!["b.rs".into()],
                seq: 2,
            },
        ],
    };
    assert!(grade("b.rs and a.rs", &two));
    assert!(!grade("a.rs only", &two));
}

/// A small coding session: a request, a failing build, reads, edits, a todo list, a decision.
pub(super) fn session() -> Vec<Entry> {
    let call = |id: &str, name: &str, args: &str| ToolCall::new(id, name, args);
    let messages = vec![
        Message::user("Fix the failing parser test in the app"),
        Message::assistant(
            "I'll run the tests first.",
            vec![call("c1", "Bash", r#"{"command":"cargo test parser"}"#)],
        ),
        Message::tool_result(
            "c1",
            "Exit code 101\n   Compiling app\nerror[E0308]: mismatched types in parse_args",
            true,
        ),
        Message::assistant(
            "Let me read the parser.",
            vec![call(
                "c2",
                "Read",
                r#"{"file_path":"/home/u/app/src/parser.rs"}"#,
            )],
        ),
        Message::tool_result(
            "c2",
            "     1→pub fn parse_args(input: &str) -> Args {\n     2→}",
            false,
        ),
        Message::assistant(
            "I'll keep the lexer as it is because the tests only cover the parser.",
            vec![call(
                "c3",
                "TodoWrite",
                r#"{"todos":[{"content":"Fix parse_args","status":"in_progress"},{"content":"Run the tests","status":"pending"},{"content":"Read the code","status":"completed"}]}"#,
            )],
        ),
        Message::tool_result("c3", "ok", false),
        Message::assistant(
            "Now I will change the return type of the parser.",
            vec![call(
                "c4",
                "Edit",
                r#"{"file_path":"/home/u/app/src/parser.rs","old_string":"Args","new_string":"Result<Args>"}"#,
            )],
        ),
        Message::tool_result("c4", "edited", false),
        Message::assistant(
            "",
            vec![call(
                "c5",
                "Read",
                r#"{"file_path":"/home/u/app/README.md"}"#,
            )],
        ),
        Message::tool_result("c5", "An app", false),
        Message::user("Also update the docs"),
        Message::assistant(
            "",
            vec![call(
                "c6",
                "Read",
                r#"{"file_path":"/home/u/app/src/parser.rs"}"#,
            )],
        ),
        Message::tool_result("c6", "pub fn parse_args", false),
    ];
    messages
        .into_iter()
        .enumerate()
        .map(|(i, m)| Entry::new(i as u64 + 1, m, ModelFamily::Claude))
        .collect()
}

fn checkpoint(through_seq: u64) -> Checkpoint {
    Checkpoint {
        through_seq,
        summary: String::new(),
        method: SummaryMethod::Extractive,
        active_tasks: None,
        tokens: 0,
        made_at_turn: 1,
        pinned: Vec::new(),
        dropped_facts: Default::default(),
        compaction_block: None,
        restore: None,
    }
}

#[test]
fn probes_come_from_what_the_checkpoint_covers_with_keys_found_at_their_seq() {
    let entries = session();
    let all = session_probes(&entries, &[checkpoint(11)], &[11]);
    let probes = &all[0].probes;
    let sources: Vec<(ProbeKind, &str)> =
        probes.iter().map(|p| (p.kind, p.source.as_str())).collect();
    assert_eq!(
        sources,
        vec![
            (ProbeKind::Recall, "request"),
            (ProbeKind::Recall, "failure"),
            (ProbeKind::Artifact, "identifier"),
            (ProbeKind::Artifact, "edited"),
            (ProbeKind::Continuation, "next_step"),
            (ProbeKind::Continuation, "open_tasks"),
            (ProbeKind::Decision, "reason"),
            (ProbeKind::NeededNext, "path"),
        ]
    );
    let by_source = |source: &str| probes.iter().find(|p| p.source == source).unwrap();
    assert_eq!(
        by_source("failure").key.all_of[0].variants,
        vec!["error[E0308]: mismatched types in parse_args"]
    );
    assert_eq!(
        by_source("identifier").key.all_of[0].variants,
        vec!["/home/u/app/src/parser.rs", "src/parser.rs"]
    );
    assert_eq!(
        by_source("reason").key.all_of[0].variants,
        vec!["the tests only cover the parser"]
    );
    let tasks: Vec<&str> = by_source("open_tasks")
        .key
        .all_of
        .iter()
        .map(|item| item.variants[0].as_str())
        .collect();
    assert_eq!(tasks, vec!["Fix parse_args", "Run the tests"]);
    // The parser is read again at seq 13, after the checkpoint: needed next.
    assert_eq!(by_source("path").key.all_of[0].variants[0], "src/parser.rs");
    assert_eq!(
        by_source("path").question,
        "What is the full path of the file `parser.rs` that the agent worked with?"
    );
    for probe in probes {
        for item in &probe.key.all_of {
            let text = normalize(&entry_text(&entries[item.seq as usize - 1]));
            assert!(
                item.variants.iter().any(|v| text.contains(&normalize(v))),
                "{probe:?}"
            );
            for variant in &item.variants {
                assert!(!normalize(&probe.question).contains(&normalize(variant)));
            }
        }
        assert!(!probe.in_tail, "{probe:?}");
    }
}

#[test]
fn an_answer_the_tail_still_shows_is_marked() {
    let entries = session();
    // The view after a checkpoint through 8 shows seqs 9 to 14, where src/parser.rs is read.
    let all = session_probes(&entries, &[checkpoint(8)], &[14]);
    let identifier = all[0]
        .probes
        .iter()
        .find(|p| p.source == "identifier")
        .unwrap();
    assert!(identifier.in_tail);
    let request = all[0]
        .probes
        .iter()
        .find(|p| p.source == "request")
        .unwrap();
    assert!(!request.in_tail);
}

#[test]
fn a_second_checkpoint_asks_about_what_it_newly_covers() {
    let entries = session();
    let all = session_probes(&entries, &[checkpoint(4), checkpoint(12)], &[4, 12]);
    let second: Vec<&str> = all[1].probes.iter().map(|p| p.source.as_str()).collect();
    assert!(!second.contains(&"failure"), "{second:?}");
    let request = all[1]
        .probes
        .iter()
        .find(|p| p.source == "request")
        .unwrap();
    assert_eq!(
        request.question,
        "Quote, word for word, the second request the user made in this conversation."
    );
}

#[test]
fn selection_spreads_over_kinds_then_checkpoints() {
    let entries = session();
    let all = session_probes(&entries, &[checkpoint(4), checkpoint(12)], &[4, 12]);
    let picked = select_probes(&all, 3);
    let kinds: Vec<ProbeKind> = picked.iter().map(|&(c, p)| all[c].probes[p].kind).collect();
    assert_eq!(
        kinds,
        vec![
            ProbeKind::Recall,
            ProbeKind::Artifact,
            ProbeKind::Continuation
        ]
    );
    assert_eq!(
        select_probes(&all, 1000).len(),
        all.iter().map(|c| c.probes.len()).sum::<usize>()
    );
}

#[test]
fn a_request_probe_quotes_the_users_words_not_the_harness() {
    let messages = [
        Message::user("<environment_context>\n  <cwd>/w/app</cwd>\n</environment_context>"),
        Message::user(
            "# Context from my IDE setup:\n\n## Open tabs:\n- a.ts: src/a.ts\n\n## My request for Codex:\nMake the team sheet load faster\n",
        ),
        Message::assistant("On it.", vec![]),
        Message::user("# Context from my IDE setup:\n\n## Open tabs:\n- a.ts: src/a.ts\n\n## My request for Codex:\nIs this done?\n"),
        Message::assistant("Yes.", vec![]),
    ];
    let entries: Vec<Entry> = messages
        .into_iter()
        .enumerate()
        .map(|(i, m)| Entry::new(i as u64 + 1, m, ModelFamily::Claude))
        .collect();
    let all = session_probes(&entries, &[checkpoint(5)], &[5]);
    let requests: Vec<(&str, &str)> = all[0]
        .probes
        .iter()
        .filter(|p| p.source == "request")
        .map(|p| (p.question.as_str(), p.key.all_of[0].variants[0].as_str()))
        .collect();
    assert_eq!(
        requests,
        vec![
            (
                "Quote, word for word, the first request the user made in this conversation.",
                "Make the team sheet load faster"
            ),
            (
                "Quote, word for word, the second request the user made in this conversation.",
                "Is this done?"
            ),
        ]
    );
}
