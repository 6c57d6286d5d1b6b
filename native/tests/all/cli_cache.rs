//! `ctxkit view --cache` end to end on the corpus Claude Code session: the Anthropic view
//! carries a `cache_control` marker on the end of the system prompt, of the checkpoint summary,
//! of the previous turn and of the last message (at most four), the request is still valid and
//! is the plain view but for its markers; the note names the breakpoints. A Responses or Chat
//! Completions view with `--cache` carries OpenAI's `prompt_cache_breakpoint` (GPT-5.6 and
//! later) on input parts only, at most four, each ending at least 1,024 tokens, valid, and the
//! plain view but for its markers.

use crate::common::project::{assert_ok, stderr, Project};
use ctxkit::core::tokens::{estimate_text, ModelFamily};
use ctxkit::core::wire::{validate_anthropic, validate_openai, validate_responses};
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

/// The parts of a Responses request (`input` items' `content` and `output`) or of a Chat
/// request (messages' `content`) with OpenAI's marker taken out, a marked part's one-part
/// array back to the string it was, and where the markers were: (item, part type, the
/// request's text up to and including that part).
fn unmarked_openai(request: &Value) -> (Value, Vec<(usize, String, String)>) {
    let mut request = request.clone();
    let mut text_so_far = request["instructions"].as_str().unwrap_or("").to_owned();
    let mut marked = Vec::new();
    let items = match request.get_mut("input") {
        // (`request["instructions"]` was read above; the object is reshaped below.)
        Some(items) => items.as_array_mut().unwrap(),
        None => request.as_array_mut().unwrap(),
    };
    for (index, item) in items.iter_mut().enumerate() {
        for key in ["content", "output", "arguments"] {
            match item.get_mut(key) {
                Some(Value::String(text)) => text_so_far.push_str(text),
                Some(Value::Array(parts)) => {
                    let mut was_marked = false;
                    for part in parts.iter_mut() {
                        text_so_far.push_str(part["text"].as_str().unwrap_or(""));
                        let fields = part.as_object_mut().unwrap();
                        if let Some(marker) = fields.remove("prompt_cache_breakpoint") {
                            assert_eq!(marker, serde_json::json!({"mode": "explicit"}));
                            let kind = fields["type"].as_str().unwrap().to_owned();
                            marked.push((index, kind, text_so_far.clone()));
                            was_marked = true;
                        }
                    }
                    if was_marked && parts.len() == 1 {
                        if let Some(text) = parts[0].get("text").cloned() {
                            item[key] = text;
                        }
                    }
                }
                _ => {}
            }
        }
    }
    // A marked system prompt is a leading system message instead of `instructions`.
    if let Some(items) = request.get_mut("input").and_then(Value::as_array_mut) {
        if items[0]["role"] == "system" && items[0]["content"].is_string() {
            let system = items.remove(0);
            request["instructions"] = system["content"].clone();
        }
    }
    (request, marked)
}

#[test]
fn a_responses_view_with_cache_marks_input_parts_within_openais_rules() {
    let project = imported();
    let (cached, note) = view(&project, &["--format", "responses", "--cache"]);
    let (plain, _) = view(&project, &["--format", "responses"]);
    assert_eq!(validate_responses(&cached), Vec::new());
    let (unmarked, marked) = unmarked_openai(&cached);
    let (_, none) = unmarked_openai(&plain);
    assert!(none.is_empty(), "a plain view carries no marker");
    assert!((2..=4).contains(&marked.len()), "{marked:?} {note}");
    for (index, kind, prefix) in &marked {
        assert!(["input_text", "input_image", "input_file"].contains(&kind.as_str()));
        let item = &cached["input"][index];
        assert_ne!(item["role"], "assistant", "{item}");
        assert!(
            estimate_text(prefix, ModelFamily::OpenAi) >= 1_024,
            "a breakpoint ends {} tokens",
            estimate_text(prefix, ModelFamily::OpenAi)
        );
    }
    assert_eq!(unmarked, plain, "the markers are the only change");
    assert!(note.contains("cache breakpoints: system prompt"), "{note}");
}

#[test]
fn a_chat_completions_view_with_cache_marks_non_assistant_parts() {
    let project = imported();
    let (cached, _) = view(&project, &["--cache"]);
    let (plain, _) = view(&project, &[]);
    assert_eq!(validate_openai(&cached), Vec::new());
    let (unmarked, marked) = unmarked_openai(&cached);
    assert!((2..=4).contains(&marked.len()), "{marked:?}");
    for (index, kind, _) in &marked {
        assert!(["text", "image_url", "file"].contains(&kind.as_str()));
        assert_ne!(cached[index]["role"], "assistant");
    }
    assert_eq!(unmarked, plain, "the markers are the only change");
}
