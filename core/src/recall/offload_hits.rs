//! Hits in offloaded outputs: a tool result offloaded to a file keeps only a short reference in
//! the log, so `search_history` also looks in the outputs' full text, and a hit there points the
//! model to `read_offload` at the line that holds the match.
//!
//! The shells find the texts (the native stores through their indexes, the JS engine through
//! its offload writer) and hand each matching one to [`offload_match`], which says where the
//! match is ([`OffloadMatch`]: the output's path, the line, a snippet around it);
//! [`merge_hits`] puts message hits and offload hits of one pass in one list, newest first.
//!
//! Rules, the same in every shell: an output is searched as the message it was offloaded
//! from (its `seq`), so one message is one hit at most. A pass's hit in the offloaded output
//! is kept over the reference's own hit of that pass (it says where to page); across passes
//! the exact pass comes first, as for every hit ([`super::SearchOutcome::from_passes`]).
//!
//! Guarantees: pure; a match's line is numbered from 1 as `read_offload`'s `offset` counts
//! lines, so the model pages straight to it; the snippet is bounded as a message hit's is.

use serde::{Deserialize, Serialize};

use super::render_search::{locate, snippet_at};
use super::request::SearchRequest;
use super::search::HistoryHit;

/// Where a search's match is in an offloaded output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OffloadMatch {
    /// The output's path, relative to the working directory (what `read_offload` takes).
    pub path: String,
    /// The line that holds the start of the match, from 1 (`read_offload`'s `offset`).
    pub line: u64,
    /// The text around the match, bounded like a message hit's snippet.
    pub snippet: String,
}

/// An offloaded output as a shell found it, for the in-memory search
/// ([`super::search_entries_with`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OffloadedText<'a> {
    /// The seq of the message it was offloaded from (the log holds its reference).
    pub seq: u64,
    /// Its path, relative to the working directory.
    pub path: &'a str,
    /// Its full text.
    pub text: &'a str,
}

/// Where `request` matches `text`, the output offloaded to `path`: the whole query for an
/// `exact` hit, else its longest word. `None` when the text does not hold it (the shell's
/// index and the core's fold disagreed).
///
/// ```
/// use ctxkit_core::recall::{offload_match, SearchRequest};
/// let text = "line one\nline two\nerror: disk FULL\nline four\n";
/// let request = SearchRequest::new("disk full", None).unwrap();
/// let found = offload_match(".ctxkit/tool_results/s/0000000003-c1.txt", text, &request, true).unwrap();
/// assert_eq!(found.line, 3);
/// assert!(found.snippet.contains("error: disk FULL"));
/// ```
pub fn offload_match(
    path: &str,
    text: &str,
    request: &SearchRequest,
    exact: bool,
) -> Option<OffloadMatch> {
    let (start, end) = locate(text, request, exact)?;
    let before = text.get(..start).unwrap_or_default();
    let newlines = before.bytes().filter(|byte| *byte == b'\n').count();
    Some(OffloadMatch {
        path: path.to_owned(),
        line: u64::try_from(newlines)
            .unwrap_or(u64::MAX)
            .saturating_add(1),
        snippet: snippet_at(text, start, end),
    })
}

/// One pass's hits: `messages` (hits in the log's text) and `offloads` (hits in offloaded
/// outputs, with their [`OffloadMatch`]), each newest first, merged newest first; when both
/// hold a message, its offload hit is kept.
pub fn merge_hits(messages: Vec<HistoryHit>, offloads: Vec<HistoryHit>) -> Vec<HistoryHit> {
    let mut merged: Vec<HistoryHit> = offloads;
    for hit in messages {
        if !merged.iter().any(|known| known.item.seq == hit.item.seq) {
            merged.push(hit);
        }
    }
    crate::wire::fields::sort_stable_by(&mut merged, |a, b| b.item.seq.cmp(&a.item.seq));
    merged
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recall::HistoryMessage;
    use crate::Message;

    fn hit(seq: u64, offload: bool) -> HistoryHit {
        HistoryHit {
            item: HistoryMessage {
                seq,
                message: Message::user("x"),
                tool_name: None,
            },
            exact: true,
            offload: offload.then(|| OffloadMatch {
                path: format!("p/{seq}"),
                line: 1,
                snippet: String::new(),
            }),
        }
    }

    #[test]
    fn the_line_counts_from_one_and_the_offload_hit_wins_its_seq() {
        let request = SearchRequest::new("NEEDLE", None).unwrap();
        let text = format!("{}needle here\n", "x\n".repeat(41));
        let found = offload_match("p", &text, &request, true).unwrap();
        assert_eq!(found.line, 42);
        assert_eq!(
            offload_match("p", "needle", &request, true).unwrap().line,
            1
        );
        assert_eq!(offload_match("p", "nothing", &request, true), None);
        let merged = merge_hits(
            vec![hit(9, false), hit(4, false)],
            vec![hit(7, true), hit(4, true)],
        );
        let order: Vec<(u64, bool)> = merged
            .iter()
            .map(|hit| (hit.item.seq, hit.offload.is_some()))
            .collect();
        assert_eq!(order, [(9, false), (7, true), (4, true)]);
    }
}
