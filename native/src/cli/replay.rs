//! `ctxkit replay [FILE]`: plays a session turn by turn through the engine, as an agent loop
//! would (record what the user said, prepare the turn's view, record what the model answered
//! and the tools returned), and reports each turn: a token bar, compactions, offloads, nudges
//! and warnings, then a summary table. With no FILE it plays the built-in session.

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use ctxkit::files::open_folder_inside;
use ctxkit::llm::{Api, LlmEndpoint, SummarizerConfig};
use ctxkit::offload::discard_offload;
use ctxkit::reports::{report_config, session_stem, split_steps, Step};
use ctxkit::store::SqliteStore;
use ctxkit::{Engine, EngineConfig};
use ctxkit_core::compaction::{Budget, Checkpoint};
use ctxkit_core::import::import_transcript;
use ctxkit_core::offload::session_folder;

use super::demo_session::demo_session;
use super::input::read_text;
use super::output::{self, line};
use super::replay_report::{Totals, TurnReport};
use super::report::{printable, thousands, Style};
use super::sessions::FormatArg;
use super::{Failure, FamilyArg, Places};

/// Options of `ctxkit replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// A transcript to replay (default: the built-in session).
    pub file: Option<PathBuf>,
    /// The transcript's format.
    #[arg(long, value_enum, default_value = "auto")]
    pub format: FormatArg,
    /// Which conversation of a file that holds several (0 is the first).
    #[arg(long, default_value_t = 0)]
    pub index: usize,
    /// The model's context window, in tokens (the output reserve and safety margin are taken
    /// from it).
    #[arg(long, default_value_t = 32_000)]
    pub window: u64,
    /// Who writes summaries: the built-in extractive summarizer (offline), or an LLM
    /// (OpenAI-compatible: OPENAI_BASE_URL, OPENAI_API_KEY, CTXKIT_MODEL; Anthropic:
    /// ANTHROPIC_API_KEY, CTXKIT_MODEL). A failing LLM falls back to the extractive summary.
    #[arg(long, value_enum, default_value = "extractive")]
    pub summarizer: SummarizerArg,
    /// The tokenizer family to estimate for.
    #[arg(long, value_enum, default_value = "claude")]
    pub model_family: FamilyArg,
    /// The session to replay into (default: replay-<name>, with a number if taken).
    #[arg(long)]
    pub session: Option<String>,
    /// One JSON object per turn (and a final summary object) instead of the report.
    #[arg(long)]
    pub json: bool,
    /// After the report, print the latest checkpoint's summary: the handoff note the model
    /// reads in place of the turns it covers (with `--json`, one more object,
    /// `{"latest_summary": …}`).
    #[arg(long)]
    pub show_summary: bool,
}

/// The transcript a report (`ctxkit fidelity`, `ctxkit probe`) replays, and how.
#[derive(Debug, Args)]
pub struct ReportSource {
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
    /// Who writes summaries during the replay (see `ctxkit replay --help`).
    #[arg(long, value_enum, default_value = "extractive")]
    pub summarizer: SummarizerArg,
    /// The tokenizer family to estimate for.
    #[arg(long, value_enum, default_value = "claude")]
    pub model_family: FamilyArg,
}

