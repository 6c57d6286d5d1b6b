//! The user's own words in a user message: what is left when the blocks a harness injects
//! into user messages are taken out.
//!
//! Agents put text of their own in the user's turn: Codex sends its `<environment_context>`
//! and the AGENTS.md text (`<user_instructions>`) as user messages and wraps each prompt typed
//! in an IDE in a `# Context from my IDE setup:` preamble; Claude Code writes slash commands
//! as `<command-name>` elements, adds `<system-reminder>`s, background-task notifications and
//! local-command output, marks interruptions, and opens a continued session with a summary.
//! None of it is a request. [`user_words`] recognises each of these by its structure, one
//! named rule per structure, and returns what the user wrote.
//!
//! Guarantees:
//! - A block is harness text only when it is whole and well formed where the harness puts
//!   it: an XML-like element whose opening tag starts the message (or a line) and whose
//!   closing tag ends a line, at the message's start or end. A tag a user mentions or quotes
//!   inside a sentence, or an unclosed one, is the user's and is kept.
//! - Text holding none of these structures comes back unchanged (trimmed).
//! - `None` only when nothing of the user's is left: the message is no request.
//! - Never panics, never splits a UTF-8 character (every cut is at an ASCII tag or a line).
//!
//! What a next step needs from the harness text (the directory the agent runs in) is read
//! separately: [`harness_working_directory`].

use std::borrow::Cow;

/// An XML-like element a harness writes whole at the start or end of a user message.
struct Block {
    tag: &'static str,
    /// Its content is the user's words (a slash command's arguments), not the harness's.
    keeps_content: bool,
    /// A line the harness writes right after the element, part of the same injection.
    trailer: Option<&'static str>,
}

impl Block {
    const fn dropped(tag: &'static str) -> Block {
        Block {
            tag,
            keeps_content: false,
            trailer: None,
        }
    }
}

/// Codex: the session's environment (`<cwd>`, approval policy, sandbox, network, shell), sent
/// as a user message when a session starts and whenever it changes.
const ENVIRONMENT_CONTEXT: Block = Block::dropped("environment_context");
/// Codex: the AGENTS.md text, sent as a user message when a session starts.
const USER_INSTRUCTIONS: Block = Block::dropped("user_instructions");
/// Codex (later versions): the AGENTS.md text under its `# AGENTS.md instructions for …`
/// heading (see [`strip_agents_md`]).
const INSTRUCTIONS: Block = Block::dropped("INSTRUCTIONS");
/// Claude Code: reminders the harness adds to a user message (a hook's context, the todo
/// list, a file changed on disk).
const SYSTEM_REMINDER: Block = Block::dropped("system-reminder");
/// Claude Code: a slash command's "is running…" line.
const COMMAND_MESSAGE: Block = Block::dropped("command-message");
/// Claude Code: a slash command's name (`/orchestrator`).
const COMMAND_NAME: Block = Block::dropped("command-name");
/// Claude Code: a slash command's arguments: the words the user typed after the command, so
/// they are the request.
const COMMAND_ARGS: Block = Block {
    tag: "command-args",
    keeps_content: true,
    trailer: None,
};
/// Claude Code: what a local command (`/cost`, `/model`) printed, and the caveat before it.
const LOCAL_COMMAND_STDOUT: Block = Block::dropped("local-command-stdout");
/// Claude Code: what a local command printed on its error stream.
const LOCAL_COMMAND_STDERR: Block = Block::dropped("local-command-stderr");
/// Claude Code: the caveat that the messages after it came from local commands.
const LOCAL_COMMAND_CAVEAT: Block = Block::dropped("local-command-caveat");
/// Claude Code: a background task's notification, followed by the harness's line that says
/// where its output is.
const TASK_NOTIFICATION: Block = Block {
    tag: "task-notification",
    keeps_content: false,
    trailer: Some("Read the output file to retrieve the result:"),
};
/// Claude Code (earlier versions): what a user-prompt-submit hook added to the prompt.
const USER_PROMPT_SUBMIT_HOOK: Block = Block::dropped("user-prompt-submit-hook");

