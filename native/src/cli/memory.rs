//! `ctxkit memory add|search|list|rm|approve|precis`: long-term memory of the project in the
//! working directory. Every write regenerates `.ctxkit/MEMORY.md` (the engine does it). A
//! quarantined memory (text from outside that addresses the model) is listed and found with a
//! `QUARANTINED` marker and its reason, and stays out of the precis until `approve`.

use clap::{Args, Subcommand, ValueEnum};
use ctxkit::store::{AddedMemory, MemoryFilter, MemoryQuery, MemoryRecord, NewMemory};
use ctxkit::{Engine, EngineConfig};
use ctxkit_core::memory::{MemoryScope, MemorySource};

use super::output::{self, line};
use super::report::printable;
use super::{Failure, Places};

/// A memory command.
#[derive(Debug, Subcommand)]
pub enum MemoryCommand {
    /// Remember something (written by the user).
    Add(AddArgs),
    /// Search memories by text (substrings, CJK included).
    Search(SearchArgs),
    /// List the live memories, most important first.
    List(ListArgs),
    /// Forget a memory (soft delete).
    Rm(RemoveArgs),
    /// Approve a quarantined memory: it goes into MEMORY.md and the system prompt.
    Approve(RemoveArgs),
    /// Print the MEMORY.md precis the system prompt carries.
    Precis,
}

/// Where a memory applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScopeArg {
    /// This project only.
    Project,
    /// Every project.
    Global,
}

/// Where a memory came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SourceArg {
    /// The user.
    User,
    /// The agent.
    Agent,
    /// A tool's output.
    Tool,
    /// An extraction over the conversation.
    Extracted,
    /// A document (a file, a web page).
    Document,
}

