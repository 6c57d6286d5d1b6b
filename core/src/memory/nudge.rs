//! Nudges: reminders that go into the view, never into the log.
//!
//! Two reminders, driven by a small state machine whose state the caller keeps (it belongs to
//! the session, not to one run of a program, so a restart does not reset the counters):
//! - the memory nudge, every N turns (default 10): "save what you learned";
//! - the stall nudge, when K turns (default 10) pass in which the agent acted but changed no
//!   file: fired once, then the count restarts.
//!
//! A change to a file is read from what a call writes, for any agent and any tool name
//! ([`crate::facts::call_shape`]: a patch body, even inside a shell command, a
//! `content`/`new_string`-like argument beside a path, an editor's `create`/`str_replace`, a
//! command that removes files), or from a tool name whose words say it writes, edits, patches
//! or replaces (`write_file`, `MultiEdit`, `str_replace_editor`: an edit tool whose arguments
//! have a shape of their own), never from a list of products' tool names;
//! [`NudgePolicy::progress_tools`] adds names of the caller's own (a tool whose arguments show
//! no file, such as a `commit` or a `deploy`).
//!
//! Both can be tied to the agent's tools ([`NudgePolicy::agent_tools`]): when the caller says
//! which tools its agent has, the stall nudge is off unless one of them changes files (a
//! progress tool, or one whose name says it writes, edits, patches or replaces), and the memory
//! nudge is off unless one of them is a memory tool ([`NudgePolicy::memory_tools`]), so an
//! agent that edits no files is never told it changed none, and one with no memory is never
//! told to save to it.
//!
//! [`advance_nudges`] reads only the entries appended since the previous turn, so its cost
//! does not grow with the log. Nudges are placed at the very end of the view, after any tool
//! results, and since they are never stored, the next turn's view does not contain them.

use serde::{Deserialize, Serialize};

use crate::facts::{call_shape, CallShape, FileAction};
use crate::model::{first_after, Entry};
use crate::model::{Message, Role, ToolCall};

/// When to nudge, and what to say.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default, deny_unknown_fields)]
pub struct NudgePolicy {
    /// Memory nudge every this many turns; 0 turns it off.
    pub memory_every_turns: u32,
    /// Stall nudge after this many turns without a progress tool; 0 turns it off.
    pub stall_after_turns: u32,
    /// Tools whose use counts as progress.
    pub progress_tools: Vec<String>,
    /// Tools that save to long-term memory (default `save_memory`, `memory`, `remember`).
    pub memory_tools: Vec<String>,
    /// The names of the agent's tools, when the caller knows them. `None` (the default): both
    /// nudges run as configured. Given: the stall nudge runs only if one of them is in
    /// [`NudgePolicy::progress_tools`], the memory nudge only if one is in
    /// [`NudgePolicy::memory_tools`].
    pub agent_tools: Option<Vec<String>>,
    /// Text of the memory nudge.
    pub memory_text: String,
    /// Text of the stall nudge; `{turns}` is replaced by the number of turns.
    pub stall_text: String,
}

impl Default for NudgePolicy {
    fn default() -> Self {
        NudgePolicy {
            memory_every_turns: 10,
            stall_after_turns: 10,
            // None: a change to a file is read from the call's arguments, for any agent.
            progress_tools: Vec::new(),
            memory_tools: ["save_memory", "memory", "remember"]
                .map(str::to_owned)
                .to_vec(),
            agent_tools: None,
            memory_text: "<reminder>If you learned something durable in the last turns (a user preference, a project convention, a decision and its reason, a fix that worked), save it to long-term memory now. Skip this if there is nothing new.</reminder>".to_owned(),
            stall_text: "<reminder>{turns} turns have passed without a change to any file. If you are stuck, step back: restate the goal, say what blocks you, and try a different approach or ask the user.</reminder>".to_owned(),
        }
    }
}

