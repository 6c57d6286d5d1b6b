//! The offload writer: big tool outputs go to files, a paged reference stays in the log.
//!
//! The decision, the file name and the reference text are the core's
//! ([`ctxkit_core::plan_offload`]); this module only writes the file:
//! `<workdir>/<policy folder>/<session>/<seq>-<call id>.txt`, folders 0700, file 0600, each
//! folder opened (or made) relative to the one before it with `O_NOFOLLOW` and the file made
//! with `O_CREAT | O_EXCL | O_NOFOLLOW` (see below): a symbolic link
//! anywhere under the working directory is refused, even one swapped in while appends run.
//! [`read_offload_page`] reads an offloaded output back, a page of lines at a time, through the
//! same held folders.
//!
//! No file without its row, even when the writer is killed: the file is first written as
//! this process's *pending mark* `.pending-<pid>-<file name>` (`O_EXCL`, 0600, synced) in the
//! same folder, then given its own name as a second link to it (never over an existing
//! file), before the transaction that records its row. After that transaction commits, the
//! writer drops the mark ([`commit_offload`]); when it fails, the writer removes the file and
//! the mark ([`discard_offload`]). A replay keeps its marks until the session is stored in
//! the database. A killed writer leaves its mark, and the next open of the engine
//! ([`remove_orphaned_offloads`]) resolves every mark whose process no longer runs by the
//! store: a committed row keeps the file, no row removes it. Marks of running processes (a
//! concurrent writer's file in flight) are never touched, and a file is removed only while
//! it is still the one its mark holds. A reader never sees a row whose file is missing: the
//! file has its name before the row commits. (Marks name a process of this machine: a
//! working directory shared between machines needs one machine's processes to write it.)
//!
//! Fail-open: when anything goes wrong (planning, a folder or the file cannot be created, the
//! path leaves the folder) the message is kept exactly as it was and the outcome carries a
//! warning; an output is never lost because it could not be offloaded.

use std::ffi::{OsStr, OsString};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use ctxkit_core::offload::{plan_offload, OffloadPolicy};
use ctxkit_core::Message;

use crate::error::{Error, Result};
use crate::files::{open_folder_inside, open_inside};
use crate::held_dir::HeldDir;
use crate::store::OffloadRecord;

/// How a pending mark's name starts: `.pending-<pid>-<file name>` (offload file names never
/// start with `.`, so a mark is never taken for an output).
const PENDING_PREFIX: &str = ".pending-";

/// What became of one message.
#[derive(Debug)]
pub struct OffloadOutcome {
    /// The message to store: the reference when offloaded, else the message as it came.
    pub message: Message,
    /// The record to store beside it, when offloaded.
    pub record: Option<OffloadRecord>,
    /// The file written, still under this process's pending mark, when offloaded: to
    /// [`PendingOffload::commit`] once the record is stored, or [`PendingOffload::discard`]
    /// if storing it fails.
    pub pending: Option<PendingOffload>,
    /// Why an output that should have been offloaded was kept in the log.
    pub warning: Option<String>,
}

/// An offload file written under this process's pending mark, in its folder held open (so
/// the mark is dropped, or the file removed, in that very folder however it was moved since).
#[derive(Debug)]
pub struct PendingOffload {
    folder: HeldDir,
    file_name: String,
}

impl PendingOffload {
    /// The file's path, as its folder was named when written.
    pub fn path(&self) -> PathBuf {
        self.folder.path().join(&self.file_name)
    }

    /// The transaction that records the file's row committed: drops the pending mark, so the
    /// file is the row's alone. A mark that cannot be removed is left for an open to resolve
    /// (the row exists, so the file stays).
    pub fn commit(self) {
        let _ = self
            .folder
            .remove_file(&pending_name(std::process::id(), &self.file_name));
    }

