//! Reading a previous summary back into its sections, so a new summary merges with it.

use super::mentioned::{read_back, read_back_labelled, REQUESTED_LABEL};
use super::signals::{backticked_items, paths_in_text};
use super::{one_line, CODE_NAMES_LABEL, IN_USE_LABEL, SECTIONS, STATE_SECTIONS};
use crate::compaction::pinned::{FactKind, PinnedFact};
use crate::compaction::workdir::declared_working_directory;

/// The pinned facts heading, without its `## `.
const PINNED_SECTION: &str = "Pinned facts";

/// A previous summary split into the sections this module writes (or an LLM was asked for).
#[derive(Default)]
pub(super) struct PreviousSummary {
    pub(super) goal: Option<String>,
    pub(super) progress: Option<String>,
    pub(super) decisions: Option<String>,
    pub(super) next_steps: Option<String>,
    /// The `## Files` and `## Commands` bodies, merged entry by entry.
    pub(super) file_entries: Option<String>,
    pub(super) commands: Option<String>,
    /// The paths its `## Files` section lists as named in tool output, the most recent last.
    pub(super) mentioned: Vec<String>,
    /// The paths its `## Files` section lists as named in the user's requests.
    pub(super) requested: Vec<String>,
    /// The working directory the summary's relative paths are under.
    pub(super) workdir: Option<String>,
    pub(super) files: Vec<String>,
    pub(super) identifiers: Vec<String>,
    /// The identifiers its Critical Context lists as in use, the most used first.
    pub(super) identifiers_in_use: Vec<String>,
    /// The names its Critical Context lists as imported or defined by the files read, in
    /// their order there.
    pub(super) code_names: Vec<String>,
    pub(super) errors: Vec<String>,
    /// A summary without the expected headings, kept whole.
    pub(super) unparsed: Option<String>,
}

impl PreviousSummary {
    pub(super) fn parse(summary: &str) -> PreviousSummary {
        let mut parsed = PreviousSummary::default();
        let mut found = false;
        parsed.workdir = declared_working_directory(summary).map(str::to_owned);
        for (heading, body) in sections(summary) {
            found = true;
            let body = body.trim();
            let non_empty = (!body.is_empty()).then(|| without_headings(body));
            match heading {
                "Goal" => parsed.goal = non_empty,
                "Pinned facts" => {
                    // Read back only as paths; the checkpoint keeps its facts as data.
                    parsed.files.extend(paths_in_text(body));
                }
                "Progress" => parsed.progress = non_empty,
                "Key Decisions" => parsed.decisions = non_empty.filter(|d| d != "(none stated)"),
                "Next Steps" => parsed.next_steps = non_empty,
                "Files" => {
                    // Each entry's path, as pinned facts read back.
                    parsed.files.extend(
                        body.lines()
                            .filter_map(|line| line.strip_prefix("- `"))
                            .filter_map(|rest| rest.split('`').next())
                            .filter(|path| !path.is_empty())
                            .map(str::to_owned),
                    );
                    parsed.mentioned = read_back(body);
                    parsed.requested = read_back_labelled(body, REQUESTED_LABEL);
                    parsed.file_entries = non_empty;
                }
                "Commands" => parsed.commands = non_empty,
                "Critical Context" => {
                    for line in body.lines() {
                        if let Some(list) = line.strip_prefix("Files: ") {
                            parsed.files.extend(backticked_items(list));
                        } else if let Some(list) = line.strip_prefix(CODE_NAMES_LABEL) {
                            parsed.code_names = backticked_items(list);
                        } else if let Some(list) = line.strip_prefix(IN_USE_LABEL) {
                            parsed.identifiers_in_use = backticked_items(list);
                        } else if let Some(list) = line.strip_prefix("Identifiers: ") {
                            parsed.identifiers = backticked_items(list);
                        } else if let Some(error) = line.strip_prefix("- ") {
                            parsed.errors.push(error.to_owned());
                        }
                    }
                    // An LLM's critical context is prose: keep its paths at least.
                    if parsed.files.is_empty() {
                        parsed.files = paths_in_text(body);
                    }
                    let mut seen = crate::wire::fields::StringSet::default();
                    parsed.files.retain(|path| seen.insert(path.clone()));
                }
                _ => {}
            }
        }
        if !found && !summary.trim().is_empty() {
            parsed.files = paths_in_text(summary);
            parsed.unparsed = Some(without_headings(summary.trim()));
        }
        parsed
    }
}

