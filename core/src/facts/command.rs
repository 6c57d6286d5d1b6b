//! What a shell-like call ran, read from its arguments' shape: a `command`, `cmd` or `script`
//! argument holding a script (a string) or an argv (an array whose last element is the script
//! after `-c`/`-lc`), and the folder it ran in (`workdir`, `cwd`, `working_dir`...). Also the
//! files a simple command only reads (`cat a.rs`, `sed -n '1,80p' a.rs`) and the ones it
//! removes (`rm -f a b`). Never keyed on a tool's name: any tool whose arguments have this
//! shape ran a command.

use super::paths::{is_path_key, looks_like_path, normalized_key};

/// A command a call ran, and the folder it ran in when the call says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellCommand {
    /// The script, trimmed (an argv's words joined by spaces when it is not `sh -c SCRIPT`).
    pub script: String,
    /// The `workdir`/`cwd`-like argument, as written.
    pub workdir: Option<String>,
}

/// The command in a call's arguments, if they have a shell's shape. A one-word `command`
/// beside a path argument is an editor's sub-command (`{"command":"view","path":…}`), no
/// shell command.
pub fn shell_command(object: &serde_json::Map<String, serde_json::Value>) -> Option<ShellCommand> {
    let value = ["command", "cmd", "script"]
        .iter()
        .find_map(|key| object.get(*key))?;
    let script = match value {
        serde_json::Value::String(command) => command.clone(),
        serde_json::Value::Array(items) => {
            let words: Vec<&str> = items.iter().filter_map(|v| v.as_str()).collect();
            if words.len() != items.len() {
                return None;
            }
            match words.as_slice() {
                [shell, flag, script] if is_shell(shell) && is_script_flag(flag) => {
                    (*script).to_owned()
                }
                _ => words.join(" "),
            }
        }
        _ => return None,
    };
    let script = script.trim();
    let has_path_argument = object
        .iter()
        .any(|(key, value)| is_path_key(key) && value.as_str().is_some_and(looks_like_path));
    let sub_command = !script.contains(char::is_whitespace)
        && script.chars().all(|c| c.is_ascii_lowercase() || c == '_');
    if script.is_empty() || sub_command && has_path_argument {
        return None;
    }
    let workdir = object
        .iter()
        .find(|(key, _)| {
            matches!(
                normalized_key(key).as_str(),
                "workdir" | "cwd" | "workingdir" | "workingdirectory" | "dir" | "directory"
            )
        })
        .and_then(|(_, value)| value.as_str())
        .map(str::trim)
        .filter(|dir| !dir.is_empty() && looks_like_path(dir) || *dir == ".")
        .map(str::to_owned);
    Some(ShellCommand {
        script: script.to_owned(),
        workdir,
    })
}

/// `bash`, `/bin/sh`, `zsh`, `pwsh`…: a program that runs a script given after a flag.
fn is_shell(word: &str) -> bool {
    let name = word.rsplit('/').next().unwrap_or(word);
    name.ends_with("sh") && name.len() <= 6
}

/// `-c`, `-lc`, `-Command`: the flag a script follows.
fn is_script_flag(word: &str) -> bool {
    word.starts_with('-') && (word.ends_with('c') || word.eq_ignore_ascii_case("-command"))
}

/// The segments of a script between `&&`, `||`, `;`, `|` and line ends, each trimmed.
fn segments(script: &str) -> impl Iterator<Item = &str> {
    script
        .split(['\n', ';', '|', '&'])
        .map(str::trim)
        .filter(|segment| !segment.is_empty())
}

/// The paths a command removes (`rm [-flags] a b`, in each segment).
pub fn removed_paths(script: &str) -> Vec<String> {
    let mut paths = Vec::new();
    for segment in segments(script) {
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

/// The files a script only reads, when it is one command that prints files (`cat`, `nl`,
/// `head`, `tail`, `sed -n`, `bat`, `less`, `more`), alone or piped into more of them
/// (`nl -ba a.rs | sed -n '40,80p'`), with no redirection, substitution, glob or second
/// command: its result is (part of) those files' content. Empty for anything else.
pub fn read_paths(script: &str) -> Vec<String> {
    if script.contains(['\n', ';', '&', '>', '<', '$', '`', '*', '?']) || script.contains("||") {
        return Vec::new();
    }
    let mut stages = script.split('|');
    let Some(paths) = stages.next().and_then(printed_files) else {
        return Vec::new();
    };
    // Every later stage prints its input, and names no file of its own.
    if stages.any(|stage| printed_files(stage).is_none_or(|files| !files.is_empty())) {
        return Vec::new();
    }
    paths
}

/// The files one printing command names (`Some(empty)`: it prints its input), `None` when it
/// is no printing command.
fn printed_files(command: &str) -> Option<Vec<String>> {
    const READERS: [&str; 8] = ["cat", "nl", "head", "tail", "sed", "bat", "less", "more"];
    let words = quoted_words(command);
    let (program, rest) = words.split_first()?;
    if !READERS.contains(&program.as_str()) {
        return None;
    }
    // `sed` only prints with `-n` and an expression; any other sed may write.
    if program == "sed" && !rest.iter().any(|word| word == "-n") {
        return None;
    }
    let mut paths = Vec::new();
    let mut expression_left = program == "sed";
    let mut skip_value = false;
    for word in rest {
        if skip_value {
            skip_value = false;
        } else if word.starts_with('-') {
            // `head -n 40 a.rs`: the flag's value is no file.
            skip_value = matches!(word.as_str(), "-n" | "-c") && program != "sed";
        } else if expression_left {
            expression_left = false;
        } else if looks_like_path(word) {
            paths.push(word.clone());
        } else {
            return None;
        }
    }
    Some(paths)
}

/// A command's words, with single and double quotes grouping and removed (no escapes: a word
/// with a backslash is kept as written).
fn quoted_words(script: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut started = false;
    for c in script.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => word.push(c),
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                started = true;
            }
            None if c.is_whitespace() => {
                if started || !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
                started = false;
            }
            None => word.push(c),
        }
    }
    if started || !word.is_empty() {
        words.push(word);
    }
    words
}
