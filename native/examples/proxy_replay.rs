//! The replay measurement of `ctxkit proxy` (issue 37, item 6): each recorded Claude Code
//! transcript's model calls are sent, in order (their recorded times kept for the cache's
//! lifetime, not waited), through the proxy (in this process, over a fresh SQLite database)
//! to a loopback fake Anthropic upstream that answers each call with the assistant message the
//! transcript recorded for it. Every request the upstream receives is checked by the core's
//! Anthropic validator and billed by the lab's cache simulator at the transcript's model's
//! prices; the agent's own requests (what Claude Code sent without the proxy) are billed the
//! same way as the baseline, and the transcript's recorded usage gives what the session really
//! cost. The agent-facing answers are compared byte for byte with what the upstream sent, and
//! needed-next is counted at every call (`proxy_replay/needed.rs`: the facts the recorded
//! answer's calls needed that only a summary could give, and the share the upstream's request
//! held).
//!
//! ```sh
//! cargo run --release -p ctxkit --example proxy_replay                  # the corpus's Claude Code files
//! cargo run --release -p ctxkit --example proxy_replay -- --window 100000 FILE.jsonl ...
//! cargo run --release -p ctxkit --example proxy_replay -- --stream   # answers as event streams
//! CTXKIT_CORPUS=/path/to/corpus/raw cargo run --release -p ctxkit --example proxy_replay
//! ```
//!
//! A Codex CLI rollout (a `rollout-*.jsonl` file) goes the same way through `POST
//! /v1/responses`, its calls rebuilt by `proxy_replay/codex.rs`, its requests checked by the
//! core's Responses validator; it records no usage, so its row has no recorded cost.
//!
//! Without files it reads every `*.jsonl` directly in the corpus's `claude-code_*` and
//! `codex_*` folders (`--corpus DIR`, else `$CTXKIT_CORPUS`, else `/work/shared/corpus/raw`;
//! sub-agent files are not replayed). Costs are input cost in units of one uncached input token (a cache write
//! 1.25, a read 0.1). The process exits 1 when a request failed validation or an answer was
//! not byte-identical.

#![warn(clippy::too_many_lines)]

#[path = "proxy_replay/bill.rs"]
mod bill;
#[path = "proxy_replay/calls.rs"]
mod calls;
#[path = "proxy_replay/codex.rs"]
mod codex;
#[path = "proxy_replay/needed.rs"]
mod needed;
#[path = "proxy_replay/replay.rs"]
mod replay;
#[path = "proxy_replay/sse.rs"]
mod sse;
#[path = "proxy_replay/upstream.rs"]
mod upstream;

use std::path::{Path, PathBuf};

/// The context window the proxy keeps each request within, unless `--window` says otherwise.
const WINDOW: u64 = 200_000;
const CORPUS: &str = "/work/shared/corpus/raw";

struct Options {
    window: u64,
    streaming: bool,
    files: Vec<PathBuf>,
}

fn options() -> Result<Options, String> {
    let mut window = WINDOW;
    let mut streaming = false;
    let mut corpus = std::env::var("CTXKIT_CORPUS").unwrap_or_else(|_| CORPUS.to_owned());
    let mut files = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--window" => {
                let value = args.next().ok_or("--window needs a number")?;
                window = value
                    .parse()
                    .map_err(|_| format!("not a window: {value}"))?;
            }
            "--stream" => streaming = true,
            "--corpus" => corpus = args.next().ok_or("--corpus needs a folder")?,
            _ => files.push(PathBuf::from(arg)),
        }
    }
    if files.is_empty() {
        files = corpus_files(Path::new(&corpus))?;
    }
    Ok(Options {
        window,
        streaming,
        files,
    })
}

/// The main-session transcripts of the corpus's Claude Code folders and the Codex rollouts of
/// its Codex folders, sorted.
fn corpus_files(corpus: &Path) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    let folders = std::fs::read_dir(corpus).map_err(|e| format!("{}: {e}", corpus.display()))?;
    for folder in folders.flatten() {
        let name = folder.file_name().to_string_lossy().into_owned();
        if !name.starts_with("claude-code_") && !name.starts_with("codex_") {
            continue;
        }
        for file in std::fs::read_dir(folder.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            if file.path().extension().is_some_and(|e| e == "jsonl") {
                files.push(file.path());
            }
        }
    }
    files.sort();
    Ok(files)
}

fn main() {
    let options = match options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("proxy_replay: {message}");
            std::process::exit(2);
        }
    };
    println!(
        "window {} tokens; answers {}; costs in input units (uncached input token = 1)\n",
        options.window,
        if options.streaming {
            "streamed"
        } else {
            "not streamed"
        }
    );
    println!(
        "| transcript | calls | recorded cost | agent's own requests, billed | through the proxy, billed | proxy / recorded | proxy / own | cache read (own / proxy) | compactions: proxy's checkpoints, sessions, prefix breaks; Claude Code's | needed next (proxy) | failed validation | answers not identical |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut failed = false;
    for file in &options.files {
        match replay::run(file, options.window, options.streaming) {
            Ok(row) => {
                failed |= row.invalid > 0 || row.not_identical > 0;
                println!("{}", row.line());
                for problem in &row.problems {
                    eprintln!("  {}: {problem}", row.name);
                }
            }
            Err(message) => {
                failed = true;
                eprintln!("{}: {message}", file.display());
            }
        }
    }
    if failed {
        std::process::exit(1);
    }
}
