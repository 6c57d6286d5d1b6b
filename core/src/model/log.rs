//! The log as the pipeline reads it: entries with a stable `seq` and a cached estimate
//! (computed by `Entry::new`, which lives with the estimator in [`crate::tokens`]).
//!
//! The complete log is append-only and never changed by planning. Each [`Entry`] carries the
//! token estimate computed once, when the message was appended, so planning a turn never
//! re-estimates the log. Entries are in strictly increasing `seq` order; the pipeline finds the
//! latest checkpoint's position by binary search and reads only what follows it.

use serde::{Deserialize, Serialize};

use crate::model::{Message, Role};

/// One message of a session's log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Entry {
    /// The message's position in its session, strictly increasing, never reused.
    pub seq: u64,
    /// The message as appended.
    pub message: Message,
    /// Its token estimate, computed once at append time.
    pub tokens: u64,
}

/// How far back a tool result's call is looked for: a result follows its call closely, and the
/// bound keeps a lookup's cost independent of the log's length.
pub const CALL_LOOKBACK: usize = 1_000;

/// The name of the tool whose call `call_id` a result answers, looked for in the last
/// [`CALL_LOOKBACK`] entries of `entries`.
pub fn tool_name_for_result<'l>(entries: &'l [Entry], call_id: &str) -> Option<&'l str> {
    entries
        .iter()
        .rev()
        .take(CALL_LOOKBACK)
        .filter(|entry| entry.message.role == Role::Assistant)
        .flat_map(|entry| entry.message.tool_calls.iter())
        .find(|call| call.id == call_id)
        .map(|call| call.name.as_str())
}

/// The index of the first entry with `seq > through_seq` (all of them when `None`).
pub fn first_after(entries: &[Entry], through_seq: Option<u64>) -> usize {
    match through_seq {
        None => 0,
        Some(through) => entries.partition_point(|entry| entry.seq <= through),
    }
}

/// Indices where the log can be cut without separating an assistant message from any of its
/// tool results: before an assistant message, or before a user/system message when no tool
/// message follows it before the next assistant message. Ascending.
pub fn safe_cut_points(entries: &[Entry]) -> Vec<usize> {
    let mut points = Vec::new();
    let mut tool_ahead = false;
    for (index, entry) in entries.iter().enumerate().rev() {
        match entry.message.role {
            Role::Tool => tool_ahead = true,
            Role::Assistant => {
                points.push(index);
                tool_ahead = false;
            }
            Role::User | Role::System => {
                if !tool_ahead {
                    points.push(index);
                }
            }
        }
    }
    points.reverse();
    points
}

/// Where a pair-safe sliding window of the last `keep_last` messages starts: the first safe cut
/// point that keeps at most `keep_last` messages, or, when the last messages are one long
/// exchange, the last safe cut point before it (keeping a few more).
pub fn window_start(entries: &[Entry], keep_last: usize) -> usize {
    let earliest = entries.len().saturating_sub(keep_last);
    let points = safe_cut_points(entries);
    points
        .iter()
        .copied()
        .find(|point| *point >= earliest)
        .or_else(|| points.iter().copied().rev().find(|point| *point < earliest))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ToolCall;

    #[test]
    fn cut_points_never_split_an_exchange() {
        // Entries numbered from 1, estimates left at 0 (cuts read only the roles).
        let log: Vec<Entry> = [
            Message::user("a"),
            Message::assistant(
                "",
                vec![ToolCall::new("1", "x", "{}"), ToolCall::new("2", "x", "{}")],
            ),
            Message::tool_result("1", "r1", false),
            Message::user("interleaved"),
            Message::tool_result("2", "r2", false),
            Message::assistant("done", vec![]),
            Message::user("next"),
        ]
        .into_iter()
        .zip(1..)
        .map(|(message, seq)| Entry {
            seq,
            message,
            tokens: 0,
        })
        .collect();
        assert_eq!(safe_cut_points(&log), vec![0, 1, 5, 6]);
        assert_eq!(first_after(&log, Some(3)), 3);
        assert_eq!(first_after(&log, None), 0);
        assert_eq!(first_after(&log, Some(99)), 7);
        assert_eq!(window_start(&log, 2), 5);
        assert_eq!(
            window_start(&log, 4),
            5,
            "never starts inside the exchange at 1..5"
        );
        assert_eq!(window_start(&log, 100), 0);
    }
}