impl NudgePolicy {
    /// Whether the agent has one of `tools` (always, when [`NudgePolicy::agent_tools`] is
    /// `None`).
    fn agent_has_any(&self, tools: &[String]) -> bool {
        self.agent_tools
            .as_ref()
            .is_none_or(|agent| agent.iter().any(|tool| tools.contains(tool)))
    }

    /// Turns after which the stall nudge fires, 0 when it is off (configured off, or the
    /// agent has no tool that changes files: no progress tool, and no tool whose name says it
    /// writes, edits, patches or replaces).
    pub fn effective_stall_after_turns(&self) -> u32 {
        let changes_files = self.agent_tools.as_ref().is_none_or(|agent| {
            agent
                .iter()
                .any(|tool| self.progress_tools.contains(tool) || names_a_file_change(tool))
        });
        if changes_files {
            self.stall_after_turns
        } else {
            0
        }
    }

    /// Turns between memory nudges, 0 when it is off (configured off, or the agent has no
    /// memory tool).
    pub fn effective_memory_every_turns(&self) -> u32 {
        if self.agent_has_any(&self.memory_tools) {
            self.memory_every_turns
        } else {
            0
        }
    }
}

/// The session's nudge counters. Returned to the caller each turn; never stored in the log.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default, deny_unknown_fields)]
pub struct NudgeState {
    /// Turns completed in this session.
    pub turn: u64,
    /// The last log `seq` seen by the previous turn.
    pub last_seq: Option<u64>,
    /// Turns in a row in which the agent acted without a progress tool.
    pub turns_without_progress: u32,
}

/// Which reminder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum NudgeKind {
    /// Save durable facts to memory.
    Memory,
    /// No progress for a while.
    Stall,
}

crate::model::unit_enum::unit_enum_deserialize!(
    NudgeKind,
    "NudgeKind",
    [Memory = "memory", Stall = "stall"]
);

/// The nudges of this turn and the state for the next one.
#[derive(Debug, Clone, PartialEq)]
pub struct NudgeOutcome {
    /// Messages to append at the end of the view, in order.
    pub messages: Vec<Message>,
    /// Which nudges they are.
    pub kinds: Vec<NudgeKind>,
    /// The state to pass in next turn.
    pub next: NudgeState,
}

/// Advances the nudge state by one turn, given the log (only entries after `state.last_seq`
/// are read, found by binary search).
///
/// ```
/// use ctxkit_core::memory::{advance_nudges, NudgeKind, NudgePolicy, NudgeState};
///
/// let policy = NudgePolicy { memory_every_turns: 2, ..NudgePolicy::default() };
/// let first = advance_nudges(&NudgeState::default(), &[], &policy);
/// assert!(first.kinds.is_empty());
/// let second = advance_nudges(&first.next, &[], &policy);
/// assert_eq!(second.kinds, vec![NudgeKind::Memory]);
/// assert_eq!(second.next.turn, 2);
/// ```
pub fn advance_nudges(state: &NudgeState, log: &[Entry], policy: &NudgePolicy) -> NudgeOutcome {
    let new = log
        .get(first_after(log, state.last_seq)..)
        .unwrap_or_default();
    let acted = new
        .iter()
        .any(|entry| entry.message.role == Role::Assistant);
    let progressed = new
        .iter()
        .flat_map(|entry| &entry.message.tool_calls)
        .any(|call| {
            policy.progress_tools.contains(&call.name)
                || names_a_file_change(&call.name)
                || changes_a_file(call)
        });

    let turn = state.turn.saturating_add(1);
    let mut without_progress = if progressed {
        0
    } else if acted {
        state.turns_without_progress.saturating_add(1)
    } else {
        state.turns_without_progress
    };

    let mut kinds = Vec::new();
    let mut messages = Vec::new();
    let memory_every = policy.effective_memory_every_turns();
    let stall_after = policy.effective_stall_after_turns();
    if memory_every > 0 && turn % u64::from(memory_every) == 0 {
        kinds.push(NudgeKind::Memory);
        messages.push(Message::user(policy.memory_text.clone()));
    }
    if stall_after > 0 && without_progress >= stall_after {
        kinds.push(NudgeKind::Stall);
        messages.push(Message::user(
            policy
                .stall_text
                .replace("{turns}", &without_progress.to_string()),
        ));
        without_progress = 0;
    }
    NudgeOutcome {
        messages,
        kinds,
        next: NudgeState {
            turn,
            last_seq: new.last().map(|entry| entry.seq).or(state.last_seq),
            turns_without_progress: without_progress,
        },
    }
}

