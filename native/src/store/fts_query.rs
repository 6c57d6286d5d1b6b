//! User text made safe for SQLite full-text search.
//!
//! A search takes the user's words literally: FTS5 syntax in them (`AND`, `OR`, `NOT`,
//! `NEAR(`, `*`, `^`, `:`, `"`, parentheses) is text to find, never an operator, and never an
//! error. Each whitespace-separated term becomes an FTS5 string (`"..."`, embedded quotes
//! doubled), and the strings are juxtaposed, which FTS5 reads as AND.
//!
//! The trigram tokenizer cannot match a term shorter than three characters, and an FTS5 string
//! cannot hold NUL, so a query with such a term is answered by a scan of the memories instead,
//! each field checked with the core's case fold (SQLite's `ctxkit_contains`). Both are passed to
//! SQLite as bound parameters, never spliced into SQL. [`like_pattern`] makes the PostgreSQL
//! store's `LIKE` patterns (`%` and `_` escaped with `\`).
//!
//! A query is bounded ([`query_terms`]): at most [`MAX_QUERY_CHARS`] characters and
//! [`MAX_QUERY_TERMS`] terms, repeated terms searched once. The work of a trigram search grows
//! with the query's trigrams times the positions they occur at in the memories, and ranking
//! (bm25) with the square of the terms: unbounded, 1,000 characters against a 100 KB memory
//! took 5 seconds and 415 MB, 8,000 characters 74 seconds and 4 GB. Within the bounds the
//! worst case (a memory of one repeated letter, every trigram everywhere) stays around a
//! second for a 120 KB memory, and a real query of a few words takes milliseconds.

use crate::error::{Error, Result};

/// A term shorter than this (in characters) cannot use the trigram index.
pub const MIN_TRIGRAM_CHARS: usize = 3;

/// The longest query a memory search takes, in characters (leading and trailing whitespace
/// not counted).
pub const MAX_QUERY_CHARS: usize = 128;

/// The most whitespace-separated terms a memory search takes.
pub const MAX_QUERY_TERMS: usize = 16;

/// The terms of `text` to search for: split at whitespace, each distinct term once, in order.
/// Fails (naming the bound and the query's size) when the query is longer than
/// [`MAX_QUERY_CHARS`] or has more than [`MAX_QUERY_TERMS`] terms.
///
/// ```
/// use ctxkit::store::query_terms;
/// assert_eq!(query_terms("  db  setup db ").unwrap(), ["db", "setup"]);
/// let error = query_terms(&"x".repeat(200)).unwrap_err();
/// assert_eq!(
///     error.to_string(),
///     "query: 200 characters long; a memory search takes at most 128"
/// );
/// ```
pub fn query_terms(text: &str) -> Result<Vec<&str>> {
    let chars = text.trim().chars().count();
    if chars > MAX_QUERY_CHARS {
        return Err(Error::invalid(
            "query",
            format!("{chars} characters long; a memory search takes at most {MAX_QUERY_CHARS}"),
        ));
    }
    let terms: Vec<&str> = text.split_whitespace().collect();
    if terms.len() > MAX_QUERY_TERMS {
        return Err(Error::invalid(
            "query",
            format!(
                "{} terms; a memory search takes at most {MAX_QUERY_TERMS}",
                terms.len()
            ),
        ));
    }
    let mut distinct: Vec<&str> = Vec::with_capacity(terms.len());
    for term in terms {
        // An exact repeat only: the index's case folding and LIKE's differ, so two terms
        // equal up to case may not ask the same.
        if !distinct.contains(&term) {
            distinct.push(term);
        }
    }
    Ok(distinct)
}

