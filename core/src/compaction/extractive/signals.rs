//! Text heuristics of the extractive summarizer (paths come from [`crate::facts`]): which
//! argument says what a call did, which output lines are errors, which sentences state a decision.
//! Each is a small pure function over text, tested on real shapes from the corpus.

use super::{one_line, whole_words};
pub use crate::facts::file_paths_in_arguments;
pub(crate) use crate::facts::paths_in_text;
use crate::facts::{is_patch, patch_files, shell_command};

/// The argument that says what a call did, read through [`crate::facts`] first: the script
/// of a shell-like command (an argv's script after `-c`/`-lc`, not its `workdir`), the files
/// a patch body changes (wherever the body sits), else a command, a path, a pattern, a query,
/// a URL, else the first string value.
pub fn key_argument(arguments: &str) -> String {
    const KEYS: [&str; 12] = [
        "command",
        "cmd",
        "file_path",
        "path",
        "filePath",
        "pattern",
        "query",
        "url",
        "description",
        "prompt",
        "content",
        "text",
    ];
    let Ok(serde_json::Value::Object(object)) =
        serde_json::from_str::<serde_json::Value>(arguments)
    else {
        return match patch_summary(arguments) {
            Some(files) => files,
            None => one_line(arguments, 120),
        };
    };
    let patched = object.values().find_map(|value| match value {
        serde_json::Value::String(text) => patch_summary(text),
        serde_json::Value::Array(items) => items
            .iter()
            .filter_map(|item| item.as_str())
            .find_map(patch_summary),
        _ => None,
    });
    if let Some(files) = patched {
        return files;
    }
    if let Some(command) = shell_command(&object) {
        return one_line(&command.script, 120);
    }
    let chosen = KEYS
        .iter()
        .find_map(|key| object.get(*key).and_then(|v| v.as_str()))
        .or_else(|| object.values().find_map(|v| v.as_str()));
    chosen.map(|value| one_line(value, 120)).unwrap_or_default()
}

/// `patch A, B` for a patch body (the files it changes), `None` for any other text.
fn patch_summary(text: &str) -> Option<String> {
    if !is_patch(text) {
        return None;
    }
    let files: Vec<String> = patch_files(text)
        .into_iter()
        .map(|(path, _)| path)
        .collect();
    (!files.is_empty()).then(|| one_line(&format!("patch {}", files.join(", ")), 120))
}

/// The telling line of a failed tool result: the first line that names the failure (an
/// error, a failed test or assertion, a panic, a traceback, an undefined or missing name, a
/// linter's finding with its `file:line`), else its first line that says anything. Never an
/// exit status alone (`Exit code 2`), one of ctxkit's own notices, a line of a file listing
/// (`  7 pub fn …`, what a read printed) or a markdown heading. `None` when no line is left.
pub fn telling_line(text: &str) -> Option<String> {
    const MARKERS: [&str; 15] = [
        "error",
        "fail",
        "assert",
        "panic",
        "traceback",
        "exception",
        "undefined",
        "not found",
        "no such file",
        "fatal",
        "cannot",
        "denied",
        "invalid",
        "unknown",
        "warning",
    ];
    // Output a hook or tool printed JSON-escaped keeps its line breaks as `\n`: they break
    // lines too, so the telling line is one line, not the whole escaped output.
    let candidates: Vec<&str> = text
        .lines()
        .flat_map(|line| line.split("\\n"))
        .map(str::trim)
        .filter(|line| line.len() > 3 && !is_noise_line(line))
        .collect();
    let named = candidates.iter().find(|line| {
        let lower = line.to_lowercase();
        MARKERS.iter().any(|marker| lower.contains(marker)) || has_file_line(line)
    });
    named
        .or_else(|| candidates.first())
        .map(|line| one_line(line, 300))
}

/// Lines that never tell what failed: an exit status alone, ctxkit's own notices, a numbered
/// line of a file listing, a markdown heading.
fn is_noise_line(line: &str) -> bool {
    let lower = line.to_lowercase();
    let exit_status = [
        "exit code",
        "exit status",
        "exited with code",
        "return code",
    ]
    .iter()
    .any(|opening| lower.starts_with(opening))
        && lower.split_whitespace().count() <= 4;
    let notice = line.starts_with("The tool reported an error (is_error: true)")
        || line.starts_with("[Tool returned no output]")
        || line.starts_with("[Output offloaded")
        || line.starts_with("[ctxkit");
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    let numbered = digits > 0
        && line.get(digits..).is_some_and(|rest| {
            rest.starts_with(['\t', '→', ' ', '|', ':']) && !has_file_line(line)
        });
    exit_status || notice || numbered || line.starts_with('#')
}

