//! `ctxkit fidelity FILE`: replays a transcript through the engine, as `replay` does, then
//! reports for every checkpoint the session got what its summary kept of the pinned facts
//! (paths, error lines, user requests, identifiers, tasks, the next step), what it dropped,
//! and how many of the dropped ones `search_history` over the complete log finds again, with the
//! summary's size, and the needed-next figure: of the facts the agent's later calls used that only
//! the summary could have given it, the share it holds (the transcript's own compactions, such
//! as Claude Code's continuation summaries, measured the same way as the anchor). The measures
//! are the core's (`checkpoint_fidelity`, `needed_next`): they read the summary the model sees.

use std::path::PathBuf;

use clap::Args;
use ctxkit::reports::{measure_fidelity, play_steps, FidelityReport};
use ctxkit::store::SqliteStore;
use ctxkit::{Engine, EngineConfig};
use ctxkit_core::compaction::FactKind;
use ctxkit_core::offload::session_folder;
use ctxkit_core::Budget;

use super::output::{line, text};
use super::replay::{
    load_steps, remove_offloads, summarizer_config, unused_name, ReplayArgs, SummarizerArg,
};
use super::report::{grid, thousands};
use super::sessions::FormatArg;
use super::{Failure, FamilyArg, Places};

/// Options of `ctxkit fidelity`.
#[derive(Debug, Args)]
pub struct FidelityArgs {
    /// The transcript to replay.
    pub file: PathBuf,
    /// The transcript's format.
    #[arg(long, value_enum, default_value = "auto")]
    pub format: FormatArg,
    /// Which conversation of a file that holds several (0 is the first).
    #[arg(long, default_value_t = 0)]
    pub index: usize,
    /// The model's context window, in tokens.
    #[arg(long, default_value_t = 32_000)]
    pub window: u64,
    /// Who writes summaries (see `ctxkit replay --help`).
    #[arg(long, value_enum, default_value = "extractive")]
    pub summarizer: SummarizerArg,
    /// The tokenizer family to estimate for.
    #[arg(long, value_enum, default_value = "claude")]
    pub model_family: FamilyArg,
    /// One JSON object per checkpoint, then a total object.
    #[arg(long)]
    pub json: bool,
}

/// Runs `ctxkit fidelity`.
pub fn run(places: &Places, args: FidelityArgs) -> Result<(), Failure> {
    let replay = ReplayArgs {
        file: Some(args.file.clone()),
        format: args.format,
        index: args.index,
        window: args.window,
        summarizer: args.summarizer,
        model_family: args.model_family,
        session: None,
        json: true,
        show_summary: false,
    };
    let (name, steps) = load_steps(&replay)?;
    let mut config = EngineConfig {
        budget: Budget::for_window(args.window),
        summarizer: summarizer_config(args.summarizer)?,
        ..EngineConfig::default()
    };
    config.policy.family = args.model_family.into();
    config.prompt.read_agents_md = false;
    config.memory.in_prompt = false;
    // A report stores nothing: the replay runs in a store in memory, and the offload files it
    // writes under the working directory are removed again.
    let folder_of = |session: &str| {
        config
            .offload
            .as_ref()
            .and_then(|policy| session_folder(session, &policy.folder).ok())
    };
    let store = SqliteStore::open_in_memory()?;
    // Its offload files stay pending (their marks in place) until removed below, so a report
    // killed before that leaves nothing the next open does not remove.
    let mut engine = Engine::with_store(Box::new(store), &places.workdir, config.clone())?
        .keep_offloads_pending();
    let session = unused_name(&engine, &format!("fidelity-{name}"), |name| {
        folder_of(name).is_some_and(|folder| places.workdir.join(folder).exists())
    })?;
    let made_folder = folder_of(&session).filter(|folder| !places.workdir.join(folder).exists());
    engine.create_session(&session)?;
    let played = play_steps(&mut engine, &session, steps);
    let report = played.and_then(|()| measure_fidelity(&engine, &session));
    remove_offloads(&engine, &session, made_folder.as_deref());
    let report = report?;
    if args.json {
        for row in report.json_rows(&session, args.window) {
            line(row)?;
        }
        Ok(())
    } else {
        text(render(&report, &args, &session))
    }
}

fn next_cell(needed: usize, held: usize) -> String {
    match (held * 100).checked_div(needed) {
        Some(percent) => format!("{held}/{needed} ({percent}%)"),
        None => "–".to_owned(),
    }
}

fn render(report: &FidelityReport, args: &FidelityArgs, session: &str) -> String {
    let (measured, next, anchor) = (&report.checkpoints, &report.needed_next, &report.transcript);
    let mut out = format!(
        "fidelity of {} at a {}-token window ({} summarizer, session {session}): {} checkpoints\n\n",
        args.file.display(),
        thousands(args.window),
        match args.summarizer {
            SummarizerArg::Extractive => "extractive",
            SummarizerArg::Openai => "openai",
            SummarizerArg::Anthropic => "anthropic",
        },
        measured.len()
    );
    let mut header = vec![
        "through seq".to_owned(),
        "method".to_owned(),
        "bytes".to_owned(),
    ];
    header.extend(FactKind::ALL.iter().map(|kind| kind.as_str().to_owned()));
    header.push("dropped (found again)".to_owned());
    header.push("needed next".to_owned());
    let mut rows = vec![header];
    let cell = |kept: usize, expected: usize| format!("{kept}/{expected}");
    for (checkpoint, next) in measured.iter().zip(next) {
        let mut row = vec![
            checkpoint.through_seq.to_string(),
            checkpoint.method.as_str().to_owned(),
            thousands(checkpoint.summary_bytes as u64),
        ];
        let (mut dropped, mut found) = (0, 0);
        for kind in FactKind::ALL {
            let counts = checkpoint.of(kind);
            row.push(cell(counts.kept, counts.expected));
            dropped += counts.dropped;
            found += counts.found_again;
        }
        row.push(format!("{dropped} ({found})"));
        row.push(next_cell(next.needed, next.held));
        rows.push(row);
    }
    let blank = FactKind::ALL.len() + 1;
    for figure in anchor {
        let mut row = vec![
            figure.through_seq.to_string(),
            "transcript".to_owned(),
            String::new(),
        ];
        row.extend(std::iter::repeat_n(String::new(), blank));
        row.push(next_cell(figure.needed, figure.held));
        rows.push(row);
    }
    if measured.is_empty() && anchor.is_empty() {
        out.push_str("no checkpoint: the transcript fits the window\n");
        return out;
    }
    let mut total = vec!["all".to_owned(), String::new(), String::new()];
    let (mut dropped, mut found) = (0, 0);
    for kind in FactKind::ALL {
        let (expected, kept, d, f) = report.sum(kind);
        total.push(cell(kept, expected));
        dropped += d;
        found += f;
    }
    total.push(format!("{dropped} ({found})"));
    total.push(next_cell(
        next.iter().map(|n| n.needed).sum(),
        next.iter().map(|n| n.held).sum(),
    ));
    rows.push(total);
    out.push_str(&grid(&rows));
    out
}
