//! `ctxkit fidelity FILE`: replays a transcript through the engine, as `replay` does, then
//! reports for every checkpoint the session got what its summary kept of the pinned facts
//! (paths, error lines, user requests, identifiers, tasks, the next step), what it dropped,
//! and how many of the dropped ones `search_history` over the complete log finds again, with the
//! summary's size, and the needed-next figure: of the facts the agent's later calls used that only
//! the summary could have given it, the share it holds (the transcript's own compactions, such
//! as Claude Code's continuation summaries, measured the same way as the anchor). The measures
//! are the lab's (`checkpoint_fidelity`, `needed_next`): they read the summary the model sees.

use clap::Args;
use ctxkit::reports::{measure_fidelity, play_steps, FidelityReport};
use ctxkit_core::compaction::FactKind;

use super::output::{line, text};
use super::replay::{scratch_replay, ReportSource};
use super::report::{grid, thousands};
use super::{Failure, Places};

/// Options of `ctxkit fidelity`.
#[derive(Debug, Args)]
pub struct FidelityArgs {
    /// The transcript and how it is replayed.
    #[command(flatten)]
    pub source: ReportSource,
    /// One JSON object per checkpoint, then a total object.
    #[arg(long)]
    pub json: bool,
}

/// Runs `ctxkit fidelity`.
pub fn run(places: &Places, args: FidelityArgs) -> Result<(), Failure> {
    let (session, report) = scratch_replay(
        places,
        &args.source,
        "fidelity",
        |engine, session, steps| {
            play_steps(engine, session, steps)?;
            measure_fidelity(engine, session)
        },
    )?;
    if args.json {
        for row in report.json_rows(&session, args.source.window) {
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
        args.source.file.display(),
        thousands(args.source.window),
        args.source.summarizer.as_str(),
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
