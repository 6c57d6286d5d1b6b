//! System prompt assembly from explicit parts.
//!
//! [`build_system_prompt`] joins, in this order and separated by blank lines, the sections of
//! [`PromptParts`], skipping each one that is empty:
//!
//! 1. the base: the role text, the working directory and the current date;
//! 2. `## Project Conventions (AGENTS.md)`, cut to `agents_md_max_bytes` with a marker;
//! 3. `## Available Skills`, one `- name: description` line per skill, sorted by name;
//! 4. `## Task Planning`, the todo guidance;
//! 5. `## Large Tool Outputs`, how to page offloaded outputs, naming the real paging tool;
//! 6. `## Conversation History`, how to search and read the log a summary stands in for
//!    ([`crate::recall::history_section`]), only when `history_guidance` is set;
//! 7. `## Long-Term Memory`, the memory precis fenced as data.
//!
//! Guarantees: the prompt is a pure function of its parts (the shell passes today's date in,
//! so the same parts give the same prompt byte for byte and the provider's prompt cache keeps
//! working), it is never stored in the log (it is rebuilt every turn), and a malformed date is
//! an error naming the `date` field, never a silently wrong prompt.

use serde::{Deserialize, Serialize};

use crate::error::{CoreError, Result};
use crate::memory::fence_as_data;
use crate::offload::{OffloadPolicy, OFFLOAD_HEADER};
use crate::recall::history_section;
use crate::text::{head_bytes, single_line};

/// The role text used when [`PromptParts::base`] is `None`.
pub const DEFAULT_BASE: &str = "You are a capable software agent working in the user's project. \
    Use the tools you are given to inspect and change files and to run commands; check your \
    work, and say plainly what you did and what is left.";

/// Todo guidance a shell can pass as [`PromptParts::todo_guidance`] when the agent has a todo
/// tool.
pub const DEFAULT_TODO_GUIDANCE: &str = "For a task with several steps, keep a todo list with \
    your todo tool: write the steps down before you start, keep exactly one step in progress, \
    and mark each step done as soon as it is, so the list stays true after the conversation \
    is compacted.";

/// Ends AGENTS.md text that was cut to its cap.
pub const AGENTS_MD_TRUNCATED: &str = "\n…(AGENTS.md truncated)";

/// A skill the agent can use.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default, deny_unknown_fields)]
pub struct Skill {
    /// Its name.
    pub name: String,
    /// When to use it, in one line.
    pub description: String,
}

/// How the model reads an offloaded output back: the folder and the paging tool with its
/// parameter names. Build it from the policy with `OffloadGuidance::from(&policy)`; the
/// default is that of the default [`OffloadPolicy`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default, deny_unknown_fields)]
pub struct OffloadGuidance {
    /// Where offloaded outputs are saved.
    pub folder: String,
    /// The tool that reads them.
    pub paging_tool: String,
    /// Its parameter for the first line to read.
    pub offset_param: String,
    /// Its parameter for how many lines to read.
    pub limit_param: String,
}

impl Default for OffloadGuidance {
    fn default() -> Self {
        OffloadGuidance::from(&OffloadPolicy::default())
    }
}

impl From<&OffloadPolicy> for OffloadGuidance {
    fn from(policy: &OffloadPolicy) -> Self {
        OffloadGuidance {
            folder: policy.folder.clone(),
            paging_tool: policy.paging_tool.clone(),
            offset_param: policy.offset_param.clone(),
            limit_param: policy.limit_param.clone(),
        }
    }
}

