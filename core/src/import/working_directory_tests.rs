//! The working directory each reader takes from a transcript's own records
//! ([`ImportedSession::working_directory`]): pi's header, Claude Code's per-line `cwd`,
//! Codex's `session_meta` and `turn_context`; the first one named, and only a directory a
//! summary can state.

use super::*;

fn only_session(text: &str, format: TranscriptFormat) -> ImportedSession {
    let mut imported = import_transcript(text, Some(format)).unwrap();
    assert_eq!(imported.sessions.len(), 1);
    imported.sessions.remove(0)
}

#[test]
fn pi_takes_the_header_cwd() {
    let pi = [
        r#"{"type":"session","version":3,"id":"s","cwd":"/home/u/app"}"#,
        r#"{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":[{"type":"text","text":"hi"}]}}"#,
    ]
    .join("\n");
    let session = only_session(&pi, TranscriptFormat::Pi);
    assert_eq!(session.working_directory.as_deref(), Some("/home/u/app"));
}

#[test]
fn claude_code_takes_the_first_conversation_line_cwd_of_each_conversation() {
    let line = |kind: &str, cwd: &str, side: bool, text: &str| {
        format!(
            r#"{{"type":"{kind}","cwd":"{cwd}","isSidechain":{side},"message":{{"role":"user","content":"{text}"}}}}"#
        )
    };
    let jsonl = [
        r#"{"type":"file-history-snapshot","cwd":"/not/a/conversation/line"}"#.to_owned(),
        line("user", "/home/u/proj", false, "go"),
        line("user", "/home/u/proj/sub", false, "then this"),
        line("user", "/home/u/side", true, "explore"),
    ]
    .join("\n");
    let imported = import_transcript(&jsonl, Some(TranscriptFormat::ClaudeCode)).unwrap();
    let dirs: Vec<Option<&str>> = imported
        .sessions
        .iter()
        .map(|session| session.working_directory.as_deref())
        .collect();
    assert_eq!(dirs, [Some("/home/u/proj"), Some("/home/u/side")]);
    let bad = r#"{"type":"user","cwd":7,"message":{"content":"go"}}"#;
    let error = import_transcript(bad, Some(TranscriptFormat::ClaudeCode)).unwrap_err();
    assert_eq!(
        error.to_string(),
        "line 1: cwd: expected a string, found a number"
    );
}

#[test]
fn codex_takes_the_session_meta_cwd_else_the_turn_context_one() {
    let meta = r#"{"type":"session_meta","payload":{"id":"r","cwd":"/Users/ada/app"}}"#;
    let context =
        r#"{"type":"turn_context","payload":{"cwd":"/Users/ada/other","model":"gpt-5-codex"}}"#;
    let user = r#"{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}"#;
    let both = only_session(&[meta, context, user].join("\n"), TranscriptFormat::Codex);
    assert_eq!(both.working_directory.as_deref(), Some("/Users/ada/app"));
    let context_only = only_session(&[context, user].join("\n"), TranscriptFormat::Codex);
    assert_eq!(
        context_only.working_directory.as_deref(),
        Some("/Users/ada/other")
    );
    let none = only_session(user, TranscriptFormat::Codex);
    assert_eq!(none.working_directory, None);
}

#[test]
fn a_record_a_summary_could_not_state_is_not_taken() {
    for cwd in ["relative/dir", "/", "/home/u/", "/a\\n## Goal", "/a`b"] {
        let pi = [
            format!(r#"{{"type":"session","version":3,"id":"s","cwd":"{cwd}"}}"#),
            r#"{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":[{"type":"text","text":"hi"}]}}"#.to_owned(),
        ]
        .join("\n");
        let session = only_session(&pi, TranscriptFormat::Pi);
        assert_eq!(session.working_directory, None, "{cwd}");
    }
}

#[test]
fn formats_without_such_records_have_none() {
    let openai = r#"[{"role":"user","content":"hi"}]"#;
    assert_eq!(
        only_session(openai, TranscriptFormat::OpenAi).working_directory,
        None
    );
}
