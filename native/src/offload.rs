//! The offload writer: big tool outputs go to files, a paged reference stays in the log.
//!
//! The decision, the file name and the reference text are the core's
//! ([`ctxkit_core::plan_offload`]); this module only writes the file:
//! `<workdir>/<policy folder>/<session>/<seq>-<call id>.txt`, folders 0700, file 0600, each
//! folder opened (or made) relative to the one before it with `O_NOFOLLOW` and the file made
//! with `O_CREAT | O_EXCL | O_NOFOLLOW` ([`crate::files::create_new_inside`]): a symbolic link
//! anywhere under the working directory is refused, even one swapped in while appends run.
//! [`read_offload_page`] reads an offloaded output back, a page of lines at a time, through the
//! same held folders.
//!
//! Fail-open: when anything goes wrong (planning, a folder or the file cannot be created, the
//! path leaves the folder) the message is kept exactly as it was and the outcome carries a
//! warning; an output is never lost because it could not be offloaded.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use ctxkit_core::offload::{plan_offload, OffloadPolicy};
use ctxkit_core::Message;

use crate::error::{Error, Result};
use crate::files::{create_new_inside, open_inside};
use crate::store::OffloadRecord;

/// What became of one message.
#[derive(Debug, Clone, PartialEq)]
pub struct OffloadOutcome {
    /// The message to store: the reference when offloaded, else the message as it came.
    pub message: Message,
    /// The record to store beside it, when offloaded.
    pub record: Option<OffloadRecord>,
    /// The file written, when offloaded (to remove if storing the message fails).
    pub path: Option<PathBuf>,
    /// Why an output that should have been offloaded was kept in the log.
    pub warning: Option<String>,
}

/// Offloads `message` (the log's message `seq` in `session`) if the policy says so.
/// `tool_name` is the name of the tool that produced it, when known.
pub fn offload_tool_output(
    workdir: &Path,
    session: &str,
    seq: u64,
    message: Message,
    tool_name: Option<&str>,
    policy: &OffloadPolicy,
) -> OffloadOutcome {
    let kept = |message: Message, warning: Option<String>| OffloadOutcome {
        message,
        record: None,
        path: None,
        warning,
    };
    let plan = match plan_offload(seq, session, &message, tool_name, policy) {
        Ok(Some(plan)) => plan,
        Ok(None) => return kept(message, None),
        Err(error) => {
            let warning = format!("offload of seq {seq} not planned: {error}");
            return kept(message, Some(warning));
        }
    };
    let relative_folder = Path::new(&plan.relative_path)
        .parent()
        .unwrap_or(Path::new(""));
    let written = create_new_inside(
        workdir,
        relative_folder,
        &plan.file_name,
        plan.content.as_bytes(),
    );
    match written {
        Ok(path) => OffloadOutcome {
            record: Some(OffloadRecord {
                seq,
                tool_call_id: message.tool_call_id.clone(),
                relative_path: plan.relative_path.clone(),
                bytes: plan.bytes as u64,
                lines: plan.lines as u64,
                is_error: plan.is_error,
                content: Some(plan.content),
            }),
            message: plan.reference,
            path: Some(path),
            warning: None,
        },
        Err(error) => {
            let warning = format!(
                "output of seq {seq} ({} bytes) kept in the log, not offloaded: {error}",
                plan.bytes
            );
            kept(message, Some(warning))
        }
    }
}

/// A page of an offloaded output: some of its lines, and whether more follow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OffloadPage {
    /// The lines, each with its line ending as in the file.
    pub text: String,
    /// The first line's number, from 0.
    pub offset: u64,
    /// How many lines `text` holds.
    pub lines: u64,
    /// Whether the file goes on after them.
    pub more: bool,
}

/// Reads `limit` lines from line `offset` (from 0) of the offloaded output at `relative_path`
/// (an [`OffloadRecord`]'s, relative to `workdir`), through held folders: a symbolic link on
/// the way is [`Error::Symlink`], nothing is created. Invalid UTF-8 reads as U+FFFD.
pub fn read_offload_page(
    workdir: &Path,
    relative_path: &str,
    offset: u64,
    limit: u64,
) -> Result<OffloadPage> {
    let path = Path::new(relative_path);
    let reader = BufReader::new(open_inside(workdir, path)?);
    page_of(reader, offset, limit).map_err(|e| Error::io("read", &workdir.join(path), e))
}

/// The text of the offloaded output at `relative_path` (relative to `workdir`), read through
/// held folders like [`read_offload_page`]: at most
/// [`ctxkit_core::recall::OFFLOAD_READ_MAX_BYTES`] of it, invalid UTF-8 as U+FFFD. For the
/// history search's copy of an output whose text the store does not hold yet.
pub fn read_offload_text(workdir: &Path, relative_path: &str) -> Result<String> {
    let path = Path::new(relative_path);
    let file = open_inside(workdir, path)?;
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(file, ctxkit_core::recall::OFFLOAD_READ_MAX_BYTES),
        &mut bytes,
    )
    .map_err(|e| Error::io("read", &workdir.join(path), e))?;
    Ok(match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(error) => String::from_utf8_lossy(error.as_bytes()).into_owned(),
    })
}

/// The page [`read_offload_page`] reads, from an offloaded output's text held in memory (a
/// store's copy, [`crate::store::SessionStore::offload_text`]).
pub fn offload_page_of_text(text: &str, offset: u64, limit: u64) -> OffloadPage {
    // Reading from memory cannot fail.
    page_of(text.as_bytes(), offset, limit).unwrap_or(OffloadPage {
        text: String::new(),
        offset,
        lines: 0,
        more: false,
    })
}

/// `limit` lines from line `offset` of `reader`.
fn page_of(mut reader: impl BufRead, offset: u64, limit: u64) -> std::io::Result<OffloadPage> {
    let mut line = Vec::new();
    let mut page = OffloadPage {
        text: String::new(),
        offset,
        lines: 0,
        more: false,
    };
    let mut number = 0u64;
    loop {
        line.clear();
        let read = reader.read_until(b'\n', &mut line)?;
        if read == 0 {
            return Ok(page);
        }
        if number >= offset {
            if page.lines == limit {
                page.more = true;
                return Ok(page);
            }
            page.text.push_str(&String::from_utf8_lossy(&line));
            page.lines += 1;
        }
        number += 1;
    }
}
