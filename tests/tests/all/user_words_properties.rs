//! The user's words, not the harness's (issue 32, item 2), over generated messages:
//!
//! - a user's text wrapped in any mix of the blocks harnesses inject (Codex's
//!   `<environment_context>`, `<user_instructions>` and IDE preamble; Claude Code's
//!   `<system-reminder>`, slash-command elements, task notifications, local-command output
//!   and interruption markers), before it, after it, or as a slash command's arguments, comes
//!   back as that text, trimmed;
//! - a text that opens and closes with a word of its own comes back unchanged, whatever tags,
//!   headings and markers it holds inside (a user quoting harness text keeps it);
//! - a text without `<`, `#` or `[` comes back unchanged (trimmed), `None` only when blank;
//! - no input panics, and `Some` is never blank.
//!
//! The cases are random; `PROPTEST_RNG_SEED=<seed>` replays a run.

use ctxkit_core::text::user_words;
use proptest::prelude::*;
use proptest::sample::select;

/// Words of the user's text: a fragment of one is recognizable.
const WORDS: [&str; 6] = ["zqalphaqz", "zqbetaqz", "zqgammaqz", "fix", "the", "für"];

/// What a user writes between words: harness text quoted mid-message, headings, markers.
const INNER: [&str; 16] = [
    " ",
    "\n",
    "\n\n",
    ", ",
    " <environment_context> ",
    " <system-reminder>quoted</system-reminder> ",
    "\n<system-reminder>whole line</system-reminder>\n",
    "\n<command-args>mid</command-args>\n",
    "\n</environment_context>\n",
    "\n# Context from my IDE setup:\n## Open tabs:\n## My request for Codex:\n",
    "\n[Request interrupted by user]\n",
    "\nThis session is being continued from a previous conversation\n",
    " `<task-notification>` ",
    "\n## My request for you:\n",
    " [Context checkpoint] ",
    "\u{2028}",
];

/// A user's text: words with [`INNER`] pieces between, opening and closing with a word.
fn arb_user_text() -> impl Strategy<Value = String> {
    (
        select(WORDS.to_vec()),
        prop::collection::vec((select(INNER.to_vec()), select(WORDS.to_vec())), 0..8),
    )
        .prop_map(|(first, rest)| {
            let mut text = first.to_owned();
            for (between, word) in rest {
                text.push_str(between);
                text.push_str(word);
            }
            text
        })
}

/// The content of a harness block: lines of words and nested elements, never its own
/// closing tag.
fn arb_content() -> impl Strategy<Value = String> {
    prop::collection::vec(
        select(vec![
            "zqdeltaqz",
            "\n",
            "  <cwd>/Users/u/app</cwd>\n",
            "<shell>zsh</shell>",
            "- a.ts: src/a.ts",
            "## Open tabs:",
            "ü",
        ]),
        0..6,
    )
    .prop_map(|parts| parts.concat())
}

/// A block a harness writes before the user's words.
fn arb_leading() -> impl Strategy<Value = String> {
    (0usize..7, arb_content()).prop_map(|(kind, content)| match kind {
        0 => format!("<environment_context>\n{content}\n</environment_context>\n"),
        1 => format!("<user_instructions>\n{content}\n</user_instructions>\n"),
        2 => format!("<system-reminder>{content}</system-reminder>\n"),
        3 => format!("<local-command-stdout>{content}</local-command-stdout>\n"),
        4 => "[Request interrupted by user]\n".to_owned(),
        5 => format!(
            "<task-notification>\n<status>completed</status>{content}\n</task-notification>\nRead the output file to retrieve the result: /tmp/t.output\n"
        ),
        _ => format!("<command-message>x is running…</command-message>\n<command-name>/x</command-name>\n<system-reminder>{content}</system-reminder>\n"),
    })
}

/// A block a harness writes after the user's words.
fn arb_trailing() -> impl Strategy<Value = String> {
    (0usize..3, arb_content()).prop_map(|(kind, content)| match kind {
        0 => format!("\n<system-reminder>\n{content}\n</system-reminder>"),
        1 => format!("\n<environment_context>{content}</environment_context>"),
        _ => "\n[Request interrupted by user for tool use]".to_owned(),
    })
}

/// How the user's words are wrapped: blocks before and after, an IDE preamble, or a slash
/// command whose arguments they are.
fn arb_wrapped() -> impl Strategy<Value = (String, String)> {
    (
        arb_user_text(),
        prop::collection::vec(arb_leading(), 0..3),
        prop::collection::vec(arb_trailing(), 0..3),
        0usize..3,
        select(vec!["", " ", "\n", "\n\n  "]),
    )
        .prop_map(|(user, leading, trailing, shape, pad)| {
            let core = match shape {
                0 => format!("{pad}{user}{pad}"),
                1 => format!(
                    "# Context from my IDE setup:\n\n## Active file: src/a.ts\n\n## Open tabs:\n- a.ts: src/a.ts\n\n## My request for Codex:\n{pad}{user}{pad}"
                ),
                _ => format!(
                    "<command-message>go is running…</command-message>\n<command-name>/go</command-name>\n<command-args>{pad}{user}{pad}</command-args>"
                ),
            };
            (user, format!("{}{core}{}", leading.concat(), trailing.concat()))
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn the_users_words_come_out_of_any_harness_wrapping((user, message) in arb_wrapped()) {
        let words = user_words(&message);
        prop_assert_eq!(words.as_deref(), Some(user.trim()), "{:?}", message);
    }

    #[test]
    fn a_text_opening_and_closing_with_its_own_words_is_kept(text in arb_user_text()) {
        let words = user_words(&text);
        prop_assert_eq!(words.as_deref(), Some(text.as_str()));
        prop_assert!(matches!(words, Some(std::borrow::Cow::Borrowed(_))));
    }

    #[test]
    fn a_text_without_markup_is_kept_and_nothing_panics(
        plain in "[^<#\\[]{0,80}",
        any in "\\PC{0,120}",
    ) {
        let trimmed = plain.trim();
        let expected = (!trimmed.is_empty()).then_some(trimmed);
        let words = user_words(&plain);
        prop_assert_eq!(words.as_deref(), expected);
        if let Some(words) = user_words(&any) {
            prop_assert!(!words.trim().is_empty());
        }
    }
}
