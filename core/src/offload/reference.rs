//! The offload reference: the short message that stands in the log for an offloaded output,
//! saying where the output is, how to page it, and showing its head and tail.

use crate::model::{Content, Message, Part, Role};
use crate::offload::OffloadPolicy;
use crate::text::{head_bytes, single_line};

/// The first line of every offload reference.
pub const OFFLOAD_HEADER: &str = "[ctxkit: tool output offloaded]";

/// The longest tool name quoted in a reference, in bytes.
const TOOL_NAME_MAX_BYTES: usize = 64;
/// True when `message` is a tool message whose text starts with [`OFFLOAD_HEADER`]. It is a
/// recognizer, not a proof: a tool could print the header itself, which only makes stats count
/// it and clearing keep it.
///
/// ```
/// use ctxkit_core::offload::{is_offload_reference, OFFLOAD_HEADER};
/// use ctxkit_core::Message;
/// let reference = Message::tool_result("c", format!("{OFFLOAD_HEADER}\n..."), false);
/// assert!(is_offload_reference(&reference));
/// assert!(!is_offload_reference(&Message::user(OFFLOAD_HEADER)));
/// ```
pub fn is_offload_reference(message: &Message) -> bool {
    message.role == Role::Tool && message.text_content().starts_with(OFFLOAD_HEADER)
}

/// What the reference text says.
pub(crate) struct ReferenceFacts<'a> {
    pub tool_name: Option<&'a str>,
    pub relative_path: &'a str,
    pub bytes: usize,
    pub lines: usize,
    pub is_error: bool,
    pub head: &'a str,
    pub tail: &'a str,
    pub policy: &'a OffloadPolicy,
}

/// The reference text: header, where the output is, how to page it, the previews.
pub(crate) fn reference_text(facts: &ReferenceFacts) -> String {
    let tool = match facts.tool_name.map(single_line) {
        Some(name) if !name.is_empty() => format!("`{}`", head_bytes(&name, TOOL_NAME_MAX_BYTES)),
        _ => "the tool".to_owned(),
    };
    let status = if facts.is_error {
        "The tool reported an error (is_error: true)."
    } else {
        "The tool succeeded."
    };
    let policy = facts.policy;
    let path = shown_path(policy, facts.relative_path);
    let mut text = format!(
        "{OFFLOAD_HEADER}\n\
         The output of {tool} ({bytes} bytes, {lines} lines) was too large to keep in context; \
         it was saved in full to:\n\
         {path}\n\
         {status}\n\
         {paging}\n",
        bytes = facts.bytes,
        lines = facts.lines,
        paging = paging_sentence(policy, &path),
    );
    push_preview(&mut text, "--- head ---", facts.head);
    let hidden = facts
        .bytes
        .saturating_sub(facts.head.len())
        .saturating_sub(facts.tail.len());
    if hidden > 0 {
        text.push_str(&format!("[… {hidden} bytes not shown …]\n"));
    }
    push_preview(&mut text, "--- tail ---", facts.tail);
    text.push_str("--- end of preview ---");
    text
}

/// The file's path as the reference shows it: under the policy's `reference_root` when it has
/// one (the agent's tools do not run in ctxkit's working directory), else relative.
fn shown_path(policy: &OffloadPolicy, relative_path: &str) -> String {
    let root = policy.reference_root.trim_end_matches(['/', '\\']);
    if policy.reference_root.is_empty() {
        relative_path.to_owned()
    } else {
        format!("{root}/{relative_path}")
    }
}

/// How the model reads more: the policy's shell command on the file (`{path}` replaced by the
/// path, quoted when a POSIX shell needs it), else a call of its paging tool.
fn paging_sentence(policy: &OffloadPolicy, path: &str) -> String {
    if policy.paging_command.is_empty() {
        return format!(
            "To read more of it, call `{}` on that path with `{}` and `{}` to choose the lines, \
             a page at a time, rather than reading it whole.",
            policy.paging_tool, policy.offset_param, policy.limit_param
        );
    }
    let command = policy.paging_command.replace("{path}", &shell_quoted(path));
    format!(
        "To read more of it, run `{command}` with your shell, changing the line numbers to \
         choose the lines, a page at a time, rather than reading it whole."
    )
}

/// `text` as one POSIX shell word: as it is when every character is safe, else in single
/// quotes (a quote inside written `'\''`).
fn shell_quoted(text: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/' | ':');
    if !text.is_empty() && text.chars().all(safe) {
        return text.to_owned();
    }
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// Appends a labelled preview, ending it with a newline.
fn push_preview(text: &mut String, label: &str, preview: &str) {
    if preview.is_empty() {
        return;
    }
    text.push_str(label);
    text.push('\n');
    text.push_str(preview);
    if !preview.ends_with('\n') {
        text.push('\n');
    }
}

/// The reference's content: its text alone, or its text followed by the original's non-text
/// parts (images, opaque blocks), which a text file cannot hold.
pub(crate) fn reference_content(original: &Content, reference_text: String) -> Content {
    let kept: Vec<Part> = match original {
        Content::Text(_) => Vec::new(),
        Content::Parts(parts) => parts
            .iter()
            .filter(|part| !matches!(part, Part::Text { .. }))
            .cloned()
            .collect(),
    };
    if kept.is_empty() {
        return Content::Text(reference_text);
    }
    let mut parts = vec![Part::Text {
        text: reference_text,
    }];
    parts.extend(kept);
    Content::Parts(parts)
}