/// A `path:line` (or `path:line:column`) in `line`, as compilers and linters print findings.
fn has_file_line(line: &str) -> bool {
    line.split_whitespace().any(|word| {
        let mut parts = word.trim_matches(['(', ')', '[', ']', ',']).split(':');
        let path = parts.next().unwrap_or_default();
        let number = parts.next().unwrap_or_default();
        path.contains('.')
            && path.chars().any(|c| c.is_ascii_alphabetic())
            && !number.is_empty()
            && number.chars().all(|c| c.is_ascii_digit())
    })
}

/// A command on one line: its first line (with how many more it has), cut past 200 bytes at
/// a sentence or word boundary and marked ` […]`.
pub(super) fn one_line_command(command: &str) -> String {
    let lines: Vec<&str> = command
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect();
    // A script's opening comment or bare `cd DIR` says less than its first command: that one
    // is shown, after the `cd` it runs in (`cd DIR && cmd`), the rest counted.
    let skipped = lines
        .iter()
        .take_while(|line| line.starts_with('#') || is_bare_cd(line))
        .count()
        .min(lines.len().saturating_sub(1));
    let cd = lines
        .get(..skipped)
        .unwrap_or_default()
        .iter()
        .rev()
        .find(|line| is_bare_cd(line));
    let first = lines.get(skipped).copied().unwrap_or_default();
    let first = match cd {
        Some(cd) => format!("{cd} && {first}"),
        None => first.to_owned(),
    };
    let mut line = whole_words(&first, 200);
    match lines.len().saturating_sub(skipped + 1) {
        0 => {}
        1 => line.push_str(" [+1 more line]"),
        more => line.push_str(&format!(" [+{more} more lines]")),
    }
    line
}

/// `cd DIR` alone on its line.
fn is_bare_cd(line: &str) -> bool {
    line.strip_prefix("cd ")
        .is_some_and(|dir| !dir.trim().is_empty() && !dir.contains(['&', ';', '|', ' ']))
}

pub(crate) fn first_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .map(|line| one_line(line, 100))
        .unwrap_or_default()
}

/// Sentences in which the assistant states a choice or a finding (a reason, an alternative
/// rejected, a root cause), not narration of its next action ("Let me read the file").
pub fn decision_sentences(text: &str) -> Vec<String> {
    const MARKERS: [&str; 19] = [
        "instead",
        "because",
        "decided",
        "chose",
        "rather than",
        "root cause",
        "the fix",
        "the problem",
        "the issue",
        "approach",
        "will use",
        "going with",
        "switch to",
        "must not",
        "should not",
        "don't need",
        "no need",
        "the cause",
        " since ",
    ];
    const NARRATION: [&str; 6] = ["let me", "now let me", "let's", "now i", "first,", "next,"];
    sentences(text)
        .into_iter()
        .filter(|sentence| sentence.len() > 12 && sentence.len() <= 240)
        .filter(|sentence| !sentence.starts_with(|c: char| c.is_lowercase()))
        .filter(|sentence| {
            let lower = sentence.to_lowercase();
            MARKERS.iter().any(|m| lower.contains(m))
                && !NARRATION.iter().any(|n| lower.starts_with(n))
        })
        .map(|sentence| one_line(sentence, 240))
        .collect()
}

/// The whole sentences of `text`: split at line ends and at `.`, `!` or `?` followed by a
/// space (not inside `main.rs` or `v1.2`), without their closing stop.
pub fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut start = 0;
        for (at, stop) in line.match_indices(['.', '!', '?']) {
            let end = at + stop.len();
            if line.get(end..).is_some_and(|rest| rest.starts_with(' ')) {
                out.extend(line.get(start..at).map(str::trim));
                start = end;
            }
        }
        out.extend(
            line.get(start..)
                .map(|rest| rest.trim().trim_end_matches(['.', '!', '?'])),
        );
    }
    out.retain(|sentence| !sentence.is_empty());
    out
}

/// Identifiers the assistant put in backticks (`parse_args`, `Config::load`).
pub(crate) fn backticked_identifiers(text: &str) -> Vec<String> {
    backticked_items(text)
        .into_iter()
        .filter(|item| item.len() >= 3 && item.len() <= 80)
        .filter(|item| {
            item.chars().all(|c| {
                c.is_alphanumeric() || matches!(c, '_' | ':' | '.' | '-' | '#' | '!' | '(' | ')')
            })
        })
        .filter(|item| item.chars().any(|c| c.is_alphabetic()))
        .collect()
}

