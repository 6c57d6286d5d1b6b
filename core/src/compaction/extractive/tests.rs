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
                r#"{"path":"src/parser.rs"}"#,
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
    // The assistant's identifier is mentioned, not pinned (only the user's are).
    assert!(
        merged.contains("Identifiers in use (most used first): `parser_tests`"),
        "{merged}"
    );
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
