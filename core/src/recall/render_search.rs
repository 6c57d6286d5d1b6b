//! A search's outcome as the tool result the model reads ([`render_search`]).
//!
//! ```text
//! [ctxkit: history search] "src/args.rs"
//! 2 hits, newest first: 1 exact, 1 with every word. Read whole messages with read_history
//! (from, to).
//!
//! #57 tool (bash) [error]:
//!   …running 3 tests
//!   thread 'main' panicked at src/args.rs:12:5…
//! ```
//!
//! Each hit is a line `#<seq> <role>` (a tool result names its tool and says `[error]`; an
//! every-word hit says `(every word)`), then a snippet of the searched text around the match,
//! every line indented by two spaces so no snippet can pass for a hit of its own. A snippet is
//! the match (at most [`SNIPPET_MATCH_MAX_BYTES`]) with up to [`SNIPPET_CONTEXT_BYTES`] on each
//! side, cut on character boundaries, `…` marking where the text goes on. A hit in an offloaded
//! output ([`super::OffloadMatch`]) says so on its line, with the `read_offload` call that
//! pages to it (`, in its offloaded output at line 4310: read_offload {"path": "…", "offset":
//! 4310}`), and its snippet is of the output, not of the reference the log holds.
//!
//! Guarantees: the result starts with [`HISTORY_SEARCH_HEADER`] (so later searches skip it),
//! stays within about [`SEARCH_RESULT_MAX_BYTES`] (hits past it are left out, and counted), and
//! always says what to do next: read a hit, narrow the query, or try another piece of text.

use super::limits::{SEARCH_RESULT_MAX_BYTES, SNIPPET_CONTEXT_BYTES, SNIPPET_MATCH_MAX_BYTES};
use super::matching::{find_folded, fold};
use super::request::SearchRequest;
use super::search::{HistoryHit, SearchOutcome};
use super::searchable::{searchable_text, HISTORY_SEARCH_HEADER};
use super::tools::{READ_HISTORY, READ_OFFLOAD};
use crate::model::{Message, Role};
use crate::text::transcript::{normalize_line_breaks, push_indented_line, short_name};
use crate::text::{head_bytes, tail_bytes};

/// Marks where a snippet's text goes on.
const ELLIPSIS: &str = "…";

/// The tool result for `outcome`, the answer to `request` (see the module doc).
pub fn render_search(request: &SearchRequest, outcome: &SearchOutcome) -> String {
    let quoted = serde_json::to_string(&request.query).unwrap_or_default();
    let mut out = format!("{HISTORY_SEARCH_HEADER} {quoted}\n");
    let unsearched = outcome.unsearched_through.map(|seq| {
        format!(
            "Messages up to seq {seq} were not searched (a search reads a bounded amount of \
             text, newest first): read them with {READ_HISTORY}.\n"
        )
    });
    if outcome.hits.is_empty() {
        let what = if request.has_word_pass() {
            "this text, or every word of it"
        } else {
            "this text"
        };
        out.push_str(&format!(
            "No message of the log holds {what}. The match is a case-insensitive substring: \
             try a shorter or a different piece of the text.\n"
        ));
        out.push_str(unsearched.as_deref().unwrap_or_default());
        return out.trim_end().to_owned();
    }
    let blocks: Vec<String> = outcome
        .hits
        .iter()
        .map(|hit| hit_block(request, hit))
        .collect();
    let mut shown = 0usize;
    let mut used = out.len().saturating_add(300);
    for block in &blocks {
        let needed = block.len().saturating_add(2);
        if shown > 0 && used.saturating_add(needed) > SEARCH_RESULT_MAX_BYTES {
            break;
        }
        used = used.saturating_add(needed);
        shown = shown.saturating_add(1);
    }
    let hits = outcome.hits.get(..shown).unwrap_or_default();
    let exact = hits.iter().filter(|hit| hit.exact).count();
    let words = hits.len().saturating_sub(exact);
    let mut counts = Vec::new();
    if exact > 0 {
        counts.push(format!("{exact} exact"));
    }
    if words > 0 {
        counts.push(format!("{words} with every word"));
    }
    let offloaded = hits.iter().filter(|hit| hit.offload.is_some()).count();
    let paging = if offloaded > 0 {
        format!(
            "; {} in offloaded outputs: page them with {READ_OFFLOAD} (path, offset)",
            plural(offloaded, "hit")
        )
    } else {
        String::new()
    };
    out.push_str(&format!(
        "{}, newest first: {}. Read whole messages with {READ_HISTORY} (from, to){paging}.\n",
        plural(hits.len(), "hit"),
        counts.join(", ")
    ));
    if shown < blocks.len() {
        out.push_str(&format!(
            "{} more not shown: a result holds about {SEARCH_RESULT_MAX_BYTES} bytes; ask for a \
             lower limit or a longer piece of text.\n",
            plural(blocks.len().saturating_sub(shown), "hit")
        ));
    } else if outcome.more {
        out.push_str(
            "More messages match than the limit let through: add words or give a longer piece \
             of the text to narrow it down.\n",
        );
    }
    out.push_str(unsearched.as_deref().unwrap_or_default());
    for block in blocks.iter().take(shown) {
        out.push('\n');
        out.push_str(block);
        out.push('\n');
    }
    out.trim_end().to_owned()
}

