//! Text output: colours (only on a terminal, never with `NO_COLOR`), token bars, numbers,
//! aligned tables, and names made safe to print ([`printable`]).

use std::borrow::Cow;
use std::io::IsTerminal;

/// Whether to colour output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    color: bool,
}

impl Style {
    /// Colours when standard output is a terminal and `NO_COLOR` is unset or empty
    /// (<https://no-color.org>).
    pub fn detect() -> Style {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|value| !value.is_empty());
        Style {
            color: !no_color && std::io::stdout().is_terminal(),
        }
    }

    /// Plain text, for tests and files.
    #[cfg(test)]
    pub fn plain() -> Style {
        Style { color: false }
    }

    fn paint(&self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    /// Green text.
    pub fn green(&self, text: &str) -> String {
        self.paint("32", text)
    }

    /// Yellow text.
    pub fn yellow(&self, text: &str) -> String {
        self.paint("33", text)
    }

    /// Red text.
    pub fn red(&self, text: &str) -> String {
        self.paint("31", text)
    }

    /// Dimmed text.
    pub fn dim(&self, text: &str) -> String {
        self.paint("2", text)
    }

    /// Bold text.
    pub fn bold(&self, text: &str) -> String {
        self.paint("1", text)
    }
}

/// A bar of `width` cells filled in proportion to `used / total`: green under 50%, yellow from
/// 50%, red from 80% (the default compaction trigger).
pub fn token_bar(style: Style, used: u64, total: u64, width: usize) -> String {
    let share = if total == 0 {
        1.0
    } else {
        used as f64 / total as f64
    };
    let filled = ((share.min(1.0) * width as f64).round() as usize).min(width);
    let bar = format!("{}{}", "█".repeat(filled), "░".repeat(width - filled));
    let colored = if share >= 0.8 {
        style.red(&bar)
    } else if share >= 0.5 {
        style.yellow(&bar)
    } else {
        style.green(&bar)
    };
    format!("[{colored}]")
}

/// `n` with thousands separators: `12,345`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// `part` as a whole percentage of `total`.
pub fn percent(part: u64, total: u64) -> u64 {
    if total == 0 {
        return 0;
    }
    (part as f64 * 100.0 / total as f64).round() as u64
}

/// Rows of `label value`, labels padded to one column.
pub fn table(rows: &[(String, String)]) -> String {
    let width = rows
        .iter()
        .map(|(label, _)| label.chars().count())
        .max()
        .unwrap_or(0);
    rows.iter()
        .map(|(label, value)| format!("  {label:<width$}  {value}\n"))
        .collect()
}

/// Rows of cells, each column padded to its widest cell (right-aligned after the first).
pub fn grid(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|column| {
            rows.iter()
                .filter_map(|row| row.get(column))
                .map(|cell| cell.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(column, (cell, width))| match column {
                0 => format!("{cell:<width$}"),
                _ => format!("{cell:>width$}"),
            })
            .collect();
        out.push_str(&format!("  {}\n", cells.join("  ").trim_end()));
    }
    out
}

/// `name` as it can be shown on a line of its own: a control character (a newline, an
/// escape...) or a bidirectional control (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F,
/// U+061C), which could forge a line or reorder what a reader sees, is written as a Rust
/// escape (`\n`, `\u{202e}`). Everything else is kept as it is.
pub fn printable(name: &str) -> Cow<'_, str> {
    if !name.chars().any(needs_escape) {
        return Cow::Borrowed(name);
    }
    let mut escaped = String::with_capacity(name.len() + 8);
    for c in name.chars() {
        match c {
            '\n' => escaped.push_str("\\n"),
            '\r' => escaped.push_str("\\r"),
            '\t' => escaped.push_str("\\t"),
            c if needs_escape(c) => escaped.extend(c.escape_unicode()),
            c => escaped.push(c),
        }
    }
    Cow::Owned(escaped)
}

fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}'
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_and_bidi_marks_are_escaped_and_the_rest_kept() {
        assert_eq!(printable("plain name/with-日本"), "plain name/with-日本");
        assert_eq!(printable("a\nb\tc\r"), "a\\nb\\tc\\r");
        assert_eq!(printable("\u{1b}[31m"), "\\u{1b}[31m");
        assert_eq!(
            printable("x\u{202e}y\u{2066}z\u{2069}\u{200f}"),
            "x\\u{202e}y\\u{2066}z\\u{2069}\\u{200f}"
        );
        assert!(!printable("\u{85}\u{7f}").chars().any(needs_escape));
    }

    #[test]
    fn bars_numbers_and_tables() {
        assert_eq!(token_bar(Style::plain(), 30, 100, 10), "[███░░░░░░░]");
        assert_eq!(token_bar(Style::plain(), 200, 100, 4), "[████]");
        let colored = Style { color: true };
        assert!(token_bar(colored, 10, 100, 4).starts_with("[\x1b[32m"));
        assert!(token_bar(colored, 50, 100, 4).starts_with("[\x1b[33m"));
        assert!(token_bar(colored, 80, 100, 4).starts_with("[\x1b[31m"));
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(percent(1, 3), 33);
        assert_eq!(
            table(&[("a".into(), "1".into()), ("long".into(), "2".into())]),
            "  a     1\n  long  2\n"
        );
        let rows = vec![
            vec!["x".into(), "10".into()],
            vec!["long".into(), "2".into()],
        ];
        assert_eq!(grid(&rows), "  x     10\n  long   2\n");
    }
}
