//! `ctxkit view`: the next view of a session as JSON ready to send, its stats on standard
//! error. A preview by default (the database opened read-only, nothing stored: a view must not
//! decide the compaction a loop's own turn, maybe with an LLM summarizer, would make); with
//! `--keep`, the engine's turn, stored, so a loop that drives its turns with `ctxkit append` and
//! `ctxkit view --keep` reads the checkpoint and the messages after it, never the whole log.

use clap::{Args, ValueEnum};
use ctxkit::EngineConfig;
use ctxkit_core::compaction::Budget;
use ctxkit_core::wire::{dropped_state, WireFormat};

use super::output::{line, note};
use super::report::{percent, printable, thousands};
use super::{Failure, Places};

/// The shape of a printed view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ViewFormat {
    /// A Chat Completions `messages` array.
    Openai,
    /// An Anthropic request body: `{system, messages}`.
    Anthropic,
    /// ctxkit messages.
    Ctxkit,
    /// An OpenAI Responses request body: `{instructions, input}`.
    Responses,
    /// A Gemini request body: `{systemInstruction, contents}`.
    Gemini,
    /// Vercel AI SDK `ModelMessage`s.
    AiSdk,
    /// LangChain message dicts.
    Langchain,
}

impl From<ViewFormat> for WireFormat {
    fn from(format: ViewFormat) -> Self {
        match format {
            ViewFormat::Openai => WireFormat::Openai,
            ViewFormat::Anthropic => WireFormat::Anthropic,
            ViewFormat::Ctxkit => WireFormat::Ctxkit,
            ViewFormat::Responses => WireFormat::Responses,
            ViewFormat::Gemini => WireFormat::Gemini,
            ViewFormat::AiSdk => WireFormat::AiSdk,
            ViewFormat::Langchain => WireFormat::LangChain,
        }
    }
}

/// Options of `ctxkit view`.
#[derive(Debug, Args)]
pub struct ViewArgs {
    /// The session.
    pub session: String,
    /// The model's context window, in tokens.
    #[arg(long, default_value_t = 200_000)]
    pub window: u64,
    /// The output's shape.
    #[arg(long, value_enum, default_value = "openai")]
    pub format: ViewFormat,
    /// Mark the view's cache breakpoints (the end of the system prompt, of the checkpoint
    /// summary, of the previous turn and of the conversation before its nudges): Anthropic's
    /// `cache_control` blocks; for `responses` and `openai`, OpenAI's `prompt_cache_breakpoint`
    /// on input parts (GPT-5.6 and later: older models cache prefixes by themselves and may
    /// refuse the field). Gemini and the SDK shapes have no markers; the note on standard error
    /// lists the breakpoints for every format.
    #[arg(long)]
    pub cache: bool,
    /// Store the turn this view makes, as an agent loop's turn does (its checkpoint, when it
    /// compacts, extractively; its nudge state and frozen prompt), so later views and appends
    /// read from the checkpoint instead of the whole log. Without it a view is a preview: it
    /// opens the database read-only and stores nothing.
    #[arg(long)]
    pub keep: bool,
}

/// Runs `ctxkit view`: the next view, computed without storing anything (the database is
/// opened read-only), or, with `--keep`, the engine's turn, stored.
pub fn run(places: &Places, args: ViewArgs) -> Result<(), Failure> {
    let config = EngineConfig {
        budget: Budget::for_window(args.window),
        ..EngineConfig::default()
    };
    let view = if args.keep {
        places.engine(config)?.prepare_turn(&args.session)?
    } else {
        places.read(config, |engine| engine.preview_turn(&args.session))?
    };
    let format: WireFormat = args.format.into();
    let body = if args.cache {
        view.render_cached(format)?
    } else {
        view.render(format)?
    };
    let text = serde_json::to_string_pretty(&body).map_err(|e| Failure::runtime(e.to_string()))?;
    line(text)?;
    let stats = &view.stats;
    let dropped = dropped_state(&view.messages, format);
    let breakpoints = if args.cache {
        format!(
            ", cache breakpoints: {}",
            breakpoint_list(&stats.cache_breakpoints)
        )
    } else {
        String::new()
    };
    note(format_args!(
        "view of {}: {} tokens of a {} budget ({}%), {} messages, tier {}{}{}{breakpoints}",
        printable(&args.session),
        thousands(stats.total_tokens),
        thousands(stats.budget_tokens),
        percent(stats.total_tokens, stats.budget_tokens),
        stats.messages,
        stats
            .tier
            .map(|t| format!("{t:?}").to_lowercase())
            .unwrap_or_default(),
        view.compacted
            .map(|m| match args.keep {
                true => format!(", compacted ({}): stored", m.as_str()),
                false => format!(", compacted in memory ({}): not stored", m.as_str()),
            })
            .unwrap_or_default(),
        match dropped {
            0 => String::new(),
            n => format!(
                ", {n} piece{} of provider-bound state dropped (not sendable as {})",
                if n == 1 { "" } else { "s" },
                format.as_str()
            ),
        }
    ));
    Ok(())
}

/// The breakpoints as `system, summary (after message 1), ...`: message numbers count from 1
/// after the system prompt.
fn breakpoint_list(breakpoints: &[ctxkit_core::wire::breakpoints::CacheBreakpoint]) -> String {
    use ctxkit_core::wire::breakpoints::BreakpointReason;
    if breakpoints.is_empty() {
        return "none".to_owned();
    }
    let names: Vec<String> = breakpoints
        .iter()
        .map(|b| {
            let name = match b.reason {
                BreakpointReason::System => "system prompt",
                BreakpointReason::Summary => "summary",
                BreakpointReason::PreviousTurn => "previous turn",
                BreakpointReason::LastMessage => "last message",
            };
            match b.after_message {
                Some(index) => format!("{name} (after message {})", index + 1),
                None => name.to_owned(),
            }
        })
        .collect();
    names.join(", ")
}
