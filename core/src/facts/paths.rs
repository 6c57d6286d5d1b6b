//! Which words of a text, and which arguments of a call, are file paths.
//!
//! A path is judged by its shape, never by the tool that named it: a word with a folder in it
//! and a file-ish tail (`lib/a.ex`, `./run`, `/abs/dir`), or a bare name with a known
//! extension (`main.rs`, not `Enum.take`). Brackets and parentheses that make a whole folder
//! or file name (Next.js `app/(protected)/settings/[id]/page.tsx`, `[...slug].tsx`) are part
//! of the path; those of prose or code around it (`(see src/a.rs)`, `open(src/a.rs)`) are
//! not. Guarantees: every path returned is a substring of the text it came from, at most 300
//! bytes, never a URL or a flag.

use super::file_names::is_known_extension;

/// Argument keys that name where a call goes (compared lowercase, without `_` and `-`).
/// Not the text written to a file (`file_text`, `file_content`).
pub(crate) fn is_path_key(key: &str) -> bool {
    let key = normalized_key(key);
    let written = ["text", "content", "data", "body"]
        .iter()
        .any(|word| key.contains(word));
    !written
        && (key.contains("path")
            || key.contains("file")
            || matches!(key.as_str(), "dir" | "directory" | "target" | "destination"))
}

/// `key` lowercase without `_` and `-`: `file_path`, `filePath` and `file-path` are one key.
pub(crate) fn normalized_key(key: &str) -> String {
    key.chars()
        .filter(|c| !matches!(c, '_' | '-'))
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// File paths named in a tool call's JSON arguments: string values under keys that name a
/// file or path (`file_path`, `path`, `filePath`, `notebook_path`, `filename`, `paths`...),
/// plus path-looking words inside a `command` string.
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

/// An argument value that can be a path: one line, no spaces, not `.` or `/` alone.
pub(crate) fn looks_like_path(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 400
        && !text.contains('\n')
        && !text.contains(' ')
        && text != "."
        && text != "/"
}

/// Words of `text` that look like file paths: containing `/` with a file-ish tail, or a bare
/// name with a known file extension (`main.rs`, not `Enum.take`). Surrounding quotes,
/// backticks, brackets and punctuation are stripped; a bracketed folder or file name inside a
/// path is kept.
pub fn paths_in_text(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    // A closing tag (`</uploaded_files>`) is markup, not the absolute path `/uploaded_files`;
    // output a tool printed JSON-escaped (Codex's `{"output":"a.rs\nb.rs"}`) keeps its line
    // breaks as `\n`, which end a word as a line break does.
    let text = match text.contains("</") || text.contains('\\') {
        true => std::borrow::Cow::Owned(
            text.replace("</", "<")
                .replace("\\n", "\n")
                .replace("\\t", "\t")
                .replace("\\r", "\n"),
        ),
        false => std::borrow::Cow::Borrowed(text),
    };
    for word in text.split(|c: char| {
        c.is_whitespace() || matches!(c, '`' | '"' | '\'' | '<' | '>' | ',' | ';' | '|')
    }) {
        let word = unwrap_brackets(word);
        if brackets_are_names(word) {
            push_path(word, &mut out);
        } else {
            // Brackets of code or prose (`open(a.rs)`, `x[0]`) end a word, as spaces do; what
            // follows a closing one is the tail of something (`${ROOT}/tools/a.cjs`, `x[0]/b`),
            // not a path of its own.
            let mut after_close = false;
            for piece in word.split_inclusive(['(', ')', '[', ']', '{', '}']) {
                let closes = piece.ends_with([')', ']', '}']);
                let piece = piece.trim_end_matches(['(', ')', '[', ']', '{', '}']);
                if !(after_close && piece.starts_with(['/', '.'])) {
                    push_path(piece, &mut out);
                }
                after_close = closes;
            }
        }
    }
    out
}

/// `word` without the punctuation and unmatched brackets around it: `(src/a.rs)` and
/// `app/(group)/x.ts):` give `src/a.rs` and `app/(group)/x.ts`.
fn unwrap_brackets(word: &str) -> &str {
    let mut word = word;
    loop {
        let before = word.len();
        word = word.trim_end_matches([':', '.', '!', '?']);
        for (open, close) in [('(', ')'), ('[', ']'), ('{', '}')] {
            let opens = word.matches(open).count();
            let closes = word.matches(close).count();
            if closes > opens {
                word = word.strip_suffix(close).unwrap_or(word);
            } else if opens > closes {
                word = word.strip_prefix(open).unwrap_or(word);
            } else if word.starts_with(open) && matching_close(word) == Some(word.len() - 1) {
                // Wrapped whole: `(src/a.rs)`.
                word = word
                    .strip_prefix(open)
                    .and_then(|w| w.strip_suffix(close))
                    .unwrap_or(word);
            }
        }
        if word.len() == before {
            return word;
        }
    }
}

/// Where the bracket that opens `word` closes (a byte index), if it does.
fn matching_close(word: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (at, c) in word.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(at);
                }
            }
            _ => {}
        }
    }
    None
}

