//! Previous-summary parsing and merging (`ctxkit_core::compaction`: the extractive summary and
//! the pinned facts read back from a summary).

use ctxkit_core::compaction::pinned::{
    gather_pinned, missing_pinned, pinned_from_summary, PINNED_HEADING,
};
use ctxkit_core::compaction::{
    extractive_summary_with, ExtractiveLimits, SECTIONS, STATE_SECTIONS,
};
use ctxkit_core::import::ctxkit_messages;
use ctxkit_core::Message;

use crate::two_texts;

/// The headings a summary may have: the extractive sections (Files and Commands included),
/// the pinned facts, the tasks.
fn known_heading(line: &str) -> bool {
    let Some(name) = line.strip_prefix("## ") else {
        return true;
    };
    SECTIONS.contains(&name)
        || STATE_SECTIONS.contains(&name)
        || Some(line) == Some(PINNED_HEADING)
        || name == "Active Tasks"
}

/// Splits the bytes at the first NUL into a previous summary and the messages it is merged with
/// (ctxkit messages, or else one user message holding the text), summarizes, then summarizes
/// the result again as the previous summary of an empty stretch.
///
/// Invariants: every pinned fact given to the summary (those of the messages and those read
/// back from the previous summary) is in it verbatim; the summary's only `## ` headings are
/// ctxkit's own (no message or quoted text adds one); and a second summary over the first keeps
/// every fact the first one's sections list.
pub fn check_summary(data: &[u8]) {
    let (previous, rest) = two_texts(data);
    let messages = match ctxkit_messages(&rest) {
        Ok(messages) if !messages.is_empty() => messages,
        _ => vec![Message::user(rest)],
    };
    let limits = ExtractiveLimits::default();
    let earlier = pinned_from_summary(&previous);
    let pinned = gather_pinned(&messages, &earlier, &[]);
    let summary = extractive_summary_with(&messages, Some(&previous), &limits, &pinned);
    let missing = missing_pinned(&summary, &pinned);
    assert!(
        missing.is_empty(),
        "the summary lost pinned facts: {missing:?}\nsummary:\n{summary}"
    );
    if let Some(line) = summary.lines().find(|line| !known_heading(line)) {
        panic!("the summary has a heading ctxkit did not write: {line:?}\nsummary:\n{summary}");
    }
    let listed = pinned_from_summary(&summary);
    let again = extractive_summary_with(&[], Some(&summary), &limits, &listed);
    let missing = missing_pinned(&again, &listed);
    assert!(
        missing.is_empty(),
        "merging the summary lost its facts: {missing:?}\nfirst:\n{summary}\nsecond:\n{again}"
    );
}
