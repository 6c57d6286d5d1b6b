//! How many of a session log's message rows (a message's body, read to become an entry) this
//! thread has read from any store, so a test or a benchmark can tell a read of the tail from a
//! read of the log without a clock: a turn must read the latest checkpoint, the messages after
//! it and what its plan needs, and that count must not grow with the log.
//!
//! The count is per thread (the engine calls its store on the caller's thread), so concurrent
//! tests in one process do not see each other's reads. It only ever grows; read it before and
//! after the work to measure.

use std::cell::Cell;

thread_local! {
    static MESSAGE_ROWS_READ: Cell<u64> = const { Cell::new(0) };
}

/// The message rows this thread has read from stores so far (both backends count every row a
/// read of the log by seq returns: a turn's tail, an export, a history read; and the
/// assistant messages read to find the call a tool result answers).
pub fn message_rows_read() -> u64 {
    MESSAGE_ROWS_READ.with(Cell::get)
}

/// Adds `rows` to this thread's count.
pub(crate) fn count_message_rows(rows: usize) {
    let rows = u64::try_from(rows).unwrap_or(u64::MAX);
    MESSAGE_ROWS_READ.with(|count| count.set(count.get().saturating_add(rows)));
}
