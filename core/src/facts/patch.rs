//! The files a patch body changes, wherever the body is: a tool of its own (`apply_patch`
//! with the patch as its input), a heredoc inside a shell command, any string argument. Two
//! shapes: the `*** Begin Patch` envelope (`*** Add File:`, `*** Update File:`, `*** Delete
//! File:`, `*** Move to:`) and a unified diff's `--- a/…` / `+++ b/…` headers. Lines are read
//! as lines: a path is never cut inside, whatever brackets it holds.

use super::FileAction;

/// Whether `text` holds a patch body of either shape.
pub fn is_patch(text: &str) -> bool {
    text.contains("*** Begin Patch")
        || text
            .lines()
            .zip(text.lines().skip(1))
            .any(|(old, new)| old.starts_with("--- ") && diff_target(new).is_some())
}

/// The files a patch body adds, updates, deletes or moves to, each once, in order.
pub fn patch_files(body: &str) -> Vec<(String, FileAction)> {
    let mut files: Vec<(String, FileAction)> = Vec::new();
    // The `---` line just before, when there was one: a `+++` line counts only after it.
    let mut removed_by_diff: Option<Option<String>> = None;
    for line in body.lines() {
        let trimmed = line.trim();
        let envelope = [
            ("*** Add File: ", FileAction::Created),
            ("*** Update File: ", FileAction::Edited),
            ("*** Delete File: ", FileAction::Deleted),
            ("*** Move to: ", FileAction::Created),
        ]
        .iter()
        .find_map(|(opening, action)| {
            trimmed
                .strip_prefix(opening)
                .map(|p| (p.trim().to_owned(), *action))
        });
        let found = match envelope {
            Some(found) => Some(found),
            None => {
                let old = removed_by_diff.take();
                if let Some(header) = line.strip_prefix("--- ") {
                    removed_by_diff = Some(diff_path(header));
                    None
                } else {
                    // `+++ /dev/null` deletes the file the `---` line named; `--- /dev/null`
                    // before a `+++` adds one.
                    match (old, diff_target(line)) {
                        (Some(old), Some(None)) => old.map(|path| (path, FileAction::Deleted)),
                        (Some(None), Some(Some(path))) => Some((path, FileAction::Created)),
                        (Some(Some(_)), Some(Some(path))) => Some((path, FileAction::Edited)),
                        _ => None,
                    }
                }
            }
        };
        if let Some((path, action)) = found.filter(|(path, _)| !path.is_empty()) {
            if !files.iter().any(|(p, _)| *p == path) {
                files.push((path, action));
            }
        }
    }
    files
}

/// A unified diff's `+++` line: `Some(Some(path))`, `Some(None)` for `/dev/null`.
fn diff_target(line: &str) -> Option<Option<String>> {
    let rest = line.strip_prefix("+++ ")?;
    let path = rest.split('\t').next().unwrap_or(rest).trim();
    if path == "/dev/null" {
        return Some(None);
    }
    diff_path(rest).map(Some)
}

/// The path of a `---`/`+++` header without its `a/`/`b/` prefix and its tab-separated date.
fn diff_path(header: &str) -> Option<String> {
    let path = header.split('\t').next().unwrap_or(header).trim();
    if path == "/dev/null" || path.is_empty() || path.contains(' ') {
        return None;
    }
    let path = path
        .strip_prefix("a/")
        .or_else(|| path.strip_prefix("b/"))
        .unwrap_or(path);
    Some(path.to_owned())
}
