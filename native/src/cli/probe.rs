//! `ctxkit probe FILE`: replays a transcript through the engine, as `ctxkit fidelity` does,
//! and after each compaction asks an OpenAI-compatible model (`OPENAI_BASE_URL`,
//! `CTXKIT_MODEL`) the lab's probe questions over the view the agent would have sent (and
//! over the full log and a sliding window, the ceiling and the floor), at temperature 0 with
//! a fixed seed; grades each answer by its key and prints, per kind of probe, the share
//! answered for each view. Requests are bounded in number (`--max-probes`, `--max-requests`),
//! size (`--max-request-bytes`, `--max-tokens`) and time (`--timeout` per answer, `--deadline`
//! for the run); a failed request is reported with its probe and the run goes on, until
//! [`ctxkit_core::turn::breaker::BREAKER_FAILURES`] fail in a row: then the rest are reported
//! as skipped (the same circuit breaker as the summarizer's, see
//! `ctxkit::reports::probe_guard`). The probes, the grading and the views are
//! the lab's (`ctxkit_lab::probes`) and `ctxkit::reports::probe`'s.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};
use ctxkit::llm::{HttpOptions, LlmEndpoint, OpenAiChat};
use ctxkit::reports::probe::{
    ask_probes, replay_for_probes, Outcome, ProbeRequest, ProbeRun, ViewStrategy,
};
use ctxkit::reports::probe_guard::RunGuard;
use ctxkit_lab::probes::{select_probes, ProbeKind};
use serde_json::json;

use super::output::{line, note, text};
use super::probe_resume::{header, request_json, ResumeFile};
use super::replay::{scratch_replay, ReportSource};
use super::report::{grid, thousands};
use super::{Failure, Places};

/// A view to ask probes over, on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, ValueEnum)]
pub enum StrategyArg {
    /// The view ctxkit made at the compaction.
    Ctxkit,
    /// The whole log up to the same point (the ceiling).
    Full,
    /// The newest messages that fit the same budget (the floor).
    SlidingWindow,
}

impl From<StrategyArg> for ViewStrategy {
    fn from(arg: StrategyArg) -> Self {
        match arg {
            StrategyArg::Ctxkit => ViewStrategy::Ctxkit,
            StrategyArg::Full => ViewStrategy::Full,
            StrategyArg::SlidingWindow => ViewStrategy::SlidingWindow,
        }
    }
}

/// Options of `ctxkit probe`.
#[derive(Debug, Args)]
pub struct ProbeArgs {
    /// The transcript and how it is replayed.
    #[command(flatten)]
    pub source: ReportSource,
    /// The views to ask over (repeat or separate with commas; default: all three).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub strategy: Vec<StrategyArg>,
    /// Answers asked per probe and view, each with its own seed (1 to 10).
    #[arg(long, default_value_t = 1)]
    pub samples: u32,
    /// Probes asked at most, spread over kinds and checkpoints.
    #[arg(long, default_value_t = 20)]
    pub max_probes: usize,
    /// Requests sent at most by this run (probes x views x samples): without --resume, fewer
    /// probes are asked to fit; with --resume, the run stops there and a later run with the
    /// same FILE asks the rest.
    #[arg(long, default_value_t = 300)]
    pub max_requests: usize,
    /// The largest request body sent, in bytes; a bigger view is reported, not sent.
    #[arg(long, default_value_t = 4 << 20)]
    pub max_request_bytes: usize,
    /// The longest wait for one answer, in seconds.
    #[arg(long, default_value_t = 120)]
    pub timeout: u64,
    /// The longest the whole run may ask for, in seconds (the replay before it not
    /// included): once passed, no request is sent and the rest are reported as skipped. A
    /// resumed run (--resume) asks them.
    #[arg(long, default_value_t = 3600)]
    pub deadline: u64,
    /// Output tokens asked per answer.
    #[arg(long, default_value_t = 128)]
    pub max_tokens: u64,
    /// The model's context window in tokens, when known: a view above it is not sent.
    #[arg(long)]
    pub model_window: Option<u64>,
    /// Send tool calls and results as text, for a server that takes no tools (a small local
    /// model's chat template, such as scripts/llm-server.sh's).
    #[arg(long)]
    pub tools_as_text: bool,
    /// The seed of the first sample (the next samples count up from it).
    #[arg(long, default_value_t = 7)]
    pub seed: u64,
    /// One JSON object per request, then a total object.
    #[arg(long)]
    pub json: bool,
    /// Keep each graded request in FILE (JSON lines, after a header naming the transcript and
    /// the options that change the rows) as it finishes; a later run with the same FILE asks
    /// only the requests not there yet and reports them all. A FILE made with other options
    /// or another transcript is refused and left as it was.
    #[arg(long, value_name = "FILE")]
    pub resume: Option<PathBuf>,
}