/// Replays `source` for a report: into a scratch engine (a store in memory, this machine's
/// AGENTS.md and memories left out), in a session named `<prefix>-<transcript>` (with a
/// number if its offload folder is taken), then runs `measure` over the engine, the session
/// and the transcript's steps, and removes the offload files the replay wrote. A report
/// stores nothing: its offload files stay pending (their marks in place) until removed, so a
/// report killed before that leaves nothing the next open does not remove. Returns the
/// session's name and what `measure` made.
pub(super) fn scratch_replay<T>(
    places: &Places,
    source: &ReportSource,
    prefix: &str,
    measure: impl FnOnce(&mut Engine, &str, Vec<Step>) -> ctxkit::Result<T>,
) -> Result<(String, T), Failure> {
    let replay = ReplayArgs {
        file: Some(source.file.clone()),
        format: source.format,
        index: source.index,
        window: source.window,
        summarizer: source.summarizer,
        model_family: source.model_family,
        session: None,
        json: true,
        show_summary: false,
    };
    let (name, steps, working_directory) = load_steps(&replay)?;
    let config = EngineConfig {
        summarizer: summarizer_config(source.summarizer)?,
        ..report_config(source.window, source.model_family.into(), working_directory)
    };
    let folder_of = |session: &str| {
        config
            .offload
            .as_ref()
            .and_then(|policy| session_folder(session, &policy.folder).ok())
    };
    let store = SqliteStore::open_in_memory()?;
    let mut engine = Engine::with_store(Box::new(store), &places.workdir, config.clone())?
        .keep_offloads_pending();
    let session = unused_name(&engine, &format!("{prefix}-{name}"), |name| {
        folder_of(name).is_some_and(|folder| places.workdir.join(folder).exists())
    })?;
    let made_folder = folder_of(&session).filter(|folder| !places.workdir.join(folder).exists());
    engine.create_session(&session)?;
    let measured = measure(&mut engine, &session, steps);
    remove_offloads(&engine, &session, made_folder.as_deref());
    Ok((session, measured?))
}

/// Who answers summary requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SummarizerArg {
    /// The core's extractive summarizer (no LLM, no network).
    Extractive,
    /// An OpenAI-compatible Chat Completions endpoint.
    Openai,
    /// The Anthropic Messages API.
    Anthropic,
    /// Anthropic's server compaction (beta): the summary is the signed compaction block's
    /// text, and the block is sent back in Anthropic views.
    AnthropicCompaction,
    /// OpenAI Responses compaction: the opaque compaction item is kept and sent back in
    /// Responses views; the plaintext summary is the extractive one.
    OpenaiResponsesCompaction,
}

/// Runs `ctxkit replay`.
///
/// The replay plays into a scratch store in memory, and the session reaches the database only
/// once every turn has been played, in one transaction ([`Engine::adopt_session`]: the log,
/// checkpoints, nudge state, offload records and extracted memories). So a replay that does
/// not finish (its output closed, an error) leaves no half-made session: the database is as it
/// was and the offload files it wrote are removed. A replay killed outright (SIGKILL, Ctrl-C)
/// stores nothing either: its offload files are still pending (their marks in place until
/// the session is adopted), and the next open removes them; until then the next replay picks
/// another name, so as not to write over them.
pub fn run(places: &Places, args: ReplayArgs) -> Result<(), Failure> {
    let (name, steps, working_directory) = load_steps(&args)?;
    let base = format!("replay-{name}");
    let summarizer = summarizer_config(args.summarizer)?;
    let mut config = EngineConfig {
        budget: Budget::for_window(args.window),
        summarizer,
        ..EngineConfig::default()
    };
    config.policy.family = args.model_family.into();
    // The directory the transcript records the agent ran in: the summaries name it.
    config.policy.working_directory = working_directory;
    // A replay shows the pipeline on a session from elsewhere: the system prompt must not
    // depend on this machine's AGENTS.md or memories.
    config.prompt.read_agents_md = false;
    config.memory.in_prompt = false;
    if args.file.is_none() {
        config.prompt.working_directory = Some("/home/dev/todo".to_owned());
    }
    let mut engine = places.engine(config.clone())?;
    let folder_of = |session: &str| {
        config
            .offload
            .as_ref()
            .and_then(|policy| session_folder(session, &policy.folder).ok())
    };
    let session = match args.session.clone() {
        Some(session) => {
            if engine.session_info(&session).is_ok() {
                return Err(ctxkit::Error::SessionExists(session).into());
            }
            session
        }
        None => unused_name(&engine, &base, |name| {
            folder_of(name).is_some_and(|folder| engine.workdir().join(folder).exists())
        })?,
    };
    let made_folder = folder_of(&session).filter(|folder| !engine.workdir().join(folder).exists());

    let mut scratch_config = config;
    // MEMORY.md is the project's: it is rewritten from the database once the replay is stored.
    scratch_config.memory.write_memory_file = false;
    let scratch_store = SqliteStore::open_in_memory()?;
    // Its offload files stay pending until the session is adopted into the database: if
    // this process is killed first, the next open removes them.
    let mut scratch = Engine::with_store(Box::new(scratch_store), &places.workdir, scratch_config)?
        .keep_offloads_pending();
    scratch.create_session(&session)?;
    let style = Style::detect();
    let played = play(&mut scratch, &session, (name, steps), &args, style)
        .and_then(|totals| Ok((totals, engine.adopt_session(&scratch, &session)?)));
    let (totals, info) = match played {
        Ok(played) => played,
        Err(failure) => {
            remove_offloads(&scratch, &session, made_folder.as_deref());
            return Err(failure);
        }
    };
    if args.json {
        line(totals.to_json(&info))?;
    } else {
        output::text(format_args!(
            "\n{}\n{}",
            style.bold("summary"),
            totals.render(&info, &printable(&session))
        ))?;
    }
    if args.show_summary {
        // What a turn loads holds the latest checkpoint; the log is not read for it.
        let latest = scratch
            .store()
            .load_for_turn(&session)?
            .latest_checkpoint()
            .cloned();
        show_summary(latest.as_ref(), args.json, style)?;
    }
    Ok(())
}

