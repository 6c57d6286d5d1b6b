//! The bounds of the history tools, in one place: how long a query may be, how many hits and
//! messages a call returns, and how many bytes its result may hold. The tool schemas, the
//! argument checks and the renderers all read them from here, so what a schema promises is
//! what a call does.

/// A search query longer than this (in bytes, after trimming) is refused: the model is asked
/// for a shorter, distinctive piece of the text.
pub const QUERY_MAX_BYTES: usize = 1_000;
/// At most this many distinct words of a query are required by the every-word pass (the
/// exact pass always uses the whole query).
pub const QUERY_MAX_TERMS: usize = 32;
/// Hits a search returns when the call gives no `limit`.
pub const SEARCH_DEFAULT_LIMIT: usize = 10;
/// The most hits a search returns (a larger `limit` is clamped to it).
pub const SEARCH_MAX_LIMIT: usize = 25;
/// Bytes of text shown on each side of a match in a hit's snippet.
pub const SNIPPET_CONTEXT_BYTES: usize = 160;
/// The most bytes of the matched text itself a snippet shows.
pub const SNIPPET_MATCH_MAX_BYTES: usize = 1_200;
/// A search result (all hits with their snippets) is at most about this many bytes: hits that
/// would pass it are left out, and the result says so.
pub const SEARCH_RESULT_MAX_BYTES: usize = 24_000;
/// The in-memory search reads at most this many bytes of message text per call (newest
/// first); older messages are then not searched, and the result says from where.
pub const SEARCH_SCAN_MAX_BYTES: usize = 64 << 20;

/// Messages a read returns when the call gives no `to`.
pub const READ_DEFAULT_MESSAGES: u64 = 10;
/// The most messages one read returns (a longer range is shortened, and the result says where
/// to continue).
pub const READ_MAX_MESSAGES: u64 = 40;
/// Each message's text (and each tool result) in a read is cut head and tail to this many bytes.
pub const READ_MESSAGE_MAX_BYTES: usize = 4_000;
/// Each tool call's arguments in a read are cut head and tail to this many bytes.
pub const READ_CALL_MAX_BYTES: usize = 2_000;
/// A read's messages together are at most this many bytes; the ones after are left for the
/// next read.
pub const READ_TOTAL_MAX_BYTES: usize = 24_000;

/// Lines a page of an offloaded output has when the call gives no `limit`.
pub const OFFLOAD_DEFAULT_LINES: usize = 200;
/// The most lines one page has (a larger `limit` is clamped to it).
pub const OFFLOAD_MAX_LINES: usize = 1_000;
/// Each line of a page is cut to this many bytes.
pub const OFFLOAD_LINE_MAX_BYTES: usize = 2_000;
/// A page's lines together are at most this many bytes; the rest is left for the next page.
pub const OFFLOAD_PAGE_MAX_BYTES: usize = 24_000;
/// A shell reads at most this many bytes of an offloaded file to page it.
pub const OFFLOAD_READ_MAX_BYTES: u64 = 64 << 20;