/// Options of `ctxkit memory add`.
#[derive(Debug, Args)]
pub struct AddArgs {
    /// What to remember.
    pub content: String,
    /// A short title (default: the content's first words).
    #[arg(long)]
    pub title: Option<String>,
    /// A category (preference, convention, decision, environment, lesson, fact).
    #[arg(long, default_value = "fact")]
    pub category: String,
    /// Importance from 1 to 10 (values outside are clamped).
    #[arg(long, default_value_t = 5, allow_hyphen_values = true)]
    pub importance: i64,
    /// Where it applies.
    #[arg(long, value_enum, default_value = "project")]
    pub scope: ScopeArg,
    /// Comma-separated tags.
    #[arg(long, value_delimiter = ',')]
    pub tags: Vec<String>,
    /// Where it came from: text from a tool, an extraction or a document that addresses the
    /// model is quarantined until approved.
    #[arg(long, value_enum, default_value = "user")]
    pub source: SourceArg,
    /// Print the stored memory as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Options of `ctxkit memory search`.
#[derive(Debug, Args)]
pub struct SearchArgs {
    /// The text to look for (taken literally: quotes and operators are not syntax).
    pub query: String,
    /// At most this many results.
    #[arg(long, default_value_t = 20)]
    pub limit: usize,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Options of `ctxkit memory list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Options of `ctxkit memory rm` and `ctxkit memory approve`.
#[derive(Debug, Args)]
pub struct RemoveArgs {
    /// The memory's id (from list or search).
    pub id: i64,
}

/// Runs a memory command. `list`, `precis` and `search` only read: they open the database
/// read-only (and create none).
pub fn run(places: &Places, command: MemoryCommand) -> Result<(), Failure> {
    let config = EngineConfig::default();
    let mut engine = match command {
        MemoryCommand::List(args) => {
            let all = places.read(config, |engine| {
                engine.list_memories(&MemoryFilter::default())
            })?;
            return print_memories(&all, args.json);
        }
        MemoryCommand::Precis => {
            let precis = places.read(config, |engine| engine.memory_precis())?;
            return output::text(ensure_newline(precis));
        }
        MemoryCommand::Search(args) => {
            let query = MemoryQuery {
                text: args.query,
                limit: args.limit,
            };
            let found = places.read(config, |engine| engine.search_memories(&query))?;
            return print_memories(&found, args.json);
        }
        _ => places.engine(config)?,
    };
    match command {
        MemoryCommand::Add(args) => add(&mut engine, args)?,
        MemoryCommand::Rm(args) => {
            if engine.remove_memory(args.id)? {
                line(format_args!("forgot memory #{}", args.id))?;
            } else {
                return Err(Failure::usage(format!("no memory with id {}", args.id)));
            }
        }
        MemoryCommand::Approve(args) => approve(&mut engine, &args)?,
        // Answered above, read-only.
        MemoryCommand::List(_) | MemoryCommand::Precis | MemoryCommand::Search(_) => {}
    }
    Ok(())
}

/// `ctxkit memory add`: stores the memory (once: a duplicate is said), and says when it is
/// quarantined.
fn add(engine: &mut Engine, args: AddArgs) -> Result<(), Failure> {
    if args.content.trim().is_empty() {
        return Err(Failure::usage("content: empty: nothing to remember"));
    }
    let title = args.title.unwrap_or_else(|| {
        args.content
            .split_whitespace()
            .take(8)
            .collect::<Vec<_>>()
            .join(" ")
    });
    let memory = NewMemory {
        title,
        content: args.content,
        category: args.category,
        importance: args.importance,
        tags: args.tags,
        scope: match args.scope {
            ScopeArg::Project => MemoryScope::Project,
            ScopeArg::Global => MemoryScope::Global,
        },
        source: match args.source {
            SourceArg::User => MemorySource::User,
            SourceArg::Agent => MemorySource::Agent,
            SourceArg::Tool => MemorySource::Tool,
            SourceArg::Extracted => MemorySource::Extracted,
            SourceArg::Document => MemorySource::Document,
        },
        expires_at: None,
    };
    let added = engine.add_memory(&memory)?;
    let (verb, record) = match &added {
        AddedMemory::Added(record) => ("added", record),
        AddedMemory::Duplicate(record) => ("already remembered", record),
    };
    if args.json {
        return line(serde_json::to_string(record).map_err(|e| Failure::runtime(e.to_string()))?);
    }
    line(format_args!(
        "{verb}: #{} {}",
        record.id,
        printable(&record.title)
    ))?;
    if let Some(reason) = &record.quarantine {
        line(format_args!(
            "quarantined: {}; kept out of MEMORY.md and the system prompt until \
             `ctxkit memory approve {}`",
            printable(reason),
            record.id
        ))?;
    }
    Ok(())
}

/// `ctxkit memory approve`: says whether the memory was quarantined before.
fn approve(engine: &mut Engine, args: &RemoveArgs) -> Result<(), Failure> {
    let was = engine.list_memories(&MemoryFilter::default())?;
    let quarantined = was
        .iter()
        .any(|m| m.id == args.id && m.quarantine.is_some());
    let record = engine.approve_memory(args.id)?;
    if quarantined {
        line(format_args!(
            "approved memory #{}: it goes into MEMORY.md and the system prompt",
            record.id
        ))
    } else {
        line(format_args!(
            "memory #{} was not quarantined; it is approved as it is",
            record.id
        ))
    }
}

fn print_memories(memories: &[MemoryRecord], json: bool) -> Result<(), Failure> {
    if json {
        return line(serde_json::to_string(memories).map_err(|e| Failure::runtime(e.to_string()))?);
    }
    if memories.is_empty() {
        line("no memories")?;
    }
    for memory in memories {
        let content: String = memory
            .content
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let marker = match &memory.quarantine {
            Some(reason) => format!("QUARANTINED ({}) ", printable(reason)),
            None => String::new(),
        };
        // Printable: a memory's text, like a session's name, must not forge lines.
        line(format_args!(
            "#{:<5} {marker}[{}] ({}, importance {}) {}: {}",
            memory.id,
            printable(&memory.category),
            source_name(memory.source),
            memory.importance,
            printable(&memory.title),
            printable(&content)
        ))?;
    }
    Ok(())
}

fn source_name(source: MemorySource) -> &'static str {
    match source {
        MemorySource::User => "user",
        MemorySource::Agent => "agent",
        MemorySource::Extracted => "extracted",
        MemorySource::Tool => "tool",
        MemorySource::Document => "document",
    }
}

fn ensure_newline(mut text: String) -> String {
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text
}
