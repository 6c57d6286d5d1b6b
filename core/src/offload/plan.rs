//! The offload plan: a big tool output replaced by a paged reference to a file.
//!
//! [`plan_offload`] decides whether a tool result is offloaded and, when it is, computes
//! everything the shell needs: the file's relative path, the text to write in it, and the
//! reference message to store and show instead of the output. The shell writes the file
//! (folder 0700, file 0600) and on any failure keeps the output as it was (fail-open).
//!
//! Guarantees:
//! - A file name is `<seq, 10+ digits>-<sanitized call id>.txt`: only `[A-Za-z0-9._-]`, never
//!   starting with `.`, under 100 bytes, unique per `seq`. It is never the raw call id (an LLM
//!   or a proxy makes that up: `../` would escape the folder, `call_0` repeats every turn).
//! - The relative path is `<folder>/<sanitized session>/<file name>`: it has no `.` or `..`
//!   component, is never absolute, and stays inside its session's folder.
//! - The head preview is at most `head_max_lines` lines and `head_max_bytes` bytes, the tail
//!   preview at most `tail_max_lines` lines and `tail_max_bytes` bytes, both cut on character
//!   boundaries (a 40 KB output on one line still gets a bounded preview).
//! - The reference keeps the result's `tool_call_id`, `is_error` and `name`, says whether the
//!   tool failed, and starts with [`OFFLOAD_HEADER`] so later layers recognize it
//!   ([`is_offload_reference`]).
//!
//! Only text is offloaded. A result with images (or other non-text parts) keeps them: the
//! reference message carries the reference text first, then the non-text parts in their
//! order, since a text file cannot hold an image and the model may still need it. The size
//! that is compared to the threshold is the result's text alone.

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::model::{Message, Role};
use crate::offload::names::{offload_file_name, session_folder};
use crate::offload::policy::{check_paging_fields, never_offloaded};
use crate::offload::reference::{reference_content, reference_text, ReferenceFacts};
use crate::offload::OffloadPolicy;
use crate::text::{count_lines, head_lines, tail_lines};

/// What to do with one big tool output: write `content` to `relative_path`, then store and
/// show `reference` instead of the output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct OffloadPlan {
    /// The file's name: `<seq, zero-padded to 10>-<sanitized call id>.txt`.
    pub file_name: String,
    /// Where to write it, relative to the working directory: `<folder>/<session>/<file_name>`.
    pub relative_path: String,
    /// What to write: the result's text byte for byte ([`Message::text_content`]: the text
    /// parts joined by newlines when the content has parts).
    pub content: String,
    /// The size of `content` in bytes.
    pub bytes: usize,
    /// The number of lines in `content` (see [`count_lines`]).
    pub lines: usize,
    /// Whether the tool reported a failure.
    pub is_error: bool,
    /// The head preview quoted in the reference.
    pub head: String,
    /// The tail preview quoted in the reference (empty when the head already shows the end).
    pub tail: String,
    /// The tool message to store and show instead of the output.
    pub reference: Message,
}

