//! Snapshot of the Claude Code importer on a small hand-written session
//! (tests/fixtures/wire/claude_code_session.jsonl) that has every case the importer handles:
//! skipped line types, an `isMeta` prompt, thinking, a response whose parallel calls interleave
//! with their results, a sidechain line, a manual compaction with its summary, a tool result
//! followed by user text on one line, and a `<synthetic>` response.

use ctxkit_core::import::import_claude_code;
use ctxkit_core::wire::{from_anthropic, to_anthropic};

#[test]
fn small_session() {
    let path = ctxkit_tests::fixtures_dir().join("wire/claude_code_session.jsonl");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    let session = import_claude_code(&text).unwrap_or_else(|error| panic!("{error}"));
    let request = to_anthropic(&session.messages).unwrap();
    assert_eq!(from_anthropic(&request).unwrap(), session.messages);
    insta::assert_json_snapshot!("claude_code_session", session);
}
