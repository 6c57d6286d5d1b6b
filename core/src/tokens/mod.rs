//! Token estimation. (Temporary minimal version while the estimator lands on its branch.)

use crate::message::Message;
use serde::{Deserialize, Serialize};

/// Which tokenizer family to estimate for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum ModelFamily {
    /// OpenAI o200k-like.
    #[default]
    #[serde(rename = "openai")]
    OpenAi,
    /// Claude 3 .. Opus 4.6.
    #[serde(rename = "claude")]
    Claude,
    /// Claude Opus 4.7+.
    #[serde(rename = "claude-4.7")]
    Claude47,
}

/// Estimated tokens of a text.
pub fn estimate_text(text: &str, _family: ModelFamily) -> u64 {
    (text.len() as u64).div_ceil(3)
}

/// Estimated tokens of a message.
pub fn estimate_message(message: &Message, family: ModelFamily) -> u64 {
    let calls: u64 = message
        .tool_calls
        .iter()
        .map(|c| {
            estimate_text(&c.id, family)
                + estimate_text(&c.name, family)
                + estimate_text(&c.arguments, family)
        })
        .sum();
    4 + estimate_text(&message.text_content(), family) + calls
}

mod calibration;
pub use calibration::{calibrated_tokens, UsageAnchor};
