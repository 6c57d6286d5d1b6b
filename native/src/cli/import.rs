//! `ctxkit import`: a transcript file into sessions of the database, every session or none.

use std::collections::BTreeMap;
use std::path::PathBuf;

use clap::Args;
use ctxkit::EngineConfig;
use ctxkit_core::import::{import_transcript, Imported};
use ctxkit_core::tokens::ModelFamily;
use serde_json::json;

use super::input::read_text;
use super::output::line;
use super::report::{printable, thousands};
use super::sessions::FormatArg;
use super::{Failure, FamilyArg, Places};

/// Options of `ctxkit import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The transcript file.
    pub file: PathBuf,
    /// Its format.
    #[arg(long, value_enum, default_value = "auto")]
    pub format: FormatArg,
    /// The session's name (default: the file's name). A file holding several conversations
    /// gives NAME/<label> for each.
    #[arg(long)]
    pub session: Option<String>,
    /// The tokenizer family to cache estimates for (default: the family of the model the
    /// transcript names, else claude).
    #[arg(long, value_enum)]
    pub model_family: Option<FamilyArg>,
    /// Print what was imported as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `ctxkit import`.
pub fn import(places: &Places, args: ImportArgs) -> Result<(), Failure> {
    let (file_name, text) = read_text(Some(&args.file))?;
    let imported = import_transcript(&text, args.format.to_core())
        .map_err(|e| Failure::from(e).within(&file_name))?;
    let base = args.session.clone().unwrap_or_else(|| {
        args.file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "imported".to_owned())
    });
    let names = session_names(&imported, &base);
    check_names_differ(&names, &file_name)?;
    let family = match args.model_family {
        Some(family) => family.into(),
        None => imported
            .sessions
            .iter()
            .find_map(|session| session.model.as_deref())
            .and_then(ModelFamily::of_model)
            .unwrap_or(ModelFamily::Claude),
    };
    let mut config = EngineConfig::default();
    config.policy.family = family;
    let mut engine = places.engine(config)?;
    // Nor may a name already be taken: checked before anything is written, too.
    for name in &names {
        if engine.session_info(name).is_ok() {
            return Err(Failure::usage(format!(
                "a session named {:?} already exists (choose another with --session); \
                 nothing was imported",
                printable(name)
            )));
        }
    }
    let calls: Vec<usize> = imported
        .sessions
        .iter()
        .map(|session| session.messages.iter().map(|m| m.tool_calls.len()).sum())
        .collect();
    let compactions: Vec<usize> = imported
        .sessions
        .iter()
        .map(|session| session.compactions.len())
        .collect();
    let format = imported.format;
    // One transaction for the whole file: every session is stored, or none.
    let infos = engine.import_sessions(
        names
            .iter()
            .cloned()
            .zip(
                imported
                    .sessions
                    .into_iter()
                    .map(|session| session.messages),
            )
            .collect(),
    )?;
    let summary: Vec<serde_json::Value> = infos
        .iter()
        .zip(calls.iter().zip(&compactions))
        .map(|(info, (calls, compactions))| {
            json!({"session": info.name, "messages": info.messages, "tool_calls": calls, "tokens": info.total_tokens, "compactions_in_source": compactions})
        })
        .collect();
    if args.json {
        return line(
            json!({"file": file_name, "format": format.as_str(), "family": family.as_str(), "sessions": summary}),
        );
    }
    line(format_args!(
        "imported {file_name} ({}, tokens estimated as {}) into {} session(s):",
        format.as_str(),
        family.as_str(),
        summary.len()
    ))?;
    print_sessions(&summary)
}

/// The name of each conversation of the file: `base` for a file of one, else `base/label`
/// (the first conversation without a label keeps `base`).
fn session_names(imported: &Imported, base: &str) -> Vec<String> {
    match imported.sessions.as_slice() {
        [_] => vec![base.to_owned()],
        sessions => sessions
            .iter()
            .enumerate()
            .map(|(index, session)| match (index, &session.label) {
                // A file's main conversation (a Claude Code session beside its inline
                // sub-agents) keeps the file's name; the others are named under it.
                (0, None) => base.to_owned(),
                (_, label) => {
                    let label = label.clone().unwrap_or_else(|| index.to_string());
                    format!(
                        "{base}/{}",
                        label.split_whitespace().collect::<Vec<_>>().join("-")
                    )
                }
            })
            .collect(),
    }
}

/// Every name is checked before anything is written: a name the file repeats (a conversation
/// listed twice) would fail the import halfway.
fn check_names_differ(names: &[String], file_name: &str) -> Result<(), Failure> {
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for (index, name) in names.iter().enumerate() {
        if let Some(first) = seen.insert(name, index) {
            return Err(Failure::usage(format!(
                "{file_name}: conversations {first} and {index} would both be session {:?} \
                 (the file repeats their label); nothing was imported",
                printable(name)
            )));
        }
    }
    Ok(())
}

/// The report's lines of the imported sessions, the first 20.
fn print_sessions(summary: &[serde_json::Value]) -> Result<(), Failure> {
    for item in summary.iter().take(20) {
        line(format_args!(
            "  {}: {} messages, {} tool calls, {} tokens",
            printable(item["session"].as_str().unwrap_or_default()),
            item["messages"],
            item["tool_calls"],
            thousands(item["tokens"].as_u64().unwrap_or_default())
        ))?;
    }
    if summary.len() > 20 {
        line(format_args!(
            "  … and {} more (ctxkit sessions lists them)",
            summary.len() - 20
        ))?;
    }
    Ok(())
}
