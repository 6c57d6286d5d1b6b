//! `ctxkit cost FILE`: replays a transcript under every context strategy a user would pick and
//! prints what each would have been billed once prompt caching is counted, beside what the
//! session really cost when the transcript records it (Claude Code does). The report is the
//! lab's (`ctxkit_lab::cost::cost_report`); this file reads the file and prints.

use std::path::PathBuf;

use clap::Args;
use ctxkit_lab::cost::{
    cost_report, pricing_for, CostMarks, CostOptions, CostReport, StrategyCost,
};

use super::input::read_text;
use super::output::{line, text};
use super::report::{grid, thousands};
use super::sessions::FormatArg;
use super::Failure;

/// Options of `ctxkit cost`.
#[derive(Debug, Args)]
pub struct CostArgs {
    /// The transcript to replay.
    pub file: PathBuf,
    /// The transcript's format.
    #[arg(long, value_enum, default_value = "auto")]
    pub format: FormatArg,
    /// Which conversation of a file that holds several (0 is the first).
    #[arg(long, default_value_t = 0)]
    pub index: usize,
    /// The model's context window, in tokens.
    #[arg(long, default_value_t = 200_000)]
    pub window: u64,
    /// The model to price (default: the transcript's, else claude-sonnet-4-5).
    #[arg(long)]
    pub model: Option<String>,
    /// The cost marks ctxkit's rows compact by: `TRIGGER/LOW` in view tokens (e.g.
    /// `50000/25000`), or `window` for the window's percentages alone (default: the
    /// budget's, 36000/18000).
    #[arg(long, value_parser = parse_marks)]
    pub cost_marks: Option<CostMarks>,
    /// Print one JSON object per strategy instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Runs `ctxkit cost`.
pub fn run(args: CostArgs) -> Result<(), Failure> {
    let (file_name, content) = read_text(Some(&args.file))?;
    let options = CostOptions {
        format: args.format.to_core(),
        index: args.index,
        window: args.window,
        model: args.model.as_deref(),
        marks: args.cost_marks.unwrap_or_default(),
    };
    let report =
        cost_report(&content, &options).map_err(|e| Failure::from(e).within(&file_name))?;
    if args.json {
        for value in report.json_rows() {
            line(value)?;
        }
        Ok(())
    } else {
        text(render(&report, &file_name))
    }
}

fn render(report: &CostReport, file_name: &str) -> String {
    let recorded = report
        .rows
        .iter()
        .find(|row| row.strategy == "recorded")
        .map(|row| row.input_cost_units);
    let mut rows = vec![[
        "strategy",
        "input cost (units)",
        "USD",
        "vs recorded",
        "cache read",
        "breaks/100",
        "mean tokens",
        "peak tokens",
        "compactions",
        "overflows",
        "pinned recall",
        "needed next",
    ]
    .map(str::to_owned)
    .to_vec()];
    for row in &report.rows {
        rows.push(cells(row, recorded));
    }
    let reserve = if report.reserve_recorded {
        "read from the first call's recorded usage"
    } else {
        "a default: the transcript records no usage"
    };
    let idle = if report.rows.iter().any(|row| row.idle_compactions > 0) {
        "compactions \"(N idle)\": N of them made by the idle timer in a recorded pause, before the cache's lifetime ended (its summary call billed)\n"
    } else {
        ""
    };
    // The units of the model's own prices (the lab's table; a model it lacks has no report).
    let (write, read, _) = pricing_for(&report.model)
        .map(|pricing| pricing.prices.units())
        .unwrap_or((1.0, 1.0, 1.0));
    let marks = match (report.cost_trigger_tokens, report.cost_low_water_tokens) {
        (None, None) => "the window's percentages alone".to_owned(),
        (trigger, low) => format!(
            "above {} view tokens down to {}",
            trigger.map_or("the percentage".to_owned(), thousands),
            low.map_or("the percentage".to_owned(), thousands)
        ),
    };
    format!(
        "{file_name}: {} at a {}-token window; {} tokens of tools and system prompt reserved in every request ({reserve}); ctxkit's rows compact {marks}\n\n{}\
         \nunits: one uncached input token = 1 (a cache write {}, a cache read {}); a summary call's input is counted, its output is not\n\
         needed next: of the paths and identifiers in the agent's tool calls that the log held earlier only in messages the request no longer carried verbatim, the share the request still held (held/needed; –: none needed)\n{idle}",
        report.model,
        thousands(report.window),
        thousands(report.reserve_tokens),
        grid(&rows),
        unit(write),
        unit(read),
    )
}

/// A price multiplier as the units line writes it: `1.25`, `0.1`, `1`.
fn unit(value: f64) -> String {
    let text = format!("{value:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

fn cells(row: &StrategyCost, recorded: Option<f64>) -> Vec<String> {
    let versus = match recorded {
        Some(base) if base > 0.0 && row.strategy != "recorded" => {
            format!("{:.0}%", row.input_cost_units * 100.0 / base)
        }
        _ => "–".to_owned(),
    };
    vec![
        row.strategy.clone(),
        thousands(row.input_cost_units.round() as u64),
        format!("{:.2}", row.input_cost_dollars),
        versus,
        format!("{:.1}%", row.cache_read_share * 100.0),
        format!("{:.1}", row.prefix_breaks_per_100),
        thousands(row.mean_tokens),
        thousands(row.peak_tokens),
        match row.idle_compactions {
            0 => row.compactions.to_string(),
            idle => format!("{} ({idle} idle)", row.compactions),
        },
        row.overflow_calls.to_string(),
        row.pinned_recall
            .map_or("–".to_owned(), |recall| format!("{:.1}%", recall * 100.0)),
        row.needed_next.map_or("–".to_owned(), |share| {
            format!(
                "{:.1}% ({}/{})",
                share * 100.0,
                row.needed_next_held,
                row.needed_next_needed
            )
        }),
    ]
}

/// `--cost-marks`: `TRIGGER/LOW` in tokens, or `window` for none.
fn parse_marks(text: &str) -> Result<CostMarks, String> {
    if text == "window" {
        return Ok(CostMarks {
            trigger_tokens: None,
            low_water_tokens: None,
        });
    }
    let number = |part: &str| {
        part.trim()
            .replace([',', '_'], "")
            .parse::<u64>()
            .map_err(|_| {
                format!("{text:?}: expected TRIGGER/LOW in tokens (e.g. 50000/25000) or `window`")
            })
    };
    let (trigger, low) = text.split_once('/').ok_or_else(|| {
        format!("{text:?}: expected TRIGGER/LOW in tokens (e.g. 50000/25000) or `window`")
    })?;
    let (trigger, low) = (number(trigger)?, number(low)?);
    if low == 0 || low >= trigger {
        return Err(format!(
            "{text:?}: the low-water mark must be above 0 and below the trigger"
        ));
    }
    Ok(CostMarks {
        trigger_tokens: Some(trigger),
        low_water_tokens: Some(low),
    })
}