/// Everything a system prompt is made of, given by the shell every turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default, deny_unknown_fields)]
pub struct PromptParts {
    /// The role text; `None` uses [`DEFAULT_BASE`].
    pub base: Option<String>,
    /// The agent's working directory; left out when empty.
    pub working_directory: String,
    /// Today's date, `YYYY-MM-DD` (required: the core has no clock).
    pub date: String,
    /// The project's AGENTS.md, if it has one.
    pub agents_md: Option<String>,
    /// AGENTS.md is cut to this many bytes, marker included. Default 16,384.
    pub agents_md_max_bytes: usize,
    /// The skills the agent can use.
    pub skills: Vec<Skill>,
    /// The todo guidance (for instance [`DEFAULT_TODO_GUIDANCE`]); `None` or blank for none.
    pub todo_guidance: Option<String>,
    /// How to read offloaded outputs back; `None` when nothing is offloaded.
    pub offload_guidance: Option<OffloadGuidance>,
    /// Add `## Conversation History` (the history tools: `search_history`, `read_history`).
    /// Set it once the session has a checkpoint, when the agent offers those tools. Default
    /// false.
    pub history_guidance: bool,
    /// The memory precis (see [`crate::memory::render_precis`]); fenced as data here.
    pub memory_precis: Option<String>,
}

impl Default for PromptParts {
    fn default() -> Self {
        PromptParts {
            base: None,
            working_directory: String::new(),
            date: String::new(),
            agents_md: None,
            agents_md_max_bytes: 16_384,
            skills: Vec::new(),
            todo_guidance: None,
            offload_guidance: None,
            history_guidance: false,
            memory_precis: None,
        }
    }
}

/// The system prompt for `parts` (see the module doc for the sections). Errors when the date
/// is not a real `YYYY-MM-DD` date.
///
/// ```
/// use ctxkit_core::prompt::{build_system_prompt, PromptParts, Skill};
///
/// let parts = PromptParts {
///     base: Some("You are a test agent.".into()),
///     working_directory: "/work/app".into(),
///     date: "2026-02-28".into(),
///     skills: vec![Skill { name: "pdf".into(), description: "Read PDF files.".into() }],
///     ..PromptParts::default()
/// };
/// assert_eq!(
///     build_system_prompt(&parts).unwrap(),
///     "You are a test agent.\n\nWorking directory: /work/app\nCurrent date: 2026-02-28\
///      \n\n## Available Skills\n- pdf: Read PDF files."
/// );
/// let bad = PromptParts { date: "2026-02-30".into(), ..parts };
/// assert_eq!(
///     build_system_prompt(&bad).unwrap_err().to_string(),
///     "date: day 30 does not exist in 2026-02 (it has 28 days)"
/// );
/// ```
pub fn build_system_prompt(parts: &PromptParts) -> Result<String> {
    validate_date(&parts.date)?;
    let sections = [
        Some(base_section(parts)),
        parts
            .agents_md
            .as_deref()
            .and_then(|text| agents_md_section(text, parts.agents_md_max_bytes)),
        skills_section(&parts.skills),
        parts
            .todo_guidance
            .as_deref()
            .and_then(|text| titled("## Task Planning", text.trim())),
        parts.offload_guidance.as_ref().map(offload_section),
        parts.history_guidance.then(history_section),
        parts
            .memory_precis
            .as_deref()
            .and_then(|precis| titled("## Long-Term Memory", &fence_as_data(precis))),
    ];
    Ok(sections
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join("\n\n"))
}

/// Checks that `date` is a real date written `YYYY-MM-DD`.
///
/// ```
/// use ctxkit_core::prompt::validate_date;
/// assert!(validate_date("2024-02-29").is_ok());
/// assert_eq!(
///     validate_date("2026-13-01").unwrap_err().to_string(),
///     "date: month 13 does not exist (months are 01 to 12)"
/// );
/// ```
pub fn validate_date(date: &str) -> Result<()> {
    let fields: Vec<&str> = date.split('-').collect();
    let numbers = match fields.as_slice() {
        [year, month, day]
            if year.len() == 4
                && month.len() == 2
                && day.len() == 2
                && date.bytes().all(|b| b.is_ascii_digit() || b == b'-') =>
        {
            (
                year.parse::<u32>(),
                month.parse::<u32>(),
                day.parse::<u32>(),
            )
        }
        _ => return Err(malformed_date(date)),
    };
    let (Ok(year), Ok(month), Ok(day)) = numbers else {
        return Err(malformed_date(date));
    };
    let Some(days) = days_in_month(year, month) else {
        return Err(CoreError::invalid(
            "date",
            format!("month {month:02} does not exist (months are 01 to 12)"),
        ));
    };
    if day == 0 || day > days {
        return Err(CoreError::invalid(
            "date",
            format!("day {day:02} does not exist in {year:04}-{month:02} (it has {days} days)"),
        ));
    }
    Ok(())
}

