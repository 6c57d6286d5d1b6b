//! UTF-8-safe text cutting shared by every layer that bounds text: previews, precis,
//! transcripts, head+tail truncation; and the two small measures and normalizations those
//! layers share ([`count_lines`], [`single_line`]).
//!
//! Guarantees: every function returns valid UTF-8 (slices end on character boundaries, and
//! never between a character and the combining marks, joiners or variation selectors that
//! follow it), never panics, and never returns more bytes than asked for.

/// The longest prefix of `text` that is at most `max_bytes` long and does not split a
/// character or detach a combining mark from its base.
pub fn head_bytes(text: &str, max_bytes: usize) -> &str {
    if text.len() <= max_bytes {
        return text;
    }
    let mut end = floor_char_boundary(text, max_bytes);
    // Back off while the character at `end` would attach to the one before it.
    while end > 0
        && text
            .get(end..)
            .and_then(|rest| rest.chars().next())
            .is_some_and(is_attached)
    {
        end = floor_char_boundary(text, end.saturating_sub(1));
    }
    text.get(..end).unwrap_or_default()
}

/// The longest suffix of `text` that is at most `max_bytes` long and starts on a character
/// boundary that is not a combining mark.
pub fn tail_bytes(text: &str, max_bytes: usize) -> &str {
    if text.len() <= max_bytes {
        return text;
    }
    let mut start = ceil_char_boundary(text, text.len().saturating_sub(max_bytes));
    while start < text.len()
        && text
            .get(start..)
            .and_then(|rest| rest.chars().next())
            .is_some_and(is_attached)
    {
        start = ceil_char_boundary(text, start.saturating_add(1));
    }
    text.get(start..).unwrap_or_default()
}

/// The first `max_lines` lines of `text` (with their newlines), cut to `max_bytes`.
pub fn head_lines(text: &str, max_lines: usize, max_bytes: usize) -> &str {
    let end = text
        .match_indices('\n')
        .nth(max_lines.saturating_sub(1))
        .map_or(text.len(), |(index, _)| index.saturating_add(1));
    let lines = if max_lines == 0 {
        ""
    } else {
        text.get(..end).unwrap_or(text)
    };
    head_bytes(lines, max_bytes)
}

/// The last `max_lines` lines of `text`, cut to `max_bytes` (from the end).
pub fn tail_lines(text: &str, max_lines: usize, max_bytes: usize) -> &str {
    if max_lines == 0 {
        return "";
    }
    // Skip a final newline so "a\nb\n" has the last line "b\n", not "".
    let body = text.strip_suffix('\n').unwrap_or(text);
    let start = body
        .rmatch_indices('\n')
        .nth(max_lines.saturating_sub(1))
        .map_or(0, |(index, _)| index.saturating_add(1));
    tail_bytes(text.get(start..).unwrap_or(text), max_bytes)
}

/// `text` cut to at most `max_bytes` by keeping its head and tail around `marker`, where
/// `marker` may contain `{bytes}` (replaced by the number of bytes left out). Returns `text`
/// itself when it fits. When even the marker does not fit, returns the marker's head.
pub fn cut_middle(text: &str, max_bytes: usize, marker: &str) -> String {
    if text.len() <= max_bytes {
        return text.to_owned();
    }
    // The omitted count is at most text.len(), so size the marker for that many digits.
    let widest = marker.replace("{bytes}", &text.len().to_string());
    let Some(room) = max_bytes.checked_sub(widest.len()) else {
        return head_bytes(&widest, max_bytes).to_owned();
    };
    let head = head_bytes(text, room.div_ceil(2));
    let tail = tail_bytes(text, room.saturating_sub(head.len()));
    let omitted = text
        .len()
        .saturating_sub(head.len())
        .saturating_sub(tail.len());
    let marker = marker.replace("{bytes}", &omitted.to_string());
    let mut out = String::with_capacity(head.len() + marker.len() + tail.len());
    out.push_str(head);
    out.push_str(&marker);
    out.push_str(tail);
    out
}

/// The number of lines in `text`, as an editor counts them: a final line without a newline
/// counts, an empty text has no lines, and `"a\n"` is one line.
///
/// ```
/// use ctxkit_core::text::count_lines;
/// assert_eq!(count_lines(""), 0);
/// assert_eq!(count_lines("a\n"), 1);
/// assert_eq!(count_lines("a\nb"), 2);
/// ```
pub fn count_lines(text: &str) -> usize {
    let newlines = text.bytes().filter(|byte| *byte == b'\n').count();
    if text.is_empty() || text.ends_with('\n') {
        newlines
    } else {
        newlines.saturating_add(1)
    }
}

