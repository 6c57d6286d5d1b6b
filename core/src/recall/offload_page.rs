//! `read_offload`: which paths it may read ([`check_offload_path`]) and a page of the file as
//! the tool result ([`render_offload_page`]), for agents that have no file tool of their own.
//!
//! A path is accepted only when it is one an offload reference gives: `<folder>/<session>/<file>`
//! with the policy's folder, the session's folder name (when the shell knows the session) and a
//! file name made by [`crate::offload::offload_file_name`], all by the rules of
//! `core/src/offload/names.rs`. So a model-made path (`../`, an absolute path, a symlink name, a
//! hidden file, another session's folder) never names a file outside the session's offloads; the
//! shell still opens it without following symlinks.
//!
//! Guarantees: a page has at most the request's lines, each cut to [`OFFLOAD_LINE_MAX_BYTES`],
//! together at most [`OFFLOAD_PAGE_MAX_BYTES`] (at least one line, cut if need be); lines are
//! numbered from 1 as an editor numbers them; the result ends saying where to continue.

use serde::{Deserialize, Serialize};

use super::limits::{OFFLOAD_LINE_MAX_BYTES, OFFLOAD_PAGE_MAX_BYTES};
use super::request::OffloadPageRequest;
use super::tools::READ_OFFLOAD;
use crate::error::{CoreError, Result};
use crate::offload::names::{
    checked_folder, is_offload_file_name, is_session_component, session_folder,
};
use crate::text::{count_lines, head_bytes};

/// The first line of every `read_offload` result.
pub const OFFLOAD_PAGE_HEADER: &str = "[ctxkit: offload page]";

/// An offloaded output's place, checked: the folder (relative to the working directory,
/// `<folder>/<session>`) and the file's name in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OffloadPath {
    /// `<offload folder>/<session folder>`, `/`-separated, relative, no `.` or `..`.
    pub folder: String,
    /// `<seq>-<id>.txt`.
    pub file_name: String,
}

impl OffloadPath {
    /// `<folder>/<file_name>`, as the offload reference shows it.
    pub fn relative_path(&self) -> String {
        format!("{}/{}", self.folder, self.file_name)
    }
}

/// Checks that `path` names an offloaded output under `folder` (the offload policy's folder),
/// in the folder of `session` when given (else of any session). Errors at `read_offload.path`,
/// saying what a valid path looks like.
///
/// ```
/// use ctxkit_core::recall::check_offload_path;
/// let path = ".ctxkit/tool_results/s1/0000000042-call_1.txt";
/// let checked = check_offload_path(path, Some("s1"), ".ctxkit/tool_results").unwrap();
/// assert_eq!(checked.folder, ".ctxkit/tool_results/s1");
/// assert_eq!(checked.relative_path(), path);
/// for bad in ["../etc/passwd", "/etc/passwd", ".ctxkit/tool_results/s1/../../x.txt",
///             ".ctxkit/tool_results/s2/0000000042-call_1.txt", ".ctxkit/MEMORY.md"] {
///     assert!(check_offload_path(bad, Some("s1"), ".ctxkit/tool_results").is_err(), "{bad}");
/// }
/// ```
pub fn check_offload_path(path: &str, session: Option<&str>, folder: &str) -> Result<OffloadPath> {
    let at = format!("{READ_OFFLOAD}.path");
    let folder = checked_folder(folder)?;
    let expected_folder = session
        .map(|session| session_folder(session, folder))
        .transpose()?;
    let given = path.trim();
    let relative = given.strip_prefix("./").unwrap_or(given);
    let checked = relative
        .strip_prefix(folder)
        .and_then(|rest| rest.strip_prefix('/'))
        .and_then(|rest| rest.split_once('/'))
        .filter(|(session_part, file)| {
            is_session_component(session_part)
                && is_offload_file_name(file)
                && expected_folder
                    .as_deref()
                    .is_none_or(|expected| *expected == format!("{folder}/{session_part}"))
        })
        .map(|(session_part, file)| OffloadPath {
            folder: format!("{folder}/{session_part}"),
            file_name: file.to_owned(),
        });
    checked.ok_or_else(|| {
        let shown = head_bytes(given, 200);
        let folder_shown = expected_folder.unwrap_or_else(|| format!("{folder}/<session>"));
        let hint = if given.starts_with('/') {
            " (relative to the working directory, not absolute)"
        } else {
            ""
        };
        CoreError::invalid(
            at,
            format!(
                "{shown:?} is not an offloaded output of this session: give the path an offload \
                 reference shows{hint}, `{folder_shown}/<seq>-<id>.txt`"
            ),
        )
    })
}

