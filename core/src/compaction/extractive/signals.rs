//! Text heuristics of the extractive summarizer: which words are file paths, which argument
//! says what a call did, which output lines are errors, which sentences state a decision.
//! Each is a small pure function over text, tested on real shapes from the corpus.

use super::one_line;

/// File paths named in a tool call's JSON arguments: string values under keys that name a
/// file or path (`file_path`, `path`, `filePath`, `notebook_path`, `filename`, `paths`...),
/// plus path-looking words inside a `command`.
pub fn file_paths_in_arguments(arguments: &str) -> Vec<String> {
    let Ok(serde_json::Value::Object(object)) =
        serde_json::from_str::<serde_json::Value>(arguments)
    else {
        return Vec::new();
    };
    let mut paths = Vec::new();
    for (key, value) in &object {
        let lower = key.to_ascii_lowercase();
        if lower.contains("path")
            || lower.contains("file")
            || lower == "dir"
            || lower == "directory"
        {
            match value {
                serde_json::Value::String(path) if looks_like_path(path) => {
                    paths.push(path.clone())
                }
                serde_json::Value::Array(items) => paths.extend(
                    items
                        .iter()
                        .filter_map(|v| v.as_str())
                        .filter(|p| looks_like_path(p))
                        .map(str::to_owned),
                ),
                _ => {}
            }
        } else if lower == "command" || lower == "cmd" {
            if let Some(command) = value.as_str() {
                paths.extend(paths_in_text(command));
            }
        }
    }
    paths
}

fn looks_like_path(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 400
        && !text.contains('\n')
        && !text.contains(' ')
        && text != "."
        && text != "/"
}

/// Words of `text` that look like file paths: containing `/` with a file-ish tail, or a bare
/// name with a short extension (`main.rs`). Surrounding quotes, backticks and punctuation are
/// stripped.
pub(crate) fn paths_in_text(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for word in text.split(|c: char| {
        c.is_whitespace()
            || matches!(
                c,
                '`' | '"' | '\'' | '(' | ')' | '<' | '>' | ',' | ';' | '|'
            )
    }) {
        let word = word.trim_end_matches([':', '.', '!', '?']);
        let word = word.split(':').next().unwrap_or_default();
        if word.len() < 3 || word.len() > 300 || word.contains("://") || word.starts_with('-') {
            continue;
        }
        let has_extension = word.rsplit_once('.').is_some_and(|(stem, ext)| {
            !stem.is_empty()
                && (1..=5).contains(&ext.len())
                && ext.chars().all(|c| c.is_ascii_alphanumeric())
                && ext.chars().any(|c| c.is_ascii_alphabetic())
        });
        let has_dir = word.contains('/')
            && word.chars().all(|c| {
                c.is_alphanumeric() || matches!(c, '/' | '.' | '_' | '-' | '~' | '@' | '+')
            });
        if has_dir && (has_extension || word.starts_with('/') || word.starts_with("./"))
            || has_extension
                && !word.contains('/')
                && word
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
                && word.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                && !is_number_like(word)
        {
            out.push(word.to_owned());
        }
    }
    out
}

fn is_number_like(word: &str) -> bool {
    word.chars().all(|c| c.is_ascii_digit() || c == '.')
}

/// The argument that says what a call did: a command, a path, a pattern, a query, a URL, else
/// the first string value.
pub(super) fn key_argument(arguments: &str) -> String {
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
        return one_line(arguments, 120);
    };
    let chosen = KEYS
        .iter()
        .find_map(|key| object.get(*key).and_then(|v| v.as_str()))
        .or_else(|| object.values().find_map(|v| v.as_str()));
    chosen.map(|value| one_line(value, 120)).unwrap_or_default()
}

/// Lines of a tool output worth quoting as errors: all lines with an error marker (for a
/// failed call, the first non-empty line when none has one).
pub(crate) fn error_lines(text: &str, failed: bool) -> Vec<String> {
    const MARKERS: [&str; 10] = [
        "error",
        "Error",
        "ERROR",
        "FAILED",
        "failed",
        "panicked",
        "Traceback",
        "Exception",
        "exception",
        "fatal",
    ];
    let mut lines: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|line| MARKERS.iter().any(|marker| line.contains(marker)))
        .filter(|line| !line.starts_with('#') && line.len() > 3)
        .take(3)
        .map(|line| one_line(line, 300))
        .collect();
    if failed && lines.is_empty() {
        lines.extend(
            text.lines()
                .map(str::trim)
                .find(|line| !line.is_empty())
                .map(|line| one_line(line, 300)),
        );
    }
    lines
}

pub(crate) fn first_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .map(|line| one_line(line, 100))
        .unwrap_or_default()
}

/// A user message that is a request, not harness noise: reminders and notifications a harness
/// injects (Claude Code's `<system-reminder>`, `<task-notification>`, local command output and
/// its caveat, the interruption marker), our own summaries and another agent's.
pub(crate) fn is_request(text: &str) -> bool {
    const INJECTED: [&str; 8] = [
        "[Context checkpoint]",
        "<system-reminder>",
        "[Earlier conversation",
        "<local-command",
        "<task-notification>",
        "Caveat: The messages below were generated by the user while running local commands",
        "[Request interrupted by user",
        "This session is being continued from a previous conversation",
    ];
    let text = text.trim();
    !text.is_empty() && !INJECTED.iter().any(|opening| text.starts_with(opening))
}

/// Sentences in which the assistant states a choice or a finding (a reason, an alternative
/// rejected, a root cause), not narration of its next action ("Let me read the file").
pub(super) fn decision_sentences(text: &str) -> Vec<String> {
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
    text.split(['\n', '.', '!'])
        .map(str::trim)
        .filter(|sentence| sentence.len() > 12)
        .filter(|sentence| {
            let lower = sentence.to_lowercase();
            MARKERS.iter().any(|m| lower.contains(m))
                && !NARRATION.iter().any(|n| lower.starts_with(n))
        })
        .map(|sentence| one_line(sentence, 240))
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn paths_come_from_path_keys_and_commands() {
        assert_eq!(
            file_paths_in_arguments(r#"{"file_path":"/home/u/app/lib/a.ex","limit":20}"#),
            vec!["/home/u/app/lib/a.ex"]
        );
        assert_eq!(
            file_paths_in_arguments(
                r#"{"command":"cd app && mix test test/a_test.exs 2>&1 | tail -5"}"#
            ),
            vec!["test/a_test.exs"]
        );
        assert_eq!(
            file_paths_in_arguments(r#"{"paths":["src/a.rs","b.md"]}"#),
            vec!["src/a.rs", "b.md"]
        );
        assert!(file_paths_in_arguments("not json").is_empty());
        assert_eq!(
            paths_in_text("see `src/main.rs:12` and README.md, v1.2 or https://x.io/a.js"),
            vec!["src/main.rs", "README.md"]
        );
    }
}