/// Runs `ctxkit probe`.
pub fn run(places: &Places, args: ProbeArgs) -> Result<(), Failure> {
    let strategies = strategies(&args)?;
    let client = client(&args)?;
    let (_, replayed) = scratch_replay(places, &args.source, "probe", replay_for_probes)?;
    let mut resume = match &args.resume {
        Some(path) => Some(ResumeFile::open(path, &run_header(&args, &strategies)?)?),
        None => None,
    };

    let per_probe = strategies.len() * args.samples as usize;
    let (max_probes, max_sent) = match resume {
        // Resumable: the probes are --max-probes's, and the run stops at --max-requests.
        Some(_) => (args.max_probes, Some(args.max_requests)),
        None => (args.max_probes.min(args.max_requests / per_probe), None),
    };
    let run = ProbeRun {
        selected: select_probes(&replayed.probes, max_probes),
        strategies,
        samples: args.samples,
        seed: args.seed,
        model_window: args.model_window,
        max_request_bytes: args.max_request_bytes,
        tools_as_text: args.tools_as_text,
    };
    let json = args.json;
    let mut printed: Result<(), Failure> = Ok(());
    let earlier = resume
        .as_mut()
        .map(ResumeFile::take_earlier)
        .unwrap_or_default();
    let mut guard = RunGuard::start(Some(Duration::from_secs(args.deadline)));
    let deadline = guard.deadline();
    let asked = ask_probes(
        &replayed,
        &run,
        |id| earlier.get(id).cloned(),
        max_sent,
        &mut guard,
        |messages, sampling| client.chat_within(messages, args.max_tokens, sampling, deadline),
        |request, fresh| {
            if fresh && printed.is_ok() {
                if let Some(file) = resume.as_mut() {
                    printed = file.append(request);
                }
            }
            if json && printed.is_ok() {
                printed = line(request_json(request));
            }
        },
    );
    printed?;
    let requests = asked.requests;
    if let Some(path) = &args.resume {
        let taken = requests
            .iter()
            .filter(|request| earlier.contains_key(&request.id()))
            .count();
        note(format!(
            "ctxkit probe: {taken} request(s) taken from {}, {} asked now",
            path.display(),
            requests.len() - taken
        ));
        if asked.regraded > 0 {
            note(format!(
                "ctxkit probe: {} request(s) in {} had a grade that does not match their answer: graded again (the file is left as it was)",
                asked.regraded,
                path.display()
            ));
        }
        if asked.left > 0 {
            note(format!(
                "ctxkit probe: stopped at --max-requests {}: {} request(s) left; run again with --resume {} to ask them",
                args.max_requests,
                asked.left,
                path.display()
            ));
        }
    }
    let table = Table::of(&requests);
    if json {
        let mut totals = table.to_json(&run, replayed.views.len());
        totals["left"] = json!(asked.left);
        return line(totals);
    }
    let head = format!(
        "probes of {} at a {}-token window ({}, {} summaries): {} probes over {} checkpoints, {} requests\n\n",
        args.source.file.display(),
        thousands(args.source.window),
        client_name(),
        args.source.summarizer.as_str(),
        run.selected.len(),
        replayed.views.len(),
        requests.len(),
    );
    if replayed.views.is_empty() {
        return text(format!(
            "{head}no checkpoint: the transcript fits the window, so there is nothing to probe\n"
        ));
    }
    text(format!(
        "{head}{}",
        table.render(&run.strategies, &requests)
    ))
}

