//! The `ctxkit` command line: argument definitions and dispatch.
//!
//! Conventions every command follows: `--db PATH` (default `.ctxkit/ctxkit.db` under the
//! working directory), or a `postgres://` URL there or in `CTXKIT_DATABASE_URL` for the
//! PostgreSQL store a fleet of workers shares; `--json` where the output is data; no colours when `NO_COLOR` is set or
//! the output is not a terminal; exit code 0 on success, 1 on a runtime failure, 2 on bad input
//! or usage, with a one-line message naming the file, line and field at fault; a closed
//! standard output ends a command quietly with 0 (everything printed goes through `output`).
//! Input is parsed and checked in full before anything is written, and each command writes in
//! one transaction, so a failed command leaves the database as it was. The commands that only
//! read (`sessions`, `stats`, `view`, `memory list`, `memory precis`) open the database
//! read-only ([`Places::read`]). The commands only translate: every decision is an engine or
//! core call.

mod cost;
mod demo_session;
mod failure;
mod fidelity;
mod history;
mod idle;
mod import;
mod input;
mod memory;
mod output;
mod probe;
mod probe_resume;
mod proxy;
mod replay;
mod replay_report;
mod report;
mod sessions;
mod tools;
mod view;

use std::io::ErrorKind;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use ctxkit::store::SqliteStore;
use ctxkit::{Engine, EngineConfig};

pub use failure::Failure;

/// ctxkit: the context-engineering kernel for LLM agents.
///
/// Decides, before every model call, what the model sees: the system prompt, the log compacted
/// to fit the window, big tool outputs offloaded to files, and bounded long-term memory.
/// Start with `ctxkit replay`: it plays a built-in coding session through the whole pipeline.
#[derive(Debug, Parser)]
#[command(name = "ctxkit", version, about, long_about)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

/// Options every command takes.
#[derive(Debug, Args)]
pub struct Global {
    /// The SQLite database (default: .ctxkit/ctxkit.db under the working directory), or a
    /// PostgreSQL database's postgres:// URL (default: $CTXKIT_DATABASE_URL when set).
    #[arg(long, global = true, value_name = "PATH|URL")]
    pub db: Option<PathBuf>,
    /// The project's working directory (default: the current directory).
    #[arg(long, global = true, value_name = "DIR")]
    pub workdir: Option<PathBuf>,
    /// The most bytes one input file or standard input may have (default 268435456, 256
    /// MiB); a longer input is refused, not read until memory runs out.
    #[arg(long, global = true, value_name = "BYTES")]
    pub max_input_bytes: Option<u64>,
}

/// What to do.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Replay a session turn by turn through the pipeline and report what it did.
    Replay(replay::ReplayArgs),
    /// Replay a transcript and report what each checkpoint kept of the pinned facts.
    Fidelity(fidelity::FidelityArgs),
    /// Replay a transcript and ask a model probe questions with known answers after each
    /// compaction: the share it answers, per kind, over ctxkit's view, the full log and a
    /// sliding window.
    Probe(probe::ProbeArgs),
    /// Replay a transcript under several context strategies and report what each would cost.
    Cost(cost::CostArgs),
    /// Import a transcript (Claude Code, OpenAI, Anthropic, SWE-agent, OpenHands, ctxkit).
    Import(import::ImportArgs),
    /// Print the next view of a session as JSON ready to send (stats go to stderr).
    View(view::ViewArgs),
    /// Compact a session now if it sits idle near the end of its cache lifetime and its view
    /// is big enough to pay for it, so the next turn writes the small prefix.
    CompactIfIdle(idle::CompactIfIdleArgs),
    /// Append messages (a JSON array or JSONL) to a session; big tool outputs are offloaded.
    Append(sessions::AppendArgs),
    /// List the sessions in the database.
    Sessions(sessions::SessionsArgs),
    /// Show a session's size, checkpoints and offloads.
    Stats(sessions::StatsArgs),
    /// Long-term memory: add, search, list, remove, and the MEMORY.md precis.
    #[command(subcommand)]
    Memory(memory::MemoryCommand),
    /// A session's full log, as the history tools show it to the model: search, read by seq.
    #[command(subcommand)]
    History(history::HistoryCommand),
    /// Estimate the tokens of a text or a message list.
    Tokens(tools::TokensArgs),
    /// Check a request against a provider's rules, in the provider's own words.
    Validate(tools::ValidateArgs),
    /// Serve an agent's model calls (Anthropic Messages, OpenAI Chat Completions or Responses,
    /// streaming or not) on a local address, forwarding each to the provider with ctxkit's
    /// compacted view of the conversation (point ANTHROPIC_BASE_URL or OPENAI_BASE_URL at it).
    Proxy(proxy::ProxyArgs),
}