/// Whether `call`'s arguments show it changed a file: wrote, edited, made or removed one (a
/// read, a search or a command that touches no file is no change).
fn changes_a_file(call: &ToolCall) -> bool {
    match call_shape(&call.name, &call.arguments) {
        Some(CallShape::Files(files)) => {
            files.iter().any(|(_, action)| *action != FileAction::Read)
        }
        Some(CallShape::Command { removed, .. }) => !removed.is_empty(),
        None => false,
    }
}

/// The verbs whose word in a tool's name says it changes files (`write_file`, `Edit`,
/// `MultiEdit`, `str_replace_editor`, `apply_patch`): what the agent's tool list can say
/// before any call shows it.
const FILE_CHANGE_WORDS: [&str; 5] = ["write", "edit", "editor", "patch", "replace"];

/// Whether a word of `tool`'s name (split at `_`, `-`, `.` and lower-to-upper case changes)
/// is one of [`FILE_CHANGE_WORDS`].
fn names_a_file_change(tool: &str) -> bool {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut previous_lower = false;
    for c in tool.chars() {
        let boundary = !c.is_alphanumeric() || (c.is_uppercase() && previous_lower);
        if boundary && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        if c.is_alphanumeric() {
            word.extend(c.to_lowercase());
        }
        previous_lower = c.is_lowercase();
    }
    words.push(word);
    words
        .iter()
        .any(|word| FILE_CHANGE_WORDS.contains(&word.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ToolCall;
    use crate::tokens::ModelFamily;

    fn turn_with(tool: &str, seq: u64) -> Entry {
        Entry::new(
            seq,
            Message::assistant("", vec![ToolCall::new(format!("c{seq}"), tool, "{}")]),
            ModelFamily::OpenAi,
        )
    }

    #[test]
    fn stall_fires_once_after_k_idle_turns_then_restarts() {
        let policy = NudgePolicy {
            memory_every_turns: 0,
            stall_after_turns: 3,
            ..NudgePolicy::default()
        };
        let mut state = NudgeState::default();
        let mut log = Vec::new();
        let mut fired = Vec::new();
        for seq in 1..=8u64 {
            log.push(turn_with(if seq == 5 { "edit_file" } else { "bash" }, seq));
            let outcome = advance_nudges(&state, &log, &policy);
            if outcome.kinds.contains(&NudgeKind::Stall) {
                fired.push(seq);
            }
            state = outcome.next;
        }
        // idle 1,2,3 → fire at 3; 4 idle; 5 progress resets; 6,7,8 idle → fire at 8.
        assert_eq!(fired, vec![3, 8]);
        assert_eq!(state.last_seq, Some(8));
    }

    #[test]
    fn nudges_follow_the_agents_tools() {
        let policy = NudgePolicy {
            memory_every_turns: 1,
            stall_after_turns: 1,
            agent_tools: Some(vec!["search_flights".to_owned(), "book_hotel".to_owned()]),
            ..NudgePolicy::default()
        };
        let log = [turn_with("search_flights", 1)];
        let outcome = advance_nudges(&NudgeState::default(), &log, &policy);
        assert!(outcome.kinds.is_empty(), "no file or memory tool: no nudge");
        let with_both = NudgePolicy {
            agent_tools: Some(vec!["edit_file".to_owned(), "save_memory".to_owned()]),
            ..policy
        };
        let outcome = advance_nudges(&NudgeState::default(), &log, &with_both);
        assert_eq!(outcome.kinds, vec![NudgeKind::Memory, NudgeKind::Stall]);
    }

    #[test]
    fn a_change_to_a_file_is_progress_whatever_the_tool_is_named() {
        let policy = NudgePolicy {
            memory_every_turns: 0,
            stall_after_turns: 1,
            ..NudgePolicy::default()
        };
        let call = |tool: &str, arguments: serde_json::Value| {
            let message =
                Message::assistant("", vec![ToolCall::new("c1", tool, arguments.to_string())]);
            let log = [Entry::new(1, message, ModelFamily::OpenAi)];
            advance_nudges(&NudgeState::default(), &log, &policy).kinds
        };
        let patch = "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: src/a.ts\n@@\n-a\n+b\n*** End Patch\nEOF";
        // Codex's shell running a patch, a framework's tools writing and changing a file.
        assert!(call(
            "shell",
            serde_json::json!({"command": ["bash", "-lc", patch]})
        )
        .is_empty());
        assert!(call(
            "save_note",
            serde_json::json!({"path": "notes/a.md", "content": "x"})
        )
        .is_empty());
        assert!(call(
            "modify",
            serde_json::json!({"path": "a.rs", "oldText": "a", "newText": "b"})
        )
        .is_empty());
        assert!(call(
            "shell",
            serde_json::json!({"command": "rm -f build/out.txt"})
        )
        .is_empty());
        // A read, a search and a command that changes no file are no progress.
        for (tool, arguments) in [
            ("read", serde_json::json!({"path": "a.rs"})),
            ("grep", serde_json::json!({"pattern": "x", "path": "src"})),
            (
                "shell",
                serde_json::json!({"command": ["bash", "-lc", "cargo test"]}),
            ),
        ] {
            assert_eq!(call(tool, arguments), vec![NudgeKind::Stall], "{tool}");
        }
        // The caller's own progress tool counts by its name.
        let deploy = NudgePolicy {
            progress_tools: vec!["deploy".to_owned()],
            ..policy.clone()
        };
        let log = [turn_with("deploy", 1)];
        assert!(advance_nudges(&NudgeState::default(), &log, &deploy)
            .kinds
            .is_empty());
    }

    #[test]
    fn an_agents_edit_tools_are_known_by_the_words_of_their_names() {
        for tool in [
            "write_file",
            "Edit",
            "MultiEdit",
            "NotebookEdit",
            "str_replace_editor",
            "apply_patch",
            "edit",
        ] {
            assert!(names_a_file_change(tool), "{tool}");
        }
        for tool in [
            "shell",
            "read_file",
            "update_reservation",
            "credit",
            "rewrite_query",
            "Bash",
        ] {
            assert!(!names_a_file_change(tool), "{tool}");
        }
        let policy = |tools: &[&str]| NudgePolicy {
            agent_tools: Some(tools.iter().map(|t| (*t).to_owned()).collect()),
            ..NudgePolicy::default()
        };
        assert_eq!(
            policy(&["shell", "apply_patch"]).effective_stall_after_turns(),
            10
        );
        assert_eq!(policy(&["search_flights"]).effective_stall_after_turns(), 0);
        let own = NudgePolicy {
            progress_tools: vec!["deploy".to_owned()],
            ..policy(&["deploy"])
        };
        assert_eq!(own.effective_stall_after_turns(), 10);
    }

    #[test]
    fn turns_without_new_actions_do_not_count_as_idle() {
        let policy = NudgePolicy {
            memory_every_turns: 0,
            stall_after_turns: 1,
            ..NudgePolicy::default()
        };
        let log = [Entry::new(1, Message::user("hi"), ModelFamily::OpenAi)];
        let outcome = advance_nudges(&NudgeState::default(), &log, &policy);
        assert!(outcome.kinds.is_empty());
        assert_eq!(outcome.next.turns_without_progress, 0);
    }
}
