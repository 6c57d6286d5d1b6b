//! The folder a session's commands ran in, as the calls themselves state it: a `workdir`/`cwd`
//! argument beside a command (Codex's `shell`, a framework's `run(cmd, cwd)`), or a script
//! that opens with `cd DIR` before its first `&&`, `;` or line break (pi's and Claude Code's
//! `cd /repo && npm test`, after any leading comment lines). Read by shape, for any tool.
//!
//! A log whose absolute paths point into several trees (the project and an installed
//! package's folder) has no directory most paths lie under, yet its commands keep saying
//! where they run; this reads that statement, so a summary can write the project's paths
//! relative to it.

use super::command::shell_command;
use crate::model::Message;

/// The absolute folder most of the calls that state one ran in: at least two calls and at
/// least half of those stating any folder name it (a `workdir` argument, or the script's
/// opening `cd`). `None` otherwise, and for a relative or root folder.
///
/// ```
/// use ctxkit_core::facts::stated_run_directory;
/// use ctxkit_core::{Message, ToolCall};
/// let bash = |id: &str, script: &str| {
///     let arguments = serde_json::json!({ "command": script }).to_string();
///     Message::assistant("", vec![ToolCall::new(id, "run", arguments)])
/// };
/// let log = [
///     bash("1", "cd /home/ada/app && npm test"),
///     bash("2", "ls /usr/lib/node_modules/pkg/tools"),
///     bash("3", "# why it failed\ncd /home/ada/app && grep -rn oops src"),
/// ];
/// assert_eq!(stated_run_directory(&log).as_deref(), Some("/home/ada/app"));
/// ```
pub fn stated_run_directory(messages: &[Message]) -> Option<String> {
    let mut stated: Vec<String> = Vec::new();
    for message in messages {
        for call in &message.tool_calls {
            let Ok(serde_json::Value::Object(object)) =
                serde_json::from_str::<serde_json::Value>(&call.arguments)
            else {
                continue;
            };
            let Some(command) = shell_command(&object) else {
                continue;
            };
            if let Some(dir) = command.workdir.or_else(|| opening_cd(&command.script)) {
                stated.push(dir.trim_end_matches('/').to_owned());
            }
        }
    }
    let mut counts: Vec<(&String, usize)> = Vec::new();
    for dir in &stated {
        match counts.iter_mut().find(|(seen, _)| *seen == dir) {
            Some((_, count)) => *count += 1,
            None => counts.push((dir, 1)),
        }
    }
    // The first stated among the most stated, so the answer does not depend on map order.
    let (dir, count) = counts.into_iter().fold(
        None,
        |best: Option<(&String, usize)>, (dir, count)| match best {
            Some((_, top)) if top >= count => best,
            _ => Some((dir, count)),
        },
    )?;
    (count >= 2 && count * 2 >= stated.len() && dir.starts_with('/') && dir.len() > 1)
        .then(|| dir.clone())
}

/// The folder a script changes to before anything else: `cd DIR` followed by `&&`, `;` or a
/// line break, after any comment or blank lines. Quotes around the folder are dropped; a
/// folder with a variable, glob or space in it is no statement.
fn opening_cd(script: &str) -> Option<String> {
    let body = script
        .lines()
        .map(str::trim)
        .skip_while(|line| line.is_empty() || line.starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n");
    let rest = body.strip_prefix("cd ")?.trim_start();
    let end = rest.find(['&', ';', '\n', '|']).unwrap_or(rest.len());
    let is_whole_script = end == rest.len();
    let dir = rest.get(..end)?.trim().trim_matches(['"', '\'']);
    let chained = rest.get(end..)?.starts_with("&&") || rest.get(end..)?.starts_with([';', '\n']);
    let plain = !dir.is_empty() && !dir.contains(['$', '*', '?', ' ', '`', '~']);
    (plain && (chained || is_whole_script)).then(|| dir.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ToolCall;

    fn call(arguments: serde_json::Value) -> Message {
        Message::assistant(
            "",
            vec![ToolCall::new("c", "any_tool", arguments.to_string())],
        )
    }

    #[test]
    fn the_opening_cd_is_read_after_comments_and_before_the_chain() {
        assert_eq!(
            opening_cd("cd /w/app && npm test").as_deref(),
            Some("/w/app")
        );
        assert_eq!(
            opening_cd("# look for it\n\ncd '/w/my-app'; grep -rn x .").as_deref(),
            Some("/w/my-app")
        );
        assert_eq!(opening_cd("cd /w/app").as_deref(), Some("/w/app"));
        // Not the opening command, a variable, a pipe's stage or a folder with a space.
        assert_eq!(opening_cd("npm test && cd /w/app"), None);
        assert_eq!(opening_cd("cd $ROOT && ls"), None);
        assert_eq!(opening_cd("cd \"/w/my app\" && ls"), None);
        assert_eq!(opening_cd("cdx /w && ls"), None);
    }

    #[test]
    fn the_folder_most_calls_state_wins_from_any_agents_shape() {
        // pi / Claude Code: `cd DIR &&` scripts, among commands elsewhere.
        let pi = [
            call(serde_json::json!({"command": "cd /home/b/cart && cat .forge/config.json"})),
            call(serde_json::json!({"command": "find /usr/local/lib/node_modules -name x"})),
            call(serde_json::json!({"command": "cd /home/b/cart && find src -type f"})),
            call(serde_json::json!({"path": "/usr/local/lib/pkg/a.md"})),
        ];
        assert_eq!(stated_run_directory(&pi).as_deref(), Some("/home/b/cart"));
        // Codex: an argv with a `workdir` argument.
        let codex = [
            call(serde_json::json!({"command": ["zsh", "-lc", "rg x"], "workdir": "/u/repo"})),
            call(serde_json::json!({"command": ["zsh", "-lc", "ls"], "workdir": "/u/repo/"})),
            call(
                serde_json::json!({"command": ["zsh", "-lc", "ls"], "workdir": "/u/repo/apps/web"}),
            ),
        ];
        assert_eq!(stated_run_directory(&codex).as_deref(), Some("/u/repo"));
        // A framework tool with made-up names: `run(cmd, cwd)`.
        let framework = [
            call(serde_json::json!({"cmd": "pytest -q", "cwd": "/srv/proj"})),
            call(serde_json::json!({"cmd": "ruff check .", "cwd": "/srv/proj"})),
        ];
        assert_eq!(
            stated_run_directory(&framework).as_deref(),
            Some("/srv/proj")
        );
    }

    #[test]
    fn no_folder_without_a_majority_of_two_or_more_absolute_statements() {
        let once = [call(serde_json::json!({"command": "cd /w/a && ls"}))];
        assert_eq!(stated_run_directory(&once), None);
        let split = [
            call(serde_json::json!({"command": "cd /w/a && ls"})),
            call(serde_json::json!({"command": "cd /w/a && ls"})),
            call(serde_json::json!({"command": "cd /w/b && ls"})),
            call(serde_json::json!({"command": "cd /w/c && ls"})),
            call(serde_json::json!({"command": "cd /w/d && ls"})),
        ];
        assert_eq!(stated_run_directory(&split), None);
        let relative = [
            call(serde_json::json!({"command": "cd app && ls"})),
            call(serde_json::json!({"command": "cd app && ls"})),
        ];
        assert_eq!(stated_run_directory(&relative), None);
        // A message quoting a `cd` in prose states nothing: only calls count.
        let prose = [
            Message::user("cd /w/a && ls"),
            Message::user("cd /w/a && ls"),
        ];
        assert_eq!(stated_run_directory(&prose), None);
    }
}
