//! The extractive summary's sections, each from the facts of the messages, the previous
//! summary and the pinned facts: the Goal, the lines that name files, the identifiers in use,
//! the Progress and Key Decisions narratives, what else the messages mention, and the
//! rendering of the sections into one markdown text.
//!
//! [`super::extractive_summary_with`] decides each section's share of the summary and calls
//! these in order; each one only fills its share, so the summary stays within its size.

use super::facts::Facts;
use super::lines::{backticked, cap_lines, holds_word, list_items, quoted_lines};
use super::mentioned::{labelled_line, mentioned_line, push_latest, same_file, REQUESTED_LABEL};
use super::previous::{without_headings, PreviousSummary};
use super::state::State;
use super::{ExtractiveLimits, CODE_NAMES_LABEL, IN_USE_LABEL};
use crate::compaction::pinned::{is_previous_summary, PinnedFact};
use crate::compaction::workdir::{relative_to, relativize_text, workdir_line};
use crate::model::{Message, Role};

/// The labels of a list of items under them.
const LIST_LABELS: [&str; 3] = ["Later requests:", "Errors (verbatim):", "Earlier summary:"];

/// The previous summary, parsed, with another agent's compaction summary in the log (Claude
/// Code's continuation message) merged into its unparsed part: an earlier summary, not a
/// request.
pub(super) fn merged_earlier(messages: &[Message], previous: Option<&str>) -> PreviousSummary {
    let mut earlier = previous.map(PreviousSummary::parse).unwrap_or_default();
    let continued = messages
        .iter()
        .rev()
        .filter(|message| message.role == Role::User)
        .map(|message| message.text_content())
        .find(|text| is_previous_summary(text));
    if let Some(continued) = continued {
        let joined = match earlier.unparsed.take() {
            Some(before) => format!("{before}\n{continued}"),
            None => continued.into_owned(),
        };
        earlier.unparsed = Some(joined);
    }
    earlier
}

/// The Goal section: the first request, then the later ones under their label.
pub(super) fn goal_section(requests: &[String]) -> String {
    let mut goal_section = String::new();
    match requests.split_first() {
        Some((goal, later)) => {
            goal_section.push_str(&format!("- {goal}"));
            if !later.is_empty() {
                goal_section.push_str("\nLater requests:");
                for request in later {
                    goal_section.push_str(&format!("\n- {request}"));
                }
            }
        }
        None => goal_section.push_str("(no user request in the summarized messages)"),
    }
    goal_section
}

/// `path` as the summary writes it: relative to the working directory, when it has one.
pub(super) fn relative(path: &str, workdir: Option<&str>) -> String {
    relativize_text(&relative_to(path, workdir), workdir)
}

/// What the sections below read: the messages' facts, the previous summary, the pinned facts,
/// the working directory, the files and commands state, and the pinned paths (relative).
pub(super) struct Draft<'a> {
    pub(super) facts: &'a Facts,
    pub(super) earlier: &'a PreviousSummary,
    pub(super) limits: &'a ExtractiveLimits,
    pub(super) pinned: &'a [PinnedFact],
    pub(super) workdir: Option<&'a str>,
    pub(super) state: &'a State,
    pub(super) paths: &'a [String],
}

