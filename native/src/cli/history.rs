//! `ctxkit history search|read SESSION ...`: what the history tools answer the model, from the
//! command line: the same core checks and rendering as [`ctxkit::Engine::execute_tool`], so what
//! is printed is exactly the tool result (or, with `--json`, the hits or messages beside it).
//! Nothing is written: the database is opened read-only ([`Places::read`]), and a missing one
//! reads as empty and is not created. Everything printed goes through [`output`], so a closed
//! standard output ends the command quietly.

use clap::{Args, Subcommand};
use ctxkit::EngineConfig;
use ctxkit_core::recall::{render_read, render_search, ReadRequest, SearchRequest};
use serde_json::json;

use super::{output, Failure, Places};

/// A history command.
#[derive(Debug, Subcommand)]
pub enum HistoryCommand {
    /// Search a session's full log for a piece of text (case-insensitive substring; what
    /// `search_history` answers).
    Search(SearchArgs),
    /// Read a session's log from seq FROM to TO (what `read_history` answers).
    Read(ReadArgs),
}

/// Options of `ctxkit history search`.
#[derive(Debug, Args)]
pub struct SearchArgs {
    /// The session.
    pub session: String,
    /// The text to find (taken literally: quotes and operators are text).
    #[arg(allow_hyphen_values = true)]
    pub query: String,
    /// At most this many hits (default 10, at most 25).
    #[arg(long)]
    pub limit: Option<i64>,
    /// Print JSON: the hits (seq, message, tool name, exact) and the rendered text.
    #[arg(long)]
    pub json: bool,
}

/// Options of `ctxkit history read`.
#[derive(Debug, Args)]
pub struct ReadArgs {
    /// The session.
    pub session: String,
    /// The first seq.
    pub from: u64,
    /// The last seq (default FROM + 9; at most 40 messages).
    pub to: Option<u64>,
    /// Print JSON: the messages read, the log's last seq and the rendered text.
    #[arg(long)]
    pub json: bool,
}

/// Runs a history command.
pub fn run(places: &Places, command: HistoryCommand) -> Result<(), Failure> {
    let config = EngineConfig::default();
    let (json, text, data) = match command {
        HistoryCommand::Search(args) => {
            let request = SearchRequest::new(&args.query, args.limit.map(i128::from))?;
            let outcome = places.read(config, |engine| {
                engine.search_history(&args.session, &request)
            })?;
            let text = render_search(&request, &outcome);
            let data = json!({
                "query": request.query,
                "limit": request.limit,
                "hits": outcome.hits,
                "more": outcome.more,
                "text": text,
            });
            (args.json, text, data)
        }
        HistoryCommand::Read(args) => {
            let request = ReadRequest::new(i128::from(args.from), args.to.map(i128::from))?;
            let read = places.read(config, |engine| {
                engine.read_history(&args.session, &request)
            })?;
            let text = render_read(&request, &read.messages, read.last_seq);
            let data = json!({
                "from": request.from,
                "to": request.to,
                "last_seq": read.last_seq,
                "messages": read.messages,
                "text": text,
            });
            (args.json, text, data)
        }
    };
    if json {
        let line = serde_json::to_string(&data).map_err(|e| Failure::runtime(e.to_string()))?;
        output::line(line)
    } else {
        output::line(text)
    }
}
