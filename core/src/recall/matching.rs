//! How a query matches text: case-insensitively, as a substring, on characters.
//!
//! Both sides are folded character by character: ASCII letters to lower case, and any other
//! character to its lower case when that is a single character (`É` → `é`, `Σ` → `σ`), else
//! kept (`İ`, whose lower case is two characters, stays itself). Folding never merges or
//! splits characters, so the n-th character of the folded text is the fold of the n-th
//! character of the text, and a match found in the folded text maps back to the same characters
//! of the original. This is close to what SQLite's trigram tokenizer does (it folds case the
//! same way, without removing diacritics), so the native index and the in-memory search agree.
//!
//! Guarantees: linear in the text's length (the standard library's substring search on the
//! folded text, then one walk to map the position back); positions are character boundaries.

/// One character folded for matching.
fn fold_char(c: char) -> char {
    if c.is_ascii() {
        return c.to_ascii_lowercase();
    }
    let mut lower = c.to_lowercase();
    match (lower.next(), lower.next()) {
        (Some(one), None) => one,
        _ => c,
    }
}

/// `text` folded for matching.
pub(crate) fn fold(text: &str) -> String {
    if text.is_ascii() {
        return text.to_ascii_lowercase();
    }
    text.chars().map(fold_char).collect()
}

/// Where `folded_needle` (folded with [`fold`]) first occurs in `text`, whose fold is
/// `folded_text`: the byte range in `text`.
pub(crate) fn find_folded(
    text: &str,
    folded_text: &str,
    folded_needle: &str,
) -> Option<(usize, usize)> {
    let at = folded_text.find(folded_needle)?;
    if text.len() == folded_text.len() && text.is_ascii() {
        return Some((at, at.saturating_add(folded_needle.len())));
    }
    let chars_before = folded_text.get(..at)?.chars().count();
    let chars_inside = folded_needle.chars().count();
    let mut boundaries = text
        .char_indices()
        .map(|(index, _)| index)
        .chain(std::iter::once(text.len()));
    let start = boundaries.nth(chars_before)?;
    let end = if chars_inside == 0 {
        start
    } else {
        boundaries.nth(chars_inside.saturating_sub(1))?
    };
    Some((start, end))
}

/// `text` folded for matching, as [`contains_folded`] wants its needle: for a shell that scans
/// stored text with the same rule as the core's search (the SQLite store's within-session
/// scan).
///
/// ```
/// assert_eq!(ctxkit_core::recall::fold_for_search("Src/ÉCOLE"), "src/école");
/// ```
pub fn fold_for_search(text: &str) -> String {
    fold(text)
}

/// Whether `text` holds `folded_needle` (folded with [`fold_for_search`]) under the search's
/// case fold. Linear in `text`'s length, whatever the needle (the standard library's
/// two-way substring search), so a long run of one character costs no more than any text.
///
/// ```
/// use ctxkit_core::recall::{contains_folded, fold_for_search};
/// assert!(contains_folded("thread 'main' PANICKED at", &fold_for_search("panicked")));
/// assert!(!contains_folded(&"a".repeat(10_000), &fold_for_search(&format!("{}b", "a".repeat(999)))));
/// ```
pub fn contains_folded(text: &str, folded_needle: &str) -> bool {
    if text.is_ascii() && folded_needle.is_ascii() {
        // Most stored text: one ASCII fold, no per-character case tables.
        return text.to_ascii_lowercase().contains(folded_needle);
    }
    fold(text).contains(folded_needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(text: &str, needle: &str) -> Option<&'static str> {
        let (start, end) = find_folded(text, &fold(text), &fold(needle))?;
        Some(Box::leak(text[start..end].to_owned().into_boxed_str()))
    }

    #[test]
    fn matches_ignore_case_and_map_back_to_the_original() {
        assert_eq!(find("Error in SRC/Main.rs", "src/main"), Some("SRC/Main"));
        assert_eq!(find("Ünïcode ÉCOLE 持久化层", "école"), Some("ÉCOLE"));
        assert_eq!(find("Ünïcode ÉCOLE 持久化层", "久化"), Some("久化"));
        assert_eq!(find("İstanbul x", "stan"), Some("stan"));
        assert_eq!(find("ΣΊΣΥΦΟΣ", "σύφ"), None, "accents are not removed");
        assert_eq!(find("ΣΊΣΥΦΟΣ", "συφ"), Some("ΣΥΦ"));
        assert_eq!(find("abc", "abcd"), None);
        assert_eq!(find("ab", ""), Some(""));
    }
}