impl Draft<'_> {
    /// The lines of the files the user's requests named and of the files the tools' output
    /// named that the agent did not open (leads), each merged with the previous summary's,
    /// the most recent first: `(both lines, the requests' line)`. The leads get a tenth of the
    /// summary, up to a fifth when the goal, next step and pinned paths (`early_fixed` bytes)
    /// leave most of it free (a search's forty matches are where the agent goes next; a path
    /// is a few words, a search run again a whole output); the requests' files a tenth (a
    /// request is quoted head and tail only).
    pub(super) fn named_lines(&self, early_fixed: usize) -> (String, String) {
        let (limits, state, paths) = (self.limits, self.state, self.paths);
        let leads_bytes = (limits.max_bytes.saturating_sub(early_fixed) / 4)
            .clamp(limits.max_bytes / 10, limits.max_bytes / 5);
        let mut named = self.earlier.mentioned.clone();
        for path in &self.facts.mentioned {
            push_latest(&mut named, relative(path, self.workdir));
        }
        let other = crate::wire::fields::set_of(
            self.facts
                .files
                .iter()
                .map(|path| relative(path, self.workdir)),
        );
        let named_line = mentioned_line(
            &named,
            |path| {
                state.files.iter().any(|f| same_file(&f.path, path))
                    || paths.iter().chain(&other).any(|p| same_file(p, path))
            },
            leads_bytes,
        );
        let mut requested = self.earlier.requested.clone();
        for path in &self.facts.requested {
            push_latest(&mut requested, relative(path, self.workdir));
        }
        let requested_line = labelled_line(
            REQUESTED_LABEL,
            &requested,
            |path| {
                state.files.iter().any(|f| same_file(&f.path, path))
                    || paths.iter().any(|p| same_file(p, path))
            },
            limits.max_bytes / 10,
        );
        let both = [requested_line.clone(), named_line]
            .into_iter()
            .filter(|line| !line.is_empty())
            .collect::<Vec<_>>()
            .join("\n");
        (both, requested_line)
    }

    /// The code identifiers the calls and the assistant used most (the latest first among
    /// equals), the ones a next move is likeliest to need, leaving out the pinned
    /// `identifiers` and any the summary holds already in `written` (a path's file name, a
    /// word of a request); at most an eighth of the summary, so the narrative keeps its room.
    pub(super) fn identifiers_in_use(&self, identifiers: &[String], written: &str) -> Vec<String> {
        let limits = self.limits;
        self.facts
            .ranked_identifiers(
                limits.identifiers + identifiers.len(),
                &self.earlier.identifiers_in_use,
            )
            .into_iter()
            .filter(|item| !identifiers.contains(item) && !holds_word(written, item))
            .take(limits.identifiers)
            .scan(0, |bytes, item| {
                *bytes += item.len() + 4;
                (*bytes <= limits.max_bytes / 8).then_some(item)
            })
            .collect()
    }

    /// The code-shaped names the files the agent read import and define (what it goes on to
    /// call, render or search for), each read a fair share: one name of each read per round,
    /// the most recent read's first, each read's own and the project's names before a
    /// package's, the previous summary's line as the oldest read; leaving out any the summary
    /// holds in `written` (its other sections): the line, within `room` (what the other
    /// sections leave of the summary) and a sixteenth of the summary, so it never takes the
    /// narrative's room and a big file read does not crowd out the other files.
    pub(super) fn code_names_line(&self, written: &str, room: usize) -> String {
        let names = self.code_names(written, room.min(self.limits.max_bytes / 16));
        if names.is_empty() {
            String::new()
        } else {
            format!("{CODE_NAMES_LABEL}{}\n", backticked(&names))
        }
    }

    fn code_names(&self, written: &str, max_bytes: usize) -> Vec<String> {
        let mut reads: Vec<std::slice::Iter<'_, String>> = self
            .facts
            .code_names
            .iter()
            .rev()
            .chain(std::iter::once(&self.earlier.code_names))
            .map(|read| read.iter())
            .collect();
        let max_bytes = max_bytes.saturating_sub(CODE_NAMES_LABEL.len());
        let (mut out, mut bytes) = (Vec::new(), 0);
        while !reads.is_empty() {
            reads.retain_mut(|read| {
                let Some(name) = read.next() else {
                    return false;
                };
                let fresh = !holds_word(written, name) && !out.contains(name);
                if fresh && bytes + name.len() + 4 <= max_bytes {
                    bytes += name.len() + 4;
                    out.push(name.clone());
                }
                true
            });
        }
        out
    }

    /// The Critical Context section's pinned part: the working directory (when no Files
    /// section states it), the pinned `identifiers`, the identifiers in use (see
    /// [`Draft::identifiers_in_use`]) and the pinned `errors`, verbatim.
    pub(super) fn critical(
        &self,
        has_files: bool,
        identifiers: &[String],
        errors: &[String],
        written: &str,
    ) -> String {
        let mut critical = String::new();
        if let (Some(dir), false) = (self.workdir, has_files) {
            critical.push_str(&format!("{}\n", workdir_line(dir)));
        }
        if !identifiers.is_empty() {
            critical.push_str(&format!("Identifiers: {}\n", backticked(identifiers)));
        }
        let in_use = self.identifiers_in_use(identifiers, written);
        if !in_use.is_empty() {
            critical.push_str(&format!("{IN_USE_LABEL}{}\n", backticked(&in_use)));
        }
        if !errors.is_empty() {
            critical.push_str("Errors (verbatim):\n");
            for error in errors {
                critical.push_str(&self.error_item(error));
            }
        }
        critical
    }

    /// An error's line; an error a later run of the same call passed is marked so.
    pub(super) fn error_item(&self, error: &str) -> String {
        match self.facts.resolved.iter().find(|(line, _)| line == error) {
            Some((_, call)) => format!("- {error} (resolved: a later `{call}` passed)\n"),
            None => format!("- {error}\n"),
        }
    }

    /// What else the messages mention, beyond the pinned facts: the other files (not listed,
    /// pinned, named by a request or the working directory itself), the other errors, and an
    /// earlier summary without sections.
    pub(super) fn mentioned(&self, requested_line: &str) -> String {
        let unpinned = |items: &[String], cap: usize| -> Vec<String> {
            let mut rest: Vec<String> = items
                .iter()
                .filter(|item| !self.pinned.iter().any(|fact| fact.text == **item))
                .cloned()
                .collect();
            rest.drain(..rest.len().saturating_sub(cap));
            rest
        };
        let mut mentioned = String::new();
        // Owned, as the other sets of paths: one BTreeSet type fewer in the .wasm.
        let listed = crate::wire::fields::set_of(self.state.files.iter().map(|f| f.path.clone()));
        let mentioned_files: Vec<String> = self
            .facts
            .files
            .iter()
            .map(|path| relative(path, self.workdir))
            .filter(|path| {
                !listed.contains(path.as_str())
                    && !self.paths.contains(path)
                    && !requested_line.contains(&format!("`{path}`"))
                    && Some(path.as_str()) != self.workdir
            })
            .collect();
        let other_files = unpinned(&mentioned_files, self.limits.files);
        if !other_files.is_empty() {
            mentioned.push_str(&format!("Other files: {}\n", backticked(&other_files)));
        }
        for error in unpinned(&self.facts.errors, self.limits.errors) {
            mentioned.push_str(&self.error_item(&error));
        }
        if let Some(extra) = &self.earlier.unparsed {
            mentioned.push_str(&format!(
                "Earlier summary:\n{}\n",
                quoted_lines(extra, usize::MAX)
            ));
        }
        mentioned
    }

    /// The Progress section: the count line, then the previous summary's items not repeated
    /// by the recent calls, then the recent calls, within half of `room`, earlier items the
    /// first a cap drops.
    pub(super) fn progress(&self, room: usize) -> String {
        let (count_line, recent_calls) = self.facts.progress_text(self.limits);
        let mut progress_items = String::new();
        if let Some(before) = &self.earlier.progress {
            for item in list_items(before) {
                if !recent_calls.contains(&item) {
                    progress_items.push_str(&format!("{item}\n"));
                }
            }
        }
        progress_items.push_str(&recent_calls);
        format!(
            "{count_line}\n{}",
            cap_lines(
                &progress_items,
                (room / 2).saturating_sub(count_line.len() + 1),
                "calls"
            )
        )
    }

    /// The Key Decisions section: the previous summary's, then the messages', each once,
    /// within a fifth of `room`.
    pub(super) fn decisions(&self, room: usize) -> String {
        let mut decision_items = Vec::new();
        if let Some(before) = &self.earlier.decisions {
            decision_items.extend(list_items(before));
        }
        decision_items.extend(self.facts.decisions.iter().map(|d| format!("- {d}")));
        let mut seen = crate::wire::fields::StringSet::default();
        decision_items.retain(|item| seen.insert(item.clone()));
        cap_lines(&decision_items.join("\n"), room / 5, "decisions")
    }
}