/// Prints the latest checkpoint's summary as the model reads it (each line made printable:
/// a transcript's control characters are escaped), or says there is none.
fn show_summary(latest: Option<&Checkpoint>, json: bool, style: Style) -> Result<(), Failure> {
    if json {
        let value = latest.map(|checkpoint| {
            serde_json::json!({
                "through_seq": checkpoint.through_seq,
                "method": checkpoint.method.as_str(),
                "summary": checkpoint.summary,
            })
        });
        return line(serde_json::json!({ "latest_summary": value }));
    }
    let Some(checkpoint) = latest else {
        return output::text("\nno compaction: nothing was summarized\n");
    };
    let body: Vec<String> = checkpoint
        .summary
        .lines()
        .map(|text| printable(text).into_owned())
        .collect();
    output::text(format_args!(
        "\n{} (checkpoint through seq {}, {}): what the model reads in place of the turns it covers\n\n{}\n",
        style.bold("latest summary"),
        checkpoint.through_seq,
        checkpoint.method.as_str(),
        body.join("\n")
    ))
}

/// Plays `steps` (of the transcript `name`) into `session` of `engine`, printing each turn's
/// report; returns the totals.
fn play(
    engine: &mut Engine,
    session: &str,
    (name, steps): (String, Vec<Step>),
    args: &ReplayArgs,
    style: Style,
) -> Result<Totals, Failure> {
    let budget = engine.config().budget;
    let mut totals = Totals::default();
    if !args.json {
        let source = match &args.file {
            Some(file) => format!("{} ({name})", file.display()),
            None => "the built-in session (an agent adds --json to a todo CLI)".to_owned(),
        };
        line(format_args!(
            "{} {source}: {} turns, window {} tokens (budget {} after output reserve and margin), {} summarizer, session {}\n",
            style.bold("replaying"),
            steps.len(),
            thousands(budget.context_window),
            thousands(budget.usable()),
            args.summarizer.as_str(),
            printable(session),
        ))?;
    }
    for (index, step) in steps.into_iter().enumerate() {
        let turn = index + 1;
        let mut report = TurnReport::new(turn);
        if !step.inputs.is_empty() {
            let outcome = engine.record(session, step.inputs)?;
            report.absorb(&outcome.events);
        }
        let view = engine.prepare_turn(session)?;
        report.absorb(&view.events);
        report.view(&view);
        if !step.reply.is_empty() {
            let outcome = engine.record(session, step.reply)?;
            report.absorb(&outcome.events);
        }
        totals.add(&report);
        if args.json {
            line(report.to_json())?;
        } else {
            output::text(report.render(style))?;
        }
    }
    Ok(totals)
}