fn strategies(args: &ProbeArgs) -> Result<Vec<ViewStrategy>, Failure> {
    if args.samples == 0 || args.samples > 10 {
        return Err(Failure::usage(format!(
            "--samples {}: expected 1 to 10",
            args.samples
        )));
    }
    for (flag, value) in [
        ("--max-probes", args.max_probes as u64),
        ("--max-requests", args.max_requests as u64),
        ("--max-request-bytes", args.max_request_bytes as u64),
        ("--timeout", args.timeout),
        ("--deadline", args.deadline),
        ("--max-tokens", args.max_tokens),
        ("--window", args.source.window),
    ] {
        if value == 0 {
            return Err(Failure::usage(format!("{flag} 0: expected at least 1")));
        }
    }
    let mut chosen: Vec<StrategyArg> = args.strategy.clone();
    chosen.sort();
    chosen.dedup();
    let strategies: Vec<ViewStrategy> = if chosen.is_empty() {
        ViewStrategy::ALL.to_vec()
    } else {
        chosen.into_iter().map(ViewStrategy::from).collect()
    };
    let per_probe = strategies.len() * args.samples as usize;
    if per_probe > args.max_requests {
        return Err(Failure::usage(format!(
            "--max-requests {}: one probe over {} view(s) with {} sample(s) takes {per_probe} requests",
            args.max_requests,
            strategies.len(),
            args.samples
        )));
    }
    Ok(strategies)
}

/// The header of `--resume`'s file: the transcript and every option that changes the rows.
fn run_header(args: &ProbeArgs, strategies: &[ViewStrategy]) -> Result<serde_json::Value, Failure> {
    let bytes = std::fs::read(&args.source.file).map_err(|error| {
        Failure::runtime(format!(
            "{}: cannot read: {error}",
            args.source.file.display()
        ))
    })?;
    let options = json!({
        "format": format!("{:?}", args.source.format),
        "index": args.source.index,
        "window": args.source.window,
        "summarizer": args.source.summarizer.as_str(),
        "model_family": format!("{:?}", args.source.model_family),
        "strategies": strategies.iter().map(|s| s.name()).collect::<Vec<_>>(),
        "samples": args.samples,
        "max_probes": args.max_probes,
        "max_request_bytes": args.max_request_bytes,
        "max_tokens": args.max_tokens,
        "model_window": args.model_window,
        "tools_as_text": args.tools_as_text,
        "seed": args.seed,
        "model": std::env::var("CTXKIT_MODEL").unwrap_or_default(),
    });
    Ok(header(&args.source.file, &bytes, options))
}

fn client(args: &ProbeArgs) -> Result<OpenAiChat, Failure> {
    let mut endpoint =
        LlmEndpoint::openai_from_env(|key| std::env::var(key).ok()).map_err(|e| {
            Failure::usage(format!("ctxkit probe asks an OpenAI-compatible model: {e}"))
        })?;
    let wait = Duration::from_secs(args.timeout);
    endpoint.http = HttpOptions {
        deadline: wait,
        connect_timeout: wait.min(Duration::from_secs(10)),
        read_timeout: wait,
        max_retries: 0,
        ..HttpOptions::default()
    };
    Ok(OpenAiChat::new(endpoint))
}

fn client_name() -> String {
    let model = std::env::var("CTXKIT_MODEL").unwrap_or_default();
    let url = std::env::var("OPENAI_BASE_URL")
        .unwrap_or_else(|_| ctxkit::llm::OPENAI_DEFAULT_BASE_URL.to_owned());
    format!("model {model} at {url}")
}

/// Asked and held, per (in tail, kind, strategy).
#[derive(Default)]
struct Table {
    cells: BTreeMap<(bool, ProbeKind, ViewStrategy), (usize, usize)>,
    probes: BTreeMap<(bool, ProbeKind), std::collections::BTreeSet<(u64, String)>>,
}

impl Table {
    fn of(requests: &[ProbeRequest]) -> Table {
        let mut table = Table::default();
        for request in requests {
            let probe = &request.probe;
            let at = (probe.in_tail, probe.kind);
            table
                .probes
                .entry(at)
                .or_default()
                .insert((request.through_seq, probe.question.clone()));
            let cell = table
                .cells
                .entry((probe.in_tail, probe.kind, request.strategy))
                .or_default();
            match &request.outcome {
                Outcome::Answered { held, .. } => {
                    cell.0 += 1;
                    cell.1 += usize::from(*held);
                }
                Outcome::Failed { .. } => cell.0 += 1,
                Outcome::Skipped { .. } => {}
            }
        }
        table
    }

