//! Precis rendering (`ctxkit_core::memory::render_precis`) and its fence.

use ctxkit_core::memory::{
    entry_quarantine, fence_as_data, render_precis, MemoryEntry, PrecisOptions, DATA_NOTE,
};
use serde::Deserialize;

/// A fuzzed precis: JSON with every field optional.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct FuzzPrecis {
    entries: Vec<MemoryEntry>,
    options: PrecisOptions,
}

/// Renders a precis of the entries, and fences it.
///
/// Invariants: the precis is valid UTF-8 and at most `max_bytes` long; it holds at most
/// `max_entries` entry lines (one line each: no entry adds a line); it does not depend on the
/// order of the entries; a quarantined entry's content never appears in it; and fenced as data,
/// no line of it closes the fence before the end.
pub fn check_precis(data: &[u8]) {
    let Ok(input) = serde_json::from_slice::<FuzzPrecis>(data) else {
        return;
    };
    let precis = render_precis(&input.entries, &input.options);
    assert!(std::str::from_utf8(precis.as_bytes()).is_ok());
    assert!(
        precis.len() <= input.options.max_bytes,
        "the precis is {} bytes, over its cap of {}",
        precis.len(),
        input.options.max_bytes
    );
    let entry_lines = precis.lines().filter(|line| line.starts_with("- ")).count();
    assert!(
        entry_lines <= input.options.max_entries,
        "{entry_lines} entry lines, more than max_entries {}",
        input.options.max_entries
    );
    assert!(
        precis.lines().count() <= input.options.max_entries + 1,
        "more lines than entries and the truncation marker"
    );
    let mut reversed = input.entries.clone();
    reversed.reverse();
    assert_eq!(
        render_precis(&reversed, &input.options),
        precis,
        "the order of the entries changed the precis"
    );
    for entry in &input.entries {
        let content = entry.content.trim();
        // Short content may occur in another entry's text by chance; a long one may not.
        if entry_quarantine(entry).is_some() && content.len() >= 24 && !content.contains('\n') {
            let shown = input
                .entries
                .iter()
                .filter(|other| entry_quarantine(other).is_none())
                .any(|other| {
                    [&other.title, &other.content, &other.category]
                        .iter()
                        .any(|field| field.contains(content))
                });
            assert!(
                shown || !precis.contains(content),
                "the quarantined memory {:?} is in the precis",
                entry.id
            );
        }
    }
    let fenced = fence_as_data(&precis);
    if fenced.is_empty() {
        assert!(
            precis.trim().is_empty(),
            "a precis with text fenced as nothing"
        );
        return;
    }
    let body = fenced
        .strip_prefix(DATA_NOTE)
        .and_then(|rest| rest.strip_prefix('\n'))
        .unwrap_or_else(|| panic!("the fenced precis does not start with the data note"));
    let mut lines = body.lines();
    let open = lines.next().unwrap_or_default().to_owned();
    let fence: String = open.chars().take_while(|&c| c == '`' || c == '~').collect();
    assert!(fence.len() >= 3, "no opening fence: {open:?}");
    let inner: Vec<&str> = lines.collect();
    assert_eq!(
        inner.last().copied(),
        Some(fence.as_str()),
        "the fence is not closed at the end"
    );
    for line in inner.iter().take(inner.len().saturating_sub(1)) {
        let trimmed = line.trim_start_matches(' ');
        assert!(
            !(trimmed.starts_with(&fence)
                && trimmed
                    .trim_end()
                    .chars()
                    .all(|c| c == fence.chars().next().unwrap_or('`'))),
            "the precis line {line:?} closes the fence {fence:?}"
        );
    }
}
