//! One pass over the covered messages, gathering what the summary quotes: requests, calls
//! with their key argument and outcome, decisions, paths, identifiers, error lines.

use std::collections::BTreeMap;

use crate::wire::fields::StringSet;

use super::mentioned::{has_file_name, paths_named, push_latest};
use super::signals::{
    backticked_identifiers, decision_sentences, file_paths_in_arguments, first_line, identifiers,
    key_argument, paths_in_text, telling_line, WRITTEN_KEYS,
};
use super::state::{file_accesses, is_state_call, FileAccess};
use super::{push_unique, whole_words, ExtractiveLimits};
use crate::compaction::pinned::offloaded_path;
use crate::facts::code_names;
use crate::model::{Message, Role};
use crate::text::user_words;

/// What the covered messages say, gathered in one pass.
#[derive(Default)]
pub(super) struct Facts {
    pub(super) requests: Vec<String>,
    calls: Vec<CallRecord>,
    pub(super) decisions: Vec<String>,
    pub(super) last_assistant_text: Option<String>,
    pub(super) request_after_last_reply: Option<String>,
    pub(super) files: Vec<String>,
    pub(super) identifiers: Vec<String>,
    pub(super) errors: Vec<String>,
    /// The error lines a later run of the same call passed after, with that call.
    pub(super) resolved: Vec<(String, String)>,
    /// The paths the results of calls that are not file reads named, the most recent last.
    pub(super) mentioned: Vec<String>,
    /// The paths the user's requests named, the most recent last.
    pub(super) requested: Vec<String>,
    /// The code-shaped names each file read imports and defines (its own and the project's
    /// first), one list per read, the most recent read's last.
    pub(super) code_names: Vec<Vec<String>>,
    /// Code identifiers the assistant used, each with its position in `uses` (a
    /// `BTreeMap<String, usize>`, a type the core has already: each key and value type
    /// compiles its own B-tree code, docs/performance.md, "Size").
    identifier_uses: BTreeMap<String, usize>,
    /// Per identifier: (messages whose prose or call targets name it, messages that only wrote
    /// it in a file's text, last use).
    uses: Vec<(usize, usize, usize)>,
}

struct CallRecord {
    id: String,
    tool: String,
    key_argument: String,
    outcome: Option<Outcome>,
    /// Listed under Files or Commands instead of Progress.
    in_state: bool,
    /// Reads a file (its result is the file's content, not a lead).
    reads: bool,
}

struct Outcome {
    failed: bool,
    first_line: String,
    error: Option<String>,
}

/// What [`Facts::gather`] has taken already, so each file, identifier and error is kept once.
#[derive(Default)]
struct Seen {
    files: StringSet,
    identifiers: StringSet,
    errors: StringSet,
}

impl Facts {
    pub(super) fn gather(messages: &[Message], limits: &ExtractiveLimits) -> Facts {
        let mut facts = Facts::default();
        let mut seen = Seen::default();
        for (position, message) in messages.iter().enumerate() {
            let text = message.text_content();
            // A request is the user's own words: the harness's blocks are no request.
            let words = match message.role {
                Role::User => user_words(&text),
                _ => None,
            };
            match (message.role, words.as_deref()) {
                (Role::User, Some(words)) => {
                    facts.requests.push(words.to_owned());
                    facts.request_after_last_reply = Some(words.to_owned());
                    for path in paths_in_text(words) {
                        // A file, not a command's name (`/forge:init` reads as `/forge`).
                        if has_file_name(&path) {
                            push_latest(&mut facts.requested, path.clone());
                        }
                        push_unique(&mut facts.files, &mut seen.files, path);
                    }
                }
                (Role::Assistant, _) => facts.take_assistant(message, &text, position, &mut seen),
                (Role::Tool, _) => facts.take_result(message, &text, &mut seen),
                _ => {}
            }
        }
        facts.resolved = resolved_errors(&facts.calls);
        let keep = facts.decisions.len().saturating_sub(limits.decisions);
        facts.decisions.drain(..keep);
        let keep = facts.errors.len().saturating_sub(limits.errors);
        facts.errors.drain(..keep);
        facts
    }

