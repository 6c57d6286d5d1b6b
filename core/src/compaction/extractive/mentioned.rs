//! The files the tools' output named that the agent did not open: leads for its next moves.
//!
//! A command's output, a search's matches or a sub-agent's report often name the file the
//! agent goes to next (a linter's `lib/a/b.ex:40:22: …`, a task description's list of files
//! to write, a test run's failing file). The `## Files` section lists them on one line after
//! the files the agent touched, the most recently named first, within a byte budget (the
//! oldest dropped first), and the next summary merges that line item by item. Paths are cheap:
//! one is a few words, and without it the agent would have to run the command again.
//! The content a file read returned is not a lead (a file's own text names other files for
//! its own reasons), nor is ctxkit's own offload reference.

use super::signals::{backticked_items, paths_in_text};

/// The label of the line, as written and as read back from a previous summary.
pub(super) const MENTIONED_LABEL: &str = "Named in tool output, not opened: ";

/// The label of the line of files the user's requests named, as written and as read back: a
/// request the agent is about to act on often lists the files to work on, and a request is
/// quoted head and tail only, so its middle's files would otherwise be gone.
pub(super) const REQUESTED_LABEL: &str = "Named in the user's requests: ";

/// The paths `text` (a tool result that is not a file's content) names, as written, each one
/// a file name with an extension (so a grep context line's `a.rs-12-` is not one) under a
/// directory (a bare name from a listing says too little to open it).
pub(super) fn paths_named(text: &str, offload_path: Option<&str>) -> Vec<String> {
    paths_in_text(text)
        .into_iter()
        .filter(|path| Some(path.as_str()) != offload_path)
        .filter(|path| path.contains('/') && has_file_name(path) && !is_build_output(path))
        .collect()
}

/// Directories that hold what a build or a tool made, not the project's source.
const OUTPUT_DIRS: [&str; 5] = ["_build", "node_modules", "__pycache__", ".git", ".ctxkit"];
/// Extensions of compiled or binary files.
const BINARY_EXTENSIONS: [&str; 10] = [
    "beam", "pyc", "o", "so", "class", "plt", "a", "dll", "dylib", "jar",
];

/// Whether `path` is a build's or a tool's output (a compiled module, a cache): never a lead.
fn is_build_output(path: &str) -> bool {
    let extension = path
        .rsplit_once('.')
        .map(|(_, ext)| ext)
        .unwrap_or_default();
    path.split('/').any(|part| OUTPUT_DIRS.contains(&part))
        || BINARY_EXTENSIONS.contains(&extension)
}

/// Whether `a` and `b` name one file: equal, or one is the other under a longer directory
/// (`/testbed/src/a.py`, `b/src/a.py` of a diff and `src/a.py`).
pub(super) fn same_file(a: &str, b: &str) -> bool {
    let under = |long: &str, short: &str| {
        long.strip_suffix(short)
            .is_some_and(|head| head.ends_with('/'))
    };
    a == b || under(a, b) || under(b, a)
}

/// Whether the written path `listed` holds `path` verbatim as whole components: the same path,
/// a tail of it (`transcript_renderer.ex` of `lib/services/transcript_renderer.ex`) or a
/// directory it is under (`lib` of `lib/a.ex`).
pub(super) fn spells_out(listed: &str, path: &str) -> bool {
    listed == path
        || listed
            .strip_suffix(path)
            .is_some_and(|head| head.ends_with('/'))
        || listed
            .strip_prefix(path)
            .is_some_and(|tail| tail.starts_with('/'))
}

/// Whether the last component of `path` is a file name with a short alphanumeric extension.
pub(super) fn has_file_name(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && (1..=5).contains(&ext.len())
            && ext.chars().all(|c| c.is_ascii_alphanumeric())
            && ext.chars().any(|c| c.is_ascii_alphabetic())
    })
}

/// `list` with `path` moved to (or added at) its end: the end is the most recent.
pub(super) fn push_latest(list: &mut Vec<String>, path: String) {
    list.retain(|p| *p != path);
    list.push(path);
}

/// The paths a previous summary's `## Files` body lists as named in tool output, the most
/// recent last.
pub(super) fn read_back(files_body: &str) -> Vec<String> {
    read_back_labelled(files_body, MENTIONED_LABEL)
}

/// The paths the line labelled `label` of a previous summary's `## Files` body lists, the
/// most recent last.
pub(super) fn read_back_labelled(files_body: &str, label: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in files_body.lines() {
        if let Some(list) = line.strip_prefix(label) {
            // Written the most recent first.
            for path in backticked_items(list).into_iter().rev() {
                push_latest(&mut out, path);
            }
        }
    }
    out
}

/// The line for `paths` (the most recent last), those `listed` says the summary already holds
/// left out, the most recent first, within `max_bytes` (the oldest dropped first); empty when
/// none is left. Paths that differ only in their numbers (a test's fixtures `list_00.txt` to
/// `list_39.txt`, its temporary folders `/tmp/run-0001/`) are one lead: the most recent is
/// written, followed by how many more like it were named, so forty fixtures do not crowd out
/// the one source file a linter named.
pub(super) fn mentioned_line(
    paths: &[String],
    listed: impl Fn(&str) -> bool,
    max_bytes: usize,
) -> String {
    labelled_line(MENTIONED_LABEL, paths, listed, max_bytes)
}