    fn share(&self, in_tail: bool, kind: Option<ProbeKind>, strategy: ViewStrategy) -> String {
        let (asked, held) = self
            .cells
            .iter()
            .filter(|((tail, k, s), _)| {
                *tail == in_tail && *s == strategy && kind.is_none_or(|kind| kind == *k)
            })
            .fold((0, 0), |(a, h), (_, (asked, held))| (a + asked, h + held));
        match (held * 100).checked_div(asked) {
            Some(percent) => format!("{held}/{asked} ({percent}%)"),
            None => "–".to_owned(),
        }
    }

    fn grid(&self, in_tail: bool, strategies: &[ViewStrategy]) -> String {
        let mut header = vec!["kind".to_owned(), "probes".to_owned()];
        header.extend(strategies.iter().map(|s| s.name().to_owned()));
        let mut rows = vec![header];
        let count = |kind: Option<ProbeKind>| -> usize {
            self.probes
                .iter()
                .filter(|((tail, k), _)| *tail == in_tail && kind.is_none_or(|kind| kind == *k))
                .map(|(_, set)| set.len())
                .sum()
        };
        let kinds = ProbeKind::ALL
            .iter()
            .copied()
            .filter(|k| count(Some(*k)) > 0);
        for kind in kinds.map(Some).chain([None]) {
            let name = kind.map_or("all", ProbeKind::as_str).to_owned();
            let mut row = vec![name, count(kind).to_string()];
            row.extend(strategies.iter().map(|s| self.share(in_tail, kind, *s)));
            rows.push(row);
        }
        grid(&rows)
    }

    fn render(&self, strategies: &[ViewStrategy], requests: &[ProbeRequest]) -> String {
        let mut out = String::from(
            "answers held (of those asked), for probes whose answer only the summary holds:\n",
        );
        out.push_str(&self.grid(false, strategies));
        if self.probes.keys().any(|(tail, _)| *tail) {
            out.push_str(
                "\nprobes whose answer the view's kept tail still shows (reported apart):\n",
            );
            out.push_str(&self.grid(true, strategies));
        }
        let troubles: Vec<String> = requests
            .iter()
            .filter_map(|request| {
                let what = match &request.outcome {
                    Outcome::Answered { .. } => return None,
                    Outcome::Failed { kind, message } => format!("{}: {message}", kind.name()),
                    Outcome::Skipped { reason } => format!("skipped: {reason}"),
                };
                let probe = &request.probe;
                Some(format!(
                    "- checkpoint through {}, {}/{} (seq {}), {}, sample {}: {what}\n",
                    request.through_seq,
                    probe.kind.as_str(),
                    probe.source,
                    probe.source_seq,
                    request.strategy.name(),
                    request.sample + 1
                ))
            })
            .collect();
        if !troubles.is_empty() {
            out.push_str(&format!(
                "\nrequests without an answer ({}):\n",
                troubles.len()
            ));
            out.extend(troubles);
        }
        out
    }

    fn to_json(&self, run: &ProbeRun, checkpoints: usize) -> serde_json::Value {
        let mut kinds = serde_json::Map::new();
        for in_tail in [false, true] {
            for kind in ProbeKind::ALL {
                let mut per = serde_json::Map::new();
                for strategy in &run.strategies {
                    let (asked, held) = self
                        .cells
                        .get(&(in_tail, kind, *strategy))
                        .copied()
                        .unwrap_or_default();
                    per.insert(
                        strategy.name().to_owned(),
                        json!({"asked": asked, "held": held}),
                    );
                }
                let name = if in_tail {
                    format!("{}_in_tail", kind.as_str())
                } else {
                    kind.as_str().to_owned()
                };
                kinds.insert(name, serde_json::Value::Object(per));
            }
        }
        json!({
            "checkpoints": checkpoints,
            "probes": run.selected.len(),
            "samples": run.samples,
            "strategies": run.strategies.iter().map(|s| s.name()).collect::<Vec<_>>(),
            "kinds": kinds,
        })
    }
}
