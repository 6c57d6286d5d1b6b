//! `ctxkit view --cache` end to end on the corpus Claude Code session: the Anthropic view
//! carries a `cache_control` marker on the end of the system prompt, of the checkpoint summary,
//! of the previous turn and of the last message (at most four), the request is still valid and
//! is the plain view but for its markers; the note names the breakpoints; an OpenAI view is the
//! same with or without `--cache` (OpenAI caches prefixes by itself).

mod common;

use common::project::{assert_ok, stderr, Project};
use ctxkit::core::wire::validate_anthropic;
use serde_json::Value;

const SESSION: &str = "claude-code_marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl";

/// A project with the corpus session imported as `cc`.
fn imported() -> Project {
    let project = Project::new();
    let file = ctxkit_tests::corpus_dir().join(SESSION);
    let output = project.run(&["import", file.to_str().unwrap(), "--session", "cc"]);
    assert_ok(&output, "import");
    project
}

fn view(project: &Project, extra: &[&str]) -> (Value, String) {
    let mut args = vec!["view", "cc", "--window", "64000"];
    args.extend_from_slice(extra);
    let output = project.run(&args);
    assert_ok(&output, &format!("view {extra:?}"));
    (
        serde_json::from_slice(&output.stdout).unwrap(),
        stderr(&output),
    )
}

/// Every content block of an Anthropic request, string content as one text block; the markers
/// taken out, and the indices of the blocks that had one.
fn unmarked_blocks(request: &Value) -> (Vec<Value>, Vec<usize>) {
    let as_blocks = |content: &Value| match content {
        Value::Array(parts) => parts.clone(),
        Value::String(text) => vec![serde_json::json!({"type": "text", "text": text})],
        _ => Vec::new(),
    };
    let mut blocks = as_blocks(&request["system"]);
    for message in request["messages"].as_array().unwrap() {
        blocks.extend(as_blocks(&message["content"]));
    }
    let mut marked = Vec::new();
    for (index, block) in blocks.iter_mut().enumerate() {
        if let Some(marker) = block.as_object_mut().unwrap().remove("cache_control") {
            assert_eq!(marker, serde_json::json!({"type": "ephemeral"}));
            marked.push(index);
        }
    }
    (blocks, marked)
}

#[test]
fn an_anthropic_view_with_cache_marks_its_four_breakpoints() {
    let project = imported();
    let (cached, note) = view(&project, &["--format", "anthropic", "--cache"]);
    let (plain, plain_note) = view(&project, &["--format", "anthropic"]);
    assert_eq!(validate_anthropic(&cached), Vec::new());
    let (cached_blocks, marked) = unmarked_blocks(&cached);
    let (plain_blocks, unmarked) = unmarked_blocks(&plain);
    assert!(unmarked.is_empty(), "a plain view carries no marker");
    assert_eq!(
        cached_blocks, plain_blocks,
        "the markers are the only change"
    );
    // The session compacted at 64k: a summary, so all four places have a breakpoint.
    assert!(
        note.contains("tier summarized") || note.contains("compacted"),
        "{note}"
    );
    assert_eq!(marked.len(), 4, "{note}");
    assert_eq!(marked[0], 0, "the system prompt's (only) block first");
    assert!(
        note.contains("cache breakpoints: system prompt, summary (after message 1), previous turn (after message "),
        "{note}"
    );
    assert!(note.contains("last message (after message "), "{note}");
    assert!(!plain_note.contains("cache breakpoints"), "{plain_note}");
}

#[test]
fn an_openai_view_is_the_same_with_or_without_cache() {
    let project = imported();
    let (cached, note) = view(&project, &["--cache"]);
    let (plain, _) = view(&project, &[]);
    assert_eq!(cached, plain);
    assert!(note.contains("cache breakpoints: system prompt"), "{note}");
}
