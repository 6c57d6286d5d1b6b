//! Reading a previous summary back into its sections, so a new summary merges with it.

use super::signals::{backticked_items, paths_in_text};

/// A previous summary split into the sections this module writes (or an LLM was asked for).
#[derive(Default)]
pub(super) struct PreviousSummary {
    pub(super) goal: Option<String>,
    pub(super) progress: Option<String>,
    pub(super) decisions: Option<String>,
    pub(super) next_steps: Option<String>,
    pub(super) files: Vec<String>,
    pub(super) identifiers: Vec<String>,
    pub(super) errors: Vec<String>,
    /// A summary without the expected headings, kept whole.
    pub(super) unparsed: Option<String>,
}

impl PreviousSummary {
    pub(super) fn parse(summary: &str) -> PreviousSummary {
        let mut parsed = PreviousSummary::default();
        let mut found = false;
        for (heading, body) in sections(summary) {
            found = true;
            let body = body.trim();
            let non_empty = (!body.is_empty()).then(|| body.to_owned());
            match heading {
                "Goal" => parsed.goal = non_empty,
                "Progress" => parsed.progress = non_empty,
                "Key Decisions" => parsed.decisions = non_empty.filter(|d| d != "(none stated)"),
                "Next Steps" => parsed.next_steps = non_empty,
                "Critical Context" => {
                    for line in body.lines() {
                        if let Some(list) = line.strip_prefix("Files: ") {
                            parsed.files = backticked_items(list);
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
                }
                _ => {}
            }
        }
        if !found && !summary.trim().is_empty() {
            parsed.files = paths_in_text(summary);
            parsed.unparsed = Some(summary.trim().to_owned());
        }
        parsed
    }
}

/// `(heading, body)` for each `## heading` line of a markdown text.
pub(super) fn sections(text: &str) -> Vec<(&str, &str)> {
    let mut out = Vec::new();
    let mut current: Option<(&str, usize)> = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if let Some(heading) = line.strip_prefix("## ") {
            if let Some((name, start)) = current.take() {
                out.push((name, text.get(start..offset).unwrap_or_default()));
            }
            current = Some((heading.trim(), offset + line.len()));
        }
        offset += line.len();
    }
    if let Some((name, start)) = current {
        out.push((name, text.get(start..).unwrap_or_default()));
    }
    out
}
