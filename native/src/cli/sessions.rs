//! The session commands: `view`, `append`, `sessions` and `stats` (`import` is `import.rs`),
//! and the transcript formats the commands take.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use ctxkit::store::SessionInfo;
use ctxkit::EngineConfig;
use ctxkit_core::compaction::Budget;
use ctxkit_core::import::{ctxkit_messages, TranscriptFormat};
use ctxkit_core::wire::{dropped_state, WireFormat};

use super::input::read_text;
use super::output::{self, line, note};
use super::report::{percent, printable, table, thousands};
use super::{Failure, Places};

/// A transcript format on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// Detect the format from the content.
    Auto,
    /// Claude Code session JSONL.
    ClaudeCode,
    /// OpenAI Chat Completions messages (also tau-bench trajectory files).
    Openai,
    /// Anthropic Messages (`{system, messages}` or a list).
    Anthropic,
    /// SWE-agent `.traj`.
    SweAgent,
    /// OpenHands events or benchmark output.
    Openhands,
    /// ctxkit messages (JSON array or JSONL).
    Ctxkit,
    /// OpenAI Responses items (`{instructions, input}` or a list).
    Responses,
    /// Gemini contents (`{systemInstruction, contents}` or a list).
    Gemini,
    /// Vercel AI SDK `ModelMessage`s.
    AiSdk,
    /// LangChain serialized messages.
    Langchain,
    /// Codex CLI rollout JSONL (`~/.codex/sessions/`).
    Codex,
    /// pi coding agent session JSONL (`~/.pi/agent/sessions/`).
    Pi,
}

impl FormatArg {
    /// The core's format, `None` for auto-detection.
    pub fn to_core(self) -> Option<TranscriptFormat> {
        match self {
            FormatArg::Auto => None,
            FormatArg::ClaudeCode => Some(TranscriptFormat::ClaudeCode),
            FormatArg::Openai => Some(TranscriptFormat::OpenAi),
            FormatArg::Anthropic => Some(TranscriptFormat::Anthropic),
            FormatArg::SweAgent => Some(TranscriptFormat::SweAgent),
            FormatArg::Openhands => Some(TranscriptFormat::OpenHands),
            FormatArg::Ctxkit => Some(TranscriptFormat::Ctxkit),
            FormatArg::Responses => Some(TranscriptFormat::Responses),
            FormatArg::Gemini => Some(TranscriptFormat::Gemini),
            FormatArg::AiSdk => Some(TranscriptFormat::AiSdk),
            FormatArg::Langchain => Some(TranscriptFormat::LangChain),
            FormatArg::Codex => Some(TranscriptFormat::Codex),
            FormatArg::Pi => Some(TranscriptFormat::Pi),
        }
    }
}

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
}

