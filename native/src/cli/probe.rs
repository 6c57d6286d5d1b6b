//! `ctxkit probe FILE`: replays a transcript through the engine, as `ctxkit fidelity` does,
//! and after each compaction asks an OpenAI-compatible model (`OPENAI_BASE_URL`,
//! `CTXKIT_MODEL`) the core's probe questions over the view the agent would have sent (and
//! over the full log and a sliding window, the ceiling and the floor), at temperature 0 with
//! a fixed seed; grades each answer by its key and prints, per kind of probe, the share
//! answered for each view. Requests are bounded in number (`--max-probes`, `--max-requests`),
//! size (`--max-request-bytes`, `--max-tokens`) and time (`--timeout`); a failed request is
//! reported with its probe and the run goes on. The probes, the grading and the views are
//! the core's and `ctxkit::reports::probe`'s.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};
use ctxkit::llm::{HttpOptions, LlmEndpoint, OpenAiChat};
use ctxkit::reports::probe::{
    ask_probes, replay_for_probes, Outcome, ProbeRequest, ProbeRun, ViewStrategy,
};
use ctxkit::store::SqliteStore;
use ctxkit::{Engine, EngineConfig};
use ctxkit_core::offload::session_folder;
use ctxkit_core::probes::{select_probes, ProbeKind};
use ctxkit_core::Budget;
use serde_json::json;

use super::output::{line, text};
use super::replay::{
    load_steps, remove_offloads, summarizer_config, unused_name, ReplayArgs, SummarizerArg,
};
use super::report::{grid, thousands};
use super::sessions::FormatArg;
use super::{Failure, FamilyArg, Places};

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
    /// The transcript to replay.
    pub file: PathBuf,
    /// The transcript's format.
    #[arg(long, value_enum, default_value = "auto")]
    pub format: FormatArg,
    /// Which conversation of a file that holds several (0 is the first).
    #[arg(long, default_value_t = 0)]
    pub index: usize,
    /// ctxkit's context window for the replay, in tokens.
    #[arg(long, default_value_t = 32_000)]
    pub window: u64,
    /// Who writes ctxkit's summaries during the replay (see `ctxkit replay --help`).
    #[arg(long, value_enum, default_value = "extractive")]
    pub summarizer: SummarizerArg,
    /// The tokenizer family to estimate for.
    #[arg(long, value_enum, default_value = "claude")]
    pub model_family: FamilyArg,
    /// The views to ask over (repeat or separate with commas; default: all three).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub strategy: Vec<StrategyArg>,
    /// Answers asked per probe and view, each with its own seed (1 to 10).
    #[arg(long, default_value_t = 1)]
    pub samples: u32,
    /// Probes asked at most, spread over kinds and checkpoints.
    #[arg(long, default_value_t = 20)]
    pub max_probes: usize,
    /// Requests sent at most (probes x views x samples); fewer probes are asked to fit.
    #[arg(long, default_value_t = 300)]
    pub max_requests: usize,
    /// The largest request body sent, in bytes; a bigger view is reported, not sent.
    #[arg(long, default_value_t = 4 << 20)]
    pub max_request_bytes: usize,
    /// The longest wait for one answer, in seconds.
    #[arg(long, default_value_t = 120)]
    pub timeout: u64,
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
}

/// Runs `ctxkit probe`.
pub fn run(places: &Places, args: ProbeArgs) -> Result<(), Failure> {
    let strategies = strategies(&args)?;
    let client = client(&args)?;
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
    // Nothing is stored: a store in memory, and the offload files removed again.
    let folder_of = |session: &str| {
        config
            .offload
            .as_ref()
            .and_then(|policy| session_folder(session, &policy.folder).ok())
    };
    let store = SqliteStore::open_in_memory()?;
    let mut engine = Engine::with_store(Box::new(store), &places.workdir, config.clone())?;
    let session = unused_name(&engine, &format!("probe-{name}"), |name| {
        folder_of(name).is_some_and(|folder| places.workdir.join(folder).exists())
    })?;
    let made_folder = folder_of(&session).filter(|folder| !places.workdir.join(folder).exists());
    engine.create_session(&session)?;
    let replayed = replay_for_probes(&mut engine, &session, steps);
    remove_offloads(&engine, &session, made_folder.as_deref());
    let replayed = replayed?;

    let per_probe = strategies.len() * args.samples as usize;
    let max_probes = args.max_probes.min(args.max_requests / per_probe);
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
    let requests = ask_probes(
        &replayed,
        &run,
        |messages, sampling| client.chat(messages, args.max_tokens, sampling),
        |request| {
            if json && printed.is_ok() {
                printed = line(request_json(request));
            }
        },
    );
    printed?;
    let table = Table::of(&requests);
    if json {
        return line(table.to_json(&run, replayed.views.len()));
    }
    let head = format!(
        "probes of {} at a {}-token window ({}, {} summaries): {} probes over {} checkpoints, {} requests\n\n",
        args.file.display(),
        thousands(args.window),
        client_name(),
        args.summarizer.as_str(),
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
        ("--max-tokens", args.max_tokens),
        ("--window", args.window),
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

fn client(args: &ProbeArgs) -> Result<OpenAiChat, Failure> {
    let mut endpoint =
        LlmEndpoint::openai_from_env(|key| std::env::var(key).ok()).map_err(|e| {
            Failure::usage(format!("ctxkit probe asks an OpenAI-compatible model: {e}"))
        })?;
    let wait = Duration::from_secs(args.timeout);
    endpoint.http = HttpOptions {
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

fn request_json(request: &ProbeRequest) -> serde_json::Value {
    let probe = &request.probe;
    let outcome = match &request.outcome {
        Outcome::Answered { answer, held } => {
            json!({"status": "answered", "held": held, "answer": answer})
        }
        Outcome::Failed { kind, message } => {
            json!({"status": "error", "error": kind.name(), "message": message})
        }
        Outcome::Skipped { reason } => json!({"status": "skipped", "reason": reason}),
    };
    json!({
        "through_seq": request.through_seq,
        "kind": probe.kind.as_str(),
        "source": probe.source,
        "source_seq": probe.source_seq,
        "in_tail": probe.in_tail,
        "question": probe.question,
        "key": probe.key.all_of,
        "strategy": request.strategy.name(),
        "sample": request.sample,
        "outcome": outcome,
    })
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
