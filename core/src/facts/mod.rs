//! Facts recognised by their shape: which words are file paths, what a tool call did (the
//! files it read, wrote, edited or deleted, the command it ran and where), which names a file's
//! code imports and defines ([`code_names`]), for any agent, any language and any tool names.
//! Claude Code, Codex (`shell` with an argv and a `workdir`, `apply_patch` bodies), pi (`read`,
//! `write`, `edit`, `bash`), OpenHands' and SWE-agent's editors and a framework's own tools
//! are told apart by their arguments, never by a product's list of tool names.
//!
//! Below compaction: the extractive summary, the restore block and the working-directory
//! guess read calls through here; this module imports nothing of the layers. Every function
//! is pure and total: text inside a message is data (a message that quotes ctxkit's own
//! markup or a patch envelope is read as any other text), and no input panics.

mod call;
mod code_names;
mod command;
mod file_names;
mod patch;
mod paths;
mod run_directory;

pub use call::{call_shape, CallShape};
pub use code_names::{code_names, strings_in};
pub use command::{read_paths, removed_paths, shell_command, ShellCommand};
pub(crate) use file_names::is_known_extension;
pub use patch::{is_patch, patch_files};
pub use paths::{file_paths_in_arguments, paths_in_text};
pub use run_directory::stated_run_directory;

/// What a call did to a file, in the order a summary lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum FileAction {
    /// Read it (its result is the file's content).
    Read,
    /// Made it.
    Created,
    /// Wrote its whole content.
    Written,
    /// Changed part of it.
    Edited,
    /// Removed it.
    Deleted,
}

#[cfg(test)]
mod tests;