/// The summary's text: each section under its heading, in order, with no path under the
/// working directory written in full, no quoted line that reads as a heading, no line twice
/// (the first stays), no list label left without its items and no empty section.
pub(super) fn render(sections: [(&str, String); 7], workdir: Option<&str>) -> String {
    let mut out = String::new();
    let mut written = crate::wire::fields::StringSet::default();
    for (name, body) in sections {
        let body = body.trim_end();
        // Line by line: a line that changes directory keeps its paths as written.
        let body = body
            .lines()
            .map(|line| relativize_text(line, workdir))
            .collect::<Vec<_>>()
            .join("\n");
        // A quoted line that markdown reads as a heading goes behind a list marker.
        let heading_like = body.lines().any(|line| line.trim_start().starts_with('#'));
        let body = if heading_like {
            without_headings(&body)
        } else {
            body
        };
        let body: Vec<&str> = body
            .lines()
            .filter(|line| line.trim().is_empty() || written.insert(line.trim().to_owned()))
            .collect();
        let body: Vec<&str> = body
            .iter()
            .enumerate()
            .filter(|(at, line)| {
                !LIST_LABELS.contains(*line)
                    || body.get(at + 1).is_some_and(|next| next.starts_with("- "))
            })
            .map(|(_, line)| *line)
            .collect();
        if body.iter().all(|line| line.trim().is_empty()) {
            continue;
        }
        out.push_str(&format!("## {name}\n{}\n\n", body.join("\n")));
    }
    out.trim_end().to_owned()
}
