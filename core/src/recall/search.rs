//! The history search over a log in memory ([`search_entries`], for the wasm shell), and the
//! one rule both shells use to order and cut hits ([`SearchOutcome::from_passes`]).
//!
//! A search makes two passes over [`searchable_text`], newest message first:
//! 1. **exact**: messages whose text holds the whole query (folded for case, see `matching`);
//! 2. **every word**: when the query has several words, messages that hold each of them
//!    (in any order, anywhere) but not the whole query.
//!
//! Exact hits come first, then every-word hits, each newest first, at most `limit` in all;
//! `more` says whether any matching message was left out. The native store runs the same two
//! passes on its FTS5 index and hands both to [`SearchOutcome::from_passes`].
//!
//! Guarantees: bounded work: at most [`SEARCH_SCAN_MAX_BYTES`] of message text are read per
//! search (newest first; the outcome says where it stopped), and the scan stops as soon as the
//! exact pass alone has more than `limit` hits. Deterministic for a given log.

use serde::{Deserialize, Serialize};

use super::limits::SEARCH_SCAN_MAX_BYTES;
use super::matching::fold;
use super::offload_hits::{offload_match, OffloadMatch, OffloadedText};
use super::request::{ReadRequest, SearchRequest};
use super::searchable::searchable_text;
use crate::model::tool_name_for_result;
use crate::model::{Entry, Message};

/// A message of the log as the history tools show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryMessage {
    /// Its position in the log.
    pub seq: u64,
    /// The message.
    pub message: Message,
    /// For a tool result: the tool that produced it, when known (its `name`, else its call's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
}

/// A message a search found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryHit {
    /// The message.
    #[serde(flatten)]
    pub item: HistoryMessage,
    /// True when it holds the whole query, false when it holds every word of it.
    pub exact: bool,
    /// When the match is in the message's offloaded output (the log holds its reference):
    /// where, for `read_offload`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offload: Option<OffloadMatch>,
}

/// What a search found.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SearchOutcome {
    /// The hits: exact ones first, then every-word ones, each newest first.
    pub hits: Vec<HistoryHit>,
    /// True when more messages match than the limit let through.
    pub more: bool,
    /// When the scan stopped at its byte bound: the messages up to this seq were not searched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsearched_through: Option<u64>,
}

impl SearchOutcome {
    /// The outcome of the two passes, each newest first: `exact` (at most `limit + 1` hits
    /// wanted) and `words` (the every-word hits, which may repeat exact ones: they are dropped).
    /// Keeps at most `limit` hits, exact ones first, and says whether any were left out.
    pub fn from_passes(
        request: &SearchRequest,
        exact: Vec<HistoryHit>,
        words: Vec<HistoryHit>,
    ) -> SearchOutcome {
        let mut hits = exact;
        for hit in words {
            if !hits.iter().any(|known| known.item.seq == hit.item.seq) {
                hits.push(hit);
            }
        }
        let more = hits.len() > request.limit;
        hits.truncate(request.limit);
        SearchOutcome {
            hits,
            more,
            unsearched_through: None,
        }
    }
}

/// Searches `entries` (a log in `seq` order) for `request` (see the module doc).
///
/// ```
/// use ctxkit_core::recall::{search_entries, SearchRequest};
/// use ctxkit_core::{Entry, Message, ModelFamily, ToolCall};
/// let log = Entry::number(
///     [
///         Message::user("Why does `parse_args` panic?"),
///         Message::assistant("", vec![ToolCall::new("c1", "bash", r#"{"cmd":"cargo test"}"#)]),
///         Message::tool_result("c1", "thread 'main' panicked at src/args.rs:12", true),
///     ],
///     1,
///     ModelFamily::OpenAi,
/// );
/// let found = search_entries(&log, &SearchRequest::new("SRC/ARGS.RS", None).unwrap());
/// assert_eq!(found.hits.len(), 1);
/// assert_eq!(found.hits[0].item.seq, 3);
/// assert_eq!(found.hits[0].item.tool_name.as_deref(), Some("bash"));
/// ```
pub fn search_entries(entries: &[Entry], request: &SearchRequest) -> SearchOutcome {
    search_entries_with(entries, &[], request)
}

