//! Offload file names and folders, made from model-made ids so they can never leave their
//! folder: only `[A-Za-z0-9._-]`, never starting with `.`, bounded in length, unique per `seq`.

use crate::error::{CoreError, Result};
use crate::text::fingerprint_hex;

/// The longest sanitized call id inside a file name, in bytes.
const ID_MAX_BYTES: usize = 64;
/// The longest sanitized session name, in bytes.
const SESSION_MAX_BYTES: usize = 64;
/// The component used when a call id is empty.
const NO_ID: &str = "result";

/// The file name for the output with sequence number `seq` answering `call_id`:
/// `<seq, zero-padded to 10>-<call id sanitized to 64 bytes>.txt` (`result` for an empty id).
///
/// ```
/// use ctxkit_core::offload::offload_file_name;
/// assert_eq!(offload_file_name(7, "call_0"), "0000000007-call_0.txt");
/// assert_eq!(offload_file_name(8, ""), "0000000008-result.txt");
/// ```
pub fn offload_file_name(seq: u64, call_id: &str) -> String {
    let id = sanitize_file_component(call_id, ID_MAX_BYTES);
    let id = if id.is_empty() { NO_ID } else { id.as_str() };
    format!("{seq:010}-{id}.txt")
}

/// `raw` made safe as one path component of at most `max_bytes` bytes: every character
/// outside `[A-Za-z0-9._-]` becomes `_`, leading dots become `_` (so never `.`, `..` or a
/// hidden file). When that changed anything or the result had to be cut, `-` and 8 hex digits
/// of a fingerprint of `raw` end it, so two different raw names do not end up the same.
/// An empty `raw` gives an empty string; the result is never longer than `max_bytes`.
///
/// ```
/// use ctxkit_core::offload::sanitize_file_component;
/// assert_eq!(sanitize_file_component("call_0", 64), "call_0");
/// assert_eq!(sanitize_file_component("..", 64), "__-07da1a07");
/// assert_eq!(sanitize_file_component("日本", 64), "__-121d7e35");
/// assert_eq!(sanitize_file_component(&"a".repeat(500), 20).len(), 20);
/// ```
pub fn sanitize_file_component(raw: &str, max_bytes: usize) -> String {
    let mut clean: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let leading_dots = clean.bytes().take_while(|byte| *byte == b'.').count();
    clean.replace_range(..leading_dots, &"_".repeat(leading_dots));
    if clean == raw && clean.len() <= max_bytes {
        return clean;
    }
    let mut suffix = String::from("-");
    suffix.extend(fingerprint_hex(raw).chars().take(8));
    // `clean` is ASCII, so any byte index is a character boundary.
    match max_bytes.checked_sub(suffix.len()) {
        Some(room) if room > 0 => {
            clean.truncate(room.min(clean.len()));
            clean.push_str(&suffix);
        }
        _ => clean.truncate(max_bytes.min(clean.len())),
    }
    clean
}

/// The folder a session's offloaded outputs go to, relative to the working directory:
/// `<folder>/<sanitized session>`, after checking both (a blank session, or a folder that is
/// not a plain relative path, is an error).
///
/// ```
/// use ctxkit_core::offload::session_folder;
/// assert_eq!(session_folder("s1", ".ctxkit/tool_results/").unwrap(), ".ctxkit/tool_results/s1");
/// assert_eq!(session_folder("..", "out").unwrap(), "out/__-07da1a07");
/// ```
pub fn session_folder(session: &str, folder: &str) -> Result<String> {
    if session.trim().is_empty() {
        return Err(CoreError::invalid(
            "session",
            "empty: a session name is needed to name its offload folder",
        ));
    }
    let folder = checked_folder(folder)?;
    Ok(format!(
        "{folder}/{}",
        sanitize_file_component(session, SESSION_MAX_BYTES)
    ))
}

/// The policy's folder without a trailing `/`, if it is a plain relative path.
pub(crate) fn checked_folder(folder: &str) -> Result<&str> {
    let trimmed = folder.trim_end_matches('/');
    let problem = if trimmed.is_empty() {
        Some("empty: offloaded outputs need a folder".to_owned())
    } else if trimmed.starts_with('/') || trimmed.contains('\\') || trimmed.contains(':') {
        Some(format!(
            "{folder:?} is not a relative `/`-separated path (no leading `/`, `\\` or `:`)"
        ))
    } else if let Some(component) = trimmed
        .split('/')
        .find(|component| matches!(*component, "" | "." | ".."))
    {
        Some(format!(
            "{folder:?} has a {component:?} component: offloads must stay inside the folder"
        ))
    } else if trimmed.chars().any(char::is_control) {
        Some(format!("{folder:?} contains a control character"))
    } else {
        None
    };
    match problem {
        Some(problem) => Err(CoreError::invalid("policy.folder", problem)),
        None => Ok(trimmed),
    }
}

/// True when `name` is a name [`offload_file_name`] gives: `<10 to 20 digits>-<id>.txt`, the id
/// a [`sanitize_file_component`] result of at most 64 bytes.
pub(crate) fn is_offload_file_name(name: &str) -> bool {
    let Some((seq, id)) = name
        .strip_suffix(".txt")
        .and_then(|stem| stem.split_once('-'))
    else {
        return false;
    };
    (10..=20).contains(&seq.len())
        && seq.bytes().all(|byte| byte.is_ascii_digit())
        && is_sanitized_component(id, ID_MAX_BYTES)
}

/// True when `component` is a session folder's name [`session_folder`] gives.
pub(crate) fn is_session_component(component: &str) -> bool {
    is_sanitized_component(component, SESSION_MAX_BYTES)
}

/// True when `component` could be a non-empty [`sanitize_file_component`] result: only
/// `[A-Za-z0-9._-]`, not starting with `.`, at most `max_bytes`.
fn is_sanitized_component(component: &str, max_bytes: usize) -> bool {
    !component.is_empty()
        && component.len() <= max_bytes
        && !component.starts_with('.')
        && component
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'_' | b'-'))
}