fn malformed_date(date: &str) -> CoreError {
    let shown = head_bytes(date, 40);
    let problem = if date.is_empty() {
        "empty: the shell must pass today's date as YYYY-MM-DD".to_owned()
    } else {
        format!("expected a date as YYYY-MM-DD, got {shown:?}")
    };
    CoreError::invalid("date", problem)
}

/// The number of days of `month` in `year` (proleptic Gregorian), `None` for no such month.
fn days_in_month(year: u32, month: u32) -> Option<u32> {
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => Some(31),
        4 | 6 | 9 | 11 => Some(30),
        2 if leap => Some(29),
        2 => Some(28),
        _ => None,
    }
}

/// Role text, then the environment lines.
fn base_section(parts: &PromptParts) -> String {
    let base = parts.base.as_deref().unwrap_or(DEFAULT_BASE).trim();
    let mut environment = Vec::new();
    if !parts.working_directory.is_empty() {
        environment.push(format!("Working directory: {}", parts.working_directory));
    }
    environment.push(format!("Current date: {}", parts.date));
    let environment = environment.join("\n");
    if base.is_empty() {
        environment
    } else {
        format!("{base}\n\n{environment}")
    }
}

/// AGENTS.md under its heading, cut to `max_bytes` with [`AGENTS_MD_TRUNCATED`].
fn agents_md_section(text: &str, max_bytes: usize) -> Option<String> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    let body = if text.len() <= max_bytes {
        text.to_owned()
    } else {
        let room = max_bytes.saturating_sub(AGENTS_MD_TRUNCATED.len());
        format!("{}{AGENTS_MD_TRUNCATED}", head_bytes(text, room).trim_end())
    };
    titled("## Project Conventions (AGENTS.md)", &body)
}

/// One line per skill with a name, sorted so that the order a directory listing returned
/// them in does not change the prompt.
fn skills_section(skills: &[Skill]) -> Option<String> {
    let mut lines: Vec<String> = skills
        .iter()
        .map(|skill| (single_line(&skill.name), single_line(&skill.description)))
        .filter(|(name, _)| !name.is_empty())
        .map(|(name, description)| {
            if description.is_empty() {
                format!("- {name}")
            } else {
                format!("- {name}: {description}")
            }
        })
        .collect();
    crate::wire::fields::sort_stable_by(&mut lines, Ord::cmp);
    lines.dedup();
    titled("## Available Skills", &lines.join("\n"))
}

/// How offloaded outputs look and how to read them.
fn offload_section(guidance: &OffloadGuidance) -> String {
    let folder = guidance.folder.trim_end_matches('/');
    format!(
        "## Large Tool Outputs\n\
         A tool output too large for the context is saved to a file under `{folder}/` and \
         replaced by a reference that starts with `{OFFLOAD_HEADER}`: it gives the file's \
         path, its size, whether the tool failed, and its first and last lines. When you need \
         more of it, call `{tool}` on that path with `{offset}` and `{limit}` to read it a page \
         at a time, rather than reading it whole or running the tool again.",
        tool = guidance.paging_tool,
        offset = guidance.offset_param,
        limit = guidance.limit_param,
    )
}

