//! The cap on the bytes one input may carry into a session: every shell refuses more than
//! [`DEFAULT_MAX_INPUT_BYTES`] unless its caller raises the cap (the CLI's
//! `--max-input-bytes`, the Python `Engine`'s `max_input_bytes=` keyword, the npm `Engine`'s
//! `maxInputBytes` option). One rule, here, so the shells cannot drift apart: a 300 MB message
//! stored by one shell and refused by another is a bug, and an unbounded input is memory and
//! minutes a wrong caller can take.

use crate::error::{CoreError, Result};
use crate::model::Message;
use crate::tokens::message_bytes;

/// The input cap when the caller sets none: 256 MiB, far above any transcript ctxkit has been
/// given.
pub const DEFAULT_MAX_INPUT_BYTES: u64 = 256 * 1024 * 1024;

/// Refuses `messages` when their bytes (text, thinking, tool calls and ids, as
/// [`message_bytes`] counts them) pass `max_bytes`; the error names `parameter`, the knob that
/// raises the cap, and the two numbers.
pub fn check_input_bytes(messages: &[Message], max_bytes: u64, parameter: &str) -> Result<()> {
    let bytes = messages.iter().fold(0u64, |sum, message| {
        sum.saturating_add(message_bytes(message))
    });
    if bytes > max_bytes {
        return Err(CoreError::invalid(
            "messages",
            format!(
                "{bytes} bytes is over the input cap of {max_bytes} bytes; raise it with {parameter}"
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_refuses_one_byte_more_and_names_the_parameter() {
        let messages = [Message::user("abcd"), Message::user("efgh")];
        assert!(check_input_bytes(&messages, 8, "max_input_bytes").is_ok());
        let refused = check_input_bytes(&messages, 7, "max_input_bytes").unwrap_err();
        let said = refused.to_string();
        assert!(
            said.contains("max_input_bytes") && said.contains("8 bytes"),
            "{said}"
        );
        assert!(check_input_bytes(&[], 0, "x").is_ok());
    }
}
