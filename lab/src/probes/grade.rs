//! Grading an answer by its probe's key: a string check, no judge.
//!
//! An answer holds the key when, after both are normalized ([`normalize`]: lowercase,
//! whitespace runs as one space, the quotes and backticks a model wraps text in dropped), it
//! contains every item of the key in one of its accepted forms. An empty answer or an empty
//! key holds nothing.

use super::AnswerKey;

/// `text` as grading compares it: lowercase, backticks and straight or curly quotes dropped,
/// whitespace runs written as one space, trimmed, and the stops at its end (`.`, `:`, `!`, `?`,
/// `,`, `;`) dropped.
pub fn normalize(text: &str) -> String {
    let kept: String = text
        .chars()
        .filter(|c| {
            !matches!(
                c,
                '`' | '"' | '\u{201c}' | '\u{201d}' | '\u{2018}' | '\u{2019}'
            )
        })
        .flat_map(char::to_lowercase)
        .collect();
    let flat = kept.split_whitespace().collect::<Vec<_>>().join(" ");
    flat.trim_end_matches(['.', ':', '!', '?', ',', ';'])
        .trim_end()
        .to_owned()
}

/// Whether `answer` holds `key`: every item in one of its forms (see the module doc).
///
/// ```
/// use ctxkit_lab::probes::{grade, AnswerKey, KeyItem};
/// let key = AnswerKey { all_of: vec![KeyItem { variants: vec!["/w/src/a.rs".into(), "src/a.rs".into()], seq: 3 }] };
/// assert!(grade("It is in `SRC/a.rs`.", &key));
/// assert!(!grade("src/b.rs", &key));
/// assert!(!grade("", &key));
/// ```
pub fn grade(answer: &str, key: &AnswerKey) -> bool {
    let answer = normalize(answer);
    if answer.is_empty() || key.all_of.is_empty() {
        return false;
    }
    key.all_of.iter().all(|item| {
        item.variants.iter().any(|variant| {
            let form = normalize(variant);
            !form.is_empty() && answer.contains(form.as_str())
        })
    })
}
