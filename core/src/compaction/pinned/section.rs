//! Checking a summary against its pinned facts, and writing the ones it lacks.

use super::{FactKind, PinnedFact};
use crate::compaction::workdir::{declared_working_directory, relativize_text};

/// The heading of the section that lists the pinned facts a summary lacked.
pub const PINNED_HEADING: &str = "## Pinned facts";

/// The facts whose text `summary` does not hold verbatim, in order.
pub fn missing_pinned<'f>(summary: &str, facts: &'f [PinnedFact]) -> Vec<&'f PinnedFact> {
    facts
        .iter()
        .filter(|fact| !summary_holds(summary, &fact.text))
        .collect()
}

/// Whether `summary` holds `text` verbatim, or with its paths under the working directory the
/// summary states written relative to it (how the extractive summary writes every path).
///
/// ```
/// use ctxkit_core::compaction::pinned::summary_holds;
/// let summary = "Working directory: `/w` (the paths below are relative to it)\n- `src/a.rs`: read";
/// assert!(summary_holds(summary, "/w/src/a.rs"));
/// assert!(!summary_holds(summary, "/x/src/a.rs"));
/// assert!(!summary_holds("- `src/a.rs`: read", "/w/src/a.rs"));
/// ```
pub fn summary_holds(summary: &str, text: &str) -> bool {
    summary.contains(text)
        || declared_working_directory(summary).is_some_and(|dir| {
            let relative = relativize_text(text, Some(dir));
            relative != text && summary.contains(relative.as_str())
        })
}

/// A `## Pinned facts` section listing `facts`, one per line (`- path: src/main.rs`), or an
/// empty string when there are none. Every fact is one line, so no fact can start a heading.
pub fn pinned_section(facts: &[&PinnedFact]) -> String {
    if facts.is_empty() {
        return String::new();
    }
    let mut section = format!("{PINNED_HEADING}\n");
    for kind in FactKind::ALL {
        for fact in facts.iter().filter(|fact| fact.kind == kind) {
            section.push_str(&format!("- {}: {}\n", label(kind), fact.text));
        }
    }
    section.trim_end().to_owned()
}

fn label(kind: FactKind) -> &'static str {
    match kind {
        FactKind::Path => "path",
        FactKind::Error => "error",
        FactKind::Request => "request",
        FactKind::Identifier => "identifier",
        FactKind::Task => "task",
        FactKind::NextStep => "next step",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_section_lists_what_the_summary_lacks() {
        let facts = [
            PinnedFact::new(FactKind::Path, "src/a.rs"),
            PinnedFact::new(FactKind::Request, "Add a --verbose flag"),
        ];
        let missing = missing_pinned("## Goal\nAdd a --verbose flag", &facts);
        assert_eq!(missing, vec![&facts[0]]);
        assert_eq!(
            pinned_section(&missing),
            "## Pinned facts\n- path: src/a.rs"
        );
        assert_eq!(pinned_section(&[]), "");
    }
}
