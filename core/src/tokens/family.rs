//! Model families: groups of models that share a tokenizer, so one estimate serves them all.
//!
//! Guarantees: the serde names (`"openai"`, `"claude"`, `"claude-4.7"`) are stable; they are
//! what configuration files and the CLI spell.

use serde::{Deserialize, Serialize};

/// A group of models that tokenize alike.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize,
)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum ModelFamily {
    /// OpenAI's `o200k_base` models (GPT-4o, GPT-4.1, o-series, GPT-5) and, roughly,
    /// OpenAI-compatible servers. The default.
    #[default]
    #[serde(rename = "openai")]
    OpenAi,
    /// Anthropic's tokenizer from Claude 3 through Claude Opus 4.6 (Sonnet 4.x, Haiku 4.5).
    #[serde(rename = "claude")]
    Claude,
    /// Anthropic's tokenizer from Claude Opus 4.7 on: 1.2–1.45× more tokens than
    /// [`ModelFamily::Claude`] on Latin-script text and code, about the same on CJK.
    #[serde(rename = "claude-4.7")]
    Claude47,
}

impl ModelFamily {
    /// Every family.
    pub const ALL: [ModelFamily; 3] = [
        ModelFamily::OpenAi,
        ModelFamily::Claude,
        ModelFamily::Claude47,
    ];

    /// The serde name.
    pub const fn as_str(self) -> &'static str {
        match self {
            ModelFamily::OpenAi => "openai",
            ModelFamily::Claude => "claude",
            ModelFamily::Claude47 => "claude-4.7",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_names_are_the_documented_ones() {
        for family in ModelFamily::ALL {
            let json = serde_json::to_string(&family).unwrap_or_default();
            assert_eq!(json, format!("\"{}\"", family.as_str()));
            let back: Option<ModelFamily> = serde_json::from_str(&json).ok();
            assert_eq!(back, Some(family));
        }
    }
}
