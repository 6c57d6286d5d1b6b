//! The session commands: `append`, `sessions` and `stats` (`import` is `import.rs`, `view` is
//! `view.rs`), and the transcript formats the commands take.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use ctxkit::store::SessionInfo;
use ctxkit::{AppendKey, EngineConfig};
use ctxkit_core::import::{ctxkit_messages, TranscriptFormat};

use super::input::read_text;
use super::output::{self, line, note};
use super::report::{printable, table, thousands};
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
    /// An idempotency key for this batch: stored with it, so running the same append again
    /// (after a lost answer) stores nothing and prints the seqs stored the first time.
    #[arg(long, value_name = "KEY", conflicts_with = "after")]
    pub key: Option<String>,
    /// The seq this batch must follow (the log's last seq as the caller knows it): the batch's
    /// key is derived from it and the messages, so the same append run again stores nothing;
    /// when the log ends elsewhere and the batch is not there, nothing is stored (exit 1).
    #[arg(long, value_name = "SEQ")]
    pub after: Option<u64>,
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
    let key = match (args.key, args.after) {
        (Some(key), _) => Some(AppendKey::Given(key)),
        (None, Some(after)) => Some(AppendKey::After(after)),
        (None, None) => None,
    };
    let appended = match key {
        Some(key) => engine.record_batch_keyed(&args.session, messages, args.create, key),
        None => engine.record_batch(&args.session, messages, args.create),
    };
    let outcome = match appended {
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
        "{} {} message(s) to {} (seq {}–{}){}",
        if outcome.repeated {
            "already appended (same key, nothing stored):"
        } else {
            "appended"
        },
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