    /// An assistant message's facts: its text's decisions and identifiers, the identifiers
    /// it uses (once per message), the files its calls name, and a record of each call.
    fn take_assistant(&mut self, message: &Message, text: &str, position: usize, seen: &mut Seen) {
        if !text.trim().is_empty() {
            self.request_after_last_reply = None;
            self.last_assistant_text = Some(text.trim().to_owned());
            self.decisions.extend(decision_sentences(text));
            for identifier in backticked_identifiers(text) {
                push_unique(&mut self.identifiers, &mut seen.identifiers, identifier);
            }
        }
        // Counted once per message: a message is one use, so a big file written
        // in one call does not outrank what the agent kept coming back to.
        // What it says and where its calls go count first; the code its calls
        // write (read again from the file when needed) only among equals.
        let mut used = crate::wire::fields::set_of(identifiers(text));
        let mut wrote = StringSet::default();
        for call in &message.tool_calls {
            let (targets, written) = argument_identifiers(&call.arguments);
            used.extend(targets);
            wrote.extend(written);
        }
        for identifier in &wrote {
            if !used.contains(identifier) {
                use_identifier(self, identifier, position, true);
            }
        }
        for identifier in &used {
            use_identifier(self, identifier, position, false);
        }
        for call in &message.tool_calls {
            for path in file_paths_in_arguments(&call.arguments) {
                push_unique(&mut self.files, &mut seen.files, path);
            }
            self.calls.push(CallRecord {
                id: call.id.clone(),
                tool: call.name.clone(),
                key_argument: call_target(&call.arguments),
                outcome: None,
                in_state: is_state_call(&call.name, &call.arguments),
                reads: file_accesses(&call.name, &call.arguments)
                    .iter()
                    .any(|(_, access)| *access == FileAccess::Read),
            });
        }
    }

    /// A tool result's facts: its error's telling line, and its outcome on the call it
    /// answers, with the paths a result that is not a read names (the leads).
    fn take_result(&mut self, message: &Message, text: &str, seen: &mut Seen) {
        // Errors come from failed results only, as their telling line.
        let telling = if message.is_error {
            telling_line(text)
        } else {
            None
        };
        let outcome = Outcome {
            failed: message.is_error,
            // A failure without a telling line is said to have failed, no more
            // (never its exit status alone).
            first_line: match (&telling, message.is_error) {
                (Some(line), _) => line.clone(),
                (None, true) => String::new(),
                (None, false) => first_line(text),
            },
            error: telling.clone(),
        };
        if let Some(line) = telling {
            if seen.errors.insert(line.clone()) {
                self.errors.push(line);
            }
        }
        // Match by id among the open calls; a result with an unknown id goes to the
        // oldest of the calls still open since the last answered one.
        let id = message.tool_call_id.as_deref().unwrap_or_default();
        let by_id = self
            .calls
            .iter()
            .rposition(|c| c.outcome.is_none() && c.id == id);
        let oldest_open = self
            .calls
            .iter()
            .rev()
            .take_while(|c| c.outcome.is_none())
            .count();
        let index = by_id.or_else(|| (oldest_open > 0).then(|| self.calls.len() - oldest_open));
        if let Some(record) = index.and_then(|i| self.calls.get_mut(i)) {
            record.outcome = Some(outcome);
            if record.reads {
                // A read's content is no lead for paths, but what it imports and defines is
                // what the agent goes on to call; only code-shaped names (`PageLayout`,
                // `load_config`): a plain word is guessed again, not recalled.
                let names: Vec<String> = code_names(text)
                    .into_iter()
                    .filter(|name| identifiers(name).next().is_some())
                    .collect();
                // A file read again is one read, the latest.
                self.code_names.retain(|read| *read != names);
                if !names.is_empty() {
                    self.code_names.push(names);
                }
            } else {
                let offloaded = offloaded_path(text);
                for path in paths_named(text, offloaded.as_deref()) {
                    push_latest(&mut self.mentioned, path);
                }
            }
        }
    }

    /// The count line (calls per tool) and the most recent calls that Files and Commands do
    /// not list (searches, fetches, sub-agents), one line each.
    pub(super) fn progress_text(&self, limits: &ExtractiveLimits) -> (String, String) {
        if self.calls.is_empty() {
            return (
                "No tool calls in this part of the session.".to_owned(),
                String::new(),
            );
        }
        let mut per_tool: Vec<(String, usize, usize)> = Vec::new();
        for call in &self.calls {
            let failed = usize::from(call.outcome.as_ref().is_some_and(|o| o.failed));
            match per_tool.iter_mut().find(|(tool, _, _)| *tool == call.tool) {
                Some(entry) => {
                    entry.1 += 1;
                    entry.2 += failed;
                }
                None => per_tool.push((call.tool.clone(), 1, failed)),
            }
        }
        let counts: Vec<String> = per_tool
            .iter()
            .map(|(tool, n, failed)| {
                if *failed > 0 {
                    format!("{tool} ×{n} ({failed} failed)")
                } else {
                    format!("{tool} ×{n}")
                }
            })
            .collect();
        let calls = match self.calls.len() {
            1 => "1 tool call".to_owned(),
            n => format!("{n} tool calls"),
        };
        let mut count_line = format!("{calls} in this part: {}", counts.join(", "));
        let others: Vec<&CallRecord> = self.calls.iter().filter(|c| !c.in_state).collect();
        let recent = others
            .get(others.len().saturating_sub(limits.recent_calls)..)
            .unwrap_or_default();
        if recent.len() < others.len() {
            count_line.push_str(&format!(
                "; the most recent {} besides files and commands:",
                recent.len()
            ));
        }
        let mut text = String::new();
        for call in recent {
            let outcome = match &call.outcome {
                None => "no result".to_owned(),
                Some(Outcome {
                    failed: true,
                    first_line,
                    ..
                }) if first_line.is_empty() => "failed".to_owned(),
                Some(Outcome {
                    failed: true,
                    first_line,
                    ..
                }) => format!("failed: {first_line}"),
                Some(Outcome {
                    failed: false,
                    first_line,
                    ..
                }) if first_line.is_empty() || first_line == "ok" => "ok".to_owned(),
                Some(Outcome {
                    failed: false,
                    first_line,
                    ..
                }) => format!("ok: {first_line}"),
            };
            let argument = if call.key_argument.is_empty() {
                String::new()
            } else {
                format!(" `{}`", call.key_argument)
            };
            let line = format!("- {}{argument} → {outcome}\n", call.tool);
            if !text.contains(&line) {
                text.push_str(&line);
            }
        }
        (count_line, text)
    }

