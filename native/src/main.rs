//! The `ctxkit` command line.

use clap::Parser;

/// ctxkit: the context-engineering kernel for LLM agents.
///
/// Decides, before every model call, what the model sees: the system prompt, the log compacted
/// to fit the window, big tool outputs offloaded to files, and bounded long-term memory.
#[derive(Debug, Parser)]
#[command(name = "ctxkit", version, about, long_about)]
struct Cli {}

fn main() {
    let _cli = Cli::parse();
    println!("ctxkit {}: run `ctxkit --help` for usage", ctxkit::VERSION);
}