/// The FTS5 `MATCH` expression for `text`: every term quoted, all required. `None` when the
/// text has no term, or a term too short for trigrams (search with [`like_pattern`] then).
///
/// ```
/// use ctxkit::store::fts5_match_expression;
/// assert_eq!(fts5_match_expression("持久化").as_deref(), Some("\"持久化\""));
/// assert_eq!(
///     fts5_match_expression(r#"say "hi" AND NEAR(x*"#).as_deref(),
///     Some(r#""say" """hi""" "AND" "NEAR(x*""#)
/// );
/// assert_eq!(fts5_match_expression("db setup"), None);
/// assert_eq!(fts5_match_expression("   "), None);
/// assert_eq!(fts5_match_expression("nul\0inside"), None);
/// ```
pub fn fts5_match_expression(text: &str) -> Option<String> {
    let terms: Vec<&str> = text.split_whitespace().collect();
    if terms.is_empty()
        || terms
            .iter()
            .any(|term| term.chars().count() < MIN_TRIGRAM_CHARS || term.contains('\0'))
    {
        return None;
    }
    let quoted: Vec<String> = terms.iter().map(|term| fts5_string(term)).collect();
    Some(quoted.join(" "))
}

/// `text` as one FTS5 string: `"..."` with embedded quotes doubled, so every character of it
/// (spaces, operators, parentheses, `*`) is text to find. With the trigram tokenizer a string
/// matches where the text holds it as a substring (case-insensitively), given at least
/// [`MIN_TRIGRAM_CHARS`] characters.
///
/// ```
/// use ctxkit::store::fts5_string;
/// assert_eq!(fts5_string(r#"say "hi" OR x*"#), r#""say ""hi"" OR x*""#);
/// ```
pub fn fts5_string(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "\"\""))
}

/// A `LIKE ... ESCAPE '\'` pattern finding `term` anywhere: `%term%` with `\`, `%` and `_`
/// escaped.
///
/// ```
/// use ctxkit::store::like_pattern;
/// assert_eq!(like_pattern("50%_x"), r"%50\%\_x%");
/// assert_eq!(like_pattern(r"a\b"), r"%a\\b%");
/// ```
pub fn like_pattern(term: &str) -> String {
    let mut pattern = String::with_capacity(term.len() + 2);
    pattern.push('%');
    for c in term.chars() {
        if matches!(c, '\\' | '%' | '_') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_past_the_bounds_are_refused_and_at_the_bounds_taken() {
        let at_length = "é".repeat(MAX_QUERY_CHARS);
        assert_eq!(query_terms(&at_length).unwrap(), [at_length.as_str()]);
        let too_long = format!("  {}é  ", at_length);
        let error = query_terms(&too_long).unwrap_err().to_string();
        assert!(error.contains("129 characters"), "{error}");
        let at_count: Vec<String> = (0..MAX_QUERY_TERMS).map(|i| format!("t{i}")).collect();
        assert_eq!(
            query_terms(&at_count.join(" ")).unwrap().len(),
            MAX_QUERY_TERMS
        );
        let too_many = format!("{} again", at_count.join(" "));
        let error = query_terms(&too_many).unwrap_err().to_string();
        assert_eq!(error, "query: 17 terms; a memory search takes at most 16");
        assert_eq!(query_terms("aaa aaa AAA aaa").unwrap(), ["aaa", "AAA"]);
    }

    #[test]
    fn every_operator_is_quoted() {
        // `OR` alone is too short for trigrams (LIKE answers it); `OR(` is not.
        assert_eq!(fts5_match_expression("OR zzz"), None);
        for text in [
            "AND",
            "OR(",
            "NOT",
            "NEAR(ab cd)",
            "col:val",
            "^start",
            "pre*",
        ] {
            let expression = fts5_match_expression(&format!("{text} zzz"));
            let expression = expression.unwrap_or_default();
            assert!(expression.starts_with('"'), "{expression}");
            assert!(expression.ends_with("\"zzz\""), "{expression}");
        }
        assert_eq!(
            fts5_match_expression("\"\"\"").as_deref(),
            Some("\"\"\"\"\"\"\"\"")
        );
    }
}