/// `heading` then `body`, or nothing when `body` is blank.
fn titled(heading: &str, body: &str) -> Option<String> {
    if body.trim().is_empty() {
        None
    } else {
        Some(format!("{heading}\n{body}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn every_section() -> PromptParts {
        PromptParts {
            base: None,
            working_directory: "/home/ada/project".into(),
            date: "2026-04-02".into(),
            agents_md: Some(
                "# Conventions\n\n- Run `cargo fmt` before committing.\n- No `unwrap` in library code.\n"
                    .into(),
            ),
            skills: vec![
                Skill {
                    name: "release".into(),
                    description: "Cut a release:\nbump, tag, publish.".into(),
                },
                Skill {
                    name: "docs".into(),
                    description: "Write and check the docs.".into(),
                },
                Skill {
                    name: " ".into(),
                    description: "nameless skills are left out".into(),
                },
            ],
            todo_guidance: Some(DEFAULT_TODO_GUIDANCE.into()),
            offload_guidance: Some(OffloadGuidance::from(&OffloadPolicy::default())),
            memory_precis: Some(
                "- **Package manager** [preference]: Use pnpm, never npm.\n- **Fence** [fact]: a ``` inside"
                    .into(),
            ),
            ..PromptParts::default()
        }
    }

    #[test]
    fn every_section_snapshot() {
        let prompt = build_system_prompt(&every_section()).unwrap();
        insta::assert_snapshot!(prompt);
    }

    #[test]
    fn empty_sections_are_skipped() {
        let parts = PromptParts {
            base: Some(String::new()),
            date: "2026-01-01".into(),
            agents_md: Some(" \n".into()),
            todo_guidance: Some(String::new()),
            memory_precis: Some(String::new()),
            ..PromptParts::default()
        };
        assert_eq!(
            build_system_prompt(&parts).unwrap(),
            "Current date: 2026-01-01"
        );
    }

    #[test]
    fn sections_come_in_order_and_are_deterministic() {
        let parts = every_section();
        let prompt = build_system_prompt(&parts).unwrap();
        let positions: Vec<usize> = [
            "Working directory",
            "## Project Conventions (AGENTS.md)",
            "## Available Skills",
            "## Task Planning",
            "## Large Tool Outputs",
            "## Long-Term Memory",
        ]
        .iter()
        .map(|heading| prompt.find(heading).unwrap())
        .collect();
        assert!(positions.windows(2).all(|pair| pair[0] < pair[1]));
        let mut shuffled = parts.clone();
        shuffled.skills.reverse();
        assert_eq!(build_system_prompt(&shuffled).unwrap(), prompt);
    }

    #[test]
    fn agents_md_is_cut_within_its_cap() {
        let parts = PromptParts {
            date: "2026-01-01".into(),
            agents_md: Some("日本語".repeat(10_000)),
            agents_md_max_bytes: 1000,
            ..PromptParts::default()
        };
        let prompt = build_system_prompt(&parts).unwrap();
        let body = prompt
            .split("## Project Conventions (AGENTS.md)\n")
            .nth(1)
            .unwrap();
        assert!(body.len() <= 1000, "{}", body.len());
        assert!(body.ends_with(AGENTS_MD_TRUNCATED));
    }

    #[test]
    fn malformed_dates_name_the_field() {
        for (date, expected) in [
            (
                "",
                "date: empty: the shell must pass today's date as YYYY-MM-DD",
            ),
            (
                "2026/04/02",
                "date: expected a date as YYYY-MM-DD, got \"2026/04/02\"",
            ),
            (
                "2026-4-2",
                "date: expected a date as YYYY-MM-DD, got \"2026-4-2\"",
            ),
            (
                "2026-04-02T10:00",
                "date: expected a date as YYYY-MM-DD, got \"2026-04-02T10:00\"",
            ),
            (
                "+026-04-02",
                "date: expected a date as YYYY-MM-DD, got \"+026-04-02\"",
            ),
            (
                "2026-13-01",
                "date: month 13 does not exist (months are 01 to 12)",
            ),
            (
                "2026-00-01",
                "date: month 00 does not exist (months are 01 to 12)",
            ),
            (
                "2026-01-32",
                "date: day 32 does not exist in 2026-01 (it has 31 days)",
            ),
            (
                "2026-04-00",
                "date: day 00 does not exist in 2026-04 (it has 30 days)",
            ),
            (
                "1900-02-29",
                "date: day 29 does not exist in 1900-02 (it has 28 days)",
            ),
        ] {
            let parts = PromptParts {
                date: date.into(),
                ..PromptParts::default()
            };
            assert_eq!(
                build_system_prompt(&parts).unwrap_err().to_string(),
                expected
            );
        }
        assert!(validate_date("2000-02-29").is_ok());
        assert!(validate_date("2024-12-31").is_ok());
    }
}
