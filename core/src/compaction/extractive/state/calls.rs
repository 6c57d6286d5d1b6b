//! Reading what a shell or patch call did: the command a shell tool ran, the files a patch
//! touches, the paths an `rm` removes.

use super::{CREATED, DELETED, EDITED};

/// The command a shell tool ran: its `command` or `cmd` argument (an argv array such as
/// `["bash", "-lc", "…"]` read as its script).
pub(super) fn shell_command(
    name: &str,
    object: &serde_json::Map<String, serde_json::Value>,
) -> Option<String> {
    const SHELLS: [&str; 12] = [
        "bash",
        "shell",
        "execute_bash",
        "exec_command",
        "run_shell_command",
        "local_shell",
        "run_terminal_cmd",
        "execute_command",
        "terminal",
        "run_command",
        "container.exec",
        "shell_command",
    ];
    if !SHELLS.contains(&name) {
        return None;
    }
    let value = object.get("command").or_else(|| object.get("cmd"))?;
    let command = match value {
        serde_json::Value::String(command) => command.clone(),
        serde_json::Value::Array(items) => {
            let words: Vec<&str> = items.iter().filter_map(|v| v.as_str()).collect();
            match words.as_slice() {
                [shell, flag, script] if shell.ends_with("sh") && flag.starts_with('-') => {
                    (*script).to_owned()
                }
                _ => words.join(" "),
            }
        }
        _ => return None,
    };
    let command = command.trim();
    (!command.is_empty()).then(|| command.to_owned())
}

/// The paths a patch adds, updates, deletes or moves to.
pub(super) fn patch_files(body: &str, relative: &impl Fn(&str) -> String) -> Vec<(String, usize)> {
    let mut files: Vec<(String, usize)> = Vec::new();
    for line in body.lines() {
        let line = line.trim();
        let found = [
            ("*** Add File: ", CREATED),
            ("*** Update File: ", EDITED),
            ("*** Delete File: ", DELETED),
            ("*** Move to: ", CREATED),
        ]
        .iter()
        .find_map(|(opening, action)| line.strip_prefix(opening).map(|p| (p.trim(), *action)));
        if let Some((path, action)) = found.filter(|(path, _)| !path.is_empty()) {
            let path = relative(path);
            if !files.iter().any(|(p, _)| *p == path) {
                files.push((path, action));
            }
        }
    }
    files
}

/// The paths a shell command removes (`rm [-flags] a b`, each segment between `&&`, `;`, `|`).
pub(super) fn removed_paths(command: &str) -> Vec<String> {
    let mut paths = Vec::new();
    for segment in command.split(['\n', ';', '|', '&']) {
        let mut words = segment.split_whitespace();
        if words.next() != Some("rm") {
            continue;
        }
        paths.extend(
            words
                .filter(|word| !word.starts_with('-') && !word.contains(['*', '$', '>', '<']))
                .map(|word| word.trim_matches(['"', '\'']).to_owned())
                .filter(|word| !word.is_empty()),
        );
    }
    paths
}
