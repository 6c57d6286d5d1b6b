//! Appends that can be retried (issue 34 item 4): an append may carry an idempotency key,
//! stored with its batch in the append's transaction (`append_keys`: the session, the key, the
//! batch's first and last seq), so when a commit succeeded but its acknowledgement was lost, the
//! retry with the same key finds it and returns the first result ([`Appended::Repeated`])
//! instead of storing the batch again. Both backends look the key up after locking the session
//! (SQLite's `BEGIN IMMEDIATE`, PostgreSQL's row lock), so two writers with one key store it
//! once.
//!
//! The key is the caller's ([`check_key`] bounds it), or derived from the batch and the seq it
//! expects to follow ([`derived_key`]): a retry that states the same seq and the same messages
//! makes the same key, and two equal batches at different places in the log make different
//! ones.

use ctxkit_core::Message;

use crate::error::{Error, Result};

/// The longest key, in characters.
pub const MAX_APPEND_KEY_CHARS: usize = 200;

/// What a keyed append did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Appended {
    /// The batch was stored now.
    Stored,
    /// The key was stored already, with the batch that holds these seqs: nothing was written.
    Repeated {
        /// The first seq of the batch stored under the key.
        first_seq: u64,
        /// Its last seq.
        last_seq: u64,
    },
}

/// Refuses a key that is empty, longer than [`MAX_APPEND_KEY_CHARS`] or holds a control
/// character (a key is printed in messages and stored as text on both backends).
pub fn check_key(key: &str) -> Result<()> {
    let problem = if key.is_empty() {
        "empty: an append key needs at least one character"
    } else if key.chars().count() > MAX_APPEND_KEY_CHARS {
        "longer than 200 characters"
    } else if key.chars().any(char::is_control) {
        "holds a control character"
    } else {
        return Ok(());
    };
    Err(Error::invalid("key", problem))
}

/// The key of a batch of `messages` that expects to follow seq `after` (0: the log's start):
/// `after:SEQ:HASH`, the hash a 128-bit FNV-1a of the messages' ctxkit JSON, so the same batch
/// at the same place makes the same key in any process and build.
pub fn derived_key(after: u64, messages: &[Message]) -> Result<String> {
    let json = serde_json::to_vec(messages)
        .map_err(|error| Error::invalid("messages", format!("cannot be serialized: {error}")))?;
    const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013B;
    let hash = json.iter().fold(
        0x6c62_272e_07bb_0142_62b8_2175_6295_c58d_u128,
        |hash, byte| (hash ^ u128::from(*byte)).wrapping_mul(PRIME),
    );
    Ok(format!("after:{after}:{hash:032x}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_derived_key_names_the_place_and_the_content() {
        let batch = [Message::user("continue")];
        let key = derived_key(7, &batch).unwrap();
        assert_eq!(key, derived_key(7, &batch).unwrap());
        assert_ne!(key, derived_key(8, &batch).unwrap());
        assert_ne!(key, derived_key(7, &[Message::user("continue!")]).unwrap());
        assert!(key.starts_with("after:7:"));
        check_key(&key).unwrap();
    }

    #[test]
    fn keys_are_bounded() {
        assert!(check_key("").is_err());
        assert!(check_key(&"k".repeat(201)).is_err());
        assert!(check_key("a\nb").is_err());
        check_key(&"k".repeat(200)).unwrap();
    }
}