/// Plans the offload of `result`, the tool message with sequence number `seq` in `session`.
/// `tool_name` is the name of the tool that produced it (when `None`, the message's own
/// `name` is used).
///
/// Returns `Ok(None)` when `result` is not a tool result, its text is not larger than the
/// threshold, or the tool's outputs are never offloaded (an excluded tool, the paging tool or
/// a history tool: `search_history`, `read_history`, `read_offload`). Errors when `session` is
/// blank, the policy's folder is not a plain relative path, its `reference_root` is not
/// absolute or its `paging_command` does not name `{path}` (see [`crate::offload::check_offload_policy`]).
///
/// ```
/// use ctxkit_core::offload::{is_offload_reference, plan_offload, OffloadPolicy};
/// use ctxkit_core::Message;
///
/// let output = "line\n".repeat(5_000);
/// let result = Message::tool_result("../../etc/passwd", output, false);
/// let plan = plan_offload(42, "s1", &result, Some("bash"), &OffloadPolicy::default())
///     .unwrap()
///     .unwrap();
/// assert_eq!(plan.file_name, "0000000042-___.._etc_passwd-2bef2c0b.txt");
/// assert_eq!(plan.relative_path, format!(".ctxkit/tool_results/s1/{}", plan.file_name));
/// assert_eq!((plan.bytes, plan.lines), (25_000, 5_000));
/// assert!(is_offload_reference(&plan.reference));
/// assert_eq!(plan.reference.tool_call_id.as_deref(), Some("../../etc/passwd"));
///
/// let small = Message::tool_result("call_1", "ok", false);
/// assert_eq!(plan_offload(43, "s1", &small, None, &OffloadPolicy::default()), Ok(None));
/// ```
pub fn plan_offload(
    seq: u64,
    session: &str,
    result: &Message,
    tool_name: Option<&str>,
    policy: &OffloadPolicy,
) -> Result<Option<OffloadPlan>> {
    let session_folder = session_folder(session, &policy.folder)?;
    check_paging_fields(policy)?;
    if result.role != Role::Tool {
        return Ok(None);
    }
    let tool_name = tool_name.or(result.name.as_deref());
    if tool_name.is_some_and(|name| never_offloaded(name, policy)) {
        return Ok(None);
    }
    let text = result.text_content();
    if text.len() <= policy.threshold_bytes {
        return Ok(None);
    }

    let file_name = offload_file_name(seq, result.tool_call_id.as_deref().unwrap_or_default());
    let relative_path = format!("{session_folder}/{file_name}");
    let head = head_lines(&text, policy.head_max_lines, policy.head_max_bytes);
    // The tail is taken from what the head did not show, so the two never overlap.
    let rest = text.get(head.len()..).unwrap_or_default();
    let tail = tail_lines(rest, policy.tail_max_lines, policy.tail_max_bytes);
    let lines = count_lines(&text);
    let reference_text = reference_text(&ReferenceFacts {
        tool_name,
        relative_path: &relative_path,
        bytes: text.len(),
        lines,
        is_error: result.is_error,
        head,
        tail,
        policy,
    });
    let reference = Message {
        role: Role::Tool,
        content: reference_content(&result.content, reference_text),
        tool_calls: Vec::new(),
        tool_call_id: result.tool_call_id.clone(),
        is_error: result.is_error,
        name: result.name.clone(),
        provider_fields: result.provider_fields.clone(),
    };
    Ok(Some(OffloadPlan {
        file_name,
        relative_path,
        bytes: text.len(),
        lines,
        is_error: result.is_error,
        head: head.to_owned(),
        tail: tail.to_owned(),
        content: text.into_owned(),
        reference,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ImageSource;
    use crate::model::{Content, Part};
    use crate::offload::{is_offload_reference, sanitize_file_component};

    fn plan(seq: u64, result: &Message, tool: Option<&str>) -> OffloadPlan {
        plan_offload(seq, "session-1", result, tool, &OffloadPolicy::default())
            .unwrap()
            .unwrap()
    }

    fn numbered_lines(count: usize) -> String {
        (1..=count)
            .map(|n| format!("{n:05} some build output of the project\n"))
            .collect()
    }

    #[test]
    fn reference_snapshot() {
        let result = Message {
            name: Some("bash".into()),
            ..Message::tool_result("call_abc123", numbered_lines(400), true)
        };
        let plan = plan(17, &result, None);
        assert_eq!(plan.reference.tool_call_id.as_deref(), Some("call_abc123"));
        assert!(plan.reference.is_error);
        assert_eq!(plan.reference.name.as_deref(), Some("bash"));
        insta::assert_snapshot!(plan.reference.text_content());
    }

    #[test]
    fn skips_small_excluded_and_non_tool_messages() {
        let policy = OffloadPolicy::default();
        let big = "x".repeat(20_000);
        let excluded = Message::tool_result("c", big.clone(), false);
        assert_eq!(
            plan_offload(1, "s", &excluded, Some("read_file"), &policy),
            Ok(None)
        );
        let named = Message {
            name: Some("edit_file".into()),
            ..excluded.clone()
        };
        assert_eq!(plan_offload(1, "s", &named, None, &policy), Ok(None));
        assert_eq!(
            plan_offload(1, "s", &Message::user(big.clone()), None, &policy),
            Ok(None)
        );
        let at_threshold = Message::tool_result("c", "x".repeat(10_000), false);
        assert_eq!(plan_offload(1, "s", &at_threshold, None, &policy), Ok(None));
        assert!(plan_offload(1, "s", &excluded, Some("bash"), &policy)
            .unwrap()
            .is_some());
    }

    #[test]
    fn history_tools_and_the_paging_tool_are_never_offloaded() {
        // A policy that excludes nothing and pages with its own tool: a 200-line page of an
        // offloaded output (over the threshold) must come back as itself, not as a reference.
        let policy = OffloadPolicy {
            excluded_tools: Vec::new(),
            paging_tool: "cat_page".into(),
            ..OffloadPolicy::default()
        };
        let page = Message::tool_result("c", "a line of the page\n".repeat(1_000), false);
        for name in ["search_history", "read_history", "read_offload", "cat_page"] {
            assert_eq!(
                plan_offload(1, "s", &page, Some(name), &policy),
                Ok(None),
                "{name}"
            );
        }
        assert!(plan_offload(1, "s", &page, Some("bash"), &policy)
            .unwrap()
            .is_some());
    }

    #[test]
    fn one_long_line_gets_byte_bounded_previews() {
        let result = Message::tool_result("c", "é".repeat(20_000), false);
        let plan = plan(3, &result, Some("fetch"));
        assert_eq!(plan.lines, 1);
        assert!(plan.head.len() <= 2048 && plan.head.len() >= 2040);
        assert!(plan.tail.len() <= 512 && plan.tail.len() >= 500);
        let text = plan.reference.text_content();
        assert!(text.len() < 3_500, "{}", text.len());
        assert!(text.contains("[… 37440 bytes not shown …]"));
    }

    #[test]
    fn hostile_ids_give_safe_unique_names() {
        let long = "x".repeat(500);
        for id in [
            "../../etc/x",
            "call_0",
            "",
            long.as_str(),
            "日本語",
            ".hidden",
            "a/b\\c",
        ] {
            let first = offload_file_name(1, id);
            let second = offload_file_name(2, id);
            assert_ne!(first, second);
            for name in [&first, &second] {
                assert!(name.len() < 100, "{name}");
                assert!(!name.starts_with('.') && !name.contains('/'), "{name}");
                assert!(name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b)));
            }
        }
        assert_eq!(
            offload_file_name(u64::MAX, "a"),
            "18446744073709551615-a.txt"
        );
        assert_ne!(
            sanitize_file_component("日本", 64),
            sanitize_file_component("中文", 64)
        );
        assert_eq!(sanitize_file_component("ab", 0), "");
        assert_eq!(sanitize_file_component("日本", 4), "__");
    }

    #[test]
    fn bad_sessions_and_folders_are_errors() {
        let result = Message::tool_result("c", "x".repeat(20_000), false);
        let error = plan_offload(1, " ", &result, None, &OffloadPolicy::default());
        assert!(error.unwrap_err().to_string().starts_with("session: empty"));
        for folder in ["", "/etc", "a/../b", "./a", "a//b", "C:\\x", ".."] {
            let policy = OffloadPolicy {
                folder: folder.into(),
                ..OffloadPolicy::default()
            };
            let error = plan_offload(1, "s", &result, None, &policy).unwrap_err();
            assert!(
                error.to_string().starts_with("policy.folder: "),
                "{folder}: {error}"
            );
        }
        let policy = OffloadPolicy {
            folder: "out/".into(),
            ..OffloadPolicy::default()
        };
        let plan = plan_offload(1, "../../x", &result, None, &policy)
            .unwrap()
            .unwrap();
        assert_eq!(plan.relative_path, "out/___.._x-0e455557/0000000001-c.txt");
    }

    #[test]
    fn images_stay_in_the_reference() {
        let image = Part::Image {
            source: ImageSource::Url {
                url: "https://x/y.png".into(),
            },
            detail: None,
        };
        let result = Message {
            content: Content::Parts(vec![
                Part::Text {
                    text: "a".repeat(6_000),
                },
                image.clone(),
                Part::Text {
                    text: "b".repeat(6_000),
                },
            ]),
            ..Message::tool_result("c", "", false)
        };
        let plan = plan(5, &result, None);
        assert_eq!(plan.bytes, 12_001);
        match &plan.reference.content {
            Content::Parts(parts) => {
                assert_eq!(parts.len(), 2);
                assert_eq!(parts.get(1), Some(&image));
            }
            Content::Text(_) => panic!("the image was lost"),
        }
        assert!(is_offload_reference(&plan.reference));
    }

    #[test]
    fn a_reference_can_name_an_absolute_file_and_a_shell_command() {
        let result = Message::tool_result("toolu_1", numbered_lines(400), false);
        let read_tool = OffloadPolicy {
            paging_tool: "Read".into(),
            offset_param: "offset".into(),
            limit_param: "limit".into(),
            reference_root: "/home/me/my project/".into(),
            ..OffloadPolicy::default()
        };
        let plan = plan_offload(4, "s", &result, Some("Bash"), &read_tool)
            .unwrap()
            .unwrap();
        assert_eq!(
            plan.relative_path,
            ".ctxkit/tool_results/s/0000000004-toolu_1.txt"
        );
        let text = plan.reference.text_content();
        assert!(text.contains(
            "saved in full to:\n/home/me/my project/.ctxkit/tool_results/s/0000000004-toolu_1.txt\n"
        ));
        assert!(text.contains("call `Read` on that path with `offset` and `limit`"));

        let shell = OffloadPolicy {
            paging_command: "sed -n '1,100p' {path}".into(),
            ..read_tool
        };
        let text = plan_offload(4, "s", &result, Some("shell"), &shell)
            .unwrap()
            .unwrap()
            .reference
            .text_content()
            .into_owned();
        assert!(text.contains(
            "run `sed -n '1,100p' '/home/me/my project/.ctxkit/tool_results/s/0000000004-toolu_1.txt'` with your shell"
        ), "{text}");
        assert!(!text.contains("call `Read`"));
        let quoted = OffloadPolicy {
            reference_root: "/it's".into(),
            ..shell
        };
        let text = plan_offload(4, "s", &result, None, &quoted)
            .unwrap()
            .unwrap()
            .reference
            .text_content()
            .into_owned();
        assert!(text.contains(r"'/it'\''s/.ctxkit/"), "{text}");
    }

    #[test]
    fn a_relative_root_or_a_command_without_the_path_is_an_error() {
        let result = Message::tool_result("c", "x".repeat(20_000), false);
        let cases = [
            ("relative/root", "", "policy.reference_root: "),
            ("/a\nb", "", "policy.reference_root: "),
            ("", "cat the file", "policy.paging_command: "),
            ("", "cat {path}\nrm -rf /", "policy.paging_command: "),
        ];
        for (root, command, expected) in cases {
            let policy = OffloadPolicy {
                reference_root: root.into(),
                paging_command: command.into(),
                ..OffloadPolicy::default()
            };
            let error = plan_offload(1, "s", &result, None, &policy).unwrap_err();
            assert!(
                error.to_string().starts_with(expected),
                "{root:?} {command:?}: {error}"
            );
        }
        let windows = OffloadPolicy {
            reference_root: "C:\\Users\\me".into(),
            ..OffloadPolicy::default()
        };
        assert!(plan_offload(1, "s", &result, None, &windows).is_ok());
    }

    #[test]
    fn policy_reads_partial_json_with_defaults() {
        let policy: OffloadPolicy =
            serde_json::from_str(r#"{"threshold_bytes": 5, "paging_tool": "view"}"#).unwrap();
        assert_eq!(policy.threshold_bytes, 5);
        assert_eq!(policy.paging_tool, "view");
        assert_eq!(policy.head_max_lines, 20);
        assert!(serde_json::from_str::<OffloadPolicy>(r#"{"treshold": 5}"#).is_err());
    }
}
