//! What `ctxkit.Engine`'s methods share besides the engine itself: the input cap, the prepared
//! turn as the Python dict `prepare` returns, and the log's tail.
//!
//! Rendering a turn is CPU work on values already in memory, so it runs with the GIL held: a
//! release would cost a GIL round trip, which on an interpreter whose other threads are busy
//! (LangGraph's executor saving a 10,000-message state) waits up to the switch interval (5 ms)
//! for a call of a few hundred microseconds.

use ctxkit::{Engine as NativeEngine, TurnResult};
use ctxkit_core::recall::{ReadRequest, READ_MAX_MESSAGES};
use ctxkit_core::tokens::check_input_bytes;
use ctxkit_core::Message;
use pyo3::prelude::*;
use serde::Serialize;
use serde_json::json;

use crate::args::unsigned;
use crate::convert::to_py;
use crate::errors::{core_in, native};
use crate::functions::{read_messages, wire_format};

/// The most messages an `append` runs with the GIL held (see `Engine::with_held`): a step's new
/// messages, never a whole conversation handed over at once.
pub const SHORT_BATCH: usize = 16;

/// The most log messages after the latest checkpoint a sync turn without a summarizer runs on
/// with the GIL held: a step's view (about 1 ms), never a first turn over a whole imported
/// conversation (360 ms for 10,000 messages), whose compaction other threads must not wait for.
pub const SHORT_TURN: u64 = 256;

/// Whether `name`'s next turn is short (see [`SHORT_TURN`]); `false` when that is not known.
pub fn turn_is_short(engine: &NativeEngine, name: &str) -> bool {
    engine.store().session_head(name).is_ok_and(|head| {
        head.last_seq - head.checkpoint_through.unwrap_or(0).min(head.last_seq) <= SHORT_TURN
    })
}

/// The most messages a `tail` reads with the GIL held: a page of the log.
pub const SHORT_TAIL: u64 = READ_MAX_MESSAGES;

/// The log's tail as `tail` returns it.
#[derive(Debug, Serialize)]
pub struct Tail {
    /// The log's last seq (0 for an empty log).
    pub last_seq: u64,
    /// Its last entries, oldest first.
    pub entries: Vec<TailEntry>,
}

/// One entry of a [`Tail`].
#[derive(Debug, Serialize)]
pub struct TailEntry {
    /// Its position in the log.
    pub seq: u64,
    /// The message, as the log holds it.
    pub message: Message,
}

/// `messages` read as `format` (the call `call` names them in errors), refused with
/// `InvalidInputError` when they hold more than `max_input_bytes` (not negative).
pub fn read_capped(
    messages: &Bound<'_, PyAny>,
    format: &str,
    max_input_bytes: i128,
    call: &'static str,
) -> PyResult<Vec<Message>> {
    let messages = read_messages(messages, format).map_err(core_in(call))?;
    let cap = unsigned(max_input_bytes, "max_input_bytes")?;
    check_input_bytes(&messages, cap, "max_input_bytes=").map_err(core_in(call))?;
    Ok(messages)
}

/// A prepared turn as `prepare` returns it: `{"session", "format", "messages" (the view in
/// `format`), "system_prompt", "stats", "compacted", "events"}`, rendered with the GIL held.
pub fn turn_to_py<'py>(
    py: Python<'py>,
    format: &str,
    cached: bool,
    turn: TurnResult,
) -> PyResult<Bound<'py, PyAny>> {
    let wire = wire_format(format, "format").map_err(core_in("prepare"))?;
    let rendered = if cached {
        turn.render_cached(wire)
    } else {
        turn.render(wire)
    }
    .map_err(native)?;
    let value = json!({
        "session": turn.session,
        "format": wire.as_str(),
        "messages": rendered,
        "system_prompt": turn.system_prompt(),
        "stats": turn.stats,
        "compacted": turn.compacted,
        "events": turn.events,
    });
    to_py(py, &value)
}

/// The log's last seq and its last `count` entries, read a page of [`READ_MAX_MESSAGES`] at a
/// time from the end: the reads follow `count`, never the log's length.
pub fn tail_of(engine: &NativeEngine, name: &str, count: u64) -> ctxkit::Result<Tail> {
    let store = engine.store();
    let last_seq = store.session_head(name)?.last_seq;
    let first = last_seq.saturating_sub(count).saturating_add(1);
    let mut entries = Vec::new();
    let mut from = first;
    while from <= last_seq {
        let to = from.saturating_add(READ_MAX_MESSAGES - 1).min(last_seq);
        let request = ReadRequest {
            from,
            to,
            asked_to: None,
        };
        let page = store.read_history(name, &request)?;
        entries.extend(page.messages.into_iter().map(|m| TailEntry {
            seq: m.seq,
            message: m.message,
        }));
        from = to.saturating_add(1);
    }
    Ok(Tail { last_seq, entries })
}
