//! Artifact probes: which file defines an identifier, which files were edited, and the paths
//! the agent's later calls went back to (the needed-next facts).

use std::collections::{BTreeMap, BTreeSet};

use super::{probe, KeyItem, Probe, ProbeKind, ProbeLog, Scope};
use crate::needed_next::{needed_next, GradedSummary, NeededKind};
use ctxkit_core::compaction::identifiers as code_identifiers;
use ctxkit_core::compaction::{file_paths_in_arguments, relative_to};
use ctxkit_core::facts::{call_shape, CallShape, FileAction};
use ctxkit_core::model::Entry;

/// Identifier probes per checkpoint.
const IDENTIFIERS: usize = 2;
/// Edited files a probe asks for, at most (the latest).
const EDITED: usize = 5;
/// Needed-next probes per checkpoint.
const NEEDED: usize = 2;

/// Words after which a code identifier is being defined.
const DEFINING: [&str; 12] = [
    "fn",
    "def",
    "defp",
    "class",
    "struct",
    "enum",
    "trait",
    "interface",
    "function",
    "const",
    "defmodule",
    "func",
];

/// A call that names one file: its entry's `seq` and the path as written.
struct FileCall {
    seq: u64,
    path: String,
}

/// The one path a call names in a key that names a file (`file_path`, `path`...), if one.
fn one_path(arguments: &str) -> Option<String> {
    let Ok(serde_json::Value::Object(object)) = serde_json::from_str(arguments) else {
        return None;
    };
    let paths: Vec<String> = object
        .iter()
        .filter(|(key, _)| {
            let lower = key.to_ascii_lowercase();
            lower.contains("path") || lower.contains("file")
        })
        .filter_map(|(_, value)| value.as_str())
        .filter(|path| !path.is_empty() && !path.contains([' ', '\n']) && path.contains('.'))
        .map(str::to_owned)
        .collect();
    match paths.as_slice() {
        [path] => Some(path.clone()),
        _ => None,
    }
}

