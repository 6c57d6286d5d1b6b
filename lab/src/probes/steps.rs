//! Continuation and decision probes: what the assistant said it was doing at its last stated
//! step, the open tasks of its last todo list update, and the reasons it gave for its choices.

use super::{probe, KeyItem, Probe, ProbeKind, ProbeLog, Scope};
use ctxkit_core::compaction::one_line;
use ctxkit_core::compaction::{decision_sentences, key_argument, sentences};
use ctxkit_core::model::Role;

/// Open tasks a probe asks for, at most.
const TASKS: usize = 4;
/// Reasons asked per checkpoint (the latest).
const REASONS: usize = 2;
/// A quoted sentence or task is at most this long.
const QUOTE_MAX_BYTES: usize = 240;

/// The last step the assistant stated with a call in the scope: asked by the call it made.
pub(super) fn next_step(log: &ProbeLog<'_>, scope: &Scope) -> Vec<Probe> {
    let stated = log
        .range(scope.from, scope.through)
        .iter()
        .rev()
        .find_map(|entry| {
            let message = &entry.message;
            let call = message.tool_calls.first()?;
            if message.role != Role::Assistant {
                return None;
            }
            let text = message.text_content();
            let last = sentences(&text).last().map(|s| one_line(s, usize::MAX))?;
            (12..=QUOTE_MAX_BYTES).contains(&last.len()).then(|| {
                (
                    entry.seq,
                    call.name.clone(),
                    key_argument(&call.arguments),
                    last,
                )
            })
        });
    stated
        .map(|(seq, tool, argument, sentence)| {
            let call = if argument.is_empty() {
                tool
            } else {
                format!("{tool} {argument}")
            };
            probe(
                ProbeKind::Continuation,
                "next_step",
                format!(
                    "When the agent made the tool call `{call}`, what did it say it was about to do? Quote its words."
                ),
                vec![KeyItem {
                    variants: vec![sentence],
                    seq,
                }],
            )
        })
        .into_iter()
        .collect()
}

/// The open tasks (pending or in progress) of the last todo list update in the scope.
pub(super) fn open_tasks(log: &ProbeLog<'_>, scope: &Scope) -> Vec<Probe> {
    let update = log
        .range(scope.from, scope.through)
        .iter()
        .rev()
        .find_map(|entry| {
            entry.message.tool_calls.iter().rev().find_map(|call| {
                let args: serde_json::Value = serde_json::from_str(&call.arguments).ok()?;
                let todos = args.get("todos")?.as_array()?;
                let open: Vec<String> = todos
                    .iter()
                    .filter(|item| {
                        matches!(
                            item.get("status").and_then(|s| s.as_str()),
                            Some("pending" | "in_progress")
                        )
                    })
                    .filter_map(|item| item.get("content").and_then(|c| c.as_str()))
                    .map(|content| one_line(content, usize::MAX))
                    .filter(|content| content.len() <= QUOTE_MAX_BYTES)
                    .take(TASKS)
                    .collect();
                Some((entry.seq, open))
            })
        });
    let Some((seq, open)) = update.filter(|(_, open)| !open.is_empty()) else {
        return Vec::new();
    };
    vec![probe(
        ProbeKind::Continuation,
        "open_tasks",
        "At the agent's last update of its todo list, which tasks were still open (pending or in progress)? List them.".to_owned(),
        open.into_iter()
            .map(|task| KeyItem {
                variants: vec![task],
                seq,
            })
            .collect(),
    )]
}

/// The reasons of the choices the assistant stated in a whole sentence (`X because Y`): asked
/// with the choice, answered by the reason. The latest [`REASONS`] of the scope.
pub(super) fn reasons(log: &ProbeLog<'_>, scope: &Scope) -> Vec<Probe> {
    let mut found: Vec<Probe> = Vec::new();
    for entry in log.range(scope.from, scope.through) {
        if entry.message.role != Role::Assistant {
            continue;
        }
        for sentence in decision_sentences(&entry.message.text_content()) {
            let Some(at) = sentence.to_lowercase().find(" because ") else {
                continue;
            };
            let (Some(choice), Some(reason)) = (sentence.get(..at), sentence.get(at + 9..)) else {
                continue;
            };
            let choice = choice.trim().trim_end_matches([',', ';', ':']).trim();
            let reason = reason.trim();
            if choice.split_whitespace().count() < 3 || reason.split_whitespace().count() < 3 {
                continue;
            }
            found.push(probe(
                ProbeKind::Decision,
                "reason",
                format!("The assistant said: \"{choice}\". What reason did it give? Quote it."),
                vec![KeyItem {
                    variants: vec![reason.to_owned()],
                    seq: entry.seq,
                }],
            ));
        }
    }
    let skip = found.len().saturating_sub(REASONS);
    found.into_iter().skip(skip).collect()
}
