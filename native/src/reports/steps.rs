//! A conversation as the steps an agent loop takes: what arrived since the last model call,
//! then the model's reply and the results of its tool calls. Replaying the steps through an
//! engine gives the session the agent would have had under ctxkit.

use std::path::Path;

use ctxkit_core::{Message, Role};

use crate::{Engine, Result};

/// One agent step: what arrived since the last step, the model's reply, and the results of
/// its tool calls.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// Messages recorded before the turn is prepared (user messages, anything not answering a
    /// call).
    pub inputs: Vec<Message>,
    /// The assistant's reply and the tool results right after it (empty for trailing inputs).
    pub reply: Vec<Message>,
}

/// Splits a conversation at each assistant message: a step is what came before it (user
/// messages and anything else not answering a call), then the reply and the tool results right
/// after it. Trailing messages after the last reply make a step with no reply.
pub fn split_steps(messages: Vec<Message>) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut open: Option<Step> = None;
    let mut pending = Vec::new();
    for message in messages {
        match (message.role, open.as_mut()) {
            (Role::Assistant, _) => {
                steps.extend(open.take());
                open = Some(Step {
                    inputs: std::mem::take(&mut pending),
                    reply: vec![message],
                });
            }
            (Role::Tool, Some(step)) if pending.is_empty() => step.reply.push(message),
            _ => pending.push(message),
        }
    }
    steps.extend(open);
    if !pending.is_empty() {
        steps.push(Step {
            inputs: pending,
            reply: Vec::new(),
        });
    }
    steps
}

/// Plays `steps` into `session` as an agent loop would: each step's inputs recorded, the turn
/// prepared, the reply recorded.
pub fn play_steps(engine: &mut Engine, session: &str, steps: Vec<Step>) -> Result<()> {
    for step in steps {
        if !step.inputs.is_empty() {
            engine.record(session, step.inputs)?;
        }
        engine.prepare_turn(session)?;
        if !step.reply.is_empty() {
            engine.record(session, step.reply)?;
        }
    }
    Ok(())
}

/// A short session name for a transcript file: its stem, at most 40 characters, anything but
/// ASCII letters, digits, `-` and `_` written as `-` (`file` when the path has no stem).
pub fn session_stem(path: &Path) -> String {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".to_owned());
    stem.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .take(40)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ctxkit_core::ToolCall;

    #[test]
    fn steps_split_at_each_assistant_message() {
        let messages = vec![
            Message::text(Role::System, "sys"),
            Message::user("go"),
            Message::assistant("", vec![ToolCall::new("a", "ls", "{}")]),
            Message::tool_result("a", "x", false),
            Message::user("more"),
            Message::assistant("done", vec![]),
            Message::user("trailing"),
        ];
        let steps = split_steps(messages);
        let shape: Vec<(usize, usize)> = steps
            .iter()
            .map(|s| (s.inputs.len(), s.reply.len()))
            .collect();
        assert_eq!(shape, vec![(2, 2), (1, 1), (1, 0)]);
    }

    #[test]
    fn a_stem_keeps_safe_characters_and_40_of_them() {
        assert_eq!(session_stem(Path::new("/x/my file.v2.jsonl")), "my-file-v2");
        assert_eq!(session_stem(Path::new("/")), "file");
        let long = format!("/t/{}.json", "é".repeat(50));
        assert_eq!(session_stem(Path::new(&long)), "-".repeat(40));
    }
}
