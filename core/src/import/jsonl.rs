//! JSONL as the agents write it: one JSON value a line, read with errors that name the line.
//!
//! Shared by the readers of line-per-record transcripts (Claude Code, pi). A leading byte-order
//! mark is dropped and blank lines are skipped; a line cut short (a session still being
//! written) says it is truncated, so a caller can drop it and retry.

use serde_json::Value;

use crate::error::{CoreError, Result};

/// Each non-blank line of `text` as JSON, with its 1-based number.
pub(super) fn parse_lines(text: &str) -> Result<Vec<(usize, Value)>> {
    let mut lines = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let line = line.trim_start_matches('\u{feff}');
        if line.trim().is_empty() {
            continue;
        }
        let value: Value = serde_json::from_str(line).map_err(|error| {
            let problem = if error.is_eof() {
                format!("truncated JSON: the line ends inside a value ({error})")
            } else {
                format!("not valid JSON ({error})")
            };
            CoreError::invalid(format!("line {number}"), problem)
        })?;
        lines.push((number, value));
    }
    Ok(lines)
}

/// Puts `line N: ` in front of an error's path.
pub(super) fn at_line(error: CoreError, number: usize) -> CoreError {
    match error {
        CoreError::InvalidInput { at, problem } if at.is_empty() => {
            CoreError::invalid(format!("line {number}"), problem)
        }
        CoreError::InvalidInput { at, problem } => {
            CoreError::invalid(format!("line {number}: {at}"), problem)
        }
        other => other,
    }
}