    /// The row will not be recorded: removes the file (only if it is still the mark's) and
    /// the mark.
    pub fn discard(self) {
        let pending = pending_name(std::process::id(), &self.file_name);
        discard(&self.folder, &pending, OsStr::new(&self.file_name));
    }
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
        pending: None,
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
    let written = write_pending(
        workdir,
        relative_folder,
        &plan.file_name,
        plan.content.as_bytes(),
    );
    match written {
        Ok(pending) => OffloadOutcome {
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
            pending: Some(pending),
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

/// The name of this process's pending mark of the offload file `file_name`, in its folder.
fn pending_name(pid: u32, file_name: &str) -> OsString {
    OsString::from(format!("{PENDING_PREFIX}{pid}-{file_name}"))
}

/// The process and the offload file of a pending mark's name, if it is one.
fn parse_pending(name: &OsStr) -> Option<(u32, String)> {
    let rest = name.to_str()?.strip_prefix(PENDING_PREFIX)?;
    let (pid, file_name) = rest.split_once('-')?;
    let pid = pid.parse().ok()?;
    (!file_name.is_empty() && !file_name.starts_with('.')).then(|| (pid, file_name.to_owned()))
}

/// Writes `content` as the new file `file_name` in `workdir/relative_folder` (folders made
/// 0700 through held folders, links refused): first as this process's pending mark (`O_EXCL`,
/// 0600, synced), then under its own name as a second link to it (never over an existing
/// file).
fn write_pending(
    workdir: &Path,
    relative_folder: &Path,
    file_name: &str,
    content: &[u8],
) -> Result<PendingOffload> {
    if file_name.starts_with('.') || file_name.contains('/') {
        return Err(Error::invalid(
            "file_name",
            format!("{file_name:?} is not a plain file name"),
        ));
    }
    let held = open_folder_inside(workdir, relative_folder, true)?;
    let pending = pending_name(std::process::id(), file_name);
    held.create_file(&pending, content)?;
    if let Err(error) = held.link_new(&pending, OsStr::new(file_name)) {
        let _ = held.remove_file(&pending);
        return Err(error);
    }
    Ok(PendingOffload {
        folder: held,
        file_name: file_name.to_owned(),
    })
}

/// The held folder of the offload at `relative_path` (never made) and its file name.
fn offload_folder(workdir: &Path, relative_path: &str) -> Result<(HeldDir, String)> {
    let path = Path::new(relative_path);
    let (Some(folder), Some(name)) = (path.parent(), path.file_name().and_then(OsStr::to_str))
    else {
        return Err(Error::invalid(
            "path",
            format!("{relative_path} does not name a file"),
        ));
    };
    Ok((open_folder_inside(workdir, folder, false)?, name.to_owned()))
}

/// After the transaction that records the offload at `relative_path` committed: drops this
/// process's pending mark, so the file is the row's alone. A mark that cannot be removed is
/// left for an open to find (its row exists, so the file stays).
pub fn commit_offload(workdir: &Path, relative_path: &str) {
    if let Ok((held, name)) = offload_folder(workdir, relative_path) {
        let _ = held.remove_file(&pending_name(std::process::id(), &name));
    }
}

/// When the offload at `relative_path` will not be recorded (its append failed, a replay
/// stopped): removes the file, only if it is still the one this process's pending mark holds,
/// then the mark.
pub fn discard_offload(workdir: &Path, relative_path: &str) {
    if let Ok((held, name)) = offload_folder(workdir, relative_path) {
        let pending = pending_name(std::process::id(), &name);
        discard(&held, &pending, OsStr::new(&name));
    }
}

/// Removes `file_name` if it is the file the mark `pending` holds, then the mark.
fn discard(held: &HeldDir, pending: &OsStr, file_name: &OsStr) {
    let mark = held.file_identity(pending).ok().flatten();
    if mark.is_some() && held.file_identity(file_name).ok().flatten() == mark {
        let _ = held.remove_file(file_name);
    }
    let _ = held.remove_file(pending);
}

/// Whether the process `pid` still runs on this machine (one that exists but is another
/// user's counts).
fn process_runs(pid: u32) -> bool {
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    !matches!(
        rustix::process::test_kill_process(pid),
        Err(rustix::io::Errno::SRCH)
    )
}

/// Finishes what killed writers left in the offload folders under `workdir/folder` (each
/// session's folder, through held folders): every pending mark whose process no longer runs
/// is resolved by `recorded` (whether a committed row names the file): recorded, the file
/// stays (given its name again from the mark if it lost it) and the mark goes; not recorded,
/// the file goes (only if it is still the mark's) and the mark too. Marks of running
/// processes (a concurrent writer's file in flight, a replay not yet stored) are left alone.
/// Returns how many unrecorded offloads were removed.
pub fn remove_orphaned_offloads(
    workdir: &Path,
    folder: &str,
    recorded: impl Fn(&str) -> Result<bool>,
) -> Result<usize> {
    let folder = folder.trim_end_matches('/');
    let root = match open_folder_inside(workdir, Path::new(folder), false) {
        Ok(root) => root,
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return Ok(0)
        }
        Err(error) => return Err(error),
    };
    let mut removed = 0;
    for session in root.names()? {
        // Session folders never start with `.`; anything that is not a folder is skipped.
        let Some(session_name) = session.to_str().filter(|name| !name.starts_with('.')) else {
            continue;
        };
        let Ok((held, _)) = root.child(&session, false) else {
            continue;
        };
        let Ok(names) = held.names() else {
            continue;
        };
        for name in names {
            let Some((pid, file_name)) = parse_pending(&name) else {
                continue;
            };
            if process_runs(pid) {
                continue;
            }
            let relative_path = format!("{folder}/{session_name}/{file_name}");
            if recorded(&relative_path)? {
                if !held.exists_not_link(OsStr::new(&file_name))? {
                    held.link_new(&name, OsStr::new(&file_name))?;
                }
                held.remove_file(&name)?;
            } else {
                discard(&held, &name, OsStr::new(&file_name));
                removed += 1;
            }
        }
    }
    Ok(removed)
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
