//! The session's working directory, as the log shows it, and paths written relative to it.
//!
//! A transcript rarely says where the agent ran, but its absolute paths do: the directory
//! [`working_directory`] returns is the deepest one that at least four in five of the absolute
//! paths in tool-call arguments lie under (one component deep only when it is not a system
//! directory: a sandbox's `/workspace` is taken, `/home` or `/tmp` alone never). Both the extractive summary (which writes paths relative to it, once each)
//! and the needed-next measure (which treats a path and its relative form as the same fact)
//! use it. Deterministic: the same log gives the same directory.

use std::collections::BTreeMap;

use crate::compaction::extractive::{file_paths_in_arguments, is_known_extension};
use crate::model::{Message, Role};
use crate::text::harness_working_directory;

/// The directory the harness last says the agent runs in (a user message's
/// `<environment_context>` block, [`harness_working_directory`]), else the one most absolute
/// paths of the log's tool calls lie under, with no trailing `/` (`None` when the calls name
/// fewer than three absolute paths or they share no directory but a system one such as
/// `/home`).
///
/// ```
/// use ctxkit_core::compaction::working_directory;
/// use ctxkit_core::{Message, ToolCall};
/// let read = |id: &str, path: &str| Message::assistant("", vec![ToolCall::new(id, "Read", format!(r#"{{"file_path":"{path}"}}"#))]);
/// let log = [read("1", "/home/ada/app/lib/a.ex"), read("2", "/home/ada/app/lib/b.ex"), read("3", "/home/ada/app/mix.exs")];
/// assert_eq!(working_directory(&log).as_deref(), Some("/home/ada/app"));
/// ```
pub fn working_directory(messages: &[Message]) -> Option<String> {
    let stated = messages
        .iter()
        .rev()
        .filter(|message| message.role == Role::User)
        .find_map(|message| harness_working_directory(&message.text_content()).map(str::to_owned));
    if stated.is_some() {
        return stated;
    }
    inferred_working_directory(messages)
}

/// The directory at least four in five of the absolute paths of the log's tool calls lie
/// under (see [`working_directory`]).
fn inferred_working_directory(messages: &[Message]) -> Option<String> {
    let mut absolute = 0usize;
    let mut under: BTreeMap<String, usize> = BTreeMap::new();
    for message in messages {
        for call in &message.tool_calls {
            for path in file_paths_in_arguments(&call.arguments) {
                if !path.starts_with('/') {
                    continue;
                }
                absolute += 1;
                let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
                // Every proper ancestor directory of the path (not a system one directly
                // under `/`), and the path itself when it names a directory (`cd /w`, or
                // `/w/repo__0.1`: no file extension).
                let is_dir = parts.last().is_some_and(|last| {
                    last.rsplit_once('.')
                        .is_none_or(|(_, ext)| !is_known_extension(ext))
                });
                let deepest = if is_dir {
                    parts.len()
                } else {
                    parts.len().saturating_sub(1)
                };
                for depth in 1..=deepest {
                    if depth == 1 && parts.first().is_some_and(|top| is_system_root(top)) {
                        continue;
                    }
                    let dir = format!("/{}", parts.get(..depth).unwrap_or_default().join("/"));
                    *under.entry(dir).or_default() += 1;
                }
            }
        }
    }
    if absolute < 3 {
        return None;
    }
    under
        .into_iter()
        .filter(|(_, count)| count * 5 >= absolute * 4)
        .max_by_key(|(dir, _)| dir.matches('/').count())
        .map(|(dir, _)| dir)
}

/// Top-level directories that hold many users' or the system's files, never one project
/// (`/home`, `/tmp`): a working directory directly under `/` is taken only when it is not one
/// of these (a sandbox's `/workspace` or `/testbed` is).
const SYSTEM_ROOTS: &[&str] = &[
    "Applications",
    "Library",
    "System",
    "Users",
    "Volumes",
    "bin",
    "boot",
    "dev",
    "etc",
    "home",
    "lib",
    "lib32",
    "lib64",
    "media",
    "mnt",
    "nix",
    "opt",
    "private",
    "proc",
    "root",
    "run",
    "sbin",
    "snap",
    "srv",
    "sys",
    "tmp",
    "usr",
    "var",
];

fn is_system_root(name: &str) -> bool {
    SYSTEM_ROOTS.contains(&name)
}

/// `path` relative to `workdir` when it lies under it (`/w/src/a.rs` → `src/a.rs`), else as
/// given.
pub fn relative_to(path: &str, workdir: Option<&str>) -> String {
    workdir
        .and_then(|dir| path.strip_prefix(dir))
        .and_then(|rest| rest.strip_prefix('/'))
        .filter(|rest| !rest.is_empty())
        .map_or_else(|| path.to_owned(), str::to_owned)
}

