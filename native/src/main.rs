//! The `ctxkit` command line (see `ctxkit --help`). Parsing and exit codes live here; the
//! commands are in `cli/`.

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // clap exits with 2 on a usage error and 0 for --help and --version.
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("ctxkit: {}", failure.message.replace('\n', " "));
            ExitCode::from(failure.code)
        }
    }
}
