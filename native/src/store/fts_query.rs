//! User text made safe for SQLite full-text search.
//!
//! A search takes the user's words literally: FTS5 syntax in them (`AND`, `OR`, `NOT`,
//! `NEAR(`, `*`, `^`, `:`, `"`, parentheses) is text to find, never an operator, and never an
//! error. Each whitespace-separated term becomes an FTS5 string (`"..."`, embedded quotes
//! doubled), and the strings are juxtaposed, which FTS5 reads as AND.
//!
//! The trigram tokenizer cannot match a term shorter than three characters, so a query with
//! such a term is answered by `LIKE` instead ([`like_pattern`]: `%` and `_` escaped with `\`).
//! Both are passed to SQLite as bound parameters, never spliced into SQL.

/// A term shorter than this (in characters) cannot use the trigram index.
pub const MIN_TRIGRAM_CHARS: usize = 3;

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
/// ```
pub fn fts5_match_expression(text: &str) -> Option<String> {
    let terms: Vec<&str> = text.split_whitespace().collect();
    if terms.is_empty()
        || terms
            .iter()
            .any(|term| term.chars().count() < MIN_TRIGRAM_CHARS)
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
