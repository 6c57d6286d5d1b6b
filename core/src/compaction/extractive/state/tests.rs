use super::*;
use crate::model::ToolCall;

fn call(id: &str, name: &str, arguments: &str) -> Message {
    Message::assistant("", vec![ToolCall::new(id, name, arguments)])
}

#[test]
fn each_file_once_with_its_actions_and_last_outcome() {
    let log = [
        call("1", "Read", r#"{"file_path":"/w/p/src/a.rs"}"#),
        Message::tool_result("1", "1 fn a() {}", false),
        call(
            "2",
            "Edit",
            r#"{"file_path":"/w/p/src/a.rs","old_string":"a","new_string":"b"}"#,
        ),
        Message::tool_result("2", "ok", false),
        call(
            "3",
            "str_replace_editor",
            r#"{"command":"str_replace","path":"src/a.rs"}"#,
        ),
        Message::tool_result(
            "3",
            "Exit code 1\nerror: old_str not found in src/a.rs",
            true,
        ),
        call(
            "4",
            "apply_patch",
            r#"{"input":"*** Begin Patch\n*** Add File: /w/p/b.md\n+hi\n*** End Patch"}"#,
        ),
        Message::tool_result("4", "Done", false),
        call(
            "5",
            "Bash",
            r#"{"command":"cd /w/p && rm -f b.md && cargo test"}"#,
        ),
        Message::tool_result("5", "test result: ok", false),
        call("6", "shell", r#"{"command":["bash","-lc","cargo test"]}"#),
        Message::tool_result(
            "6",
            "Exit code 101\nthread 'main' panicked at src/a.rs:3",
            true,
        ),
        call("7", "Grep", r#"{"pattern":"fn a"}"#),
        Message::tool_result("7", "src/a.rs", false),
    ];
    let mut state = State::default();
    state.gather(&log, Some("/w/p"));
    assert_eq!(
        state.files_section(&["docs/x.md".to_owned()], 4000, |_| true),
        "- `b.md`: created, deleted → ok\n\
         - `src/a.rs`: read, edited ×2 → failed: error: old_str not found in src/a.rs\n\
         - `docs/x.md`"
    );
    assert_eq!(
        state.commands_section(4000),
        "- `cargo test` → failed: thread 'main' panicked at src/a.rs:3\n\
         - `rm -f b.md && cargo test` → passed"
    );
    assert!(!is_state_call("Grep", r#"{"pattern":"fn a"}"#));
    assert!(nonzero_exit("x\n[The command completed with exit code 2.]"));
    assert!(!nonzero_exit("[The command completed with exit code 0.]"));
    // Codex's apply_patch takes the patch itself, not JSON.
    assert!(is_state_call(
        "apply_patch",
        "*** Begin Patch\n*** Add File: run.sh\n+x\n*** End Patch"
    ));
}

#[test]
fn a_previous_summary_s_entries_are_updated_not_repeated() {
    let previous_files = "- `src/a.rs`: read ×2, edited → ok\n- `old.rs`: read → ok";
    let previous_commands = "- `cargo test` ×2 → failed: error: boom";
    let mut state = State::from_previous(Some(previous_files), Some(previous_commands));
    state.gather(
        &[
            call(
                "1",
                "Edit",
                r#"{"file_path":"src/a.rs","old_string":"a","new_string":"b"}"#,
            ),
            Message::tool_result("1", "ok", false),
            call("2", "bash", r#"{"command":"cargo test"}"#),
            Message::tool_result("2", "ok", false),
        ],
        None,
    );
    assert_eq!(
        state.files_section(&[], 4000, |_| false),
        "- `src/a.rs`: read ×2, edited ×2 → ok\n- `old.rs`: read → ok"
    );
    assert_eq!(state.commands_section(4000), "- `cargo test` ×3 → passed");
    // Over the cap the oldest go first, whole, and are counted; a kept one stays bare.
    assert_eq!(
        state.files_section(&[], 50, |path| path == "old.rs"),
        "- `src/a.rs`: read ×2, edited ×2 → ok\n- `old.rs`"
    );
    assert_eq!(
        state.files_section(&[], 30, |path| path == "old.rs"),
        "- `old.rs`\n[1 older files cut; the log keeps them]"
    );
}

#[test]
fn entries_are_rebased_when_the_working_directory_moves_up() {
    let mut state =
        State::from_previous(Some("- `a.ex`: read → ok\n- `/w/p/b.md`: read → ok"), None);
    state.rebase("/w/p/lib", Some("/w/p"));
    assert_eq!(
        state.files_section(&[], 4000, |_| false),
        "- `lib/a.ex`: read → ok\n- `b.md`: read → ok"
    );
}
