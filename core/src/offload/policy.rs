//! The offload policy: when a tool output is offloaded and how its reference says to read it
//! back (the paging tool, or a shell command, and where the file is shown to be).
//!
//! Guarantees: every field has its documented default, so a partial JSON object is a valid
//! policy; [`check_offload_policy`] refuses, naming the field, a folder that is not a plain
//! relative path, a `reference_root` that is not absolute and a `paging_command` that does not
//! name `{path}`; the paging tool and the history tools are never offloaded.

use serde::{Deserialize, Serialize};

use crate::error::{CoreError, Result};
use crate::offload::names::checked_folder;

/// When and how tool outputs are offloaded. Every field has the documented default, so a
/// partial JSON object is a valid policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default, deny_unknown_fields)]
pub struct OffloadPolicy {
    /// Outputs whose text is larger than this many bytes are offloaded. Default 10,000.
    pub threshold_bytes: usize,
    /// Tools whose outputs are never offloaded: reading the file back would offload it again.
    /// Default `read_file`, `write_file`, `edit_file`. The paging tool and the history tools
    /// (`search_history`, `read_history`, `read_offload`) are never offloaded whatever this
    /// list says.
    pub excluded_tools: Vec<String>,
    /// The tool the model pages the file with. Default `read_file`.
    pub paging_tool: String,
    /// That tool's parameter for the first line to read. Default `offset`.
    pub offset_param: String,
    /// That tool's parameter for how many lines to read. Default `limit`.
    pub limit_param: String,
    /// At most this many lines in the head preview. Default 20.
    pub head_max_lines: usize,
    /// At most this many bytes in the head preview. Default 2,048.
    pub head_max_bytes: usize,
    /// At most this many lines in the tail preview. Default 5.
    pub tail_max_lines: usize,
    /// At most this many bytes in the tail preview. Default 512.
    pub tail_max_bytes: usize,
    /// The folder for offloaded outputs, relative to the working directory, `/`-separated.
    /// Default `.ctxkit/tool_results`.
    pub folder: String,
    /// Where the reference says the folder is, for a model whose tools do not run in
    /// ctxkit's working directory (an agent behind `ctxkit proxy`): an absolute path that the
    /// reference puts before the file's relative path. Default empty: the relative path alone.
    pub reference_root: String,
    /// A shell command that pages the file, for an agent whose only reader is its shell
    /// (Codex): the reference tells the model to run it, `{path}` replaced by the file's path
    /// (quoted for a POSIX shell when it needs to be), instead of calling `paging_tool`. Keep
    /// its page under `threshold_bytes`, or the page is offloaded again. Default empty.
    pub paging_command: String,
}

/// The history tools' names (`recall`'s `SEARCH_HISTORY`, `READ_HISTORY`, `READ_OFFLOAD`; a
/// test there keeps the two lists equal). Their answers are pages of the log or of an offloaded
/// output, sized by the caller: offloading one would answer a page with a reference to page
/// again, so they are never offloaded, whatever the policy's `excluded_tools` say.
pub(crate) const HISTORY_TOOL_NAMES: [&str; 3] = ["search_history", "read_history", "read_offload"];

/// Whether `name`'s outputs stay in the view whatever their size: an excluded tool, the
/// paging tool (reading an offloaded file back must not offload it again) or a history tool.
pub(crate) fn never_offloaded(name: &str, policy: &OffloadPolicy) -> bool {
    name == policy.paging_tool
        || HISTORY_TOOL_NAMES.contains(&name)
        || policy
            .excluded_tools
            .iter()
            .any(|excluded| excluded == name)
}

/// Checks that `policy` can make references: its folder a plain relative path, its
/// `reference_root` empty or absolute, its `paging_command` empty or naming `{path}`. The
/// error names the field ([`crate::offload::plan_offload`] makes the same checks); a shell can check a policy
/// once, when it is configured, rather than at the first big output.
///
/// ```
/// use ctxkit_core::offload::{check_offload_policy, OffloadPolicy};
/// assert!(check_offload_policy(&OffloadPolicy::default()).is_ok());
/// let relative = OffloadPolicy { reference_root: "home/me".into(), ..OffloadPolicy::default() };
/// let error = check_offload_policy(&relative).unwrap_err();
/// assert!(error.to_string().starts_with("policy.reference_root: "));
/// ```
pub fn check_offload_policy(policy: &OffloadPolicy) -> Result<()> {
    checked_folder(&policy.folder)?;
    check_paging_fields(policy)
}

/// Checks the policy's `reference_root` (empty, or an absolute path without control
/// characters) and `paging_command` (empty, or one line naming `{path}`): a reference must say
/// where the file is in one line and how to page it.
pub(crate) fn check_paging_fields(policy: &OffloadPolicy) -> Result<()> {
    let root = &policy.reference_root;
    let windows_absolute = root.get(1..3) == Some(":\\") || root.get(1..3) == Some(":/");
    if !(root.is_empty() || root.starts_with('/') || windows_absolute) {
        return Err(CoreError::invalid(
            "policy.reference_root",
            format!("{root:?} is not an absolute path"),
        ));
    }
    if root.chars().any(char::is_control) {
        return Err(CoreError::invalid(
            "policy.reference_root",
            format!("{root:?} contains a control character"),
        ));
    }
    let command = &policy.paging_command;
    if !command.is_empty() && !command.contains("{path}") {
        return Err(CoreError::invalid(
            "policy.paging_command",
            format!("{command:?} does not name the file: put `{{path}}` where it goes"),
        ));
    }
    if command.chars().any(char::is_control) {
        return Err(CoreError::invalid(
            "policy.paging_command",
            format!("{command:?} contains a control character"),
        ));
    }
    Ok(())
}

impl Default for OffloadPolicy {
    fn default() -> Self {
        OffloadPolicy {
            threshold_bytes: 10_000,
            excluded_tools: vec!["read_file".into(), "write_file".into(), "edit_file".into()],
            paging_tool: "read_file".into(),
            offset_param: "offset".into(),
            limit_param: "limit".into(),
            head_max_lines: 20,
            head_max_bytes: 2048,
            tail_max_lines: 5,
            tail_max_bytes: 512,
            folder: ".ctxkit/tool_results".into(),
            reference_root: String::new(),
            paging_command: String::new(),
        }
    }
}