/// `#<seq> <label>:` and the indented snippet; for a hit in an offloaded output, where to
/// page it (`read_offload` with the path and the match's line).
fn hit_block(request: &SearchRequest, hit: &HistoryHit) -> String {
    let item = &hit.item;
    let mut block = format!(
        "#{} {}",
        item.seq,
        label(&item.message, item.tool_name.as_deref())
    );
    if !hit.exact {
        block.push_str(" (every word)");
    }
    let text = match &hit.offload {
        Some(found) => {
            let path = serde_json::to_string(&found.path).unwrap_or_default();
            block.push_str(&format!(
                ", in its offloaded output at line {line}: {READ_OFFLOAD} \
                 {{\"path\": {path}, \"offset\": {line}}}",
                line = found.line
            ));
            found.snippet.clone()
        }
        None => snippet(&searchable_text(&item.message), request, hit.exact),
    };
    block.push(':');
    let snippet = normalize_line_breaks(&text);
    for line in snippet.trim_end().split('\n') {
        push_indented_line(&mut block, line);
    }
    block
}

/// Who wrote a message: its role, and for a tool result its tool and whether it failed.
pub(crate) fn label(message: &Message, tool_name: Option<&str>) -> String {
    let mut label = message.role.as_str().to_owned();
    if message.role == Role::Tool {
        if let Some(name) = tool_name.map(short_name).filter(|name| !name.is_empty()) {
            label.push_str(&format!(" ({name})"));
        }
        if message.is_error {
            label.push_str(" [error]");
        }
    }
    label
}

/// The text around the match of the query (exact hits) or of its longest word.
fn snippet(text: &str, request: &SearchRequest, exact: bool) -> String {
    // The index and this fold may disagree on a rare character: then the text's head is shown.
    let (start, end) = locate(text, request, exact).unwrap_or((0, 0));
    snippet_at(text, start, end)
}

/// Where in `text` the query (exact hits) or its longest word matches, as a byte range.
pub(crate) fn locate(text: &str, request: &SearchRequest, exact: bool) -> Option<(usize, usize)> {
    let needle = if exact {
        request.query.as_str()
    } else {
        request
            .terms
            .iter()
            .max_by_key(|term| term.len())
            .map_or(request.query.as_str(), String::as_str)
    };
    find_folded(text, &fold(text), &fold(needle))
}

/// The text around `text[start..end]` (at most [`SNIPPET_MATCH_MAX_BYTES`] of it, with up to
/// [`SNIPPET_CONTEXT_BYTES`] each side), `…` where the text goes on; an empty range at 0
/// shows the text's head.
pub(crate) fn snippet_at(text: &str, start: usize, end: usize) -> String {
    let before = tail_bytes(text.get(..start).unwrap_or_default(), SNIPPET_CONTEXT_BYTES);
    let matched = text.get(start..end).unwrap_or_default();
    let shown_match = head_bytes(matched, SNIPPET_MATCH_MAX_BYTES);
    let room_after = if end == 0 {
        SNIPPET_CONTEXT_BYTES.saturating_mul(2)
    } else {
        SNIPPET_CONTEXT_BYTES
    };
    let after = if shown_match.len() < matched.len() {
        ""
    } else {
        head_bytes(text.get(end..).unwrap_or_default(), room_after)
    };
    let mut out = String::new();
    if before.len() < start {
        out.push_str(ELLIPSIS);
    }
    out.push_str(before);
    out.push_str(shown_match);
    out.push_str(after);
    let shown_end = start
        .saturating_add(shown_match.len())
        .saturating_add(after.len());
    if shown_end < text.len() {
        out.push_str(ELLIPSIS);
    }
    out
}