/// A model family on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FamilyArg {
    /// OpenAI (o200k-like).
    Openai,
    /// Claude 3 through Opus 4.6.
    Claude,
    /// Claude Opus 4.7 and later.
    #[value(name = "claude-4.7")]
    Claude47,
}

impl From<FamilyArg> for ctxkit_core::tokens::ModelFamily {
    fn from(family: FamilyArg) -> Self {
        match family {
            FamilyArg::Openai => ctxkit_core::tokens::ModelFamily::OpenAi,
            FamilyArg::Claude => ctxkit_core::tokens::ModelFamily::Claude,
            FamilyArg::Claude47 => ctxkit_core::tokens::ModelFamily::Claude47,
        }
    }
}

/// Runs the parsed command line.
pub fn run(cli: Cli) -> Result<(), Failure> {
    let places = Places::resolve(&cli.global)?;
    input::set_max_input_bytes(
        cli.global
            .max_input_bytes
            .unwrap_or(input::DEFAULT_MAX_INPUT_BYTES),
    );
    match cli.command {
        Command::Replay(args) => replay::run(&places, args),
        Command::Fidelity(args) => fidelity::run(&places, args),
        Command::Probe(args) => probe::run(&places, args),
        Command::Cost(args) => cost::run(args),
        Command::Import(args) => import::import(&places, args),
        Command::View(args) => view::run(&places, args),
        Command::CompactIfIdle(args) => idle::run(&places, args),
        Command::Append(args) => sessions::append(&places, args),
        Command::Sessions(args) => sessions::list(&places, args),
        Command::Stats(args) => sessions::stats(&places, args),
        Command::Memory(command) => memory::run(&places, command),
        Command::History(command) => history::run(&places, command),
        Command::Tokens(args) => tools::tokens(args),
        Command::Validate(args) => tools::validate(args),
        Command::Proxy(args) => proxy::run(&places, args),
    }
}

/// Where the database and the project are.
#[derive(Debug, Clone)]
pub struct Places {
    /// The working directory.
    pub workdir: PathBuf,
    /// The database file, or a PostgreSQL URL.
    pub db: PathBuf,
}

impl Places {
    fn resolve(global: &Global) -> Result<Places, Failure> {
        let workdir = match &global.workdir {
            Some(dir) => dir.clone(),
            None => std::env::current_dir()
                .map_err(|e| Failure::runtime(format!("cannot read the current directory: {e}")))?,
        };
        if !workdir.is_dir() {
            return Err(Failure::usage(format!(
                "--workdir {}: not a directory",
                workdir.display()
            )));
        }
        let from_env = std::env::var_os(DATABASE_URL_VAR).filter(|url| !url.is_empty());
        let db = global
            .db
            .clone()
            .or_else(|| from_env.map(PathBuf::from))
            .unwrap_or_else(|| workdir.join(".ctxkit").join("ctxkit.db"));
        // A URL of another database, or a misspelt PostgreSQL one, is never a file path: it
        // would make a SQLite file in folders named after the URL, password included.
        if db
            .to_str()
            .is_some_and(ctxkit::store::looks_like_database_url)
        {
            return Err(Failure::usage(
                "the database looks like a URL, but ctxkit speaks only postgres:// and \
                 postgresql:// (lowercase, with nothing before them, not even a space) URLs \
                 and SQLite file paths",
            ));
        }
        Ok(Places { workdir, db })
    }