/// [`mentioned_line`] under another `label`.
pub(super) fn labelled_line(
    label: &str,
    paths: &[String],
    listed: impl Fn(&str) -> bool,
    max_bytes: usize,
) -> String {
    // (path, its shape, how many more of that shape), the most recent first.
    let mut leads: Vec<(&str, String, usize)> = Vec::new();
    for path in paths.iter().rev().filter(|path| !listed(path)) {
        if path.contains('`') || leads.iter().any(|(lead, _, _)| *lead == path.as_str()) {
            continue;
        }
        let shape = numbers_blanked(path);
        match leads.iter_mut().find(|(_, other, _)| *other == shape) {
            Some(lead) => lead.2 += 1,
            None => leads.push((path, shape, 0)),
        }
    }
    let mut line = String::new();
    for (path, _, more) in leads {
        let item = match more {
            0 => format!("`{path}`"),
            n => format!("`{path}` (and {n} more like it)"),
        };
        let separator = if line.is_empty() { label } else { ", " };
        if line.len() + separator.len() + item.len() > max_bytes {
            break;
        }
        line.push_str(separator);
        line.push_str(&item);
    }
    line
}

/// `path` with every run of digits replaced by one `#`: the shape numbered siblings share.
fn numbers_blanked(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut in_digits = false;
    for c in path.chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                out.push('#');
            }
            in_digits = true;
        } else {
            out.push(c);
            in_digits = false;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leads_are_file_names_not_grep_context_or_the_offload_path() {
        let text = "lib/a/slice.ex:40:22: call_without_opaque\nsrc/x.rs-12- let y\n.ctxkit/tool_results/s/1.txt\nsee docs/guide and README.md\n_build/dev/lib/a/ebin/A.beam\nnode_modules/x/index.js";
        assert_eq!(
            paths_named(text, Some(".ctxkit/tool_results/s/1.txt")),
            vec!["lib/a/slice.ex"]
        );
    }

    #[test]
    fn the_line_lists_the_most_recent_first_within_its_budget_and_reads_back() {
        let paths: Vec<String> = ["old/a.rs", "src/b.rs", "src/c.rs", "src/d.rs"]
            .map(str::to_owned)
            .to_vec();
        let line = mentioned_line(&paths, |p| p == "src/c.rs", 60);
        assert_eq!(line, format!("{MENTIONED_LABEL}`src/d.rs`, `src/b.rs`"));
        assert_eq!(
            read_back(&format!("- `x.rs`: read\n{line}")),
            vec!["src/b.rs", "src/d.rs"]
        );
        assert_eq!(mentioned_line(&paths, |_| true, 500), "");
    }

    #[test]
    fn numbered_siblings_are_one_lead_with_their_count() {
        let mut paths: Vec<String> = (0..40)
            .map(|n| format!("tests/fixtures/list_{n:02}.txt"))
            .collect();
        paths.push("lib/slice.ex".to_owned());
        paths.extend((0..3).map(|n| format!("/tmp/run-{n:04}/items.json")));
        let line = mentioned_line(&paths, |_| false, 500);
        assert_eq!(
            line,
            format!(
                "{MENTIONED_LABEL}`/tmp/run-0002/items.json` (and 2 more like it), \
                 `lib/slice.ex`, `tests/fixtures/list_39.txt` (and 39 more like it)"
            )
        );
        // Read back, each shape's most recent path is kept for the next merge.
        assert_eq!(
            read_back(&line),
            vec![
                "tests/fixtures/list_39.txt",
                "lib/slice.ex",
                "/tmp/run-0002/items.json"
            ]
        );
        // A path with no number is its own shape: `a.rs` and `b.rs` stay two leads.
        let two = mentioned_line(
            &["src/a.rs".to_owned(), "src/b.rs".to_owned()],
            |_| false,
            500,
        );
        assert_eq!(two, format!("{MENTIONED_LABEL}`src/b.rs`, `src/a.rs`"));
    }

    #[test]
    fn a_written_path_spells_out_its_tail_and_its_directories() {
        assert!(spells_out("lib/services/renderer.ex", "renderer.ex"));
        assert!(spells_out(
            "lib/services/renderer.ex",
            "services/renderer.ex"
        ));
        assert!(spells_out("lib/services/renderer.ex", "lib"));
        assert!(spells_out("lib/a.ex", "lib/a.ex"));
        assert!(!spells_out("lib/services/renderer.ex", "derer.ex"));
        assert!(!spells_out("lib/services/renderer.ex", "li"));
        assert!(!spells_out("a.ex", "lib/a.ex"));
    }

    #[test]
    fn one_file_under_a_longer_directory_is_the_same_file() {
        assert!(same_file("/testbed/src/a.py", "src/a.py"));
        assert!(same_file("src/a.py", "b/src/a.py"));
        assert!(!same_file("src/a.py", "xsrc/a.py"));
        assert!(!same_file("src/a.py", "src/b.py"));
    }
}
