//! The system prompt's `## Conversation History` section: how to get back what a summary left
//! out. [`crate::prompt::build_system_prompt`] adds it when [`crate::PromptParts`] says
//! `history_guidance` (a shell sets it once the session has a checkpoint, so a session that was
//! never compacted pays nothing for it).

use super::tools::{READ_HISTORY, SEARCH_HISTORY};

/// The section's heading.
pub const HISTORY_HEADING: &str = "## Conversation History";

/// Whether a session's prompt carries the section: once a checkpoint (`latest_checkpoint`, its
/// `through_seq`) stands in for part of the log; before, everything is in the view.
pub fn wants_history_guidance(latest_checkpoint: Option<u64>) -> bool {
    latest_checkpoint.is_some()
}

/// The section: its heading, then how to use `search_history` and `read_history`.
pub fn history_section() -> String {
    format!(
        "{HISTORY_HEADING}\n\
         Earlier parts of this conversation were replaced by a summary to fit the context, but \
         the full log is kept and every message in it has a number (seq). When you need an exact \
         detail the summary leaves out (a file path, an error message, a command and its output, \
         the user's words), call `{SEARCH_HISTORY}` with a short, distinctive piece of the text \
         you remember (it matches case-insensitively, inside words too), then `{READ_HISTORY}` \
         with the seqs around a hit to see those messages whole. Look it up rather than guessing \
         or running the tools again."
    )
}
