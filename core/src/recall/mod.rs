//! History recall: the log is complete, so the agent can get back what a summary left out.
//!
//! Three tools, offered to the model like any other and executed by the shell over its log:
//! - `search_history` (query, limit): messages holding a piece of text, case-insensitively,
//!   exact matches first, each hit a bounded snippet with its `seq`; offloaded outputs are
//!   searched too, a hit there naming the `read_offload` call that pages to its line;
//! - `read_history` (from, to): a range of the log by `seq`, rendered like the summary
//!   transcript, bounded per message and in total, saying where to continue;
//! - `read_offload` (path, offset, limit): a page of lines of an offloaded output, for agents
//!   with no file tool, only ever inside the session's offload folder.
//!
//! What lives here, one concept per file:
//! - `tools`: the [`ToolDefinition`]s ([`history_tools`]) and their OpenAI and Anthropic forms;
//! - `limits`: every bound the schemas promise and the calls keep;
//! - `request`: a call's JSON arguments read into a [`HistoryRequest`] ([`parse_history_call`]);
//! - `searchable`: what of a message is searched ([`searchable_text`]), which the native FTS5
//!   index stores and the in-memory search reads;
//! - `matching`: the case fold both searches share;
//! - `search`: the two passes (exact, then every word) over a log in memory
//!   ([`search_entries`], for the wasm shell), and how both shells order and cut hits;
//! - `offload_hits`: hits in offloaded outputs' full text ([`offload_match`], [`merge_hits`]),
//!   which point to `read_offload` at the match's line;
//! - `render_search`, `render_read`: the tool results the model reads;
//! - `offload_page`: the paths `read_offload` may read and a page of one;
//! - `fact_search`: a pinned fact looked up the way the agent would ([`finds_fact`]), which the
//!   fidelity report counts as "found again";
//! - `guidance`: the system prompt's `## Conversation History` section, shown once the session
//!   has a checkpoint.
//!
//! Guarantees: everything is pure (the shells find the messages and read the files); every
//! result is bounded and says what it left out; a bad call is an error naming the tool and the
//! argument, for the shell to return as the tool's failed result.

pub(crate) mod fact_search;
pub(crate) mod guidance;
mod integer;
pub(crate) mod limits;
pub(crate) mod matching;
pub(crate) mod offload_hits;
pub(crate) mod offload_page;
pub(crate) mod render_read;
pub(crate) mod render_search;
pub(crate) mod request;
pub(crate) mod search;
pub(crate) mod searchable;
pub(crate) mod tools;

pub use fact_search::{fact_query, finds_fact, search_found};
pub use guidance::{history_section, wants_history_guidance, HISTORY_HEADING};
pub use limits::{
    OFFLOAD_DEFAULT_LINES, OFFLOAD_LINE_MAX_BYTES, OFFLOAD_MAX_LINES, OFFLOAD_PAGE_MAX_BYTES,
    OFFLOAD_READ_MAX_BYTES, QUERY_MAX_BYTES, QUERY_MAX_TERMS, READ_CALL_MAX_BYTES,
    READ_DEFAULT_MESSAGES, READ_MAX_MESSAGES, READ_MESSAGE_MAX_BYTES, READ_TOTAL_MAX_BYTES,
    SEARCH_DEFAULT_LIMIT, SEARCH_MAX_LIMIT, SEARCH_RESULT_MAX_BYTES, SEARCH_SCAN_MAX_BYTES,
    SNIPPET_CONTEXT_BYTES, SNIPPET_MATCH_MAX_BYTES,
};
pub use matching::{contains_folded, fold_for_search};
pub use offload_hits::{merge_hits, offload_match, OffloadMatch, OffloadedText};
pub use offload_page::{check_offload_path, render_offload_page, OffloadPath, OFFLOAD_PAGE_HEADER};
pub use render_read::render_read;
pub use render_search::render_search;
pub use request::{
    parse_history_call, HistoryRequest, OffloadPageRequest, ReadRequest, SearchRequest,
};
pub use search::{
    read_entries, search_entries, search_entries_with, HistoryHit, HistoryMessage, SearchOutcome,
};
pub use searchable::{searchable_text, HISTORY_READ_HEADER, HISTORY_SEARCH_HEADER};
pub use tools::{
    history_tools, is_history_tool, ToolDefinition, READ_HISTORY, READ_OFFLOAD, SEARCH_HISTORY,
};