/// The elements [`user_words`] takes out wherever they start or end the message (the
/// `<INSTRUCTIONS>` of an AGENTS.md text only under its heading: [`strip_agents_md`]).
const BLOCKS: [Block; 11] = [
    ENVIRONMENT_CONTEXT,
    USER_INSTRUCTIONS,
    SYSTEM_REMINDER,
    COMMAND_MESSAGE,
    COMMAND_NAME,
    COMMAND_ARGS,
    LOCAL_COMMAND_STDOUT,
    LOCAL_COMMAND_STDERR,
    LOCAL_COMMAND_CAVEAT,
    TASK_NOTIFICATION,
    USER_PROMPT_SUBMIT_HOOK,
];

/// Openings of a message that is harness text from its first word to its last: a summary a
/// continued session opens with (Claude Code's continuation message; ctxkit's own checkpoint
/// and the stand-in for a compacted start), and the text of a skill Claude Code loads.
const WHOLE_MESSAGE_OPENINGS: [&str; 4] = [
    "This session is being continued from a previous conversation",
    "[Context checkpoint]",
    "[Earlier conversation",
    "Base directory for this skill:",
];

/// Claude Code: the marker a user's interruption leaves (`[Request interrupted by user]`,
/// `… for tool use]`), a line of its own.
const INTERRUPTION: &str = "[Request interrupted by user";
/// Claude Code (earlier versions): the caveat before local commands' messages, a line of its
/// own without the `<local-command-caveat>` element.
const LOCAL_COMMAND_CAVEAT_LINE: &str =
    "Caveat: The messages below were generated by the user while running local commands";

/// The words the user wrote in `text`, a user message: the harness blocks at its start and
/// end taken out, trimmed. `None` when nothing of the user's is left (the message is no
/// request). Borrowed unless a slash command's arguments had to be joined to other words.
///
/// ```
/// use ctxkit_core::text::user_words;
/// let codex = "# Context from my IDE setup:\n\n## Open tabs:\n- a.ts: src/a.ts\n\n## My request for Codex:\nIs this done?\n";
/// assert_eq!(user_words(codex).as_deref(), Some("Is this done?"));
/// assert_eq!(user_words("<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"), None);
/// let quoted = "Why does it send <system-reminder>x</system-reminder> to me?";
/// assert_eq!(user_words(quoted).as_deref(), Some(quoted));
/// ```
pub fn user_words(text: &str) -> Option<Cow<'_, str>> {
    let mut rest = text.trim();
    if WHOLE_MESSAGE_OPENINGS
        .iter()
        .any(|opening| rest.starts_with(opening))
    {
        return None;
    }
    // The words kept out of a block (a slash command's arguments), in order.
    let mut kept: Vec<&str> = Vec::new();
    loop {
        let before = rest.len();
        if let Some(after) = strip_ide_preamble(rest).or_else(|| strip_agents_md(rest)) {
            rest = after.trim();
        }
        for block in &BLOCKS {
            if let Some((content, after)) = strip_leading(rest, block) {
                if block.keeps_content && !content.trim().is_empty() {
                    kept.push(content.trim());
                }
                rest = after.trim();
            }
            if let Some((before_block, content)) = strip_trailing(rest, block) {
                if block.keeps_content && !content.trim().is_empty() {
                    kept.push(content.trim());
                }
                rest = before_block.trim();
            }
        }
        rest = strip_marker_lines(rest).trim();
        if rest.len() == before {
            break;
        }
    }
    let words = match (kept.as_slice(), rest.is_empty()) {
        ([], _) => Cow::Borrowed(rest),
        ([only], true) => Cow::Borrowed(*only),
        (_, true) => Cow::Owned(kept.join("\n")),
        (_, false) => {
            kept.push(rest);
            Cow::Owned(kept.join("\n"))
        }
    };
    Some(words).filter(|words| !words.trim().is_empty())
}

