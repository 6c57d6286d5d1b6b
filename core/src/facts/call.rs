//! What one tool call did, read from the shape of its arguments, for any agent: a patch
//! body anywhere in them (the files it changes), a shell-like command (see
//! [`super::command`]), or a path-like argument with the strings a call writes (`content`,
//! `file_text`: written; `old_string`/`new_string`, `oldText`/`newText`, `edits`: edited), an
//! editor's sub-command beside a path (`view`, `create`, `str_replace`…), or a path alone (a
//! read, unless the call also searches: `pattern`, `query`, `glob`…). A tool's name is read
//! for one thing only, the verb of a path-only call: one whose name says it deletes
//! (`delete_file`, `remove`), creates (`create`, `touch`) or lists (`ls`, `list_dir`) is no
//! read. So Claude Code's `Read`/`Edit`/`Write`,
//! pi's `read`/`edit`/`write`/`bash`, Codex's `shell` and `apply_patch`, OpenHands'
//! `str_replace_editor` and a framework's `save_note(path, content)` are read alike.

use super::command::{read_paths, removed_paths, shell_command, ShellCommand};
use super::patch::{is_patch, patch_files};
use super::paths::{is_path_key, looks_like_path, names_a_file, normalized_key};
use super::FileAction;

/// What a call did, as its arguments show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallShape {
    /// It changed or read these files (paths as written; a relative path under the call's own
    /// `workdir` already joined to it).
    Files(Vec<(String, FileAction)>),
    /// It ran a command.
    Command {
        /// The command and the folder it ran in.
        command: ShellCommand,
        /// The files it removed (`rm`), joined to its folder like [`CallShape::Files`].
        removed: Vec<String>,
        /// The files it only printed (`cat a`, `sed -n 1,80p a`): a read of each.
        read: Vec<String>,
    },
}

/// Keys of the text an edit replaces or inserts (compared as [`normalized_key`] gives them).
const EDIT_KEYS: [&str; 16] = [
    "old",
    "new",
    "oldstring",
    "newstring",
    "oldstr",
    "newstr",
    "oldtext",
    "newtext",
    "edits",
    "newsource",
    "replacement",
    "replace",
    "insertline",
    "diff",
    "oldcontent",
    "newcontent",
];

/// Keys of the whole text a call writes to its path.
const CONTENT_KEYS: [&str; 6] = ["content", "contents", "filetext", "text", "data", "body"];

/// Keys of what a call looks for: with one, a path is where it searches, not what it reads.
const SEARCH_KEYS: [&str; 7] = [
    "pattern", "query", "regex", "glob", "include", "search", "q",
];

/// What a call of `tool` with `arguments` (JSON text, or a raw patch body) did, `None` when
/// its shape says nothing about files or commands.
pub fn call_shape(tool: &str, arguments: &str) -> Option<CallShape> {
    let object = match serde_json::from_str::<serde_json::Value>(arguments) {
        Ok(serde_json::Value::Object(object)) => object,
        _ if is_patch(arguments) => {
            let files = patch_files(arguments);
            return (!files.is_empty()).then_some(CallShape::Files(files));
        }
        _ => return None,
    };
    let command = shell_command(&object);
    let workdir = command.as_ref().and_then(|c| c.workdir.clone());
    let under_workdir = |path: String| join(workdir.as_deref(), path);
    if let Some(body) = patch_body(&object) {
        let files: Vec<(String, FileAction)> = patch_files(&body)
            .into_iter()
            .map(|(path, action)| (under_workdir(path), action))
            .collect();
        return (!files.is_empty()).then_some(CallShape::Files(files));
    }
    if let Some(command) = command {
        let removed = removed_paths(&command.script)
            .into_iter()
            .map(under_workdir)
            .collect();
        let read = read_paths(&command.script)
            .into_iter()
            .map(under_workdir)
            .collect();
        return Some(CallShape::Command {
            command,
            removed,
            read,
        });
    }
    let (_, path) =
        object
            .iter()
            .filter(|(key, _)| is_path_key(key))
            .find_map(|(key, value)| {
                value
                    .as_str()
                    .filter(|p| looks_like_path(p))
                    .map(|p| (key, p))
            })?;
    let keys: Vec<String> = object.keys().map(|key| normalized_key(key)).collect();
    let has = |list: &[&str]| keys.iter().any(|key| list.contains(&key.as_str()));
    let sub = object
        .get("command")
        .and_then(|v| v.as_str())
        .unwrap_or_default();
    let action = match sub {
        "view" | "read" | "open" | "show" => FileAction::Read,
        "create" | "write" | "new" => FileAction::Created,
        "delete" | "remove" | "rm" => FileAction::Deleted,
        _ if has(&EDIT_KEYS) => FileAction::Edited,
        _ if has(&CONTENT_KEYS) => FileAction::Written,
        // `str_replace`, `insert`, `undo_edit`, `append`: an editor's change without its text.
        _ if ["replace", "insert", "edit", "undo", "append", "patch"]
            .iter()
            .any(|verb| sub.contains(verb)) =>
        {
            FileAction::Edited
        }
        _ if says(tool, &["delete", "remove", "unlink"]) => FileAction::Deleted,
        // SWE-agent's `create` takes a file name alone and makes it empty.
        _ if says(tool, &["create", "touch"]) => FileAction::Created,
        _ if has(&SEARCH_KEYS) || says(tool, &["list", "ls", "dir", "glob", "search", "find"]) => {
            return None
        }
        _ if names_a_file(path) => FileAction::Read,
        _ => return None,
    };
    Some(CallShape::Files(vec![(path.to_owned(), action)]))
}

/// A patch body in any string argument (or an argv's elements).
fn patch_body(object: &serde_json::Map<String, serde_json::Value>) -> Option<String> {
    object.values().find_map(|value| {
        let text = match value {
            serde_json::Value::String(text) => text.clone(),
            serde_json::Value::Array(items) => items
                .iter()
                .filter_map(|v| v.as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            _ => return None,
        };
        is_patch(&text).then_some(text)
    })
}

/// Whether the words of a tool's name (split at `_`, `-`, `.`, case changes) include one of
/// `verbs`: `delete_file`, `deleteFile` and `fs.delete` say `delete`.
fn says(tool: &str, verbs: &[&str]) -> bool {
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut previous_lower = false;
    for c in tool.chars() {
        let boundary =
            matches!(c, '_' | '-' | '.' | ':' | ' ') || c.is_uppercase() && previous_lower;
        if boundary && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        if c.is_alphanumeric() {
            word.push(c.to_ascii_lowercase());
        }
        previous_lower = c.is_lowercase();
    }
    words.push(word);
    words.iter().any(|w| verbs.contains(&w.as_str()))
}

/// `path` under `workdir` when it is relative and the call ran elsewhere than `.`.
fn join(workdir: Option<&str>, path: String) -> String {
    match workdir {
        Some(dir) if !path.starts_with('/') && !path.starts_with('~') && dir != "." => {
            format!(
                "{}/{}",
                dir.trim_end_matches('/'),
                path.trim_start_matches("./")
            )
        }
        _ => path,
    }
}
