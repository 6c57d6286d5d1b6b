//! The session's state as a summary lists it: each file once, with what was done to it and
//! its last outcome, and each distinct command once, with its last outcome.
//!
//! What a call did is read from the shape of its arguments by [`crate::facts::call_shape`]
//! (a patch body, a shell-like command and its folder, a path with the text written to it),
//! never from a product's tool names. Paths are written
//! relative to the working directory when the summary knows it, so a file named both ways is
//! one entry. A previous summary's entries are merged item by item: a file touched again has
//! its counts added and its outcome replaced, never a second line.

use super::mentioned::spells_out;
use super::signals::{one_line_command, telling_line};
use super::whole_words;
use crate::compaction::workdir::{relative_to, relativize_text};
use crate::model::{Message, Role};

use crate::facts::{call_shape, CallShape, FileAction};

/// What was done to a file, in the order an entry lists it (a [`FileAction`] is its index).
const ACTIONS: [&str; 5] = ["read", "created", "written", "edited", "deleted"];
const READ: usize = FileAction::Read as usize;
const DELETED: usize = FileAction::Deleted as usize;

/// A failure's telling line is quoted up to this many bytes in an entry.
const OUTCOME_MAX_BYTES: usize = 200;

/// One file: how often each action was done to it and the last call's outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct FileEntry {
    pub(super) path: String,
    counts: [usize; 5],
    outcome: Option<String>,
}

/// One distinct command: how often it ran and its last outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct CommandEntry {
    command: String,
    runs: usize,
    outcome: Option<String>,
}

/// Files and commands, each list the least recently touched first.
#[derive(Debug, Default)]
pub(super) struct State {
    pub(super) files: Vec<FileEntry>,
    commands: Vec<CommandEntry>,
}

/// What one call did, as the state records it.
enum Touch {
    Files(Vec<(String, usize)>),
    Command(String, Vec<String>),
}

impl State {
    /// The previous summary's `## Files` and `## Commands` bodies read back into entries
    /// (lines that are not entries are skipped).
    pub(super) fn from_previous(files: Option<&str>, commands: Option<&str>) -> State {
        let mut state = State::default();
        // Listed most recent first: the oldest is pushed first.
        for line in files.unwrap_or_default().lines().rev() {
            if let Some(entry) = parse_file_entry(line) {
                state.files.retain(|f| f.path != entry.path);
                state.files.push(entry);
            }
        }
        for line in commands.unwrap_or_default().lines().rev() {
            if let Some(entry) = parse_command_entry(line) {
                state.commands.retain(|c| c.command != entry.command);
                state.commands.push(entry);
            }
        }
        state
    }

    /// Rewrites the entries' relative paths, relative to `before`, relative to `now`.
    pub(super) fn rebase(&mut self, before: &str, now: Option<&str>) {
        let rebased = |path: &str| {
            let absolute = if path.starts_with('/') {
                path.to_owned()
            } else {
                format!("{before}/{path}")
            };
            relative_to(&absolute, now)
        };
        let mut files: Vec<FileEntry> = Vec::new();
        for mut entry in std::mem::take(&mut self.files) {
            entry.path = rebased(&entry.path);
            // Two entries that name one file now are one (the later one's outcome).
            if let Some(earlier) = take(&mut files, |f| f.path == entry.path) {
                for (count, more) in entry.counts.iter_mut().zip(earlier.counts) {
                    *count += more;
                }
            }
            files.push(entry);
        }
        self.files = files;
    }

    /// Adds what `messages` did, after what the state holds.
    pub(super) fn gather(&mut self, messages: &[Message], workdir: Option<&str>) {
        // The calls still waiting for their result: (id, what it touched).
        let mut open: Vec<(String, Touch)> = Vec::new();
        for message in messages {
            match message.role {
                Role::Assistant => {
                    for call in &message.tool_calls {
                        if let Some(touch) = touch_of(&call.name, &call.arguments, workdir) {
                            self.record(&touch);
                            open.push((call.id.clone(), touch));
                        }
                    }
                }
                Role::Tool => {
                    let id = message.tool_call_id.as_deref().unwrap_or_default();
                    let Some(index) = open.iter().position(|(open_id, _)| open_id == id) else {
                        continue;
                    };
                    let (_, touch) = open.remove(index);
                    let text = message.text_content();
                    let failed = message.is_error || nonzero_exit(&text);
                    let failure = failed.then(|| {
                        telling_line(&text).map(|line| {
                            whole_words(&relativize_text(&line, workdir), OUTCOME_MAX_BYTES)
                        })
                    });
                    self.settle(&touch, failure);
                }
                _ => {}
            }
        }
    }