    /// The identifiers used most, at most `cap`, in that order: those the assistant's prose
    /// or call targets named in more than one message, then the previous summary's `earlier`
    /// ones (most used first), then the rest; among equals the ones also written most, then
    /// the latest.
    pub(super) fn ranked_identifiers(&self, cap: usize, earlier: &[String]) -> Vec<String> {
        let mut ranked: Vec<(&String, &(usize, usize, usize))> = Vec::new();
        for (identifier, &at) in &self.identifier_uses {
            if let Some(uses) = self.uses.get(at) {
                ranked.push((identifier, uses));
            }
        }
        crate::wire::fields::sort_stable_by(&mut ranked, |a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let (often, rest): (Vec<_>, Vec<_>) = ranked.into_iter().partition(|(_, uses)| uses.0 > 1);
        let mut out: Vec<String> = often.into_iter().map(|(id, _)| id.clone()).collect();
        for id in earlier.iter().chain(rest.into_iter().map(|(id, _)| id)) {
            if out.len() >= cap {
                break;
            }
            if !out.contains(id) {
                out.push(id.clone());
            }
        }
        out.truncate(cap);
        out
    }

    pub(super) fn next_steps(&self) -> Option<String> {
        if let Some(request) = &self.request_after_last_reply {
            return Some(format!(
                "Answer the user's latest request: {}",
                whole_words(request, 600)
            ));
        }
        self.last_assistant_text
            .as_ref()
            .map(|text| format!("Last stated by the assistant: {}", whole_words(text, 800)))
    }
}

fn use_identifier(facts: &mut Facts, identifier: &str, position: usize, written_only: bool) {
    let next = facts.uses.len();
    let at = *facts
        .identifier_uses
        .entry(identifier.to_owned())
        .or_insert(next);
    if at == next {
        facts.uses.push((0, 0, 0));
    }
    let Some(entry) = facts.uses.get_mut(at) else {
        return;
    };
    if written_only {
        entry.1 += 1;
    } else {
        entry.0 += 1;
    }
    entry.2 = position;
}

/// Each error line whose call was run again (same tool, same key argument) and passed, with
/// that call's key argument.
fn resolved_errors(calls: &[CallRecord]) -> Vec<(String, String)> {
    let mut resolved = Vec::new();
    for (index, call) in calls.iter().enumerate() {
        let Some(error) = call.outcome.as_ref().and_then(|o| o.error.clone()) else {
            continue;
        };
        let passed_later = calls.iter().skip(index + 1).any(|later| {
            later.tool == call.tool
                && later.key_argument == call.key_argument
                && later.outcome.as_ref().is_some_and(|o| !o.failed)
        });
        if passed_later && !resolved.iter().any(|(line, _)| *line == error) {
            resolved.push((error, call.key_argument.clone()));
        }
    }
    resolved
}

/// What a call did, in a few words: its [`key_argument`] (an argv's script, not its
/// `workdir`). Two calls with the same target ran the same thing.
fn call_target(arguments: &str) -> String {
    key_argument(arguments)
}

/// The identifiers in the string values of a call's JSON arguments (not in its keys or
/// escapes): those of where it goes and what it looks for or runs, and those of the text it
/// writes ([`WRITTEN_KEYS`]).
fn argument_identifiers(arguments: &str) -> (Vec<String>, Vec<String>) {
    fn walk(value: &serde_json::Value, out: &mut Vec<String>) {
        match value {
            serde_json::Value::String(text) => out.extend(identifiers(text)),
            serde_json::Value::Array(items) => items.iter().for_each(|item| walk(item, out)),
            serde_json::Value::Object(object) => object.values().for_each(|item| walk(item, out)),
            _ => {}
        }
    }
    let (mut targets, mut written) = (Vec::new(), Vec::new());
    match serde_json::from_str::<serde_json::Value>(arguments) {
        Ok(serde_json::Value::Object(object)) => {
            for (key, value) in &object {
                if WRITTEN_KEYS.contains(&key.as_str()) {
                    walk(value, &mut written);
                } else {
                    walk(value, &mut targets);
                }
            }
        }
        Ok(value) => walk(&value, &mut targets),
        Err(_) => {}
    }
    (targets, written)
}
