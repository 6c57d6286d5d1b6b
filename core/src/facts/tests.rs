//! One test per shape, with arguments as the corpus's agents write them.

use super::*;

fn files(tool: &str, arguments: &str) -> Vec<(String, FileAction)> {
    match call_shape(tool, arguments) {
        Some(CallShape::Files(files)) => files,
        other => panic!("{tool} {arguments}: {other:?}"),
    }
}

fn one(path: &str, action: FileAction) -> Vec<(String, FileAction)> {
    vec![(path.to_owned(), action)]
}

#[test]
fn codex_shell_argv_is_its_script_in_its_workdir() {
    let shape = call_shape(
        "shell",
        r#"{"command":["bash","-lc","rg \"TeamSheet\" -n apps"],"workdir":"/u/repo","timeout_ms":120000}"#,
    );
    let Some(CallShape::Command {
        command, removed, ..
    }) = shape
    else {
        panic!("{shape:?}")
    };
    assert_eq!(command.script, r#"rg "TeamSheet" -n apps"#);
    assert_eq!(command.workdir.as_deref(), Some("/u/repo"));
    assert!(removed.is_empty());
    // An argv that is not `sh -c SCRIPT` is its words.
    let Some(CallShape::Command { command, .. }) =
        call_shape("exec", r#"{"cmd":["git","status","--short"]}"#)
    else {
        panic!()
    };
    assert_eq!(command.script, "git status --short");
}

#[test]
fn apply_patch_bodies_are_edits_of_their_paths_wherever_they_are() {
    let body = "*** Begin Patch\n*** Update File: apps/x/src/app/(protected)/settings/teams/page.tsx\n@@\n-a\n+b\n*** Add File: apps/x/src/app/api/teams/[id]/route.ts\n+x\n*** Delete File: old.ts\n*** End Patch";
    let expected = vec![
        (
            "apps/x/src/app/(protected)/settings/teams/page.tsx".to_owned(),
            FileAction::Edited,
        ),
        (
            "apps/x/src/app/api/teams/[id]/route.ts".to_owned(),
            FileAction::Created,
        ),
        ("old.ts".to_owned(), FileAction::Deleted),
    ];
    // As its own tool, raw (Codex's custom tool) or as JSON, under any name.
    assert_eq!(files("apply_patch", body), expected);
    let json = serde_json::json!({ "input": body }).to_string();
    assert_eq!(files("whatever", &json), expected);
    // Inside a shell's heredoc, relative to the call's workdir.
    let heredoc = format!("apply_patch <<'PATCH'\n{body}\nPATCH");
    let shell = serde_json::json!({"command": ["bash", "-lc", heredoc], "workdir": "/u/repo"});
    let joined: Vec<(String, FileAction)> = expected
        .iter()
        .map(|(path, action)| (format!("/u/repo/{path}"), *action))
        .collect();
    assert_eq!(files("shell", &shell.to_string()), joined);
    // `workdir: "."` adds nothing.
    let here = serde_json::json!({"command": ["bash", "-lc", heredoc], "workdir": "."});
    assert_eq!(files("shell", &here.to_string()), expected);
}

#[test]
fn unified_diff_headers_name_the_files() {
    let diff = "--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1 +1 @@\n-x\n+y\n--- /dev/null\n+++ b/src/new.rs\n--- a/gone.rs\n+++ /dev/null\n";
    assert_eq!(
        files("any", &serde_json::json!({ "patch": diff }).to_string()),
        vec![
            ("src/a.rs".to_owned(), FileAction::Edited),
            ("src/new.rs".to_owned(), FileAction::Created),
            ("gone.rs".to_owned(), FileAction::Deleted),
        ]
    );
    // A `+++` line alone (prose, a list) is no diff.
    assert!(!is_patch("+++ b/src/a.rs"));
}

#[test]
fn pi_tools_are_read_by_their_arguments() {
    assert_eq!(
        files("read", r#"{"path":"src/a.ts","offset":10,"limit":40}"#),
        one("src/a.ts", FileAction::Read)
    );
    assert_eq!(
        files("write", r#"{"path":"notes.md","content":"x"}"#),
        one("notes.md", FileAction::Written)
    );
    assert_eq!(
        files(
            "edit",
            r#"{"path":"src/a.ts","edits":[{"oldText":"a","newText":"b"}]}"#
        ),
        one("src/a.ts", FileAction::Edited)
    );
    assert!(matches!(
        call_shape("bash", r#"{"command":"npm test","timeout":60}"#),
        Some(CallShape::Command { .. })
    ));
}

#[test]
fn framework_tools_with_their_own_names_are_read_by_shape() {
    assert_eq!(
        files(
            "save_note",
            r##"{"target_file":"docs/plan.md","contents":"# Plan"}"##
        ),
        one("docs/plan.md", FileAction::Written)
    );
    assert_eq!(
        files(
            "patch_source",
            r#"{"filename":"lib/a.py","old":"x","replacement":"y"}"#
        ),
        one("lib/a.py", FileAction::Edited)
    );
    assert_eq!(
        files(
            "edit_file",
            r#"{"path":"src/cli.rs","old":"List {","new":"List { json: bool,"}"#
        ),
        one("src/cli.rs", FileAction::Edited)
    );
    assert_eq!(
        files(
            "str_replace_editor",
            r#"{"command":"create","path":"/w/p/a.py","file_text":"x"}"#
        ),
        one("/w/p/a.py", FileAction::Created)
    );
    assert_eq!(
        files(
            "str_replace_editor",
            r#"{"command":"str_replace","path":"a.py"}"#
        ),
        one("a.py", FileAction::Edited)
    );
    assert_eq!(
        files("str_replace_editor", r#"{"command":"view","path":"/w/p"}"#),
        one("/w/p", FileAction::Read)
    );
    assert_eq!(
        files("fs.deleteFile", r#"{"path":"tmp/x.log"}"#),
        one("tmp/x.log", FileAction::Deleted)
    );
    assert_eq!(
        files("create", r#"{"filename":"reproduce.py"}"#),
        one("reproduce.py", FileAction::Created)
    );
    // A search or a listing names where it looks, not a file it read.
    assert_eq!(
        call_shape("Grep", r#"{"pattern":"fn a","path":"src"}"#),
        None
    );
    assert_eq!(
        call_shape("find_in_docs", r#"{"query":"x","file":"a.md"}"#),
        None
    );
    assert_eq!(call_shape("list_dir", r#"{"path":"src/lib.rs"}"#), None);
    assert_eq!(call_shape("LS", r#"{"path":"/w/p/src"}"#), None);
    // A path alone to a folder is no read; arguments without a path say nothing.
    assert_eq!(call_shape("inspect", r#"{"path":"/w/p/src"}"#), None);
    assert_eq!(call_shape("run_query", r#"{"sql":"select 1"}"#), None);
    assert_eq!(call_shape("x", "not json"), None);
}

#[test]
fn a_command_that_only_prints_files_reads_them() {
    assert_eq!(
        read_paths("sed -n '1,200p' 'apps/x/src/app/(protected)/settings/teams/page.tsx'"),
        vec!["apps/x/src/app/(protected)/settings/teams/page.tsx"]
    );
    assert_eq!(read_paths("cat a.rs b.rs"), vec!["a.rs", "b.rs"]);
    assert_eq!(read_paths("head -n 40 src/lib.rs"), vec!["src/lib.rs"]);
    // Anything more is a command: a pipe, a redirection, a writing sed, a glob.
    assert_eq!(
        read_paths("nl -ba 'app/(group)/page.tsx' | sed -n '40,80p'"),
        vec!["app/(group)/page.tsx"]
    );
    assert!(read_paths("cat a.rs | grep x").is_empty());
    assert!(read_paths("cat a.rs | head -n 5 b.rs").is_empty());
    assert!(read_paths("sed -i 's/a/b/' a.rs").is_empty());
    assert!(read_paths("cat a.rs > b.rs").is_empty());
    assert!(read_paths("cat src/*.rs").is_empty());
    assert_eq!(
        removed_paths("cd x && rm -rf build dist/ && ls"),
        vec!["build", "dist/"]
    );
}

#[test]
fn paths_with_bracketed_folders_stay_whole() {
    assert_eq!(
        paths_in_text("M apps/x/src/app/(protected)/settings/teams/hooks/useTeam.ts (edited)"),
        vec!["apps/x/src/app/(protected)/settings/teams/hooks/useTeam.ts"]
    );
    assert_eq!(
        paths_in_text("see (src/app/[id]/page.tsx), pages/[...slug].tsx and app/[[...opt]]/a.ts:"),
        vec![
            "src/app/[id]/page.tsx",
            "pages/[...slug].tsx",
            "app/[[...opt]]/a.ts"
        ]
    );
    // Brackets of code are not part of a path.
    assert_eq!(paths_in_text("open(src/a.rs) and x[0]"), vec!["src/a.rs"]);
    assert_eq!(paths_in_text("fn(a/b.rs)"), vec!["a/b.rs"]);
    // What was kept before stays.
    assert_eq!(
        paths_in_text("see `src/main.rs:12` and README.md, v1.2 or https://x.io/a.js"),
        vec!["src/main.rs", "README.md"]
    );
    assert_eq!(
        paths_in_text("Enum.take, Map.get and MapSet.new (e.g. os.path) in lib/x.heex app.js"),
        vec!["lib/x.heex", "app.js"]
    );
    assert_eq!(
        paths_in_text("<uploaded_files> /workspace/p </uploaded_files> <f>/a/b.rs</f>"),
        vec!["/workspace/p", "/a/b.rs"]
    );
}

#[test]
fn paths_come_from_path_keys_and_commands() {
    assert_eq!(
        file_paths_in_arguments(r#"{"file_path":"/home/u/app/lib/a.ex","limit":20}"#),
        vec!["/home/u/app/lib/a.ex"]
    );
    assert_eq!(
        file_paths_in_arguments(
            r#"{"command":"cd app && mix test test/a_test.exs 2>&1 | tail -5"}"#
        ),
        vec!["test/a_test.exs"]
    );
    assert_eq!(
        file_paths_in_arguments(r#"{"paths":["src/a.rs","b.md"]}"#),
        vec!["src/a.rs", "b.md"]
    );
    assert!(file_paths_in_arguments("not json").is_empty());
}
