//! The offload writer: big tool outputs go to files, a paged reference stays in the log.
//!
//! The decision, the file name and the reference text are the core's
//! ([`ctxkit_core::plan_offload`]); this module only writes the file:
//! `<workdir>/<policy folder>/<session>/<seq>-<call id>.txt`, folders 0700, file 0600, created
//! with `create_new` after checking that the folder's canonical path is exactly where the
//! relative path leads (a symlinked folder pointing elsewhere is refused).
//!
//! Fail-open: when anything goes wrong (planning, a folder or the file cannot be created, the
//! path leaves the folder) the message is kept exactly as it was and the outcome carries a
//! warning; an output is never lost because it could not be offloaded.

use std::path::{Path, PathBuf};

use ctxkit_core::offload::{plan_offload, OffloadPolicy};
use ctxkit_core::Message;

use crate::files::{create_new_inside, create_private_dir, prepare_ctxkit_dir};
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
    let written = prepare_ctxkit_dir(workdir)
        .and_then(|_| create_private_dir(&workdir.join(relative_folder)))
        .and_then(|()| {
            create_new_inside(
                workdir,
                relative_folder,
                &plan.file_name,
                plan.content.as_bytes(),
            )
        });
    match written {
        Ok(path) => OffloadOutcome {
            record: Some(OffloadRecord {
                seq,
                tool_call_id: message.tool_call_id.clone(),
                relative_path: plan.relative_path.clone(),
                bytes: plan.bytes as u64,
                lines: plan.lines as u64,
                is_error: plan.is_error,
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