/// The directory a harness block of `text` says the agent runs in: the `<cwd>` of a whole
/// `<environment_context>` block at the message's start or end (Codex). `None` when there is
/// no such block or its `<cwd>` is not an absolute directory.
///
/// ```
/// use ctxkit_core::text::harness_working_directory;
/// let codex = "<environment_context>\n  <cwd>/Users/ada/app</cwd>\n  <shell>zsh</shell>\n</environment_context>";
/// assert_eq!(harness_working_directory(codex), Some("/Users/ada/app"));
/// assert_eq!(harness_working_directory("see <cwd>/x</cwd>"), None);
/// ```
pub fn harness_working_directory(text: &str) -> Option<&str> {
    let text = text.trim();
    let content = strip_leading(text, &ENVIRONMENT_CONTEXT)
        .map(|(content, _)| content)
        .or_else(|| strip_trailing(text, &ENVIRONMENT_CONTEXT).map(|(_, content)| content))?;
    let (_, after_open) = content.split_once("<cwd>")?;
    let (cwd, _) = after_open.split_once("</cwd>")?;
    Some(cwd.trim()).filter(|dir| is_working_directory(dir))
}

/// Whether `dir` can be a summary's working directory: an absolute directory other than the
/// root, on one line, without a trailing `/` or a backtick (the summary states it in
/// backticks, and reads it back from there). Every source of a working directory (a harness
/// block, a transcript's records, the caller's policy) goes through this one rule.
///
/// ```
/// use ctxkit_core::text::is_working_directory;
/// assert!(is_working_directory("/home/ada/app"));
/// assert!(!is_working_directory("app") && !is_working_directory("/") && !is_working_directory("/a/"));
/// assert!(!is_working_directory("/a\n## Goal") && !is_working_directory("/a`b"));
/// ```
pub fn is_working_directory(dir: &str) -> bool {
    dir.starts_with('/') && dir.len() > 1 && !dir.ends_with('/') && !dir.contains(['\n', '\r', '`'])
}

/// `text` opening with the whole element `block` (its opening tag first, its closing tag
/// ending a line): the element's content and what follows it (and its trailer line).
fn strip_leading<'a>(text: &'a str, block: &Block) -> Option<(&'a str, &'a str)> {
    let after_open = text
        .strip_prefix('<')?
        .strip_prefix(block.tag)?
        .strip_prefix('>')?;
    let close = closing_tag_at(after_open, block.tag)?;
    let content = after_open.get(..close)?;
    let after = after_open.get(close + block.tag.len() + 3..)?;
    if !ends_line(after) {
        return None;
    }
    let after = match block.trailer {
        Some(trailer) if after.trim_start().starts_with(trailer) => {
            let trailed = after.trim_start();
            trailed.split_once('\n').map_or("", |(_, next)| next)
        }
        _ => after,
    };
    Some((content, after))
}

/// `text` ending with the whole element `block` (its closing tag last, its opening tag
/// starting a line): what precedes the element, and its content.
fn strip_trailing<'a>(text: &'a str, block: &Block) -> Option<(&'a str, &'a str)> {
    let before_close = text
        .strip_suffix('>')?
        .strip_suffix(block.tag)?
        .strip_suffix("</")?;
    let at = opening_tag_at(before_close, block.tag)?;
    let before = before_close.get(..at)?;
    if !before.is_empty() && !before.trim_end_matches([' ', '\t']).ends_with('\n') {
        return None;
    }
    let content = before_close.get(at + block.tag.len() + 2..)?;
    Some((before, content))
}