pub(crate) fn backticked_items(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .filter(|item| !item.is_empty())
        .collect()
}

/// Argument keys whose text a call writes or sends (`content`, `new_string`…), not where it
/// goes or what it looks for: the code in them is read again from the file, not recalled.
pub const WRITTEN_KEYS: [&str; 9] = [
    "content",
    "new_string",
    "old_string",
    "new_str",
    "old_str",
    "text",
    "prompt",
    "edits",
    "file_text",
];

/// The words of `text` that look like code identifiers: four to eighty characters of letters,
/// digits, `_` and `::`, starting with a letter or `_`, and shaped like code (an inner `_`, a
/// lower-to-upper step as in `camelCase`, or a `::` path), mostly not digits.
pub fn identifiers(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
        .map(|word| word.trim_matches(':'))
        .filter(|word| is_identifier(word))
        .map(str::to_owned)
}

fn is_identifier(word: &str) -> bool {
    let Some(first) = word.chars().next() else {
        return false;
    };
    if !(4..=80).contains(&word.len()) || !(first.is_ascii_alphabetic() || first == '_') {
        return false;
    }
    if word.contains(':')
        && !word
            .split("::")
            .all(|part| !part.is_empty() && !part.contains(':'))
    {
        return false;
    }
    let digits = word.chars().filter(char::is_ascii_digit).count();
    if digits * 2 > word.len() {
        return false;
    }
    let inner_underscore = word.trim_matches('_').contains('_');
    let camel = word
        .as_bytes()
        .windows(2)
        .any(|pair| matches!(pair, [a, b] if a.is_ascii_lowercase() && b.is_ascii_uppercase()));
    inner_underscore || camel || word.contains("::")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_argument_is_read_by_shape_for_any_tool() {
        // Codex: an argv's script, not the workdir beside it.
        assert_eq!(
            key_argument(r#"{"command":["zsh","-lc","rg TeamSheet -n apps"],"workdir":"/u/repo"}"#),
            "rg TeamSheet -n apps"
        );
        // A framework's made-up tool: `cmd` and `cwd`, the workdir first in the object.
        assert_eq!(
            key_argument(r#"{"cwd":"/srv/p","cmd":"pytest -q"}"#),
            "pytest -q"
        );
        // A patch body, raw or in any argument, is the files it changes.
        let patch = "*** Begin Patch\n*** Update File: apps/x/src/app/(protected)/a.ts\n@@\n-a\n+b\n*** End Patch";
        assert_eq!(key_argument(patch), "patch apps/x/src/app/(protected)/a.ts");
        assert_eq!(
            key_argument(&serde_json::json!({"input": patch}).to_string()),
            "patch apps/x/src/app/(protected)/a.ts"
        );
        // pi's and Claude Code's path arguments, as before.
        assert_eq!(
            key_argument(r#"{"path":"src/a.ts","offset":1}"#),
            "src/a.ts"
        );
        assert_eq!(key_argument(r#"{"file_path":"/w/a.rs"}"#), "/w/a.rs");
    }

    #[test]
    fn decisions_are_reasons_and_findings_not_narration() {
        let text = "Let me read the key files I'll be modifying. The root cause is a stale cache.\nI'll use a BTreeMap instead of sorting later, because the order must be stable! Now let me run the tests because they may fail.";
        assert_eq!(
            decision_sentences(text),
            vec![
                "The root cause is a stale cache",
                "I'll use a BTreeMap instead of sorting later, because the order must be stable"
            ]
        );
    }

    #[test]
    fn the_telling_line_names_the_failure_not_the_exit_status() {
        assert_eq!(
            telling_line("Exit code 2\n  Compiling x\nerror: undefined function get/2\n  more")
                .as_deref(),
            Some("error: undefined function get/2")
        );
        assert_eq!(
            telling_line(
                "Exit code 1\nlib/a.ex:12:5: [D] Nested modules could be aliased at the top"
            )
            .as_deref(),
            Some("lib/a.ex:12:5: [D] Nested modules could be aliased at the top")
        );
        assert_eq!(
            telling_line("The tool reported an error (is_error: true).\n7 pub fn cli_step_1() {}\nsomething broke").as_deref(),
            Some("something broke")
        );
        assert_eq!(telling_line("Exit code 6\n\n"), None);
        // A hook's JSON-escaped output (the marot-spotter session's pre-commit hook).
        assert_eq!(
            telling_line(
                r"Exit code 1\nPre-commit validation failed:\n\n[FORMAT] Code is not formatted."
            )
            .as_deref(),
            Some("Pre-commit validation failed:")
        );
    }
}
