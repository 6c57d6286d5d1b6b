use super::*;
use crate::model::ToolCall;

#[test]
fn a_merge_keeps_earlier_files_goal_and_errors() {
    let first = [
        Message::user("Port the parser to Rust"),
        Message::assistant(
            "",
            vec![ToolCall::new(
                "1",
                "read_file",
                r#"{"path":"old/parser.py"}"#,
            )],
        ),
        Message::tool_result("1", "Traceback: boom", true),
    ];
    let limits = ExtractiveLimits::default();
    let earlier = extractive_summary(&first, None, &limits);
    let second = [
        Message::user("now add tests"),
        Message::assistant(
            "I'll add tests in `parser_tests`.",
            vec![ToolCall::new(
                "2",
                "write_file",
                r#"{"path":"src/parser.rs","content":"pub fn parse() {}"}"#,
            )],
        ),
        Message::tool_result("2", "ok", false),
    ];
    let merged = extractive_summary(&second, Some(&earlier), &limits);
    assert!(
        merged.starts_with("## Goal\n- Port the parser to Rust\nLater requests:\n- now add tests"),
        "{merged}"
    );
    assert!(
        merged.contains(
            "## Files\n- `src/parser.rs`: written → ok\n- `old/parser.py`: read → failed: Traceback: boom"
        ),
        "{merged}"
    );
    assert!(merged.contains("- Traceback: boom"), "{merged}");
    // The assistant's identifier is mentioned, not pinned (only the user's are), once: the
    // next step holds it, so the identifiers in use do not list it again.
    assert_eq!(merged.matches("parser_tests").count(), 1, "{merged}");
    assert!(!merged.contains("Identifiers in use"), "{merged}");
    // Merged item by item: the earlier file is an entry of Files, not an `Earlier:` block.
    assert!(!merged.contains("Earlier:"), "{merged}");
    assert_eq!(
        extractive_summary(&second, Some(&earlier), &limits),
        merged,
        "deterministic"
    );
}

