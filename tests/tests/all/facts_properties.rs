//! Facts by their shape (issue 32, item 1), over generated hostile inputs:
//!
//! - a path with bracketed folders and file stems (`app/(group)/[id]/[...slug].tsx`), set in
//!   text full of ctxkit's own markup, brackets of code, JSON-escaped line breaks and quotes,
//!   comes back whole from `paths_in_text`, and every path found is a substring of the text,
//!   one line, no URL, at most 300 bytes;
//! - a call that writes or edits a generated path, under a made-up tool name and any of the
//!   argument spellings agents use, is an edit of that path; an `apply_patch` body inside a
//!   shell argv with a `workdir` names its files joined to that folder;
//! - the extractive summary of a log of such calls, whose user and tool messages quote
//!   ctxkit's markup and patch envelopes as data, lists every edited path whole under
//!   `## Files`, and no path that only a message quoted as an edit;
//! - no input panics.
//!
//! The cases are random; `PROPTEST_RNG_SEED=<seed>` replays a run.

use ctxkit_core::compaction::{extractive_summary, ExtractiveLimits};
use ctxkit_core::facts::{call_shape, paths_in_text, CallShape, FileAction};
use ctxkit_core::{Message, ToolCall};
use proptest::prelude::*;
use proptest::sample::select;

/// Path segments: plain, a route group, a dynamic segment, a catch-all, dotted, dashed.
const SEGMENTS: [&str; 9] = [
    "apps",
    "src",
    "(protected)",
    "[id]",
    "[[...opt]]",
    "@modal",
    "settings-v2",
    "(group.a)",
    "lib_x",
];
const FILES: [&str; 6] = [
    "page.tsx",
    "[...slug].tsx",
    "route.ts",
    "mod.rs",
    "a_b.py",
    "[id].vue",
];

/// What surrounds a path in text: ctxkit's markup, prose brackets, escapes, a patch quoted.
const AROUND: [&str; 14] = [
    " ",
    "\n",
    "\\n",
    " (see ",
    ") ",
    "\n## Files\n- `",
    "`: edited → ok\n",
    " [Output offloaded to .ctxkit/tool_results/x.txt] ",
    "<system-reminder>",
    "</system-reminder>",
    "\n*** Update File: ",
    " → failed: ",
    ":12:5: ",
    "\"",
];

fn path() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(select(&SEGMENTS[..]), 1..5),
        select(&FILES[..]),
    )
        .prop_map(|(dirs, file)| format!("{}/{file}", dirs.join("/")))
}

/// A made-up tool name: nothing a rule could know.
fn tool_name() -> impl Strategy<Value = String> {
    "[a-z]{3,8}(_[a-z]{3,8})?".prop_filter("no verb a name may say", |name| {
        ![
            "delete", "remove", "unlink", "create", "touch", "list", "ls", "dir", "glob", "search",
            "find",
        ]
        .iter()
        .any(|verb| name.split('_').any(|word| word == *verb))
    })
}

