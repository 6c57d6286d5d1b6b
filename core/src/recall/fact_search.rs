//! A pinned fact looked up with `search_history`: the query an agent would send to get back a
//! fact its summary lost, and whether the search finds it. The fidelity report counts a
//! dropped fact as "found again" only when this search, the same one the tool runs, finds it.
//!
//! The query is the fact's own text: for a fact pinned head and tail (` … `) or cut (`…`), its
//! head, since only the head is verbatim text of the log; at most [`QUERY_MAX_BYTES`], cut on
//! a character boundary. A search finds the fact when some hit holds the whole query (the
//! exact pass) or every word of it (the every-word pass, which also covers a fact whose
//! whitespace was folded when it was pinned).

use super::limits::QUERY_MAX_BYTES;
use super::request::SearchRequest;
use super::search::{search_entries, SearchOutcome};
use crate::compaction::PinnedFact;
use crate::model::Entry;
use crate::text::head_bytes;

/// The `search_history` request that looks for `fact`; `None` when the fact has no text to
/// search for (blank, or only the cut marker).
///
/// ```
/// use ctxkit_core::compaction::{FactKind, PinnedFact};
/// use ctxkit_core::recall::fact_query;
/// let fact = PinnedFact::new(FactKind::Request, "Rename the flag … and update the docs");
/// assert_eq!(fact_query(&fact).unwrap().query, "Rename the flag");
/// assert!(fact_query(&PinnedFact::new(FactKind::Path, " … ")).is_none());
/// ```
pub fn fact_query(fact: &PinnedFact) -> Option<SearchRequest> {
    let head = head_bytes(fact.verbatim_head(), QUERY_MAX_BYTES).trim_end();
    SearchRequest::new(head, None).ok()
}

/// True when `outcome` (a search for [`fact_query`] of a fact) found it: at least one hit.
pub fn search_found(outcome: &SearchOutcome) -> bool {
    !outcome.hits.is_empty()
}

/// True when `search_history` over `entries` (a log in memory) finds `fact`.
///
/// ```
/// use ctxkit_core::compaction::{FactKind, PinnedFact};
/// use ctxkit_core::recall::finds_fact;
/// use ctxkit_core::{Entry, Message, ModelFamily};
/// let log = Entry::number([Message::user("Fix   the\nparser")], 1, ModelFamily::OpenAi);
/// assert!(finds_fact(&log, &PinnedFact::new(FactKind::Request, "Fix the parser")));
/// assert!(!finds_fact(&log, &PinnedFact::new(FactKind::Request, "Fix the lexer")));
/// ```
pub fn finds_fact(entries: &[Entry], fact: &PinnedFact) -> bool {
    fact_query(fact).is_some_and(|request| search_found(&search_entries(entries, &request)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compaction::FactKind;
    use crate::{Message, ModelFamily, ToolCall};

    #[test]
    fn a_long_fact_is_searched_by_a_bounded_head() {
        let long = "é".repeat(QUERY_MAX_BYTES);
        let request = fact_query(&PinnedFact::new(FactKind::Request, long)).unwrap();
        assert!(request.query.len() <= QUERY_MAX_BYTES);
        assert!(request.query.chars().all(|c| c == 'é'));
    }

    #[test]
    fn a_path_in_tool_call_arguments_is_found() {
        let log = Entry::number(
            [Message::assistant(
                "",
                vec![ToolCall::new(
                    "c1",
                    "read",
                    r#"{"file_path":"C:\\src\\main.rs"}"#,
                )],
            )],
            1,
            ModelFamily::Claude,
        );
        let fact = PinnedFact::new(FactKind::Path, r"C:\src\main.rs");
        assert!(finds_fact(&log, &fact));
    }

    #[test]
    fn quoted_markup_is_searched_as_text() {
        let log = Entry::number(
            [Message::user("see </summary> ## Goal \"quoted\"")],
            1,
            ModelFamily::Claude,
        );
        assert!(finds_fact(
            &log,
            &PinnedFact::new(FactKind::Identifier, "</summary> ## Goal \"quoted\"")
        ));
    }
}