/// Where the closing tag of `tag` that closes an element opened just before `text` starts:
/// the elements of the same tag inside it are skipped whole (a slash command's arguments
/// may quote one).
fn closing_tag_at(text: &str, tag: &str) -> Option<usize> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let mut depth = 1usize;
    let mut at = 0;
    loop {
        let rest = text.get(at..)?;
        let next_close = rest.find(close.as_str())?;
        match rest.find(open.as_str()) {
            Some(next_open) if next_open < next_close => {
                depth += 1;
                at += next_open + open.len();
            }
            _ => {
                depth -= 1;
                if depth == 0 {
                    return Some(at + next_close);
                }
                at += next_close + close.len();
            }
        }
    }
}

/// Where the opening tag of `tag` that opens the element closed just after `text` starts,
/// the elements of the same tag inside it skipped whole.
fn opening_tag_at(text: &str, tag: &str) -> Option<usize> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let mut depth = 1usize;
    let mut end = text.len();
    loop {
        let head = text.get(..end)?;
        let previous_open = head.rfind(open.as_str())?;
        match head.rfind(close.as_str()) {
            Some(previous_close) if previous_close > previous_open => {
                depth += 1;
                end = previous_close;
            }
            _ => {
                depth -= 1;
                if depth == 0 {
                    return Some(previous_open);
                }
                end = previous_open;
            }
        }
    }
}

/// Whether `text` (what follows a closing tag) starts a new line or is empty: the tag ended
/// its line.
fn ends_line(text: &str) -> bool {
    let text = text.trim_start_matches([' ', '\t']);
    text.is_empty() || text.starts_with(['\n', '\r'])
}

/// Codex's IDE preamble: a `# …:` heading, context sections under `## …:` headings (the
/// active file, the open tabs, a selection; the first right after the opening heading), and a last heading `## My request for …:` after
/// which the user's words follow. Written by Codex's IDE extension (`# Context from my IDE
/// setup:` … `## My request for Codex:`); matched by that shape, not by the product's name.
/// `None` when `text` does not open with it.
fn strip_ide_preamble(text: &str) -> Option<&str> {
    const REQUEST: &str = "## My request for ";
    let (first, rest) = text.split_once('\n')?;
    let first = first.trim_end();
    if !first.starts_with("# ") || !first.ends_with(':') {
        return None;
    }
    let section = rest.lines().map(str::trim_end).find(|l| !l.is_empty())?;
    // A section heading names its context and may hold it (`## Active file: src/a.rs`).
    if !section.starts_with("## ") || !section.contains(':') {
        return None;
    }
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        offset += line.len();
        let heading = line.trim_end();
        if heading.starts_with(REQUEST) && heading.ends_with(':') {
            return rest.get(offset..);
        }
    }
    None
}

/// Codex (later versions): the AGENTS.md text as a heading `# AGENTS.md instructions for
/// <dir>` followed by a whole `<INSTRUCTIONS>` element. `None` when `text` does not open
/// with it.
fn strip_agents_md(text: &str) -> Option<&str> {
    let (first, rest) = text.split_once('\n')?;
    if !first.starts_with("# AGENTS.md instructions for ") {
        return None;
    }
    strip_leading(rest.trim_start(), &INSTRUCTIONS).map(|(_, after)| after)
}

/// `text` without a marker line at its start or end: an interruption, or the caveat before
/// local commands' messages.
fn strip_marker_lines(text: &str) -> &str {
    let is_marker = |line: &str| {
        let line = line.trim();
        (line.starts_with(INTERRUPTION) && line.ends_with(']'))
            || line.starts_with(LOCAL_COMMAND_CAVEAT_LINE)
    };
    let mut text = text;
    let (first, after) = text.split_once('\n').unwrap_or((text, ""));
    if is_marker(first) {
        text = after;
    }
    let (before, last) = text.rsplit_once('\n').unwrap_or(("", text));
    if is_marker(last) {
        text = before;
    }
    text
}

#[cfg(test)]
#[path = "user_words_tests.rs"]
mod tests;
