//! The rules every memory store applies to what it is asked to keep: the importance range and
//! what makes two memories duplicates.
//!
//! They live in the core so that every shell (the native SQLite store, a future PostgreSQL
//! one, the wasm engine) keeps memories alike:
//! - importance is an integer from [`IMPORTANCE_MIN`] to [`IMPORTANCE_MAX`] (the range the
//!   precis ranks by and memory extraction asks for); anything outside is clamped
//!   ([`clamp_importance`]), never rejected;
//! - two memories are duplicates when their contents are equal after normalization
//!   ([`normalize_memory_content`]: case folded, whitespace collapsed, trimmed), so
//!   `"Use  PNPM\n"` repeats `"use pnpm"`. [`memory_content_hash`] is a stable key of the
//!   normalized content for an index; a store confirms a hash match by comparing the
//!   normalized contents, so a hash collision cannot hide a memory.
//!
//! Guarantees: pure, total, never panics.

use crate::text::fingerprint_hex;

/// The lowest importance a memory can have.
pub const IMPORTANCE_MIN: i32 = 1;
/// The highest importance a memory can have.
pub const IMPORTANCE_MAX: i32 = 10;

/// `importance` brought into `IMPORTANCE_MIN..=IMPORTANCE_MAX`.
///
/// ```
/// use ctxkit_core::memory::clamp_importance;
/// assert_eq!(clamp_importance(0), 1);
/// assert_eq!(clamp_importance(7), 7);
/// assert_eq!(clamp_importance(i64::MAX), 10);
/// ```
pub fn clamp_importance(importance: i64) -> i32 {
    let clamped = importance.clamp(i64::from(IMPORTANCE_MIN), i64::from(IMPORTANCE_MAX));
    i32::try_from(clamped).unwrap_or(IMPORTANCE_MAX)
}

/// The content as duplicates are compared: lower-cased (Unicode), every run of whitespace
/// made one space, both ends trimmed.
///
/// ```
/// use ctxkit_core::memory::normalize_memory_content;
/// assert_eq!(normalize_memory_content("  Use\tPNPM,\n  not NPM. "), "use pnpm, not npm.");
/// assert_eq!(normalize_memory_content("使用 持久化"), "使用 持久化");
/// ```
pub fn normalize_memory_content(content: &str) -> String {
    let mut out = String::with_capacity(content.len());
    for word in content.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.extend(word.chars().flat_map(char::to_lowercase));
    }
    out
}

/// A stable key of the normalized content: 16 hex digits (FNV-1a 64), the same on every
/// platform and run. Equal for duplicates; a store confirms a match with
/// [`is_duplicate_content`].
///
/// ```
/// use ctxkit_core::memory::memory_content_hash;
/// assert_eq!(memory_content_hash("Use pnpm"), memory_content_hash(" use   PNPM "));
/// assert_ne!(memory_content_hash("use pnpm"), memory_content_hash("use npm"));
/// ```
pub fn memory_content_hash(content: &str) -> String {
    fingerprint_hex(&normalize_memory_content(content))
}

/// True when `a` and `b` are the same memory content after normalization.
///
/// ```
/// use ctxkit_core::memory::is_duplicate_content;
/// assert!(is_duplicate_content("Run `make test`", "run   `MAKE TEST`"));
/// assert!(!is_duplicate_content("run make test", "run make check"));
/// ```
pub fn is_duplicate_content(a: &str, b: &str) -> bool {
    normalize_memory_content(a) == normalize_memory_content(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_content_normalizes_to_empty_and_hashes_stably() {
        assert_eq!(normalize_memory_content(" \n\t "), "");
        assert_eq!(memory_content_hash(""), memory_content_hash("   "));
        assert_eq!(clamp_importance(i64::MIN), IMPORTANCE_MIN);
        assert_eq!(normalize_memory_content("ÀB  Ç"), "àb ç");
    }
}
