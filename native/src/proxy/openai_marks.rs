//! OpenAI's explicit cache breakpoints in the proxy's Chat Completions and Responses requests:
//! `prompt_cache_breakpoint` marks (GPT-5.6 and later) at ctxkit's breakpoints, in place of the
//! agent's, when the agent marks its own request. Its model then takes them; an older model may
//! refuse the field (and caches a request's prefix by itself), so an agent that sends none gets
//! none.
//!
//! Guarantees: a mark is a part's field, read from the parsed message (a text that quotes the
//! field is not one); the agent's system messages go upstream as sent, their marks counted, so
//! a request never carries more than the four OpenAI takes; where ctxkit's marks go is the
//! core's rule (`render_messages_cached`: moved back past assistant output, none under 1,024
//! tokens).

use ctxkit_core::wire::breakpoints::{CacheBreakpoint, MAX_BREAKPOINTS, OPENAI_BREAKPOINT_FIELD};
use ctxkit_core::wire::{render_messages_cached, WireFormat};
use serde_json::Value;

use super::sessions::after_agent_system;
use crate::engine::TurnResult;
use crate::error::Context;

/// How many `prompt_cache_breakpoint` marks the raw JSON `raw` carries on its parts: a message's
/// or item's `content` parts and a function call output's `output` parts; `raw` may be one
/// message or item, or an array of them. Not JSON, or no parts: none.
pub(super) fn marks_in(raw: &str) -> usize {
    let Ok(value) = serde_json::from_str::<Value>(raw) else {
        return 0;
    };
    let items = match &value {
        Value::Array(items) => items.iter().collect(),
        item => vec![item],
    };
    items
        .into_iter()
        .flat_map(|item| ["content", "output"].map(|key| item.get(key)))
        .flatten()
        .filter_map(Value::as_array)
        .flatten()
        .filter(|part| part.get(OPENAI_BREAKPOINT_FIELD).is_some())
        .count()
}

/// What the agent's request says of OpenAI cache marks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct AgentMarks {
    /// Whether the agent marks its request (its system messages or its newest messages).
    pub marks: bool,
    /// The marks on the system messages it sends as they are.
    pub on_system: usize,
}

impl AgentMarks {
    /// Read from the agent's system messages (`system`) and its newest messages (`newest`).
    pub fn read<'a>(
        system: impl Iterator<Item = &'a str>,
        newest: impl Iterator<Item = &'a str>,
    ) -> AgentMarks {
        let on_system: usize = system.map(marks_in).sum();
        let marks = on_system > 0 || newest.map(marks_in).any(|count| count > 0);
        AgentMarks { marks, on_system }
    }
}

/// The turn's view after the agent's system prompt (`system_text`), written in `format`
/// (Chat Completions or Responses) with ctxkit's breakpoints marked: the latest ones, as many
/// as the agent's system marks leave of four.
pub(super) fn marked_view(
    turn: &TurnResult,
    system_text: &str,
    format: WireFormat,
    marks: AgentMarks,
) -> crate::Result<Value> {
    let conversation = after_agent_system(&turn.messages, system_text);
    let system_sent_apart = conversation.len() < turn.messages.len();
    let mut breakpoints: Vec<CacheBreakpoint> = turn
        .stats
        .cache_breakpoints
        .iter()
        .filter(|breakpoint| !system_sent_apart || breakpoint.after_message.is_some())
        .copied()
        .collect();
    let allowed = MAX_BREAKPOINTS.saturating_sub(marks.on_system);
    let excess = breakpoints.len().saturating_sub(allowed);
    breakpoints.drain(..excess);
    render_messages_cached(conversation, format, &breakpoints)
        .context(|| format!("session {:?}: view", turn.session))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mark_is_a_parts_field_never_a_text_that_quotes_it() {
        let marked = r#"{"role":"user","content":[{"type":"text","text":"a","prompt_cache_breakpoint":{"mode":"explicit"}}]}"#;
        assert_eq!(marks_in(marked), 1);
        let quoted =
            r#"{"role":"user","content":"{\"prompt_cache_breakpoint\":{\"mode\":\"explicit\"}}"}"#;
        assert_eq!(marks_in(quoted), 0);
        let quoted_part = r#"{"role":"user","content":[{"type":"text","text":"\"prompt_cache_breakpoint\": 1"}]}"#;
        assert_eq!(marks_in(quoted_part), 0);
        let run = r#"[{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":[{"type":"input_text","text":"x","prompt_cache_breakpoint":{"mode":"explicit"}}]}]"#;
        assert_eq!(marks_in(run), 1);
        assert_eq!(marks_in("not json"), 0);
        let read = AgentMarks::read([marked, marked].into_iter(), [quoted].into_iter());
        assert_eq!(
            read,
            AgentMarks {
                marks: true,
                on_system: 2
            }
        );
        let none = AgentMarks::read(std::iter::empty(), [quoted, quoted_part].into_iter());
        assert!(!none.marks);
    }
}
