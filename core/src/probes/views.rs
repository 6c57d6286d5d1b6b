//! The floor a probe run compares against: a sliding window over the log, the newest messages
//! that fit, as an agent with no compaction but a trim would send.

use crate::model::{Entry, Message, Role};

/// The newest entries of `entries` with `seq <= through` whose estimated tokens fit in `room`,
/// starting at the first that is not a tool result (no result is cut from its call), as
/// messages.
///
/// ```
/// use ctxkit_core::probes::sliding_window;
/// use ctxkit_core::model::Entry;
/// use ctxkit_core::{Message, ModelFamily};
/// let entries: Vec<Entry> = (1..=4).map(|i| Entry::new(i, Message::user(format!("message {i}")), ModelFamily::Claude)).collect();
/// let room = entries[1].tokens + entries[2].tokens;
/// let view = sliding_window(&entries, 3, room);
/// assert_eq!(view.len(), 2);
/// assert_eq!(view[1].text_content(), "message 3");
/// ```
pub fn sliding_window(entries: &[Entry], through: u64, room: u64) -> Vec<Message> {
    let upto: Vec<&Entry> = entries.iter().filter(|e| e.seq <= through).collect();
    let mut start = upto.len();
    let mut used = 0u64;
    while let Some(entry) = start.checked_sub(1).and_then(|at| upto.get(at)) {
        if used + entry.tokens > room {
            break;
        }
        start -= 1;
        used += entry.tokens;
    }
    upto.iter()
        .skip(start)
        .skip_while(|entry| entry.message.role == Role::Tool)
        .map(|entry| entry.message.clone())
        .collect()
}
