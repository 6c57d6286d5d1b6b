//! What the commands print, and where a closed pipe ends them.
//!
//! Every line a command writes to standard output goes through [`line`] or [`text`], never
//! `println!` (which panics when the reader is gone: `ctxkit view S | head -c1`). A closed
//! pipe is a normal end, as for ripgrep and the other Unix tools: the write returns
//! [`Failure::closed_output`], the command stops where it is, and `main` exits 0 without a
//! message. Any other write error is a runtime failure naming standard output.
//!
//! Messages for people go to standard error through [`note`], which ignores a closed standard
//! error: there is nobody left to tell.

use std::fmt::Display;
use std::io::Write;

use super::Failure;

/// Writes `text` and a newline to standard output.
pub fn line(text: impl Display) -> Result<(), Failure> {
    write_stdout(format_args!("{text}\n"))
}

/// Writes `text` to standard output as it is.
pub fn text(text: impl Display) -> Result<(), Failure> {
    write_stdout(format_args!("{text}"))
}

fn write_stdout(arguments: std::fmt::Arguments<'_>) -> Result<(), Failure> {
    let mut stdout = std::io::stdout().lock();
    // Flushed at once, so the failure surfaces here and not in the exit-time flush, whose
    // error nobody sees.
    stdout
        .write_fmt(arguments)
        .and_then(|()| stdout.flush())
        .map_err(|error| match error.kind() {
            std::io::ErrorKind::BrokenPipe => Failure::closed_output(),
            _ => Failure::runtime(format!("standard output: cannot write: {error}")),
        })
}

/// Writes `text` and a newline to standard error, if it is still open.
pub fn note(text: impl Display) {
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}
