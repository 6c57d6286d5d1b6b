//! pi coding agent sessions (`~/.pi/agent/sessions/--<cwd>--/<time>_<uuid>.jsonl`).
//!
//! One JSON object per line. The first is the header (`type: "session"`, with `version`, `id`
//! and `cwd`); every other line is an entry with `id` and `parentId`, so the entries form a tree:
//! rewinding or branching (`/tree`) adds a new child of an earlier entry instead of rewriting
//! the file. The conversation pi continues is the **active branch**: the path from the last
//! entry of the file back to the root. Entries on other branches are not part of it and are not
//! read (their gist reaches the active branch as a `branch_summary` entry when pi made one).
//! Files of format version 1 have no `id`s: their entries are one linear branch.
//!
//! Entries on the branch, in order:
//! - `message`: an agent message (see [`messages`] for each role);
//! - `compaction`: pi replaced the history before `firstKeptEntryId` by a summary: a
//!   [`CompactionMarker`] where it happened and a user message holding the summary (the log keeps
//!   everything before it, as for Codex);
//! - `branch_summary`, `custom_message`: text pi put in the model's context, as user messages;
//! - `model_change`: the model of the calls that follow; the first model named is the
//!   session's ([`PiSession::model`]);
//! - `thinking_level_change`, `custom` (an extension's state), `label`, `session_info`: not part
//!   of what the model saw, skipped; so is any entry type this reader does not know.
//!
//! Each assistant message with `usage` is one [`ApiCall`] (prompt size: `input + cacheRead +
//! cacheWrite`).
//!
//! Guarantees: no panics on any input; an error names the line (1-based) and the field
//! (`line 7: message.content[0].arguments: expected an object, found a string`); a tree with a
//! cycle or a dangling parent is read up to where the chain breaks, never looped.

mod messages;

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::jsonl::at_line;
use super::{ApiCall, CompactionMarker};
use crate::error::Result;
use crate::model::Message;
use crate::wire::{expected, optional_str, optional_u64, required_str, Object};

/// A pi session read into the message model: its active branch.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PiSession {
    /// The active branch's conversation in order, across compactions (the complete log).
    pub messages: Vec<Message>,
    /// One entry per assistant message that recorded usage, in order.
    pub api_calls: Vec<ApiCall>,
    /// Where pi compacted the conversation.
    pub compactions: Vec<CompactionMarker>,
    /// The first model the session names (`model_change`, else an assistant's `model`).
    pub model: Option<String>,
    /// The working directory of the header.
    pub cwd: Option<String>,
}

/// Reads a pi session (the text of its `.jsonl` file).
///
/// Errors: a line that is not JSON or not an object, an entry without a `type`, a `message`
/// entry whose message is malformed (see the module doc), a `compaction` without its `summary`.
pub fn import_pi(text: &str) -> Result<PiSession> {
    let lines = parse_lines(text)?;
    let mut session = PiSession::default();
    let mut entries = Vec::new();
    for (number, line) in &lines {
        let kind = required_str(line, "", "type").map_err(|e| at_line(e, *number))?;
        if kind == "session" {
            if session.cwd.is_none() {
                session.cwd = optional_str(line, "", "cwd")
                    .map_err(|e| at_line(e, *number))?
                    .map(str::to_owned);
            }
            continue;
        }
        entries.push((*number, line));
    }
    let mut reader = messages::Reader::new(session);
    for (number, entry) in active_branch(&entries) {
        reader
            .entry(entry, number)
            .map_err(|e| at_line(e, number))?;
    }
    Ok(reader.finish())
}

/// Each non-blank line as a JSON object, with its 1-based number.
fn parse_lines(text: &str) -> Result<Vec<(usize, Object)>> {
    super::jsonl::parse_lines(text)?
        .into_iter()
        .map(|(number, value)| match value {
            Value::Object(object) => Ok((number, object)),
            other => Err(expected(&format!("line {number}"), "a JSON object", &other)),
        })
        .collect()
}

/// The entries from the root to the last entry of the file, following `parentId`. Entries
/// without an `id` (format version 1) are all on the branch, in file order.
fn active_branch<'a>(entries: &[(usize, &'a Object)]) -> Vec<(usize, &'a Object)> {
    let id_of = |entry: &Object| entry.get("id").and_then(Value::as_str).map(str::to_owned);
    if entries.iter().all(|(_, entry)| id_of(entry).is_none()) {
        return entries.to_vec();
    }
    let by_id: BTreeMap<String, usize> = entries
        .iter()
        .enumerate()
        .filter_map(|(index, (_, entry))| Some((id_of(entry)?, index)))
        .collect();
    let Some(leaf) = entries
        .iter()
        .rposition(|(_, entry)| id_of(entry).is_some())
    else {
        return Vec::new();
    };
    let mut path = Vec::new();
    let mut seen = BTreeSet::new();
    let mut at = Some(leaf);
    while let Some(index) = at {
        if !seen.insert(index) {
            break; // a cycle: the chain is read once
        }
        let Some(&(number, entry)) = entries.get(index) else {
            break;
        };
        path.push((number, entry));
        at = entry
            .get("parentId")
            .and_then(Value::as_str)
            .and_then(|parent| by_id.get(parent).copied());
    }
    path.reverse();
    path
}

/// The `tokensBefore` of a compaction entry, when recorded.
fn tokens_before(entry: &Object) -> Result<Option<u64>> {
    optional_u64(entry, "", "tokensBefore")
}

#[cfg(test)]
mod tests;