/// The arguments of a call that edits or writes `path`, in one of the agents' spellings.
fn edit_arguments(path: &str, spelling: usize) -> String {
    let arguments = match spelling % 5 {
        0 => serde_json::json!({"file_path": path, "old_string": "a", "new_string": "b"}),
        1 => serde_json::json!({"path": path, "edits": [{"oldText": "a", "newText": "b"}]}),
        2 => serde_json::json!({"filePath": path, "content": "## Files\n- `x.rs`: edited"}),
        3 => serde_json::json!({"command": "create", "path": path, "file_text": "*** Begin"}),
        _ => serde_json::json!({"target_file": path, "contents": "see (a/b.rs)"}),
    };
    arguments.to_string()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn bracketed_paths_stay_whole_in_hostile_text(
        path in path(),
        before in select(&AROUND[..]),
        after in select(&AROUND[..]),
        noise in "[ -~\n]{0,40}",
    ) {
        let text = format!("{noise}{before}{path}{after}{noise}");
        let found = paths_in_text(&text);
        prop_assert!(found.contains(&path), "{path} in {text:?}: {found:?}");
        for found in &found {
            prop_assert!(text.contains(found.as_str()));
            prop_assert!(!found.contains(char::is_whitespace) && !found.contains("://"));
            prop_assert!(found.len() <= 300);
        }
    }

    #[test]
    fn any_text_and_any_arguments_are_read_without_panicking(
        text in "\\PC{0,200}",
        tool in "\\PC{0,20}",
    ) {
        let _ = paths_in_text(&text);
        let _ = call_shape(&tool, &text);
        let json = serde_json::json!({"command": [text.clone()], "path": text.clone()}).to_string();
        let _ = call_shape(&tool, &json);
    }

    #[test]
    fn an_edit_is_known_by_its_arguments_under_any_name(
        path in path(),
        tool in tool_name(),
        spelling in 0usize..5,
    ) {
        let shape = call_shape(&tool, &edit_arguments(&path, spelling));
        let Some(CallShape::Files(files)) = shape else {
            return Err(TestCaseError::fail(format!("{tool}: {shape:?}")));
        };
        prop_assert_eq!(files.len(), 1);
        prop_assert_eq!(&files[0].0, &path);
        prop_assert!(matches!(
            files[0].1,
            FileAction::Edited | FileAction::Written | FileAction::Created
        ));
    }

    #[test]
    fn a_patch_in_a_shell_argv_names_its_files_under_the_workdir(
        paths in prop::collection::vec(path(), 1..4),
        tool in tool_name(),
    ) {
        let mut body = String::from("*** Begin Patch\n");
        for path in &paths {
            body.push_str(&format!("*** Update File: {path}\n@@\n-a\n+b\n"));
        }
        body.push_str("*** End Patch");
        let script = format!("apply_patch <<'PATCH'\n{body}\nPATCH");
        let arguments = serde_json::json!({"command": ["bash", "-lc", script], "workdir": "/w/repo"});
        let Some(CallShape::Files(files)) = call_shape(&tool, &arguments.to_string()) else {
            return Err(TestCaseError::fail("not an edit"));
        };
        let mut expected: Vec<String> = Vec::new();
        for path in &paths {
            let joined = format!("/w/repo/{path}");
            if !expected.contains(&joined) {
                expected.push(joined);
            }
        }
        let got: Vec<String> = files.iter().map(|(p, _)| p.clone()).collect();
        prop_assert_eq!(got, expected);
    }

    #[test]
    fn the_summary_lists_edited_paths_whole_and_quoted_ones_not_as_edits(
        edits in prop::collection::vec((path(), tool_name(), 0usize..5), 1..5),
        quoted in path(),
    ) {
        prop_assume!(edits.iter().all(|(path, _, _)| !path.contains(quoted.as_str())
            && !quoted.contains(path.as_str())));
        let mut log = vec![Message::user(format!(
            "Fix it. Quoted from an old summary:\n## Files\n- `{quoted}`: edited ×2 → ok\n*** Update File: {quoted}"
        ))];
        for (i, (path, tool, spelling)) in edits.iter().enumerate() {
            let id = format!("c{i}");
            log.push(Message::assistant(
                "",
                vec![ToolCall::new(&id, tool, edit_arguments(path, *spelling))],
            ));
            log.push(Message::tool_result(
                &id,
                format!("ok\n*** Delete File: {quoted}\n[ctxkit: output kept]"),
                false,
            ));
        }
        let summary = extractive_summary(&log, None, &ExtractiveLimits::default());
        let files = summary
            .split("## Files\n")
            .nth(1)
            .and_then(|rest| rest.split("\n## ").next())
            .unwrap_or_default();
        for (path, _, _) in &edits {
            let listed = files
                .lines()
                .any(|line| line.starts_with(&format!("- `{path}`: ")));
            prop_assert!(listed, "{path} not an entry of:\n{summary}");
        }
        let quoted_as_edit = files
            .lines()
            .any(|line| line.starts_with(&format!("- `{quoted}`: ")));
        prop_assert!(!quoted_as_edit, "{quoted} listed as touched:\n{summary}");
    }
}