/// How a summary states the directory its relative paths are under (one line, the directory
/// in backticks): [`declared_working_directory`] reads it back, so a path a summary writes
/// relative still counts as held (pinned facts, the needed-next measure) and the next summary
/// keeps the same base.
pub const WORKDIR_LABEL: &str = "Working directory: `";

/// The line that states `dir` as the summary's working directory.
pub(crate) fn workdir_line(dir: &str) -> String {
    format!("{WORKDIR_LABEL}{dir}` (the paths below are relative to it)")
}

/// The working directory `summary` states on a line of its own, if any.
///
/// ```
/// use ctxkit_core::compaction::declared_working_directory;
/// let summary = "## Files\nWorking directory: `/home/ada/app` (the paths below are relative to it)\n- `lib/a.ex`: read";
/// assert_eq!(declared_working_directory(summary), Some("/home/ada/app"));
/// assert_eq!(declared_working_directory("- Working directory: `/x`"), None);
/// ```
pub fn declared_working_directory(summary: &str) -> Option<&str> {
    summary
        .lines()
        .find_map(|line| line.strip_prefix(WORKDIR_LABEL))
        .and_then(|rest| rest.split('`').next())
        .filter(|dir| dir.starts_with('/') && dir.len() > 1 && !dir.ends_with('/'))
}

/// Whether `text` runs `cd` (at its start, after a shell separator or an opening backtick).
fn changes_directory(text: &str) -> bool {
    text.match_indices("cd ").any(|(at, _)| {
        text.get(..at)
            .unwrap_or_default()
            .trim_end()
            .chars()
            .next_back()
            .is_none_or(|c| matches!(c, '&' | ';' | '|' | '(' | '`' | '\n'))
    })
}