/// The page `request` asks for of the offloaded output at `path`, whose text is `content`
/// (`file_bytes`: the file's real size, larger than `content` when the shell read only its
/// head).
pub fn render_offload_page(
    request: &OffloadPageRequest,
    path: &OffloadPath,
    content: &str,
    file_bytes: u64,
) -> String {
    let relative = path.relative_path();
    let total = count_lines(content);
    let partial = u64::try_from(content.len()).is_ok_and(|read| read < file_bytes);
    let size = if partial {
        format!(
            "{file_bytes} bytes; only its first {} bytes were read",
            content.len()
        )
    } else {
        format!("{file_bytes} bytes")
    };
    let first = usize::try_from(request.offset).unwrap_or(usize::MAX);
    if first > total {
        let what = if total == 0 {
            "the file is empty".to_owned()
        } else {
            format!("the file has {total} lines")
        };
        return format!(
            "{OFFLOAD_PAGE_HEADER} {relative} ({size}): offset {} is past the end: {what}.",
            request.offset
        );
    }
    let mut body = String::new();
    let mut last = first.saturating_sub(1);
    let lines = content
        .split_inclusive('\n')
        .enumerate()
        .skip(first.saturating_sub(1))
        .take(request.limit);
    for (index, line) in lines {
        let number = index.saturating_add(1);
        let line = line.strip_suffix('\n').unwrap_or(line);
        let line = line.strip_suffix('\r').unwrap_or(line);
        let shown = head_bytes(line, OFFLOAD_LINE_MAX_BYTES);
        let mut row = format!("{number:>6}\t{shown}");
        if shown.len() < line.len() {
            row.push_str(&format!(
                "[… {} bytes of this line cut]",
                line.len().saturating_sub(shown.len())
            ));
        }
        row.push('\n');
        if body.len().saturating_add(row.len()) > OFFLOAD_PAGE_MAX_BYTES {
            if body.is_empty() {
                body.push_str(head_bytes(&row, OFFLOAD_PAGE_MAX_BYTES));
                body.push('\n');
                last = number;
            }
            break;
        }
        body.push_str(&row);
        last = number;
    }
    let mut out = format!(
        "{OFFLOAD_PAGE_HEADER} {relative} lines {first} to {last} of {total} ({size})\n{body}"
    );
    if last < total {
        out.push_str(&format!(
            "Lines {} to {total} not shown: continue with {READ_OFFLOAD} on this path with \
             offset={}.",
            last.saturating_add(1),
            last.saturating_add(1)
        ));
    } else {
        out.push_str("This is the end of the file.");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const FOLDER: &str = ".ctxkit/tool_results";

    fn path() -> OffloadPath {
        check_offload_path(
            "./.ctxkit/tool_results/s1/0000000042-call_1.txt",
            None,
            FOLDER,
        )
        .unwrap()
    }

    #[test]
    fn page_snapshot() {
        let content: String = (1..=30)
            .map(|n| format!("line {n}\n"))
            .chain(["x".repeat(OFFLOAD_LINE_MAX_BYTES + 10), "\nlast\r\n".into()])
            .collect();
        let page = |offset: u64, limit: usize| {
            render_offload_page(
                &OffloadPageRequest {
                    path: String::new(),
                    offset,
                    limit,
                },
                &path(),
                &content,
                content.len() as u64,
            )
        };
        let rendered = [
            page(1, 5),
            page(29, 10).replace(&"x".repeat(100), "x…"),
            page(99, 10),
        ];
        insta::assert_snapshot!(rendered.join("\n\n=====\n\n"));
    }

    #[test]
    fn only_offload_files_of_the_session_are_accepted() {
        for bad in [
            "",
            ".ctxkit/tool_results/s1",
            ".ctxkit/tool_results/s1/",
            ".ctxkit/tool_results/.s1/0000000042-call_1.txt",
            ".ctxkit/tool_results/s1/0000000042-.txt",
            ".ctxkit/tool_results/s1/42-call_1.txt",
            ".ctxkit/tool_results/s1/0000000042-call_1.txt/x",
            ".ctxkit/tool_results/s1/0000000042-call 1.txt",
            ".ctxkit/tool_results/s1/0000000042-call_1.md",
            ".ctxkit/tool_results//0000000042-call_1.txt",
            "other/s1/0000000042-call_1.txt",
        ] {
            assert!(check_offload_path(bad, None, FOLDER).is_err(), "{bad:?}");
        }
        let error = check_offload_path(
            "/w/.ctxkit/tool_results/s1/0000000001-a.txt",
            Some("s1"),
            FOLDER,
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.contains("not absolute") && error.contains(".ctxkit/tool_results/s1/<seq>"),
            "{error}"
        );
        // A session whose name had to be sanitized: its folder is the sanitized name.
        let folder = session_folder("../日本", FOLDER).unwrap();
        let file = format!("{folder}/0000000001-a.txt");
        assert!(check_offload_path(&file, Some("../日本"), FOLDER).is_ok());
        assert!(check_offload_path(&file, Some("other"), FOLDER).is_err());
        assert!(check_offload_path("/abs/0000000001-a.txt", None, "/abs").is_err());
    }

    #[test]
    fn a_page_of_one_huge_line_is_still_bounded() {
        let content = "y".repeat(1 << 20);
        let request = OffloadPageRequest {
            path: String::new(),
            offset: 1,
            limit: 10,
        };
        let page = render_offload_page(&request, &path(), &content, 1 << 21);
        assert!(page.len() < OFFLOAD_LINE_MAX_BYTES + 500, "{}", page.len());
        assert!(page.contains("only its first 1048576 bytes were read"));
        assert!(page.ends_with("This is the end of the file."));
    }
}
