//! The agent's todo list, as the caller passes it, and its `Active Tasks` rendering.
//!
//! When a compaction happens, the pending and in-progress items are written into the checkpoint
//! as an `## Active Tasks` section at the end of the summary message, as the reference design
//! does, so the model does not lose its plan with the history. The section is frozen into the
//! checkpoint (not recomputed every turn) so the summary message, which sits near the start of
//! the view, stays byte-identical and the provider's prompt cache keeps hitting.

use serde::{Deserialize, Serialize};

/// Where a todo item stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Done.
    Completed,
}

crate::model::unit_enum::unit_enum_deserialize!(
    TodoStatus,
    "TodoStatus",
    [
        Pending = "pending",
        InProgress = "in_progress",
        Completed = "completed"
    ]
);

/// One item of the agent's todo list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TodoItem {
    /// What is to be done.
    pub content: String,
    /// Where it stands.
    pub status: TodoStatus,
}

/// The `## Active Tasks` section for `todos`: in-progress items first, then pending, in list
/// order; `None` when nothing is active.
pub fn render_active_tasks(todos: &[TodoItem]) -> Option<String> {
    let line = |item: &TodoItem, mark: &str| format!("- [{mark}] {}\n", one_line(&item.content));
    let in_progress = todos
        .iter()
        .filter(|t| t.status == TodoStatus::InProgress)
        .map(|t| line(t, "in progress"));
    let pending = todos
        .iter()
        .filter(|t| t.status == TodoStatus::Pending)
        .map(|t| line(t, "pending"));
    let items: String = in_progress.chain(pending).collect();
    (!items.is_empty()).then(|| format!("## Active Tasks\n{items}"))
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_active_items_in_progress_first() {
        let todos = [
            TodoItem {
                content: "write tests".into(),
                status: TodoStatus::Pending,
            },
            TodoItem {
                content: "read code".into(),
                status: TodoStatus::Completed,
            },
            TodoItem {
                content: "fix\nparser".into(),
                status: TodoStatus::InProgress,
            },
        ];
        assert_eq!(
            render_active_tasks(&todos).as_deref(),
            Some("## Active Tasks\n- [in progress] fix parser\n- [pending] write tests\n")
        );
        assert_eq!(render_active_tasks(&todos[1..2]), None);
    }
}