/// `text` with every line that markdown would read as a heading put behind a list marker
/// (`## Key Decisions?` becomes `- ## Key Decisions?`): a section's body is written back into
/// the next summary, and a heading inside it (a user's pasted `## ` line, a damaged or foreign
/// one) must not become a heading of that summary. Found by the `summary` fuzz target.
pub(super) fn without_headings(text: &str) -> String {
    text.lines()
        .map(|line| {
            if line.trim_start().starts_with('#') {
                format!("- {line}")
            } else {
                line.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `(heading, body)` for each line of a markdown text that is exactly `## ` and one of the
/// headings ctxkit writes (the five sections, Files, Commands and the pinned facts): any other line, such as a
/// `## Goal` a user pasted inside a quoted request, is body text of the section around it.
pub(super) fn sections(text: &str) -> Vec<(&str, &str)> {
    let mut out = Vec::new();
    let mut current: Option<(&str, usize)> = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let heading = line.strip_prefix("## ").map(str::trim).filter(|heading| {
            SECTIONS.contains(heading)
                || STATE_SECTIONS.contains(heading)
                || *heading == PINNED_SECTION
        });
        if let Some(heading) = heading {
            if let Some((name, start)) = current.take() {
                out.push((name, text.get(start..offset).unwrap_or_default()));
            }
            current = Some((heading, offset + line.len()));
        }
        offset += line.len();
    }
    if let Some((name, start)) = current {
        out.push((name, text.get(start..).unwrap_or_default()));
    }
    out
}

/// The facts a summary's own sections list (its goal, files, identifiers and errors), as
/// pinned facts: how a checkpoint made before checkpoints kept their facts as data, or a
/// summary given as text, passes them on.
pub fn pinned_from_summary(summary: &str) -> Vec<PinnedFact> {
    let parsed = PreviousSummary::parse(summary);
    let mut facts = Vec::new();
    if let Some(goal) = &parsed.goal {
        let first = goal
            .lines()
            .map(|line| line.trim().trim_start_matches("- "))
            .find(|line| !line.is_empty() && *line != "Later requests:");
        facts.extend(first.map(|line| PinnedFact::new(FactKind::Request, one_line(line, 600))));
    }
    facts.extend(
        parsed
            .files
            .iter()
            .map(|p| PinnedFact::new(FactKind::Path, p.clone())),
    );
    facts.extend(
        parsed
            .identifiers
            .iter()
            .map(|i| PinnedFact::new(FactKind::Identifier, i.clone())),
    );
    facts.extend(
        parsed
            .errors
            .iter()
            .map(|e| PinnedFact::new(FactKind::Error, one_line(e, 300))),
    );
    facts
}

#[cfg(test)]
mod heading_tests {
    use super::*;

    #[test]
    fn a_heading_inside_a_previous_section_stays_body_text() {
        // The summary fuzz target's finding: a damaged `## Key Decisi…` line inside Progress
        // was written back as a heading of the next summary.
        let previous =
            "## Goal\n- fix it\n\n## Progress\n- ran cargo test\n## Key Decisi\u{fffd}\nmore\n";
        let parsed = PreviousSummary::parse(previous);
        assert_eq!(
            parsed.progress.as_deref(),
            Some("- ran cargo test\n- ## Key Decisi\u{fffd}\nmore")
        );
        let unparsed = PreviousSummary::parse("# Summary\nall done");
        assert_eq!(unparsed.unparsed.as_deref(), Some("- # Summary\nall done"));
    }
}