/// Removes the offload files `scratch` wrote for `session`, and the session's offload folder
/// if this replay made it (`made_folder`, relative to the working directory; only when empty:
/// anything else in it is not this replay's). Both go through held folders, so a folder
/// swapped for a link cannot lead a removal elsewhere.
fn remove_offloads(scratch: &Engine, session: &str, made_folder: Option<&str>) {
    if let Ok(records) = scratch.store().offloads(session) {
        for record in records {
            discard_offload(scratch.workdir(), &record.relative_path);
        }
    }
    let folder = made_folder.map(Path::new);
    if let Some((parent, name)) = folder.and_then(|f| Some((f.parent()?, f.file_name()?))) {
        let _ = open_folder_inside(scratch.workdir(), parent, false)
            .and_then(|held| held.remove_dir(name));
    }
}

impl SummarizerArg {
    /// Its name on the command line.
    pub(super) fn as_str(self) -> &'static str {
        match self {
            SummarizerArg::Extractive => "extractive",
            SummarizerArg::Openai => "openai",
            SummarizerArg::Anthropic => "anthropic",
            SummarizerArg::AnthropicCompaction => "anthropic-compaction",
            SummarizerArg::OpenaiResponsesCompaction => "openai-responses-compaction",
        }
    }
}

pub(super) fn summarizer_config(choice: SummarizerArg) -> Result<SummarizerConfig, Failure> {
    let lookup = |key: &str| std::env::var(key).ok();
    let endpoint = match choice {
        SummarizerArg::Extractive => return Ok(SummarizerConfig::Extractive),
        SummarizerArg::Openai => LlmEndpoint::openai_from_env(lookup),
        SummarizerArg::Anthropic => LlmEndpoint::anthropic_from_env(lookup),
        SummarizerArg::AnthropicCompaction => {
            LlmEndpoint::anthropic_from_env(lookup).map(|endpoint| LlmEndpoint {
                api: Api::AnthropicCompaction,
                ..endpoint
            })
        }
        SummarizerArg::OpenaiResponsesCompaction => {
            LlmEndpoint::openai_from_env(lookup).map(|endpoint| LlmEndpoint {
                api: Api::ResponsesCompaction,
                ..endpoint
            })
        }
    };
    endpoint
        .map(SummarizerConfig::Llm)
        .map_err(|e| Failure::usage(format!("--summarizer {}: {e}", choice.as_str())))
}

/// The steps to replay, a short name for the session and the working directory the
/// transcript records (none for the built-in demo).
fn load_steps(args: &ReplayArgs) -> Result<(String, Vec<Step>, Option<String>), Failure> {
    let Some(file) = &args.file else {
        let steps = demo_session()
            .into_iter()
            .map(|turn| Step {
                inputs: turn.user.into_iter().collect(),
                reply: std::iter::once(turn.assistant)
                    .chain(turn.results)
                    .collect(),
            })
            .collect();
        return Ok(("demo".to_owned(), steps, None));
    };
    let (file_name, text) = read_text(Some(file))?;
    let imported = import_transcript(&text, args.format.to_core())
        .map_err(|e| Failure::from(e).within(&file_name))?;
    let count = imported.sessions.len();
    let session = imported
        .sessions
        .into_iter()
        .nth(args.index)
        .ok_or_else(|| {
            Failure::usage(format!(
                "{file_name}: --index {}: the file holds {count} conversation(s)",
                args.index
            ))
        })?;
    Ok((
        session_stem(file),
        split_steps(session.messages),
        session.working_directory,
    ))
}

/// The first of `base`, `base-2`, `base-3`... that names no session and whose offload
/// folder is not `taken` (a replay killed before it was stored leaves its files there).
fn unused_name(
    engine: &Engine,
    base: &str,
    taken: impl Fn(&str) -> bool,
) -> Result<String, Failure> {
    for attempt in 1..10_000 {
        let name = if attempt == 1 {
            base.to_owned()
        } else {
            format!("{base}-{attempt}")
        };
        match engine.session_info(&name) {
            Err(ctxkit::Error::NoSuchSession(_)) if !taken(&name) => return Ok(name),
            Ok(_) | Err(ctxkit::Error::NoSuchSession(_)) => continue,
            Err(other) => return Err(other.into()),
        }
    }
    Err(Failure::runtime(format!(
        "no free session name starting with {base:?}"
    )))
}