/// Whether every bracket of `word` makes a whole path segment or a file's stem: a segment that
/// opens with `(` or `[`, balanced, and closes at the segment's end or before its extension
/// (`(protected)`, `[id]`, `[...slug].tsx`, `[[...opt]]`). A word without brackets passes.
fn brackets_are_names(word: &str) -> bool {
    word.split('/').all(|segment| {
        if !segment.contains(['(', ')', '[', ']', '{', '}']) {
            return true;
        }
        if !segment.starts_with(['(', '[']) || segment.contains(['{', '}']) {
            return false;
        }
        let last_close = segment.rfind([')', ']']).unwrap_or(0);
        let tail = segment.get(last_close + 1..).unwrap_or_default();
        let inner_balanced = balanced(segment);
        inner_balanced
            && (tail.is_empty()
                || tail.starts_with('.') && tail.len() > 1 && !tail.contains(['(', ')', '[', ']']))
    }) && word.contains('/')
}

fn balanced(segment: &str) -> bool {
    let mut depth = 0i64;
    for c in segment.chars() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            _ => {}
        }
        if depth < 0 {
            return false;
        }
    }
    depth == 0
}

/// Pushes `word` when it is a path: the part before a `:line` suffix, a folder with a file-ish
/// tail or a bare name with a known extension.
fn push_path(word: &str, out: &mut Vec<String>) {
    let word = word.trim_end_matches([':', '.', '!', '?']);
    let word = word.split(':').next().unwrap_or_default();
    if word.len() < 3 || word.len() > 300 || word.contains("://") || word.starts_with('-') {
        return;
    }
    let has_extension = word.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && (1..=5).contains(&ext.len())
            && ext.chars().all(|c| c.is_ascii_alphanumeric())
            && ext.chars().any(|c| c.is_ascii_alphabetic())
    });
    let has_dir = word.contains('/')
        && word.chars().all(|c| {
            c.is_alphanumeric()
                || matches!(
                    c,
                    '/' | '.' | '_' | '-' | '~' | '@' | '+' | '(' | ')' | '[' | ']'
                )
        });
    let bare_file = has_extension
        && !word.contains('/')
        && word
            .rsplit_once('.')
            .is_some_and(|(_, ext)| is_known_extension(ext))
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        && word.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && !word.chars().all(|c| c.is_ascii_digit() || c == '.');
    if has_dir && (has_extension || word.starts_with('/') || word.starts_with("./")) || bare_file {
        out.push(word.to_owned());
    }
}

/// Whether the last segment of `path` names a file rather than a folder: it has an extension
/// or a leading dot (`a.rs`, `.env`), or is a file that by custom has none (`Makefile`).
pub(crate) fn names_a_file(path: &str) -> bool {
    const BARE_FILES: [&str; 9] = [
        "makefile",
        "dockerfile",
        "gemfile",
        "rakefile",
        "procfile",
        "justfile",
        "license",
        "readme",
        "containerfile",
    ];
    let name = path
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(path);
    !path.ends_with('/')
        && name != "."
        && name != ".."
        && (name.contains('.') || BARE_FILES.contains(&name.to_ascii_lowercase().as_str()))
}
