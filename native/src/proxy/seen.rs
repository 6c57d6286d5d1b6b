//! The lists (`messages`, Responses' `input`) of the proxy's recent requests, kept so the next
//! request of a conversation, which re-sends the same history with a few messages added, is
//! not parsed again: its list's bytes are compared with a kept list's (a `memcmp`, many times
//! faster than parsing), and the elements that are byte for byte the same are taken as they
//! were split then. Only the rest is parsed (and validated) by serde_json.
//!
//! Guarantees: a request's elements are always its own bytes (a kept list is used only up to
//! the end of its last element that the request repeats exactly, so what is taken from it is
//! what the request holds); bytes taken this way were validated when they were first parsed;
//! at most [`KEPT_LISTS`] lists and [`KEPT_BYTES`] bytes are kept, the oldest dropped first; a
//! list one request superseded (it repeated all of it) is dropped then. A reader may keep a
//! note (a byte) per element with a list (`SeenLists::note`: what it read of the element),
//! given back with the elements a later request repeats. Nothing is written anywhere: the
//! lists live in the proxy's memory only, as the request itself does.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use super::body::RawList;

/// How many recent lists are kept: one per conversation in flight (a main agent and its
/// sub-agents), with room.
pub const KEPT_LISTS: usize = 16;

/// How many bytes of lists are kept at most (a long Claude Code session's request is a few MB).
pub const KEPT_BYTES: usize = 128 << 20;

/// Recent requests' lists (see the module doc). Shared by the proxy's connections.
#[derive(Debug, Default)]
pub struct SeenLists {
    recent: Mutex<Recent>,
}

#[derive(Debug, Default)]
struct Recent {
    lists: VecDeque<Kept>,
    next_id: u64,
}

/// One kept list, its id and its elements' notes (as many as the reader gave).
#[derive(Debug)]
struct Kept {
    id: u64,
    list: RawList,
    notes: Vec<u8>,
}

/// What a kept list says of a new list's text: the elements it repeats byte for byte.
#[derive(Debug, Clone)]
pub(super) struct Known {
    /// The kept list's text (the new text's first `len` bytes are the same).
    pub text: Arc<str>,
    /// The repeated elements' spans in that text (the same in the new text).
    pub spans: Vec<(usize, usize)>,
    /// The notes kept for the repeated elements (fewer when the reader gave fewer).
    pub notes: Vec<u8>,
    /// Which kept list, and whether the new list repeats all of it.
    pub from: u64,
    pub whole: bool,
}

impl Known {
    /// How many bytes of the new text are known: up to the end of the last repeated element.
    pub fn len(&self) -> usize {
        self.spans.last().map_or(0, |span| span.1)
    }
}

impl SeenLists {
    /// The longest run of elements a kept list shares with `text` (a list's text as sent, from
    /// just after its `[`), from its first; `None` when no kept list starts with the same
    /// first element.
    pub(super) fn known(&self, text: &[u8]) -> Option<Known> {
        let recent = self.recent.lock().unwrap_or_else(PoisonError::into_inner);
        for Kept { id, list, notes } in &recent.lists {
            let (kept, spans) = list.parts();
            let Some(&(_, first_end)) = spans.first() else {
                continue;
            };
            if text.get(..first_end) != kept.as_bytes().get(..first_end) {
                continue;
            }
            let same = common_prefix(kept.as_bytes(), text);
            let repeated = spans.partition_point(|span| span.1 <= same);
            return Some(Known {
                text: Arc::clone(kept),
                spans: spans.get(..repeated).unwrap_or_default().to_vec(),
                notes: notes.iter().take(repeated).copied().collect(),
                from: *id,
                whole: repeated == spans.len(),
            });
        }
        None
    }

    /// Keeps `list` (as split, its text the list as sent) as the most recent, with `notes`
    /// (those of the elements it repeated, as [`SeenLists::known`] gave them); drops the kept
    /// list it repeated whole (`superseded`), then the oldest beyond the bounds. Its id.
    pub(super) fn remember(&self, list: &RawList, notes: Vec<u8>, superseded: Option<u64>) -> u64 {
        let mut recent = self.recent.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(old) = superseded {
            recent.lists.retain(|kept| kept.id != old);
        }
        let id = recent.next_id;
        recent.next_id += 1;
        recent.lists.push_front(Kept {
            id,
            list: list.clone(),
            notes,
        });
        let size = |kept: &Kept| kept.list.parts().0.len();
        let mut bytes: usize = recent.lists.iter().map(size).sum();
        while recent.lists.len() > KEPT_LISTS || (bytes > KEPT_BYTES && recent.lists.len() > 1) {
            if let Some(dropped) = recent.lists.pop_back() {
                bytes -= size(&dropped);
            }
        }
        if bytes > KEPT_BYTES {
            // A single list over the bound is not kept either.
            recent.lists.clear();
        }
        id
    }

    /// Sets the notes of the kept list `id` (one per element, from its first); nothing when it
    /// is no longer kept.
    pub(super) fn note(&self, id: u64, notes: Vec<u8>) {
        let mut recent = self.recent.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(kept) = recent.lists.iter_mut().find(|kept| kept.id == id) {
            kept.notes = notes;
        }
    }

    /// How many lists are kept.
    pub fn len(&self) -> usize {
        self.recent
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .lists
            .len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// How many leading bytes `a` and `b` share: compared a block at a time (a `memcmp`), then
/// byte by byte in the block that differs.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 4096;
    let end = a.len().min(b.len());
    let mut at = 0;
    while at + BLOCK <= end && a.get(at..at + BLOCK) == b.get(at..at + BLOCK) {
        at += BLOCK;
    }
    let rest = a.get(at..end).unwrap_or_default();
    let other = b.get(at..end).unwrap_or_default();
    at + rest.iter().zip(other).take_while(|(x, y)| x == y).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_prefix_counts_across_blocks() {
        let a = vec![7u8; 10_000];
        let mut b = a.clone();
        assert_eq!(common_prefix(&a, &b), 10_000);
        b[9_000] = 0;
        assert_eq!(common_prefix(&a, &b), 9_000);
        assert_eq!(common_prefix(&a, &b[..5]), 5);
        assert_eq!(common_prefix(b"", &a), 0);
    }
}
