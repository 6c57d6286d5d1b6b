//! Reading the command's input: a file, or standard input for `-`, as UTF-8 text. A UTF-8
//! byte order mark at the very start (which some Windows editors write) is dropped here, the
//! one place every command's input passes, so no parser sees it.

use std::io::Read;
use std::path::Path;

use super::Failure;

/// The text of `path` (`-` or `None`: standard input), with its name for messages.
pub fn read_text(path: Option<&Path>) -> Result<(String, String), Failure> {
    let (name, bytes) = match path {
        None => read_stdin()?,
        Some(path) if path == Path::new("-") => read_stdin()?,
        Some(path) => {
            let name = path.display().to_string();
            let bytes = std::fs::read(path).map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound
                | std::io::ErrorKind::IsADirectory
                | std::io::ErrorKind::PermissionDenied => {
                    Failure::usage(format!("{name}: cannot read: {e}"))
                }
                _ => Failure::runtime(format!("{name}: cannot read: {e}")),
            })?;
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

fn read_stdin() -> Result<(String, Vec<u8>), Failure> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .read_to_end(&mut bytes)
        .map_err(|e| Failure::runtime(format!("standard input: cannot read: {e}")))?;
    Ok(("standard input".to_owned(), bytes))
}