#[test]
fn output_is_bounded_for_huge_inputs() {
    let limits = ExtractiveLimits {
        max_bytes: 2_000,
        ..ExtractiveLimits::default()
    };
    let huge: Vec<Message> = (0..500)
        .flat_map(|i| {
            [
                Message::user(format!("request {i} {}", "word ".repeat(100))),
                Message::assistant(
                    "",
                    vec![ToolCall::new(
                        format!("c{i}"),
                        "bash",
                        format!(r#"{{"command":"cat dir{i}/file{i}.txt"}}"#),
                    )],
                ),
                Message::tool_result(format!("c{i}"), "error: nope ".repeat(50), true),
            ]
        })
        .collect();
    let summary = extractive_summary(&huge, None, &limits);
    assert!(summary.len() <= 2_000, "{}\n{summary}", summary.len());
    // Nothing to say, no section: an empty stretch has no Key Decisions, Files, Commands or
    // Critical Context.
    assert_eq!(
        extractive_summary(&[], None, &limits),
        "## Goal\n(no user request in the summarized messages)\n\n## Progress\nNo tool calls in this part of the session.\n\n## Next Steps\nContinue from the most recent messages."
    );
}

#[test]
fn files_named_in_a_command_output_are_listed_as_leads_and_survive_a_merge() {
    let first = [
        Message::user("Fix the lint findings"),
        Message::assistant(
            "",
            vec![ToolCall::new("1", "bash", r#"{"command":"mix credo"}"#)],
        ),
        Message::tool_result(
            "1",
            "lib/app/slice_builder.ex:40:22: call_without_opaque\nlib/app/other.ex:3: ok",
            true,
        ),
        Message::assistant(
            "",
            vec![ToolCall::new(
                "2",
                "read_file",
                r#"{"path":"lib/app/other.ex"}"#,
            )],
        ),
        Message::tool_result("2", "alias Lib.Hidden.Thing # see lib/app/hidden.ex", false),
    ];
    let limits = ExtractiveLimits::default();
    let earlier = extractive_summary(&first, None, &limits);
    // The file the agent opened is an entry; the one only named is a lead; what a read
    // returned names no lead.
    assert!(
        earlier.contains("- `lib/app/other.ex`: read → ok\nNamed in tool output, not opened: `lib/app/slice_builder.ex`\n"),
        "{earlier}"
    );
    assert!(!earlier.contains("hidden.ex"), "{earlier}");
    let second = [
        Message::user("continue"),
        Message::assistant(
            "",
            vec![ToolCall::new("3", "bash", r#"{"command":"git status"}"#)],
        ),
        Message::tool_result("3", "modified: docs/README.md", false),
    ];
    let merged = extractive_summary(&second, Some(&earlier), &limits);
    assert!(
        merged.contains(
            "Named in tool output, not opened: `docs/README.md`, `lib/app/slice_builder.ex`"
        ),
        "{merged}"
    );
}

#[test]
fn identifiers_the_agent_talks_about_outrank_the_code_it_writes_and_carry_over() {
    let write = |id: &str, content: &str| {
        Message::assistant(
            "",
            vec![ToolCall::new(
                id,
                "write_file",
                format!(r#"{{"path":"src/{id}.js","content":"{content}"}}"#),
            )],
        )
    };
    let first = [
        Message::user("Wire the hooks"),
        Message::assistant("The `TranscriptHighlighter` hook needs it.", vec![]),
        Message::assistant("Now TranscriptHighlighter again.", vec![]),
        write("a", "el.getAttribute(x); el.querySelector(y)"),
        Message::tool_result("a", "ok", false),
        write("b", "el.getAttribute(x); el.querySelector(y)"),
        Message::tool_result("b", "ok", false),
        Message::assistant("Both files are written.", vec![]),
    ];
    let limits = ExtractiveLimits::default();
    let earlier = extractive_summary(&first, None, &limits);
    assert!(
        earlier.contains("Identifiers in use (most used first): `TranscriptHighlighter`, `getAttribute`, `querySelector`"),
        "{earlier}"
    );
    let second = [
        Message::user("continue"),
        Message::assistant(
            "",
            vec![ToolCall::new(
                "c",
                "bash",
                r#"{"command":"grep -n handle_event src"}"#,
            )],
        ),
        Message::tool_result("c", "", false),
    ];
    let merged = extractive_summary(&second, Some(&earlier), &limits);
    // The previous summary's identifiers come before this part's used once.
    assert!(
        merged.contains("Identifiers in use (most used first): `TranscriptHighlighter`, `getAttribute`, `querySelector`, `handle_event`"),
        "{merged}"
    );
}

/// A long request (a harness's health report pasted as the user's turn, a task list) is
/// quoted head and tail; the files in its middle are listed on their own line, merged into
/// the next summary, and a file the agent then opened is not listed twice.
#[test]
fn the_files_a_long_request_names_survive_its_cut_and_the_next_merge() {
    let middle: String = (0..30)
        .map(|i| format!("  [WARNING] missing: × tool-{i:02}-check.cjs — run update\n"))
        .collect();
    let request = format!("Health report follows.\n{middle}Fix the gaps, then rerun the check.");
    let first = [
        Message::user(request),
        Message::assistant(
            "",
            vec![ToolCall::new(
                "1",
                "open_file",
                r#"{"path":"tool-00-check.cjs"}"#,
            )],
        ),
        Message::tool_result("1", "module.exports = {}", false),
    ];
    let limits = ExtractiveLimits::default();
    let summary = extractive_summary(&first, None, &limits);
    let line = summary
        .lines()
        .find(|line| line.starts_with(mentioned::REQUESTED_LABEL))
        .unwrap_or_else(|| panic!("{summary}"));
    // The most recent first, the opened one left out (it is a Files entry).
    assert!(line.contains("`tool-29-check.cjs`"), "{line}");
    assert!(!line.contains("`tool-00-check.cjs`"), "{line}");
    let second = [Message::user(
        "and the schemas too: _defs/locator.schema.json",
    )];
    let merged = extractive_summary(&second, Some(&summary), &limits);
    let merged_line = merged
        .lines()
        .find(|line| line.starts_with(mentioned::REQUESTED_LABEL))
        .unwrap_or_else(|| panic!("{merged}"));
    assert!(
        merged_line.starts_with(&format!(
            "{}`_defs/locator.schema.json`",
            mentioned::REQUESTED_LABEL
        )),
        "{merged_line}"
    );
    assert!(merged_line.contains("`tool-29-check.cjs`"), "{merged_line}");
}

#[test]
fn names_the_code_read_imports_and_defines_are_leads_within_their_share() {
    // Any agent's read: a shell that prints a file (Codex's argv) and a path-only call.
    let page = "\"use client\";\nimport { PageLayout } from \"@/components/PageLayout\";\nimport { Button } from \"@repo/ui/button\";\nexport default function TeamsPage() {\n  const localRows = 1;\n}\n";
    let messages = [
        Message::user("Make the teams page match the others"),
        Message::assistant(
            "",
            vec![ToolCall::new(
                "1",
                "shell",
                r#"{"command":["zsh","-lc","sed -n '1,200p' src/app/teams/page.tsx"],"workdir":"/u/app"}"#,
            )],
        ),
        Message::tool_result("1", page, false),
        Message::assistant(
            "",
            vec![ToolCall::new(
                "2",
                "open_file",
                r#"{"path":"src/lib/rows.py"}"#,
            )],
        ),
        Message::tool_result("2", "def load_rows(team_id):\n    pass\n", false),
        // A search's output names code too, but is no file read: no names from it.
        Message::assistant(
            "",
            vec![ToolCall::new(
                "3",
                "grep",
                r#"{"pattern":"useTeams","path":"src"}"#,
            )],
        ),
        Message::tool_result("3", "src/hooks.ts:1:export function useTeams() {}", false),
    ];
    let limits = ExtractiveLimits::default();
    let summary = extractive_summary(&messages, None, &limits);
    // One of each read per round, the latest read's first; plain words (`Button`) and a
    // function's locals are left out.
    assert!(
        summary.contains(&format!(
            "{CODE_NAMES_LABEL}`load_rows`, `PageLayout`, `TeamsPage`"
        )),
        "{summary}"
    );
    assert!(!summary.contains("localRows"), "{summary}");
    assert!(!summary.contains("`Button`"), "{summary}");
    // The next summary keeps them, merged with its own reads' names.
    let next = [
        Message::assistant(
            "",
            vec![ToolCall::new(
                "4",
                "read",
                r#"{"path":"src/app/admin/page.tsx"}"#,
            )],
        ),
        Message::tool_result("4", "export const AdminPage = () => null;\n", false),
    ];
    let merged = extractive_summary(&next, Some(&summary), &limits);
    assert!(
        merged.contains(&format!(
            "{CODE_NAMES_LABEL}`AdminPage`, `load_rows`, `PageLayout`, `TeamsPage`"
        )),
        "{merged}"
    );
    // A read of a big file gives at most a sixteenth of the summary, and shares it with the
    // other reads (here the previous summary's).
    let big: String = (0..400)
        .map(|n| format!("export function handler_{n}() {{}}\n"))
        .collect();
    let many = [
        Message::assistant(
            "",
            vec![ToolCall::new("5", "read", r#"{"path":"src/handlers.ts"}"#)],
        ),
        Message::tool_result("5", big.as_str(), false),
    ];
    let bounded = extractive_summary(&many, Some(&summary), &limits);
    let line = bounded
        .lines()
        .find(|line| line.starts_with(CODE_NAMES_LABEL))
        .expect("the names line");
    assert!(
        line.len() <= CODE_NAMES_LABEL.len() + limits.max_bytes / 16,
        "{line}"
    );
    assert!(
        line.starts_with(&format!(
            "{CODE_NAMES_LABEL}`handler_0`, `load_rows`, `handler_1`, `PageLayout`, `handler_2`, `TeamsPage`, `handler_3`, "
        )),
        "{line}"
    );
    assert!(!line.contains("`handler_399`"), "{line}");
}