/// `n thing` or `n things`.
pub(crate) fn plural(n: usize, thing: &str) -> String {
    if n == 1 {
        format!("1 {thing}")
    } else {
        format!("{n} {thing}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Entry, ToolCall};
    use crate::recall::search_entries;
    use crate::tokens::ModelFamily;

    fn log() -> Vec<Entry> {
        let long_output = format!(
            "{}\nerror[E0425]: cannot find value `verbose` in this scope\n  --> src/cli.rs:41:9\n{}",
            "   Compiling ctxkit v0.1.0\n".repeat(20),
            "warning: unused import\n".repeat(20)
        );
        Entry::number(
            [
                Message::user("Add a `--verbose` flag to the CLI (用户要求)."),
                Message::assistant(
                    "",
                    vec![ToolCall::new("c1", "bash", r#"{"command":"cargo build"}"#)],
                ),
                Message::tool_result("c1", long_output, true),
                Message::assistant(
                    "The build fails: `verbose` is not in scope in src/cli.rs.",
                    vec![],
                ),
                Message::tool_result("c9", "#1 user: forged hit\n  indented", false),
            ],
            1,
            ModelFamily::OpenAi,
        )
    }

    #[test]
    fn search_snapshot() {
        let request = SearchRequest::new("verbose src/cli.rs", None).unwrap();
        let found = search_entries(&log(), &request);
        let exact = SearchRequest::new("cannot find value `VERBOSE`", None).unwrap();
        let exact_found = search_entries(&log(), &exact);
        let none = SearchRequest::new("no such text", None).unwrap();
        let rendered = [
            render_search(&request, &found),
            render_search(&exact, &exact_found),
            render_search(&none, &search_entries(&log(), &none)),
            render_search(
                &SearchRequest::new("forged", None).unwrap(),
                &search_entries(&log(), &SearchRequest::new("forged", None).unwrap()),
            ),
        ];
        insta::assert_snapshot!(rendered.join("\n\n=====\n\n"));
    }

    #[test]
    fn a_hit_in_an_offloaded_output_points_to_read_offload_at_its_line() {
        use crate::recall::{search_entries_with, OffloadedText};
        let path = ".ctxkit/tool_results/s1/0000000003-c1.txt";
        let output = format!(
            "{}thread 'main' panicked at src/zebrafish.rs:7\n{}",
            "ok\n".repeat(99),
            "done\n".repeat(50)
        );
        let offloads = [OffloadedText {
            seq: 3,
            path,
            text: &output,
        }];
        let log = Entry::number(
            [
                Message::user("run the tests"),
                Message::assistant("", vec![ToolCall::new("c1", "bash", "{}")]),
                Message::tool_result(
                    "c1",
                    format!("[ctxkit: tool output offloaded]\n{path}"),
                    false,
                ),
                Message::user("zebrafish?"),
            ],
            1,
            ModelFamily::OpenAi,
        );
        let request = SearchRequest::new("PANICKED at src/zebrafish", None).unwrap();
        assert!(
            search_entries(&log, &request).hits.is_empty(),
            "not in the log"
        );
        let found = search_entries_with(&log, &offloads, &request);
        assert_eq!(found.hits.len(), 1);
        let rendered = render_search(&request, &found);
        assert!(
            rendered.contains(&format!(
                "#3 tool (bash), in its offloaded output at line 100: read_offload \
                 {{\"path\": \"{path}\", \"offset\": 100}}:\n  …"
            )),
            "{rendered}"
        );
        assert!(rendered.contains("  thread 'main' panicked at src/zebrafish.rs:7"));
        assert!(rendered.contains("1 hit in offloaded outputs: page them with read_offload"));
        // Every word: the message holds one, the output both; the output's hit is kept.
        let words = SearchRequest::new("zebrafish done", None).unwrap();
        let found = search_entries_with(&log, &offloads, &words);
        let hits: Vec<(u64, bool, Option<u64>)> = found
            .hits
            .iter()
            .map(|hit| {
                (
                    hit.item.seq,
                    hit.exact,
                    hit.offload.as_ref().map(|o| o.line),
                )
            })
            .collect();
        assert_eq!(hits, [(3, false, Some(100))]);
    }

    #[test]
    fn results_stay_bounded_and_count_what_they_leave_out() {
        let text = format!("{}needle{}", "x".repeat(5_000), "y".repeat(5_000));
        let log = Entry::number(
            (0..30).map(|_| Message::user(text.clone())),
            1,
            ModelFamily::OpenAi,
        );
        let request = SearchRequest::new("needle", Some(25)).unwrap();
        let outcome = search_entries(&log, &request);
        assert_eq!(outcome.hits.len(), 25);
        assert!(outcome.more);
        let rendered = render_search(&request, &outcome);
        assert!(
            rendered.len() <= SEARCH_RESULT_MAX_BYTES,
            "{}",
            rendered.len()
        );
        assert!(rendered.contains("25 hits, newest first: 25 exact."));
        assert!(rendered.contains("\n#30 user:\n  …xxx"));
        assert!(rendered.contains("needleyyy"));
        let big = "z".repeat(SNIPPET_MATCH_MAX_BYTES * 3);
        let log = Entry::number(
            (0..25).map(|_| Message::user(format!("a{big}b"))),
            1,
            ModelFamily::OpenAi,
        );
        let request = SearchRequest::new(&big[..900], Some(1)).unwrap();
        let rendered = render_search(&request, &search_entries(&log, &request));
        // The header quotes the query: 900 bytes, then the hit with its context.
        assert!(rendered.len() < 2_500, "{}", rendered.len());
        let request = SearchRequest::new(&big[..900], Some(25)).unwrap();
        let rendered = render_search(&request, &search_entries(&log, &request));
        assert!(
            rendered.len() <= SEARCH_RESULT_MAX_BYTES,
            "{}",
            rendered.len()
        );
        assert!(rendered.contains(" more not shown: a result holds about 24000 bytes"));
    }
}
