//! Line helpers of the extractive summary: list items read back, lines capped whole, text
//! on one line cut at a word or sentence boundary, backticked lists.

use crate::text::head_bytes;

/// The list items (`- ` lines) of a previous section's body, without the counts, labels and
/// cut notes that described its own part of the session.
pub(super) fn list_items(body: &str) -> Vec<String> {
    body.lines()
        .map(str::trim_end)
        .filter(|line| line.starts_with("- ") && line.len() > 2)
        .map(str::to_owned)
        .collect()
}

/// The last whole lines of `text` that fit in `max_bytes` (the oldest are dropped first),
/// with a line saying how many `what` were dropped: no line is cut inside.
pub(super) fn cap_lines(text: &str, max_bytes: usize, what: &str) -> String {
    if text.len() <= max_bytes {
        return text.to_owned();
    }
    let lines: Vec<&str> = text.lines().collect();
    let mut kept = 0;
    let mut bytes = 40;
    for line in lines.iter().rev() {
        if bytes + line.len() + 1 > max_bytes {
            break;
        }
        bytes += line.len() + 1;
        kept += 1;
    }
    let dropped = lines.len() - kept;
    let tail = lines.get(dropped..).unwrap_or_default().join("\n");
    format!("[{dropped} older {what} cut; the log keeps them]\n{tail}")
}

/// `text` as list items, one per non-empty line, each on one line and bounded: quoted text can
/// never start a line of its own (a heading) in the summary.
pub(super) fn quoted_lines(text: &str, max_bytes: usize) -> String {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .map(|line| {
            let line = line.strip_prefix("- ").unwrap_or(line);
            format!("- {}", one_line(line, max_bytes))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

pub(super) fn backticked(items: &[String]) -> String {
    if items.is_empty() {
        return "(none)".to_owned();
    }
    items
        .iter()
        .map(|item| format!("`{}`", item.replace('`', "'")))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `text` on one line (whitespace runs collapsed), cut to `max_bytes` with an ellipsis: at the
/// last word boundary when there is one in the second half, so a cut line ends on a whole word.
pub fn one_line(text: &str, max_bytes: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.len() <= max_bytes {
        return flat;
    }
    let head = head_bytes(&flat, max_bytes.saturating_sub(4));
    match head.rfind(' ') {
        Some(space) if space >= head.len() / 2 => {
            format!("{} …", head.get(..space).unwrap_or(head))
        }
        _ => format!("{head}…"),
    }
}

/// `text` on one line, cut at its last sentence end within `max_bytes` when that keeps at
/// least half, else at a word boundary, and marked ` […]` when cut.
pub(crate) fn whole_words(text: &str, max_bytes: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.len() <= max_bytes {
        return flat;
    }
    let head = head_bytes(&flat, max_bytes.saturating_sub(6));
    let sentence = head
        .rmatch_indices(['.', '!', '?'])
        .map(|(at, _)| at + 1)
        .find(|&end| head.get(end..).is_some_and(|rest| rest.starts_with(' ')))
        .filter(|&end| end >= head.len() / 2);
    let end = sentence.or_else(|| head.rfind(' ')).unwrap_or(head.len());
    format!("{} […]", head.get(..end).unwrap_or(head).trim_end())
}

/// Whether `text` holds `word` whole: not as a part of a longer identifier (`load` is not held
/// by `load_all`, `session_live` is by `lib/session_live.ex`).
pub(super) fn holds_word(text: &str, word: &str) -> bool {
    let part_of_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    !word.is_empty()
        && text.match_indices(word).any(|(at, _)| {
            let before = text.get(..at).and_then(|head| head.chars().next_back());
            let after = text
                .get(at + word.len()..)
                .and_then(|tail| tail.chars().next());
            !before.is_some_and(part_of_word) && !after.is_some_and(part_of_word)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_is_held_whole_not_inside_a_longer_one() {
        assert!(holds_word("lib/session_live.ex", "session_live"));
        assert!(holds_word("see `load_all` and load_all", "load_all"));
        assert!(!holds_word("load_all_now", "load_all"));
        assert!(!holds_word("xload_all", "load_all"));
    }
}
