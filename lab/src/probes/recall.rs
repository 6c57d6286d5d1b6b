//! Recall probes: the exact text of a user's request, and the telling line of the last failure
//! of a command.

use std::collections::BTreeMap;

use super::{probe, KeyItem, Probe, ProbeKind, ProbeLog, Scope};
use ctxkit_core::compaction::one_line;
use ctxkit_core::compaction::pinned::is_previous_summary;
use ctxkit_core::compaction::{key_argument, telling_line};
use ctxkit_core::model::{Entry, Role};
use ctxkit_core::text::user_words;

/// A request quoted back is at most this long (a longer one is asked by its first line, when
/// that is short enough).
const REQUEST_MAX_BYTES: usize = 300;
/// A failure's telling line is at most this long.
const LINE_MAX_BYTES: usize = 240;
/// Failures asked per checkpoint (the latest ones).
const FAILURES: usize = 2;

/// The first and the last request of the scope, each asked by its place among the user's
/// requests ("the user's third request").
pub(super) fn requests(log: &ProbeLog<'_>, scope: &Scope) -> Vec<Probe> {
    // Each request as the user's own words (the harness's blocks taken out).
    let all: Vec<(&Entry, String)> = log
        .entries
        .iter()
        .filter(|entry| entry.message.role == Role::User)
        .filter_map(|entry| {
            let text = entry.message.text_content();
            if is_previous_summary(&text) {
                return None;
            }
            let words = user_words(&text)?.into_owned();
            Some((entry, words))
        })
        .collect();
    let in_scope: Vec<(usize, &(&Entry, String))> = all
        .iter()
        .enumerate()
        .filter(|(_, (entry, _))| entry.seq > scope.from && entry.seq <= scope.through)
        .collect();
    let mut picked: Vec<(usize, &(&Entry, String))> =
        in_scope.first().copied().into_iter().collect();
    if let Some(last) = in_scope.last().filter(|_| in_scope.len() > 1) {
        picked.push(*last);
    }
    picked
        .into_iter()
        .filter_map(|(index, (entry, whole))| {
            let text = one_line(whole, usize::MAX);
            // A long request (an issue pasted whole) is asked by its first line of prose: four
            // words or more, starting with a letter (not a tag such as `<uploaded_files>`, nor
            // a path).
            let (part, text) = if text.len() > REQUEST_MAX_BYTES {
                let first = whole
                    .lines()
                    .map(str::trim)
                    .find(|line| {
                        line.len() >= 20
                            && line.split_whitespace().count() >= 4
                            && line.chars().next().is_some_and(char::is_alphabetic)
                    })?;
                ("the first line of prose of ", first.to_owned())
            } else {
                ("", text)
            };
            if text.len() > REQUEST_MAX_BYTES || text.len() < 8 {
                return None;
            }
            Some(probe(
                ProbeKind::Recall,
                "request",
                format!(
                    "Quote, word for word, {part}the {} request the user made in this conversation.",
                    ordinal(index + 1)
                ),
                vec![KeyItem {
                    variants: vec![text],
                    seq: entry.seq,
                }],
            ))
        })
        .collect()
}

/// The last failure of each command in the scope, the latest [`FAILURES`] of them.
pub(super) fn failures(log: &ProbeLog<'_>, scope: &Scope) -> Vec<Probe> {
    // The command of each call: (tool name, key argument).
    let mut calls: BTreeMap<&str, (String, String)> = BTreeMap::new();
    let mut last: BTreeMap<(String, String), (u64, String)> = BTreeMap::new();
    for entry in log.range(0, scope.through) {
        for call in &entry.message.tool_calls {
            calls.insert(
                call.id.as_str(),
                (call.name.clone(), key_argument(&call.arguments)),
            );
        }
        if entry.seq <= scope.from || !entry.message.is_error {
            continue;
        }
        let Some(command) = entry
            .message
            .tool_call_id
            .as_deref()
            .and_then(|id| calls.get(id))
        else {
            continue;
        };
        let Some(line) = telling_line(&entry.message.text_content()) else {
            continue;
        };
        if line.len() <= LINE_MAX_BYTES && !line.ends_with('…') {
            last.insert(command.clone(), (entry.seq, line));
        }
    }
    let mut latest: Vec<((String, String), (u64, String))> = last.into_iter().collect();
    latest.sort_by_key(|(_, (seq, _))| std::cmp::Reverse(*seq));
    latest.truncate(FAILURES);
    latest.reverse();
    latest
        .into_iter()
        .map(|((tool, argument), (seq, line))| {
            let call = if argument.is_empty() {
                tool
            } else {
                format!("{tool} {argument}")
            };
            probe(
                ProbeKind::Recall,
                "failure",
                format!(
                    "The tool call `{call}` failed. Quote the line of its output that told what went wrong (its last failed run)."
                ),
                vec![KeyItem {
                    variants: vec![line],
                    seq,
                }],
            )
        })
        .collect()
}

/// `n` as an ordinal word: `first`... `tenth`, then `11th`, `22nd`, `103rd`.
pub(super) fn ordinal(n: usize) -> String {
    const WORDS: [&str; 10] = [
        "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth",
        "tenth",
    ];
    if let Some(word) = n.checked_sub(1).and_then(|i| WORDS.get(i)) {
        return (*word).to_owned();
    }
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}