    /// The database as messages name it: the file, or the PostgreSQL URL without its password.
    pub fn db_display(&self) -> String {
        let db = self.db.display().to_string();
        if !ctxkit::store::is_postgres_url(&db) {
            return db;
        }
        match (db.find("://"), db.rfind('@')) {
            (Some(scheme), Some(at)) if scheme + 3 < at => {
                let user_info = db.get(scheme + 3..at).unwrap_or("");
                let user = user_info.split(':').next().unwrap_or("");
                format!(
                    "{}{user}{}",
                    db.get(..scheme + 3).unwrap_or(""),
                    db.get(at..).unwrap_or("")
                )
            }
            _ => db,
        }
    }

    /// Whether the database is a PostgreSQL one.
    fn is_postgres(&self) -> bool {
        self.db.to_str().is_some_and(ctxkit::store::is_postgres_url)
    }

    /// Opens the engine over the database for a command that writes, creating the database
    /// and its folders if needed (0700, whatever the umask, `.ctxkit/` with its
    /// `.gitignore`) and migrating it.
    pub fn engine(&self, config: EngineConfig) -> Result<Engine, Failure> {
        Engine::open(&self.db, &self.workdir, config).map_err(Failure::from)
    }

    /// Runs `reads` (a command's reads, nothing printed yet) on the database opened read-only,
    /// so a command that only reads works on a database this user cannot write and changes
    /// nothing, not even beside it:
    /// - a missing database reads as empty (and is not created);
    /// - an older database that needs a migration is migrated first if this user can write
    ///   it (the one case that opens it for writing), else it is an error;
    /// - when a writer changed the database during the read ([`ctxkit::Error::DatabaseChanged`]),
    ///   the read runs again on a new open, at most [`READ_ATTEMPTS`] times.
    pub fn read<T>(
        &self,
        config: EngineConfig,
        mut reads: impl FnMut(&mut Engine) -> ctxkit::Result<T>,
    ) -> Result<T, Failure> {
        let mut attempt = 1;
        loop {
            let result = self
                .read_engine(config.clone())
                .and_then(|mut engine| reads(&mut engine));
            match result {
                Err(ctxkit::Error::DatabaseChanged { .. }) if attempt < READ_ATTEMPTS => {
                    attempt += 1;
                }
                other => return other.map_err(Failure::from),
            }
        }
    }

    fn read_engine(&self, config: EngineConfig) -> ctxkit::Result<Engine> {
        if self.is_postgres() {
            // Reads are snapshots there; a schema that needs migrating is migrated, as for a
            // SQLite file this user can write.
            return match Engine::open_read_only(&self.db, &self.workdir, config.clone()) {
                Err(ctxkit::Error::NeedsMigration { .. }) => {
                    Engine::open(&self.db, &self.workdir, config)
                }
                other => other,
            };
        }
        if std::fs::symlink_metadata(&self.db).is_err_and(|e| e.kind() == ErrorKind::NotFound) {
            let empty = SqliteStore::open_in_memory()?;
            return Engine::with_store(Box::new(empty), &self.workdir, config);
        }
        match Engine::open_read_only(&self.db, &self.workdir, config.clone()) {
            Err(ctxkit::Error::NeedsMigration { .. }) if writable(&self.db) => {
                Engine::open(&self.db, &self.workdir, config)
            }
            other => other,
        }
    }
}

/// The environment variable naming the database when `--db` does not.
const DATABASE_URL_VAR: &str = "CTXKIT_DATABASE_URL";

/// How many times [`Places::read`] reads a database that writers keep changing.
const READ_ATTEMPTS: usize = 3;

/// Whether this user may write `path` (opening it for writing changes nothing in it).
fn writable(path: &std::path::Path) -> bool {
    std::fs::OpenOptions::new().append(true).open(path).is_ok()
}
