//! The `ctxkit` command line (see `ctxkit --help`). Parsing and exit codes live here; the
//! commands are in `cli/`.
// A function a reader can hold: none over 100 lines (too-many-lines-threshold, clippy.toml).
#![warn(clippy::too_many_lines)]

mod cli;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // clap exits with 2 on a usage error and 0 for --help and --version.
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(()) => ExitCode::SUCCESS,
        // The reader went away: a normal end, nothing to say.
        Err(failure) if failure.is_closed_output() => ExitCode::SUCCESS,
        Err(failure) => {
            // A closed standard error leaves nobody to tell: the exit code still says it.
            let _ = writeln!(
                std::io::stderr(),
                "ctxkit: {}",
                failure.message.replace('\n', " ")
            );
            ExitCode::from(failure.code)
        }
    }
}