    /// Counts a call (its outcome comes with [`State::settle`]).
    fn record(&mut self, touch: &Touch) {
        match touch {
            Touch::Files(files) => {
                for (path, action) in files {
                    let mut entry =
                        take(&mut self.files, |f| f.path == *path).unwrap_or(FileEntry {
                            path: path.clone(),
                            counts: [0; 5],
                            outcome: None,
                        });
                    if let Some(count) = entry.counts.get_mut(*action) {
                        *count += 1;
                    }
                    entry.outcome = None;
                    self.files.push(entry);
                }
            }
            Touch::Command(command, deleted) => {
                let mut entry =
                    take(&mut self.commands, |c| c.command == *command).unwrap_or(CommandEntry {
                        command: command.clone(),
                        runs: 0,
                        outcome: None,
                    });
                entry.runs += 1;
                entry.outcome = None;
                self.commands.push(entry);
                for path in deleted {
                    self.record(&Touch::Files(vec![(path.clone(), DELETED)]));
                }
            }
        }
    }

    /// The outcome of a recorded call: `None` passed, `Some(line)` failed with its telling
    /// line (`Some(None)`: failed without one).
    fn settle(&mut self, touch: &Touch, failure: Option<Option<String>>) {
        let failed = |failure: &Option<Option<String>>, ok: &str| match failure {
            None => ok.to_owned(),
            Some(Some(line)) => format!("failed: {line}"),
            Some(None) => "failed".to_owned(),
        };
        match touch {
            Touch::Files(files) => {
                for (path, _) in files {
                    if let Some(entry) = self.files.iter_mut().find(|f| f.path == *path) {
                        entry.outcome = Some(failed(&failure, "ok"));
                    }
                }
            }
            Touch::Command(command, deleted) => {
                if let Some(entry) = self.commands.iter_mut().find(|c| c.command == *command) {
                    entry.outcome = Some(failed(&failure, "passed"));
                }
                for path in deleted {
                    if let Some(entry) = self.files.iter_mut().find(|f| f.path == *path) {
                        entry.outcome = Some(failed(&failure, "ok"));
                    }
                }
            }
        }
    }

    /// The `## Files` body: one entry per file, the most recently touched first, then the
    /// `also` paths (pinned, no entry) bare; entries past `max_bytes` are cut whole, oldest
    /// first, and counted, except those `keep` says must stay (they are listed bare). Empty
    /// when there is nothing to list.
    pub(super) fn files_section(
        &self,
        also: &[String],
        max_bytes: usize,
        keep: impl Fn(&str) -> bool,
    ) -> String {
        let mut lines = Vec::new();
        let mut bare = Vec::new();
        let mut bytes = 0;
        let mut cut = 0;
        let mut full = false;
        let mut written: Vec<&str> = Vec::new();
        for entry in self.files.iter().rev() {
            let line = entry.line();
            // Once one does not fit, every older one is cut too (most recent first).
            full = full || bytes + line.len() >= max_bytes;
            if !full {
                bytes += line.len() + 1;
                lines.push(line);
                written.push(&entry.path);
            } else if keep(&entry.path) {
                bare.push(format!("- `{}`", entry.path));
                written.push(&entry.path);
            } else {
                cut += 1;
            }
        }
        for path in also {
            // A pinned path a written entry already spells out (its file name, a directory
            // above it) is held by that entry: listing it again bare says nothing new.
            if !written.iter().any(|listed| spells_out(listed, path)) {
                bare.push(format!("- `{}`", path.replace('`', "'")));
            }
        }
        lines.extend(bare);
        if cut > 0 {
            lines.push(format!("[{cut} older files cut; the log keeps them]"));
        }
        lines.join("\n")
    }

    /// The `## Commands` body: one entry per distinct command, the most recently run first,
    /// within `max_bytes` (older ones cut whole and counted).
    pub(super) fn commands_section(&self, max_bytes: usize) -> String {
        let mut lines = Vec::new();
        let mut bytes = 0;
        let mut cut = 0;
        let mut full = false;
        for entry in self.commands.iter().rev() {
            let line = entry.line();
            full = full || bytes + line.len() >= max_bytes;
            if !full {
                bytes += line.len() + 1;
                lines.push(line);
            } else {
                cut += 1;
            }
        }
        if cut > 0 {
            lines.push(format!("[{cut} older commands cut; the log keeps them]"));
        }
        lines.join("\n")
    }
}

impl FileEntry {
    fn line(&self) -> String {
        let actions: Vec<String> = ACTIONS
            .iter()
            .zip(self.counts)
            .filter(|(_, count)| *count > 0)
            .map(|(action, count)| match count {
                1 => (*action).to_owned(),
                n => format!("{action} ×{n}"),
            })
            .collect();
        let mut line = format!("- `{}`", self.path.replace('`', "'"));
        if !actions.is_empty() {
            line.push_str(&format!(": {}", actions.join(", ")));
        }
        if let Some(outcome) = &self.outcome {
            line.push_str(&format!(" → {outcome}"));
        }
        line
    }
}

impl CommandEntry {
    fn line(&self) -> String {
        let mut line = format!("- `{}`", self.command.replace('`', "'"));
        if self.runs > 1 {
            line.push_str(&format!(" ×{}", self.runs));
        }
        line.push_str(&format!(
            " → {}",
            self.outcome.as_deref().unwrap_or("no result")
        ));
        line
    }
}

fn take<T>(list: &mut Vec<T>, matches: impl Fn(&T) -> bool) -> Option<T> {
    let index = list.iter().position(matches)?;
    Some(list.remove(index))
}