/// The text a call writes (`content`, `new_string`...), if any.
fn written_text(arguments: &str) -> String {
    let Ok(serde_json::Value::Object(object)) = serde_json::from_str(arguments) else {
        return String::new();
    };
    ["content", "new_string", "new_str", "file_text"]
        .iter()
        .filter_map(|key| object.get(*key).and_then(|v| v.as_str()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The identifiers `text` defines (a code-shaped word right after `fn`, `def`, `class`...).
fn defined(text: &str) -> Vec<String> {
    let words: Vec<&str> = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    words
        .windows(2)
        .filter_map(|pair| match pair {
            [keyword, name] if DEFINING.contains(keyword) => Some(*name),
            _ => None,
        })
        .filter(|name| code_identifiers(name).next().as_deref() == Some(*name))
        .map(str::to_owned)
        .collect()
}

/// Every (definition, file call) of the log, in `seq` order: identifiers a file's read output
/// shows defined, or a write's text defines.
fn definitions(log: &ProbeLog<'_>) -> Vec<(String, FileCall, u64)> {
    let mut calls: BTreeMap<&str, FileCall> = BTreeMap::new();
    let mut found = Vec::new();
    for entry in log.entries {
        for call in &entry.message.tool_calls {
            let Some(path) = one_path(&call.arguments) else {
                continue;
            };
            for name in defined(&written_text(&call.arguments)) {
                let file = FileCall {
                    seq: entry.seq,
                    path: path.clone(),
                };
                found.push((name, file, entry.seq));
            }
            calls.insert(
                call.id.as_str(),
                FileCall {
                    seq: entry.seq,
                    path,
                },
            );
        }
        let result_of = entry.message.tool_call_id.as_deref();
        if let Some(call) = result_of.and_then(|id| calls.get(id)) {
            if entry.message.is_error {
                continue;
            }
            for name in defined(&entry.message.text_content()) {
                let file = FileCall {
                    seq: call.seq,
                    path: call.path.clone(),
                };
                found.push((name, file, entry.seq));
            }
        }
    }
    found
}

/// Which file defines an identifier, for identifiers the log shows defined in one file only.
pub(super) fn identifiers(log: &ProbeLog<'_>, scope: &Scope) -> Vec<Probe> {
    let all = definitions(log);
    let workdir = log.workdir.as_deref();
    let mut files_of: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for (name, file, _) in &all {
        files_of
            .entry(name.as_str())
            .or_default()
            .insert(relative_to(&file.path, workdir));
    }
    let mut asked = BTreeSet::new();
    all.iter()
        .filter(|(_, _, seen)| *seen > scope.from && *seen <= scope.through)
        .filter(|(name, _, _)| files_of.get(name.as_str()).is_some_and(|f| f.len() == 1))
        .filter(|(name, _, _)| asked.insert(name.clone()))
        .take(IDENTIFIERS)
        .map(|(name, file, _)| {
            probe(
                ProbeKind::Artifact,
                "identifier",
                format!("Which file defines `{name}`? Give its path."),
                vec![KeyItem {
                    variants: log.path_variants(&file.path),
                    seq: file.seq,
                }],
            )
        })
        .collect()
}

/// The files a call edits, writes, creates or deletes, read by the shape of its arguments
/// through [`ctxkit_core::facts::call_shape`] (a patch body anywhere, a path with the text
/// written to it, an editor's sub-command), for any agent: never by the tool's name.
fn changed_files(name: &str, arguments: &str) -> Vec<String> {
    match call_shape(name, arguments) {
        Some(CallShape::Files(files)) => files
            .into_iter()
            .filter(|(_, action)| *action != FileAction::Read)
            .map(|(path, _)| path)
            .collect(),
        _ => Vec::new(),
    }
}

/// The files edited in the scope (the latest [`EDITED`]), asked in one probe.
pub(super) fn edited(log: &ProbeLog<'_>, scope: &Scope) -> Vec<Probe> {
    let workdir = log.workdir.as_deref();
    let mut latest: BTreeMap<String, (u64, String)> = BTreeMap::new();
    for entry in log.range(scope.from, scope.through) {
        for call in &entry.message.tool_calls {
            for path in changed_files(&call.name, &call.arguments) {
                latest.insert(relative_to(&path, workdir), (entry.seq, path));
            }
        }
    }
    let mut files: Vec<(u64, String)> = latest.into_values().collect();
    files.sort();
    let skip = files.len().saturating_sub(EDITED);
    let items: Vec<KeyItem> = files
        .into_iter()
        .skip(skip)
        .map(|(seq, path)| KeyItem {
            variants: log.path_variants(&path),
            seq,
        })
        .collect();
    if items.is_empty() {
        return Vec::new();
    }
    vec![probe(
        ProbeKind::Artifact,
        "edited",
        "Which files did the agent edit or write in this session? List every path.".to_owned(),
        items,
    )]
}

/// The paths the agent's later calls needed that only the checkpoint's summary could give
/// (its needed-next facts), asked by their file name when no other file of the log has it.
pub(super) fn needed_paths(log: &ProbeLog<'_>, scope: &Scope) -> Vec<Probe> {
    let summary = GradedSummary {
        through_seq: scope.through,
        calls_after: scope.through,
        until_seq: scope.until,
        text: String::new(),
    };
    // With an empty summary every needed fact is missed, so `missed` lists them all.
    let needed = needed_next(log.entries, &[summary]);
    let workdir = log.workdir.as_deref();
    let mut paths_named: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for path in log.entries.iter().flat_map(call_paths) {
        let relative = relative_to(&path, workdir);
        paths_named
            .entry(file_name(&relative).to_owned())
            .or_default()
            .insert(relative);
    }
    needed
        .iter()
        .flat_map(|figure| figure.missed.iter())
        .filter(|fact| fact.kind == NeededKind::Path)
        .filter(|fact| {
            // A file in a folder: asked by its name, answered by its path.
            fact.text.rsplit_once('/').is_some_and(|(folder, name)| {
                let extension = name.rsplit_once('.').map(|(_, ext)| ext);
                !folder.is_empty()
                    && extension.is_some_and(|ext| ext.chars().any(|c| c.is_ascii_alphabetic()))
            })
        })
        .filter(|fact| {
            paths_named
                .get(file_name(&fact.text))
                .is_none_or(|paths| paths.len() <= 1)
        })
        .take(NEEDED)
        .map(|fact| {
            let name = file_name(&fact.text);
            probe(
                ProbeKind::NeededNext,
                "path",
                format!("What is the full path of the file `{name}` that the agent worked with?"),
                vec![KeyItem {
                    variants: log.path_variants(&fact.text),
                    seq: fact.last_held_seq,
                }],
            )
        })
        .collect()
}

fn call_paths(entry: &Entry) -> Vec<String> {
    entry
        .message
        .tool_calls
        .iter()
        .flat_map(|call| file_paths_in_arguments(&call.arguments))
        .collect()
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

#[cfg(test)]
mod changed_files_tests {
    use super::changed_files;

    #[test]
    fn edits_are_read_by_shape_from_any_agents_calls() {
        // Codex: a patch in a shell argv, under its workdir; a read is no edit.
        let codex = r#"{"command":["bash","-lc","apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: app/(protected)/a.ts\n@@\n-a\n+b\n*** End Patch\nEOF"],"workdir":"/u/repo"}"#;
        assert_eq!(
            changed_files("shell", codex),
            vec!["/u/repo/app/(protected)/a.ts"]
        );
        assert!(changed_files(
            "shell",
            r#"{"command":["bash","-lc","sed -n '1,80p' a.ts"]}"#
        )
        .is_empty());
        // pi and a framework's made-up tool: a path with the text written to it.
        assert_eq!(
            changed_files("write", r#"{"path":"src/a.ts","content":"x"}"#),
            vec!["src/a.ts"]
        );
        assert_eq!(
            changed_files("save_note", r#"{"file":"notes/todo.md","text":"x"}"#),
            vec!["notes/todo.md"]
        );
        // Claude Code's Read is a read, whatever its name.
        assert!(changed_files("Read", r#"{"file_path":"/w/a.rs"}"#).is_empty());
    }
}
