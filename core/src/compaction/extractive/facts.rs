//! One pass over the covered messages, gathering what the summary quotes: requests, calls
//! with their key argument and outcome, decisions, paths, identifiers, error lines.

use std::collections::BTreeSet;

use super::signals::{
    backticked_identifiers, decision_sentences, error_lines, file_paths_in_arguments, first_line,
    is_request, key_argument, paths_in_text,
};
use super::{one_line, push_unique, ExtractiveLimits};
use crate::model::{Message, Role};

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
}

struct CallRecord {
    id: String,
    tool: String,
    key_argument: String,
    outcome: Option<Outcome>,
}

struct Outcome {
    failed: bool,
    first_line: String,
}

impl Facts {
    pub(super) fn gather(messages: &[Message], limits: &ExtractiveLimits) -> Facts {
        let mut facts = Facts::default();
        let mut seen_files = BTreeSet::new();
        let mut seen_identifiers = BTreeSet::new();
        let mut seen_errors = BTreeSet::new();
        for message in messages {
            let text = message.text_content();
            match message.role {
                Role::User if is_request(&text) => {
                    facts.requests.push(text.trim().to_owned());
                    facts.request_after_last_reply = Some(text.trim().to_owned());
                    for path in paths_in_text(&text) {
                        push_unique(&mut facts.files, &mut seen_files, path);
                    }
                }
                Role::Assistant => {
                    if !text.trim().is_empty() {
                        facts.request_after_last_reply = None;
                        facts.last_assistant_text = Some(text.trim().to_owned());
                        facts.decisions.extend(decision_sentences(&text));
                        for identifier in backticked_identifiers(&text) {
                            push_unique(&mut facts.identifiers, &mut seen_identifiers, identifier);
                        }
                    }
                    for call in &message.tool_calls {
                        for path in file_paths_in_arguments(&call.arguments) {
                            push_unique(&mut facts.files, &mut seen_files, path);
                        }
                        facts.calls.push(CallRecord {
                            id: call.id.clone(),
                            tool: call.name.clone(),
                            key_argument: key_argument(&call.arguments),
                            outcome: None,
                        });
                    }
                }
                Role::Tool => {
                    let lines = error_lines(&text, message.is_error);
                    let outcome = Outcome {
                        failed: message.is_error,
                        first_line: lines.first().cloned().unwrap_or_else(|| first_line(&text)),
                    };
                    for line in lines {
                        if seen_errors.insert(line.clone()) {
                            facts.errors.push(line);
                        }
                    }
                    // Match by id among the open calls; a result with an unknown id goes to the
                    // oldest of the calls still open since the last answered one.
                    let id = message.tool_call_id.as_deref().unwrap_or_default();
                    let by_id = facts
                        .calls
                        .iter()
                        .rposition(|c| c.outcome.is_none() && c.id == id);
                    let oldest_open = facts
                        .calls
                        .iter()
                        .rev()
                        .take_while(|c| c.outcome.is_none())
                        .count();
                    let index = by_id
                        .or_else(|| (oldest_open > 0).then(|| facts.calls.len() - oldest_open));
                    if let Some(record) = index.and_then(|i| facts.calls.get_mut(i)) {
                        record.outcome = Some(outcome);
                    }
                }
                _ => {}
            }
        }
        let keep = facts.decisions.len().saturating_sub(limits.decisions);
        facts.decisions.drain(..keep);
        let keep = facts.errors.len().saturating_sub(limits.errors);
        facts.errors.drain(..keep);
        facts
    }

    pub(super) fn progress_text(&self, limits: &ExtractiveLimits) -> String {
        if self.calls.is_empty() {
            return "No tool calls in this part of the session.".to_owned();
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
        let mut text = format!("{} tool calls: {}\n", self.calls.len(), counts.join(", "));
        let recent = self
            .calls
            .get(self.calls.len().saturating_sub(limits.recent_calls)..)
            .unwrap_or_default();
        if recent.len() < self.calls.len() {
            text.push_str(&format!("Most recent {}:\n", recent.len()));
        }
        for call in recent {
            let outcome = match &call.outcome {
                None => "no result".to_owned(),
                Some(Outcome {
                    failed: true,
                    first_line,
                }) => format!("failed: {first_line}"),
                Some(Outcome {
                    failed: false,
                    first_line,
                }) if first_line.is_empty() => "ok".to_owned(),
                Some(Outcome {
                    failed: false,
                    first_line,
                }) => format!("ok: {first_line}"),
            };
            let argument = if call.key_argument.is_empty() {
                String::new()
            } else {
                format!(" `{}`", call.key_argument)
            };
            text.push_str(&format!("- {}{argument} → {outcome}\n", call.tool));
        }
        text
    }

    pub(super) fn next_steps(&self) -> Option<String> {
        if let Some(request) = &self.request_after_last_reply {
            return Some(format!(
                "Answer the user's latest request: {}",
                one_line(request, 600)
            ));
        }
        self.last_assistant_text
            .as_ref()
            .map(|text| format!("Last stated by the assistant: {}", one_line(text, 800)))
    }
}