/// `text` with every absolute path under `workdir` written relative to it
/// (`cat /w/src/a.rs` → `cat src/a.rs`; `/w/` alone → `./`), and a leading `cd /w && ` (or
/// `;`) dropped: what a summary writes, so no path under the working directory is spelled out
/// in full. A `/w` that is a suffix of a longer path (`/x/w/a`) is left alone, and so is a
/// text that then changes directory (`cd /x && /w/run`: `run` alone would be read from `/x`).
pub fn relativize_text(text: &str, workdir: Option<&str>) -> String {
    let Some(dir) = workdir.filter(|dir| dir.len() > 1) else {
        return text.to_owned();
    };
    let mut text = text;
    for separator in [" && ", "; ", " ; "] {
        let cd = format!("cd {dir}{separator}");
        if let Some(rest) = text.strip_prefix(cd.as_str()) {
            text = rest;
            break;
        }
    }
    if changes_directory(text) {
        // After `cd /elsewhere`, a relative path would be read from there: keep every path
        // as written.
        return text.to_owned();
    }
    let prefix = format!("{dir}/");
    let path_char =
        |c: char| c.is_alphanumeric() || matches!(c, '/' | '.' | '_' | '-' | '~' | '@' | '+');
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(prefix.as_str()) {
        let before = rest.get(..at).unwrap_or_default();
        let after = rest.get(at + prefix.len()..).unwrap_or_default();
        out.push_str(before);
        if before.chars().next_back().is_some_and(path_char) {
            // Inside a longer path: not under the working directory.
            out.push_str(&prefix);
        } else if !after.starts_with(path_char) {
            out.push_str("./");
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ToolCall;

    #[test]
    fn a_stray_path_outside_does_not_move_the_directory_and_too_few_give_none() {
        let read = |id: &str, path: &str| {
            Message::assistant(
                "",
                vec![ToolCall::new(
                    id,
                    "Read",
                    format!(r#"{{"file_path":"{path}"}}"#),
                )],
            )
        };
        let mut log: Vec<Message> = (0..8)
            .map(|i| read(&i.to_string(), &format!("/home/u/proj/src/m{i}.rs")))
            .collect();
        log.push(read("x", "/home/u/.claude/settings.json"));
        assert_eq!(working_directory(&log).as_deref(), Some("/home/u/proj/src"));
        log.push(read("y", "/home/u/proj/Cargo.toml"));
        log.push(read("z", "/home/u/proj/README.md"));
        assert_eq!(working_directory(&log).as_deref(), Some("/home/u/proj"));
        assert_eq!(working_directory(&log[..2]), None);
        assert_eq!(
            relative_to("/home/u/proj/a.rs", Some("/home/u/proj")),
            "a.rs"
        );
        assert_eq!(
            relative_to("/home/u/projx/a.rs", Some("/home/u/proj")),
            "/home/u/projx/a.rs"
        );
        assert_eq!(
            relative_to("/home/u/proj", Some("/home/u/proj")),
            "/home/u/proj"
        );
        assert_eq!(relative_to("a.rs", None), "a.rs");
        let dir = Some("/w/app");
        assert_eq!(
            relativize_text("cd /w/app && cat /w/app/a.rs", dir),
            "cat a.rs"
        );
        for elsewhere in ["cd /w && /w/app/bin/run", "make; cd /w && /w/app/bin/run"] {
            assert_eq!(relativize_text(elsewhere, dir), elsewhere);
        }
        assert_eq!(relativize_text("abcd /w/app/a.rs", dir), "abcd a.rs");
    }

    #[test]
    fn the_directory_a_harness_states_is_taken_the_latest_first() {
        let context = |dir: &str| {
            Message::user(format!(
                "<environment_context>\n  <cwd>{dir}</cwd>\n  <shell>zsh</shell>\n</environment_context>"
            ))
        };
        let read = |id: &str, path: &str| {
            Message::assistant(
                "",
                vec![ToolCall::new(
                    id,
                    "Read",
                    format!(r#"{{"file_path":"{path}"}}"#),
                )],
            )
        };
        let mut log = vec![context("/Users/ada/app")];
        assert_eq!(working_directory(&log).as_deref(), Some("/Users/ada/app"));
        // Paths the calls name do not outvote what the harness states.
        log.extend((0..4).map(|i| read(&i.to_string(), &format!("/srv/x/m{i}.rs"))));
        assert_eq!(working_directory(&log).as_deref(), Some("/Users/ada/app"));
        log.push(context("/Users/ada/other"));
        assert_eq!(working_directory(&log).as_deref(), Some("/Users/ada/other"));
        // A user quoting the element in a sentence states nothing.
        let quoted = [Message::user(
            "why <environment_context><cwd>/etc</cwd></environment_context>?",
        )];
        assert_eq!(working_directory(&quoted), None);
    }

    #[test]
    fn a_sandbox_directory_under_the_root_is_taken_a_system_one_never() {
        let run = |id: &str, command: &str| {
            Message::assistant(
                "",
                vec![ToolCall::new(
                    id,
                    "execute_bash",
                    serde_json::json!({ "command": command }).to_string(),
                )],
            )
        };
        let edit = |id: &str, path: &str| {
            Message::assistant(
                "",
                vec![ToolCall::new(
                    id,
                    "str_replace_editor",
                    serde_json::json!({ "path": path }).to_string(),
                )],
            )
        };
        // The OpenHands trajectory's shape: the repository folder ends in `.1`, the agent
        // also works in /workspace itself.
        let log = [
            edit("1", "/workspace/ponyc__0.1/src/parser.c"),
            edit("2", "/workspace/ponyc__0.1/src/parser.c"),
            run("3", "cd /workspace && ./ponyc__0.1/ponyc test.pony"),
            edit("4", "/workspace/test.c"),
            run("5", "ls -l /workspace/ponyc__0.1"),
        ];
        assert_eq!(working_directory(&log).as_deref(), Some("/workspace"));
        let repo = [
            edit("1", "/workspace/ponyc__0.1/src/parser.c"),
            edit("2", "/workspace/ponyc__0.1/src/lexer.c"),
            run("3", "ls -l /workspace/ponyc__0.1"),
        ];
        assert_eq!(
            working_directory(&repo).as_deref(),
            Some("/workspace/ponyc__0.1")
        );
        for root in ["/home", "/tmp", "/Users"] {
            let scattered = [
                edit("1", &format!("{root}/ada/a.rs")),
                edit("2", &format!("{root}/bob/b.rs")),
                edit("3", &format!("{root}/cy/c.rs")),
            ];
            assert_eq!(working_directory(&scattered), None, "{root}");
        }
    }

    #[test]
    fn text_is_written_relative_to_the_working_directory() {
        let dir = Some("/home/u/proj");
        assert_eq!(
            relativize_text(
                "cd /home/u/proj && cat /home/u/proj/src/a.rs /home/u/proj/",
                dir
            ),
            "cat src/a.rs ./"
        );
        assert_eq!(
            relativize_text(
                "see `/home/u/proj/b.md`, /x/home/u/proj/c.md and /home/u/projx/d",
                dir
            ),
            "see `b.md`, /x/home/u/proj/c.md and /home/u/projx/d"
        );
        assert_eq!(relativize_text("/home/u/proj/a", None), "/home/u/proj/a");
    }
}
