//! `ctxkit tokens` and `ctxkit validate`: the estimators and the provider validators on a file.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use ctxkit_core::import::import_transcript;
use ctxkit_core::tokens::{bytes4_messages, estimate_messages, estimate_text, ModelFamily};
use ctxkit_core::{validate_anthropic, validate_openai, Message};
use serde_json::json;

use super::input::read_text;
use super::output::line;
use super::report::thousands;
use super::{Failure, FamilyArg};

/// Options of `ctxkit tokens`.
#[derive(Debug, Args)]
pub struct TokensArgs {
    /// A transcript or plain text (`-` or nothing: standard input).
    pub file: Option<PathBuf>,
    /// Estimate for one family only (default: all three, plus bytes/4).
    #[arg(long, value_enum)]
    pub model_family: Option<FamilyArg>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `ctxkit tokens`: a transcript is counted as messages (with framing), anything else as
/// plain text.
pub fn tokens(args: TokensArgs) -> Result<(), Failure> {
    let (name, text) = read_text(args.file.as_deref())?;
    let messages: Option<Vec<Message>> = import_transcript(&text, None).ok().map(|imported| {
        imported
            .sessions
            .into_iter()
            .flat_map(|s| s.messages)
            .collect()
    });
    let families: Vec<ModelFamily> = match args.model_family {
        Some(family) => vec![family.into()],
        None => vec![
            ModelFamily::OpenAi,
            ModelFamily::Claude,
            ModelFamily::Claude47,
        ],
    };
    let counted = |family: ModelFamily| match &messages {
        Some(messages) => estimate_messages(messages, family),
        None => estimate_text(&text, family),
    };
    let kind = match &messages {
        Some(messages) => format!("{} messages", messages.len()),
        None => "plain text".to_owned(),
    };
    let bytes4 = messages
        .as_ref()
        .map_or(text.len() as u64 / 4, |m| bytes4_messages(m));
    if args.json {
        let estimates: serde_json::Map<String, serde_json::Value> = families
            .iter()
            .map(|family| (family_name(*family).to_owned(), json!(counted(*family))))
            .collect();
        return line(
            json!({"input": name, "kind": kind, "bytes": text.len(), "estimates": estimates, "bytes_div_4": bytes4}),
        );
    }
    line(format_args!(
        "{name}: {kind}, {} bytes",
        thousands(text.len() as u64)
    ))?;
    for family in families {
        line(format_args!(
            "  {:<11} {:>10} tokens",
            family_name(family),
            thousands(counted(family))
        ))?;
    }
    if args.model_family.is_none() {
        line(format_args!(
            "  {:<11} {:>10} tokens (the reference rule, for comparison)",
            "bytes/4",
            thousands(bytes4)
        ))?;
    }
    Ok(())
}

fn family_name(family: ModelFamily) -> &'static str {
    match family {
        ModelFamily::OpenAi => "openai",
        ModelFamily::Claude => "claude",
        ModelFamily::Claude47 => "claude-4.7",
    }
}

/// A provider whose rules `validate` checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProviderArg {
    /// Anthropic Messages: `{system, messages}` or a messages list.
    Anthropic,
    /// OpenAI Chat Completions: a messages list or `{messages}`.
    Openai,
    /// OpenAI Responses: `{instructions, input}` or a list of items.
    Responses,
    /// Gemini: `{systemInstruction, contents}` or a list of contents.
    Gemini,
}

/// Options of `ctxkit validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// The request file, in the provider's format (`-`: standard input).
    pub file: PathBuf,
    /// Whose rules to check.
    #[arg(long, visible_alias = "format", value_enum)]
    pub provider: ProviderArg,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `ctxkit validate`: exit 0 when the request passes, 1 when it breaks a rule (each
/// violation printed in the provider's words), 2 when the file is not JSON.
pub fn validate(args: ValidateArgs) -> Result<(), Failure> {
    let (name, text) = read_text(Some(&args.file))?;
    let request: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        Failure::usage(format!(
            "{name}: line {}, column {}: invalid JSON: {e}",
            e.line(),
            e.column()
        ))
    })?;
    let violations = match args.provider {
        ProviderArg::Anthropic => validate_anthropic(&request),
        ProviderArg::Openai => validate_openai(&request),
        ProviderArg::Responses => ctxkit_core::wire::validate_responses(&request),
        ProviderArg::Gemini => ctxkit_core::wire::validate_gemini(&request),
    };
    if args.json {
        line(json!({"file": name, "valid": violations.is_empty(), "violations": violations}))?;
    } else if violations.is_empty() {
        line(format_args!("{name}: valid"))?;
    } else {
        for violation in &violations {
            line(format_args!("{name}: {violation}"))?;
        }
    }
    if violations.is_empty() {
        Ok(())
    } else {
        Err(Failure::runtime(format!(
            "{name}: {} violation(s)",
            violations.len()
        )))
    }
}
