//! How text goes into PostgreSQL and comes back byte for byte, and what the searches look in.
//!
//! PostgreSQL `text` holds every character but NUL (U+0000). So every free text a column
//! holds (a session's name, a checkpoint's summary and tasks, an offload's call id, path and
//! output, a memory's project, title, content and category) is written through [`to_column`]
//! and read back through [`from_column`]: a reversible escape that leaves text without NUL and
//! U+FFFD as it is (so the columns stay readable and comparable in SQL), writes NUL as U+FFFD
//! followed by `0` and U+FFFD itself doubled. Text stored as JSON (a message's body, a
//! checkpoint's facts, a memory's tags) needs none: JSON escapes NUL. Migration 2 doubled the
//! U+FFFD of rows written before (there, a NUL had been stored as a lone U+FFFD and stays one).
//!
//! A search looks in a *search key* ([`search_key`]): the core's case fold of the text
//! ([`ctxkit_core::recall::fold_for_search`], the rule of SQLite's scan and of the in-memory
//! search), with NUL written as `N`. The fold lowers every ASCII capital, so no key holds one
//! but that `N`: the mapping is one character for one character and never merges two, so a
//! needle's key is in a text's key exactly when the folded needle is in the folded text,
//! NUL included. Keys are matched with a case-sensitive `LIKE` (the needle's key escaped by
//! [`crate::store::like_pattern`]) under a trigram GIN index: no per-row case folding.

use std::borrow::Cow;

use ctxkit_core::recall::fold_for_search;

/// The escape character of [`to_column`] (and what a NUL was stored as before migration 2).
const ESCAPE: char = '\u{FFFD}';

/// What NUL is in a search key: an ASCII capital, which the fold never leaves.
const NUL_IN_KEY: char = 'N';

/// `text` as a `text` column stores it (see the module doc).
pub(super) fn to_column(text: &str) -> Cow<'_, str> {
    if !text.contains(['\0', ESCAPE]) {
        return Cow::Borrowed(text);
    }
    let mut stored = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\0' => {
                stored.push(ESCAPE);
                stored.push('0');
            }
            ESCAPE => {
                stored.push(ESCAPE);
                stored.push(ESCAPE);
            }
            other => stored.push(other),
        }
    }
    Cow::Owned(stored)
}

/// `text` as [`to_column`] gives it, owned.
pub(super) fn owned_column(text: &str) -> String {
    to_column(text).into_owned()
}

/// The text a `text` column's `stored` value stands for: [`to_column`] undone. An escape
/// character followed by anything else (only a hand edit makes one) is read as itself.
pub(super) fn from_column(stored: String) -> String {
    if !stored.contains(ESCAPE) {
        return stored;
    }
    let mut text = String::with_capacity(stored.len());
    let mut chars = stored.chars().peekable();
    while let Some(c) = chars.next() {
        if c != ESCAPE {
            text.push(c);
            continue;
        }
        match chars.peek() {
            Some('0') => {
                chars.next();
                text.push('\0');
            }
            Some(&ESCAPE) => {
                chars.next();
                text.push(ESCAPE);
            }
            _ => text.push(ESCAPE),
        }
    }
    text
}

/// The search key of `text` (see the module doc): folded, NUL as `N`.
pub(super) fn search_key(text: &str) -> String {
    let folded = fold_for_search(text);
    if folded.contains('\0') {
        folded.replace('\0', &NUL_IN_KEY.to_string())
    } else {
        folded
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_text_comes_back_and_plain_text_is_stored_as_it_is() {
        for text in [
            "",
            "plain",
            "\0",
            "\u{FFFD}",
            "\u{FFFD}0",
            "a\0b\u{FFFD}\u{FFFD}\0\u{FFFD}0",
            "\u{1}\u{1F}\u{7F}\u{85}\u{2028}",
        ] {
            let stored = to_column(text);
            assert!(!stored.contains('\0'), "{text:?}");
            assert_eq!(from_column(stored.into_owned()), text, "{text:?}");
        }
        assert!(matches!(to_column("plain \u{1}"), Cow::Borrowed(_)));
        assert_eq!(from_column("lone \u{FFFD} x".to_owned()), "lone \u{FFFD} x");
    }

    #[test]
    fn a_key_holds_a_needle_exactly_when_the_fold_does() {
        let key = search_key("Error\0 in SRC/Main.rs \u{FFFD}");
        assert_eq!(key, "errorN in src/main.rs \u{FFFD}");
        assert!(key.contains(&search_key("r\0 IN")));
        assert!(!key.contains(&search_key("\u{FFFD} in")));
        assert!(!key.contains(&search_key("n in")));
    }
}