/// [`search_entries`] that also looks in `offloads`, the full text of outputs offloaded from
/// messages of `entries` (any order): a message's output is read with it, counts toward the
/// scan's bound, and a match there is a hit pointing to `read_offload` (the rules of
/// `offload_hits`: the output's exact match, then the message's, then the output's every-word
/// match, then the message's).
pub fn search_entries_with(
    entries: &[Entry],
    offloads: &[OffloadedText<'_>],
    request: &SearchRequest,
) -> SearchOutcome {
    let query = fold(&request.query);
    let terms: Vec<String> = request.terms.iter().map(|term| fold(term)).collect();
    let word_pass = request.has_word_pass();
    let wanted = request.limit.saturating_add(1);
    let mut exact = Vec::new();
    let mut words = Vec::new();
    let mut scanned = 0usize;
    let mut unsearched_through = None;
    for (index, entry) in entries.iter().enumerate().rev() {
        if exact.len() >= wanted {
            break;
        }
        let text = searchable_text(&entry.message);
        let offloaded = offloads.iter().find(|offload| offload.seq == entry.seq);
        let size = text
            .len()
            .saturating_add(offloaded.map_or(0, |offload| offload.text.len()));
        if size == 0 {
            continue;
        }
        if scanned > 0 && scanned.saturating_add(size) > SEARCH_SCAN_MAX_BYTES {
            unsearched_through = Some(entry.seq);
            break;
        }
        scanned = scanned.saturating_add(size);
        let holds = |folded: &str, exact: bool| {
            if exact {
                folded.contains(query.as_str())
            } else {
                word_pass
                    && words.len() < wanted
                    && terms.iter().all(|term| folded.contains(term.as_str()))
            }
        };
        let folded_output = offloaded.map(|offload| fold(offload.text));
        let folded = fold(&text);
        let output_holds = |exact: bool| folded_output.as_deref().is_some_and(|f| holds(f, exact));
        let found = if output_holds(true) {
            Some((true, offloaded))
        } else if holds(&folded, true) {
            Some((true, None))
        } else if output_holds(false) {
            Some((false, offloaded))
        } else if holds(&folded, false) {
            Some((false, None))
        } else {
            None
        };
        let Some((is_exact, output)) = found else {
            continue;
        };
        let mut found = hit(entries, index, is_exact);
        if let (Some(found), Some(output)) = (found.as_mut(), output) {
            found.offload = offload_match(output.path, output.text, request, is_exact);
        }
        if is_exact {
            exact.push(found);
        } else {
            words.push(found);
        }
    }
    let exact: Vec<HistoryHit> = exact.into_iter().flatten().collect();
    let words: Vec<HistoryHit> = words.into_iter().flatten().collect();
    SearchOutcome {
        unsearched_through,
        ..SearchOutcome::from_passes(request, exact, words)
    }
}

/// The messages of `entries` (a log in `seq` order) that `request` reads, with their tools'
/// names.
pub fn read_entries(entries: &[Entry], request: &ReadRequest) -> Vec<HistoryMessage> {
    let start = entries.partition_point(|entry| entry.seq < request.from);
    let end = entries.partition_point(|entry| entry.seq <= request.to);
    (start..end.max(start))
        .filter_map(|index| history_message(entries, index))
        .collect()
}

fn hit(entries: &[Entry], index: usize, exact: bool) -> Option<HistoryHit> {
    history_message(entries, index).map(|item| HistoryHit {
        item,
        exact,
        offload: None,
    })
}

/// The entry at `index` with its tool's name, looked for in the entries before it.
fn history_message(entries: &[Entry], index: usize) -> Option<HistoryMessage> {
    let entry = entries.get(index)?;
    Some(HistoryMessage {
        seq: entry.seq,
        tool_name: tool_name(entries.get(..index).unwrap_or_default(), &entry.message),
        message: entry.message.clone(),
    })
}

/// The name of the tool that produced `message` (a tool result), from its own `name` or from
/// the call it answers among `before`.
pub(crate) fn tool_name(before: &[Entry], message: &Message) -> Option<String> {
    if let Some(name) = message.name.as_deref().filter(|name| !name.is_empty()) {
        return Some(name.to_owned());
    }
    let id = message.tool_call_id.as_deref()?;
    tool_name_for_result(before, id).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ToolCall;
    use crate::tokens::ModelFamily;

    fn log() -> Vec<Entry> {
        Entry::number(
            [
                Message::user("Set up the database for 用户持久化."),
                Message::assistant(
                    "",
                    vec![ToolCall::new(
                        "c1",
                        "read_file",
                        r#"{"path":"src/db/setup.rs"}"#,
                    )],
                ),
                Message::tool_result("c1", "fn setup() { database_url() }", false),
                Message::user("now the setup of the database, again"),
                Message::assistant("The database setup is done.", vec![]),
            ],
            1,
            ModelFamily::OpenAi,
        )
    }

    fn seqs(outcome: &SearchOutcome) -> Vec<(u64, bool)> {
        outcome
            .hits
            .iter()
            .map(|hit| (hit.item.seq, hit.exact))
            .collect()
    }

    #[test]
    fn exact_hits_come_first_then_every_word_newest_first() {
        let request = SearchRequest::new("database setup", None).unwrap();
        let found = search_entries(&log(), &request);
        assert_eq!(seqs(&found), vec![(5, true), (4, false), (3, false)]);
        assert!(!found.more);
        let one = SearchRequest::new("database setup", Some(1)).unwrap();
        let found = search_entries(&log(), &one);
        assert_eq!(seqs(&found), vec![(5, true)]);
        assert!(found.more);
    }

    #[test]
    fn cjk_short_strings_and_tool_calls_are_found() {
        for (query, expected) in [
            ("持久", vec![(1, true)]),
            ("化", vec![(1, true)]),
            ("db/SETUP", vec![(2, true)]),
            ("read_file", vec![(2, true)]),
            ("()", vec![(3, true)]),
        ] {
            let request = SearchRequest::new(query, None).unwrap();
            assert_eq!(seqs(&search_entries(&log(), &request)), expected, "{query}");
        }
        let request = SearchRequest::new("nothing like this", None).unwrap();
        assert_eq!(search_entries(&log(), &request), SearchOutcome::default());
    }

    #[test]
    fn reads_select_the_range_with_tool_names() {
        let read = read_entries(&log(), &ReadRequest::new(3, Some(40)).unwrap());
        assert_eq!(read.iter().map(|m| m.seq).collect::<Vec<_>>(), [3, 4, 5]);
        assert_eq!(read[0].tool_name.as_deref(), Some("read_file"));
        assert!(read_entries(&log(), &ReadRequest::new(9, None).unwrap()).is_empty());
    }
}
