//! Reading the command's input: a file, or standard input for `-`, as UTF-8 text. A UTF-8
//! byte order mark at the very start (which some Windows editors write) is dropped here, the
//! one place every command's input passes, so no parser sees it.
//!
//! Bounded: at most the input cap is read ([`DEFAULT_MAX_INPUT_BYTES`], 256 MiB, or
//! `--max-input-bytes`), and a longer input (`/dev/zero`, a runaway pipe) is a usage error
//! naming the cap and the flag, after reading one byte past it, never a read until memory runs
//! out. A named file is opened without blocking, so a FIFO no process writes to reads as empty
//! (an error that says so) instead of waiting forever; one with a writer reads as usual.

use std::fs::OpenOptions;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use super::Failure;

/// The input cap when `--max-input-bytes` is not given: the core's, shared by every shell
/// (256 MiB, far above any transcript ctxkit has been given, and a bound on the memory a wrong
/// input can take).
pub const DEFAULT_MAX_INPUT_BYTES: u64 = ctxkit_core::tokens::DEFAULT_MAX_INPUT_BYTES;

/// The cap of this run, set once from the command line.
static MAX_INPUT_BYTES: AtomicU64 = AtomicU64::new(DEFAULT_MAX_INPUT_BYTES);

/// Sets the cap on the bytes one input may have (`--max-input-bytes`).
pub fn set_max_input_bytes(bytes: u64) {
    MAX_INPUT_BYTES.store(bytes, Ordering::Relaxed);
}

/// The text of `path` (`-` or `None`: standard input), with its name for messages.
pub fn read_text(path: Option<&Path>) -> Result<(String, String), Failure> {
    let (name, bytes) = match path {
        None => read_stdin()?,
        Some(path) if path == Path::new("-") => read_stdin()?,
        Some(path) => {
            let name = path.display().to_string();
            let cannot = |e: std::io::Error| match e.kind() {
                std::io::ErrorKind::NotFound
                | std::io::ErrorKind::IsADirectory
                | std::io::ErrorKind::PermissionDenied => {
                    Failure::usage(format!("{name}: cannot read: {e}"))
                }
                _ => Failure::runtime(format!("{name}: cannot read: {e}")),
            };
            // O_NONBLOCK only for the open (a FIFO with no writer would block there); reads
            // then block as usual, and a FIFO nobody opened for writing reads as empty.
            let file = OpenOptions::new()
                .read(true)
                .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
                .open(path)
                .map_err(cannot)?;
            if file.metadata().map_err(cannot)?.is_dir() {
                return Err(Failure::usage(format!("{name}: cannot read: a directory")));
            }
            rustix::fs::fcntl_setfl(&file, rustix::fs::OFlags::empty())
                .map_err(|e| cannot(e.into()))?;
            let bytes = read_capped(file, &name)?;
            (name, bytes)
        }
    };
    match String::from_utf8(bytes) {
        Ok(mut text) => {
            if text.starts_with('\u{feff}') {
                text.drain(..'\u{feff}'.len_utf8());
            }
            Ok((name, text))
        }
        Err(error) => {
            let at = error.utf8_error().valid_up_to();
            let line = error
                .as_bytes()
                .get(..at)
                .map_or(1, |valid| valid.iter().filter(|b| **b == b'\n').count() + 1);
            Err(Failure::usage(format!("{name}: line {line}: not UTF-8 text (invalid byte at offset {at}); expected JSON or JSONL")))
        }
    }
}

/// All of `reader`, or a usage error when it holds more than the cap (one byte past it read).
fn read_capped(reader: impl Read, name: &str) -> Result<Vec<u8>, Failure> {
    let cap = MAX_INPUT_BYTES.load(Ordering::Relaxed);
    let mut bytes = Vec::new();
    reader
        .take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| Failure::runtime(format!("{name}: cannot read: {e}")))?;
    if bytes.len() as u64 > cap {
        return Err(Failure::usage(format!(
            "{name}: more than the input cap of {cap} bytes: is it the file you meant? \
             (raise the cap with --max-input-bytes)"
        )));
    }
    Ok(bytes)
}

fn read_stdin() -> Result<(String, Vec<u8>), Failure> {
    let name = "standard input";
    let bytes = read_capped(std::io::stdin(), name)?;
    Ok((name.to_owned(), bytes))
}
