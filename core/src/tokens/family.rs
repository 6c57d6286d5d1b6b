//! Model families: groups of models that share a tokenizer, so one estimate serves them all.
//!
//! Guarantees: the serde names (`"openai"`, `"claude"`, `"claude-4.7"`) are stable; they are
//! what configuration files and the CLI spell.

use serde::Serialize;

/// A group of models that tokenize alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize)]
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

crate::model::unit_enum::unit_enum_deserialize!(
    ModelFamily,
    "ModelFamily",
    [
        OpenAi = "openai",
        Claude = "claude",
        Claude47 = "claude-4.7"
    ]
);

impl ModelFamily {
    /// Every family.
    pub const ALL: [ModelFamily; 3] = [
        ModelFamily::OpenAi,
        ModelFamily::Claude,
        ModelFamily::Claude47,
    ];

    /// The family of a model named as providers name them (`claude-opus-4-6`,
    /// `claude-opus-4-8`, `gpt-5-codex`, `glm-5.1`...), as a transcript records it. Claude
    /// models from Opus 4.7 on have the newer tokenizer; every other model is estimated as
    /// OpenAI's, the family of OpenAI-compatible servers. `None` for a blank name.
    ///
    /// ```
    /// use ctxkit_core::tokens::ModelFamily;
    /// assert_eq!(ModelFamily::of_model("claude-sonnet-4-5-20250929"), Some(ModelFamily::Claude));
    /// assert_eq!(ModelFamily::of_model("claude-opus-4-8"), Some(ModelFamily::Claude47));
    /// assert_eq!(ModelFamily::of_model("gpt-5-codex"), Some(ModelFamily::OpenAi));
    /// assert_eq!(ModelFamily::of_model(" "), None);
    /// ```
    pub fn of_model(model: &str) -> Option<ModelFamily> {
        let model = model.trim().to_ascii_lowercase();
        if model.is_empty() {
            return None;
        }
        // Provider prefixes (`anthropic/claude-...`, `us.anthropic.claude-...`) name the same model.
        let name = model
            .rsplit(['/', '.'])
            .find(|part| part.starts_with("claude"));
        let Some(name) = name.or_else(|| model.contains("claude").then_some(model.as_str())) else {
            return Some(ModelFamily::OpenAi);
        };
        Some(if claude_47_or_later(name) {
            ModelFamily::Claude47
        } else {
            ModelFamily::Claude
        })
    }

    /// The serde name.
    pub const fn as_str(self) -> &'static str {
        match self {
            ModelFamily::OpenAi => "openai",
            ModelFamily::Claude => "claude",
            ModelFamily::Claude47 => "claude-4.7",
        }
    }
}

/// Whether a Claude model name is Opus 4.7 or later: a `major-minor` version of at least 4.7
/// (`claude-opus-4-7`, `claude-opus-4-8`, `claude-sonnet-5`), whatever the tier word.
fn claude_47_or_later(name: &str) -> bool {
    let numbers: Vec<u32> = name
        .split('-')
        .skip_while(|part| part.parse::<u32>().is_err())
        .map_while(|part| part.parse::<u32>().ok())
        .filter(|number| *number < 100) // a date suffix is no version
        .collect();
    match numbers.as_slice() {
        [major, ..] if *major >= 5 => true,
        [4, minor, ..] => *minor >= 7,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_name_gives_its_family() {
        let cases = [
            ("claude-opus-4-6", ModelFamily::Claude),
            ("claude-3-5-sonnet-20241022", ModelFamily::Claude),
            ("claude-sonnet-4-5-20250929", ModelFamily::Claude),
            ("claude-haiku-4-5", ModelFamily::Claude),
            ("claude-opus-4-7", ModelFamily::Claude47),
            ("claude-opus-4-8", ModelFamily::Claude47),
            ("anthropic/claude-opus-4-7", ModelFamily::Claude47),
            ("us.anthropic.claude-sonnet-4-5-v1:0", ModelFamily::Claude),
            ("Claude-Sonnet-5", ModelFamily::Claude47),
            ("gpt-5-codex", ModelFamily::OpenAi),
            ("glm-5.1", ModelFamily::OpenAi),
            ("<synthetic>", ModelFamily::OpenAi),
        ];
        for (model, family) in cases {
            assert_eq!(ModelFamily::of_model(model), Some(family), "{model}");
        }
        assert_eq!(ModelFamily::of_model(""), None);
    }

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