/// ``- `path`: read ×2, edited → ok`` back into an entry.
fn parse_file_entry(line: &str) -> Option<FileEntry> {
    let rest = line.strip_prefix("- `")?;
    let (path, rest) = rest.split_once('`')?;
    let (actions, outcome) = match rest.split_once(" → ") {
        Some((actions, outcome)) => (actions, Some(outcome.to_owned())),
        None => (rest, None),
    };
    let mut counts = [0; 5];
    for action in actions.trim_start_matches(':').split(", ") {
        let (name, count) = match action.trim().split_once(" ×") {
            Some((name, count)) => (name, count.parse().unwrap_or(1)),
            None => (action.trim(), 1),
        };
        if let Some(index) = ACTIONS.iter().position(|a| *a == name) {
            if let Some(slot) = counts.get_mut(index) {
                *slot += count;
            }
        }
    }
    (!path.is_empty()).then(|| FileEntry {
        path: path.to_owned(),
        counts,
        outcome,
    })
}

/// ``- `cargo test` ×3 → failed: …`` back into an entry.
fn parse_command_entry(line: &str) -> Option<CommandEntry> {
    let rest = line.strip_prefix("- `")?;
    let (command, rest) = rest.split_once('`')?;
    let (runs, outcome) = match rest.split_once(" → ") {
        Some((runs, outcome)) => (runs, Some(outcome.to_owned())),
        None => (rest, None),
    };
    let runs = runs.trim().strip_prefix('×').and_then(|n| n.parse().ok());
    (!command.is_empty()).then(|| CommandEntry {
        command: command.to_owned(),
        runs: runs.unwrap_or(1),
        outcome: outcome.filter(|o| o != "no result"),
    })
}

/// A result that says its command exited with a status other than 0 (OpenHands' `[The
/// command completed with exit code 2.]`) failed, whether or not the harness flagged it.
fn nonzero_exit(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower.match_indices("exit code ").any(|(at, found)| {
        let status: String = lower
            .get(at + found.len()..)
            .unwrap_or_default()
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        !status.is_empty() && status.chars().any(|c| c != '0')
    })
}

/// Whether the state records a call of `tool` with `arguments` (so Progress need not list it).
pub(super) fn is_state_call(tool: &str, arguments: &str) -> bool {
    touch_of(tool, arguments, None).is_some()
}

/// What a call does to a file, as the restore block needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileAccess {
    /// Reads it (its result is the file's content).
    Read,
    /// Creates, writes or edits it.
    Changed,
    /// Deletes it.
    Deleted,
}

/// The files a call of `tool` with `arguments` touches, each path as the call wrote it, with
/// what it does to it (a shell command only through the files it removes).
pub(crate) fn file_accesses(tool: &str, arguments: &str) -> Vec<(String, FileAccess)> {
    let access = |action: usize| match action {
        READ => FileAccess::Read,
        DELETED => FileAccess::Deleted,
        _ => FileAccess::Changed,
    };
    match touch_of(tool, arguments, None) {
        Some(Touch::Files(files)) => files
            .into_iter()
            .map(|(path, action)| (path, access(action)))
            .collect(),
        Some(Touch::Command(_, deleted)) => deleted
            .into_iter()
            .map(|path| (path, FileAccess::Deleted))
            .collect(),
        None => Vec::new(),
    }
}

/// What a call of `tool` with `arguments` did to files or which command it ran, as
/// [`call_shape`] reads it, with paths relative to the session's working directory. A command
/// run in another folder (Codex's `workdir`) is written as `cd DIR && …`, so it can be run
/// again as it was; a command that only prints files is a read of them.
fn touch_of(tool: &str, arguments: &str, workdir: Option<&str>) -> Option<Touch> {
    let relative = |path: &str| relativize_text(&relative_to(path, workdir), workdir);
    let files = |paths: Vec<(String, FileAction)>| {
        let mut files: Vec<(String, usize)> = Vec::new();
        for (path, action) in paths {
            let path = relative(&path);
            if !files.iter().any(|(p, _)| *p == path) {
                files.push((path, action as usize));
            }
        }
        Touch::Files(files)
    };
    match call_shape(tool, arguments)? {
        CallShape::Files(paths) => Some(files(paths)),
        CallShape::Command { read, .. } if !read.is_empty() => Some(files(
            read.into_iter()
                .map(|path| (path, FileAction::Read))
                .collect(),
        )),
        CallShape::Command {
            command, removed, ..
        } => {
            let script = relativize_text(&command.script, workdir);
            let here = |dir: &str| {
                dir == "."
                    || workdir.is_some_and(|w| w.trim_end_matches('/') == dir.trim_end_matches('/'))
            };
            let script = match command.workdir.as_deref() {
                Some(dir) if !here(dir) => format!("cd {} && {script}", relative(dir)),
                _ => script,
            };
            let deleted = removed.iter().map(|path| relative(path)).collect();
            Some(Touch::Command(one_line_command(&script), deleted))
        }
    }
}

#[cfg(test)]
mod tests;