/// Runs `ctxkit view`: the next view, computed without storing anything (the database is
/// opened read-only).
pub fn view(places: &Places, args: ViewArgs) -> Result<(), Failure> {
    let config = EngineConfig {
        budget: Budget::for_window(args.window),
        ..EngineConfig::default()
    };
    let view = places.read(config, |engine| engine.preview_turn(&args.session))?;
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
            .map(|m| format!(", compacted in memory ({}): not stored", m.as_str()))
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
fn breakpoint_list(breakpoints: &[ctxkit_core::cost::CacheBreakpoint]) -> String {
    use ctxkit_core::cost::BreakpointReason;
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

/// Options of `ctxkit append`.
#[derive(Debug, Args)]
pub struct AppendArgs {
    /// The session.
    pub session: String,
    /// Messages as a JSON array or JSONL (`-` or nothing: standard input).
    pub file: Option<PathBuf>,
    /// Create the session if it does not exist.
    #[arg(long)]
    pub create: bool,
}

/// Runs `ctxkit append`: every message is parsed before the first is stored, and all are
/// stored in one transaction (a race lost to another writer is retried by the engine).
pub fn append(places: &Places, args: AppendArgs) -> Result<(), Failure> {
    let (name, text) = read_text(args.file.as_deref())?;
    let messages = ctxkit_messages(&text).map_err(|e| Failure::from(e).within(&name))?;
    if messages.is_empty() {
        return Err(Failure::usage(format!("{name}: no messages to append")));
    }
    let mut engine = places.engine(EngineConfig::default())?;
    let outcome = match engine.record_batch(&args.session, messages, args.create) {
        Err(ctxkit::Error::NoSuchSession(_)) => {
            return Err(Failure::usage(format!(
                "no session named {:?} (use --create to start one)",
                printable(&args.session)
            )));
        }
        other => other?,
    };
    let offloads: Vec<String> = outcome
        .recorded
        .iter()
        .filter_map(|r| {
            r.offload
                .as_ref()
                .map(|o| format!("seq {} → {}", r.seq, o.relative_path))
        })
        .collect();
    for event in outcome.events.iter().filter(|e| e.is_warning()) {
        note(format_args!(
            "warning: {}",
            serde_json::to_string(event).unwrap_or_default()
        ));
    }
    line(format_args!(
        "appended {} message(s) to {} (seq {}–{}){}",
        outcome.recorded.len(),
        printable(&args.session),
        outcome.recorded.first().map_or(0, |r| r.seq),
        outcome.recorded.last().map_or(0, |r| r.seq),
        if offloads.is_empty() {
            String::new()
        } else {
            format!("; offloaded {}", offloads.join(", "))
        }
    ))
}

/// Options of `ctxkit sessions`.
#[derive(Debug, Args)]
pub struct SessionsArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `ctxkit sessions` (the database opened read-only). Names are shown through
/// [`printable`], so none can forge a line.
pub fn list(places: &Places, args: SessionsArgs) -> Result<(), Failure> {
    let sessions = places.read(EngineConfig::default(), |engine| engine.list_sessions())?;
    if args.json {
        return line(
            serde_json::to_string(&sessions).map_err(|e| Failure::runtime(e.to_string()))?,
        );
    }
    if sessions.is_empty() {
        line(format_args!("no sessions in {}", places.db_display()))?;
    }
    for info in sessions {
        line(format_args!(
            "{:<32} {:>6} messages {:>10} tokens {:>3} checkpoints",
            printable(&info.name),
            info.messages,
            thousands(info.total_tokens),
            info.checkpoints
        ))?;
    }
    Ok(())
}

/// Options of `ctxkit stats`.
#[derive(Debug, Args)]
pub struct StatsArgs {
    /// The session.
    pub session: String,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `ctxkit stats` (the database opened read-only).
pub fn stats(places: &Places, args: StatsArgs) -> Result<(), Failure> {
    let info = places.read(EngineConfig::default(), |engine| {
        engine.session_info(&args.session)
    })?;
    if args.json {
        line(serde_json::to_string(&info).map_err(|e| Failure::runtime(e.to_string()))?)
    } else {
        output::text(render_stats(&info))
    }
}

fn render_stats(info: &SessionInfo) -> String {
    let checkpoint = info
        .latest_checkpoint
        .map(|(through, method)| format!("through seq {through} ({})", method.as_str()))
        .unwrap_or_else(|| "none".to_owned());
    let anchor = info
        .usage_anchor
        .map(|a| {
            format!(
                "{} real tokens for {} estimated",
                thousands(a.input_tokens),
                thousands(a.estimated_tokens)
            )
        })
        .unwrap_or_else(|| "none reported".to_owned());
    format!(
        "{}\n{}",
        printable(&info.name),
        table(&[
            (
                "messages".into(),
                format!("{} (last seq {})", info.messages, info.last_seq)
            ),
            (
                "tokens".into(),
                format!(
                    "{} estimated ({:?} family)",
                    thousands(info.total_tokens),
                    info.family
                )
            ),
            (
                "checkpoints".into(),
                format!("{}, latest {checkpoint}", info.checkpoints)
            ),
            ("offloads".into(), info.offloads.to_string()),
            ("turns".into(), info.turns.to_string()),
            ("usage".into(), anchor),
        ])
    )
}