/// `text` on one line: every line break and other control character (`\n`, `\r`, tab, form
/// feed, NEL, U+2028/U+2029...) becomes a space, runs of whitespace shrink to one space, and
/// both ends are trimmed. Renderers use it for any field that must not start a new line (a
/// memory entry, a skill, a tool name), so text cannot forge a heading or another entry.
///
/// ```
/// use ctxkit_core::text::single_line;
/// assert_eq!(single_line("  a\n## not a heading\r\n\tb  "), "a ## not a heading b");
/// ```
pub fn single_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut pending_space = false;
    for c in text.chars() {
        if c.is_whitespace() || c.is_control() {
            pending_space = !out.is_empty();
        } else {
            if pending_space {
                out.push(' ');
                pending_space = false;
            }
            out.push(c);
        }
    }
    out
}

/// The largest character boundary at or below `index`.
pub fn floor_char_boundary(text: &str, index: usize) -> usize {
    let mut index = index.min(text.len());
    while !text.is_char_boundary(index) {
        index = index.saturating_sub(1);
    }
    index
}

/// The smallest character boundary at or above `index`.
pub fn ceil_char_boundary(text: &str, index: usize) -> usize {
    let mut index = index.min(text.len());
    while !text.is_char_boundary(index) {
        index = index.saturating_add(1).min(text.len());
    }
    index
}

/// Characters that belong to the one before them: combining marks, zero-width joiner,
/// variation selectors, emoji skin-tone modifiers. Cutting before one of these would leave a
/// broken glyph.
fn is_attached(c: char) -> bool {
    matches!(c as u32,
        0x0300..=0x036F | 0x0483..=0x0489 | 0x0591..=0x05BD | 0x0610..=0x061A | 0x064B..=0x065F
        | 0x0E31 | 0x0E34..=0x0E3A | 0x0E47..=0x0E4E
        | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x200C..=0x200D | 0x20D0..=0x20FF
        | 0x3099..=0x309A | 0xFE00..=0xFE0F | 0xFE20..=0xFE2F | 0x1F3FB..=0x1F3FF | 0xE0100..=0xE01EF)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_and_tail_never_split_characters_or_marks() {
        let text = "ae\u{301}中文😀";
        for max in 0..=text.len() + 1 {
            let head = head_bytes(text, max);
            let tail = tail_bytes(text, max);
            assert!(head.len() <= max && tail.len() <= max);
            assert_ne!(head, "ae", "the accent must not be cut off its letter");
            assert!(!tail.starts_with('\u{301}'));
        }
        assert_eq!(head_bytes(text, 3), "a");
        assert_eq!(tail_bytes(text, 5), "😀");
    }

    #[test]
    fn lines_are_counted_from_each_end() {
        let text = "1\n2\n3\n4\n";
        assert_eq!(head_lines(text, 2, 100), "1\n2\n");
        assert_eq!(tail_lines(text, 2, 100), "3\n4\n");
        assert_eq!(head_lines(text, 10, 3), "1\n2");
        assert_eq!(head_lines(text, 0, 100), "");
        assert_eq!(tail_lines("no newline", 1, 100), "no newline");
    }

    #[test]
    fn cut_middle_keeps_both_ends_within_the_cap() {
        let text = "x".repeat(1000);
        let cut = cut_middle(&text, 100, "\n[… {bytes} bytes cut …]\n");
        assert!(cut.len() <= 100, "{}", cut.len());
        assert!(cut.starts_with("xxx") && cut.ends_with("xxx"));
        assert!(cut.contains("bytes cut"));
        assert_eq!(cut_middle("short", 100, "[cut]"), "short");
        assert_eq!(cut_middle(&text, 3, "[cut]"), "[cu");
    }

    #[test]
    fn single_line_removes_every_kind_of_line_break() {
        let text = "a\u{2028}b\u{2029}c\u{85}d\u{b}e\u{c}f\r\ng\u{0}h";
        assert_eq!(single_line(text), "a b c d e f g h");
        assert_eq!(single_line(" \n "), "");
        assert_eq!(single_line("e\u{301} x"), "e\u{301} x");
    }
}
