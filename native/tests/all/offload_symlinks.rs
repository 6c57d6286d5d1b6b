//! Symbolic links under the working directory are refused wherever ctxkit opens a folder or a
//! file: a linked `.ctxkit` (before the database is made there), a linked session folder, a
//! linked `tool_results`, and a session folder swapped for a link while appends run. Each is
//! refused naming the path, and nothing is created where the link leads. Reading an offload
//! back goes through the same held folders.

use std::os::unix::fs::symlink;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::common::exchange;
use crate::common::project::{assert_ok, stderr, Project};
use ctxkit::clock::FixedClock;
use ctxkit::{Engine, EngineConfig, Error, Event, WarningKind};

fn engine(dir: &Path) -> Engine {
    let db = dir.join(".ctxkit/ctxkit.db");
    let mut engine = Engine::open(db, dir, EngineConfig::default())
        .unwrap()
        .with_clock(FixedClock(1_770_768_000));
    engine.create_session("s1").unwrap();
    engine
}

fn big_output() -> String {
    "a line of a big output\n".repeat(2_000)
}

/// Everything under `dir`, as relative paths (empty when nothing is there).
fn contents(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            found.push(path.strip_prefix(dir).unwrap().display().to_string());
            if path.is_dir() && !path.is_symlink() {
                pending.push(path);
            }
        }
    }
    found.sort();
    found
}

/// The offload warning of recording one big output, which must have stayed in the log.
fn offload_warning(engine: &mut Engine) -> String {
    let outcome = engine.record("s1", exchange("c1", big_output())).unwrap();
    assert!(outcome.recorded[1].offload.is_none());
    let warnings: Vec<&String> = outcome
        .events
        .iter()
        .filter_map(|event| match event {
            Event::Warning {
                kind: WarningKind::OffloadFailed,
                message,
                ..
            } => Some(message),
            _ => None,
        })
        .collect();
    assert_eq!(warnings.len(), 1, "{:?}", outcome.events);
    let log = engine.export_session("s1").unwrap();
    assert_eq!(
        log.entries.last().unwrap().message.text_content(),
        big_output()
    );
    warnings[0].clone()
}

#[test]
fn a_linked_ctxkit_folder_is_refused_before_the_database_is_made_there() {
    let project = Project::new();
    let outside = tempfile::tempdir().unwrap();
    symlink(outside.path(), project.path().join(".ctxkit")).unwrap();
    let input = project.file("in.json", br#"[{"role":"user","content":"hi"}]"#);

    for args in [
        vec!["import", input.to_str().unwrap(), "--session", "s"],
        vec!["memory", "add", "remember this"],
    ] {
        let output = project.run(&args);
        assert_eq!(
            output.status.code(),
            Some(1),
            "{args:?}: {}",
            stderr(&output)
        );
        let message = stderr(&output);
        let link = project.path().join(".ctxkit");
        assert!(
            message.contains(&format!("{}: a symbolic link", link.display())),
            "{args:?}: {message}"
        );
        assert_eq!(contents(outside.path()), Vec::<String>::new(), "{args:?}");
    }

    // The library refuses the same way, naming the link.
    let error = Engine::open(
        project.path().join(".ctxkit/ctxkit.db"),
        project.path(),
        EngineConfig::default(),
    )
    .unwrap_err();
    assert!(
        matches!(&error, Error::Symlink { path } if path.ends_with(".ctxkit")),
        "{error}"
    );
    assert_eq!(contents(outside.path()), Vec::<String>::new());

    // A read command reads no database through it either (one is there, someone else's).
    std::fs::write(outside.path().join("ctxkit.db"), b"").unwrap();
    let output = project.run(&["sessions"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("a symbolic link"),
        "{}",
        stderr(&output)
    );
    assert_eq!(contents(outside.path()), vec!["ctxkit.db".to_owned()]);
}

#[test]
fn a_linked_ctxkit_folder_is_refused_for_memory_md_and_offloads() {
    // The database elsewhere: only the files under `.ctxkit` meet the link.
    let dir = tempfile::tempdir().unwrap();
    let db_dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let mut engine = Engine::open(
        db_dir.path().join("db"),
        dir.path(),
        EngineConfig::default(),
    )
    .unwrap()
    .with_clock(FixedClock(1_770_768_000));
    engine.create_session("s1").unwrap();
    symlink(outside.path(), dir.path().join(".ctxkit")).unwrap();

    let warning = offload_warning(&mut engine);
    let link = dir.path().canonicalize().unwrap().join(".ctxkit");
    assert!(
        warning.contains(&format!("{}: a symbolic link", link.display())),
        "{warning}"
    );
    let error = engine.write_memory_file().unwrap_err();
    assert!(
        matches!(&error, Error::Symlink { path } if *path == link),
        "{error}"
    );
    assert_eq!(contents(outside.path()), Vec::<String>::new());
}

#[test]
fn a_linked_session_folder_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let mut engine = engine(dir.path());
    std::fs::create_dir_all(dir.path().join(".ctxkit/tool_results")).unwrap();
    let link = dir.path().join(".ctxkit/tool_results/s1");
    symlink(outside.path(), &link).unwrap();

    let warning = offload_warning(&mut engine);
    let canonical = dir.path().canonicalize().unwrap();
    let named = canonical.join(".ctxkit/tool_results/s1");
    assert!(
        warning.contains(&format!("{}: a symbolic link", named.display())),
        "{warning}"
    );
    assert_eq!(contents(outside.path()), Vec::<String>::new());
}

#[test]
fn a_linked_tool_results_folder_gets_no_folder_made_where_it_leads() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let mut engine = engine(dir.path());
    symlink(outside.path(), dir.path().join(".ctxkit/tool_results")).unwrap();

    let warning = offload_warning(&mut engine);
    let named = dir
        .path()
        .canonicalize()
        .unwrap()
        .join(".ctxkit/tool_results");
    assert!(
        warning.contains(&format!("{}: a symbolic link", named.display())),
        "{warning}"
    );
    // Before, the session folder `s1` was made at the link's target, then refused.
    assert_eq!(contents(outside.path()), Vec::<String>::new());
}

#[test]
fn a_session_folder_swapped_for_a_link_during_appends_never_gets_a_file_outside() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let mut engine = engine(dir.path());
    let tool_results = dir.path().join(".ctxkit/tool_results");
    std::fs::create_dir_all(tool_results.join("s1")).unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let stop = Arc::clone(&stop);
        let tool_results = tool_results.clone();
        let outside = outside.path().to_path_buf();
        std::thread::spawn(move || {
            let folder = tool_results.join("s1");
            let link = tool_results.join("s1.link");
            symlink(&outside, &link).unwrap();
            let mut swaps = 0u32;
            while !stop.load(Ordering::Relaxed) {
                // The real folder and a link to the outside trade places atomically
                // (renameat2 RENAME_EXCHANGE), so `s1` always exists and is, by turns, either:
                // the window that path checks followed by a use lost 49 of 717 files to.
                rustix::fs::renameat_with(
                    rustix::fs::CWD,
                    &folder,
                    rustix::fs::CWD,
                    &link,
                    rustix::fs::RenameFlags::EXCHANGE,
                )
                .unwrap();
                swaps += 1;
                std::thread::sleep(std::time::Duration::from_micros(20));
            }
            swaps
        })
    };
    let mut offloaded = 0;
    let mut refused = 0;
    for turn in 0..300 {
        let outcome = engine
            .record("s1", exchange(&format!("c{turn}"), big_output()))
            .unwrap();
        if outcome.recorded[1].offload.is_some() {
            offloaded += 1;
        } else {
            refused += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    assert!(swaps > 0, "the swapper never swapped");
    assert_eq!(contents(outside.path()), Vec::<String>::new());
    // Every offload file is inside `.ctxkit` (in the session folder, or in the folder the
    // swapper parked when a file was made in the held folder while it was moved aside), one
    // per offload the log refers to, each whole.
    let files: Vec<String> = contents(&dir.path().join(".ctxkit"))
        .into_iter()
        .filter(|path| path.ends_with(".txt"))
        .collect();
    assert_eq!(files.len(), offloaded, "{files:?}");
    for file in &files {
        let text = std::fs::read_to_string(dir.path().join(".ctxkit").join(file)).unwrap();
        assert_eq!(text, big_output(), "{file}");
    }
    assert_eq!(engine.store().offloads("s1").unwrap().len(), offloaded);
    assert_eq!(offloaded + refused, 300);
}

#[test]
fn an_offload_is_paged_back_through_the_held_folders() {
    let dir = tempfile::tempdir().unwrap();
    let mut engine = engine(dir.path());
    let output: String = (0..100).map(|n| format!("line {n}\n")).collect();
    let output = output.repeat(30);
    let outcome = engine.record("s1", exchange("c1", output.clone())).unwrap();
    let seq = outcome.recorded[1].seq;
    assert!(outcome.recorded[1].offload.is_some());

    let page = engine.read_offload("s1", seq, 2, 3).unwrap();
    assert_eq!(page.text, "line 2\nline 3\nline 4\n");
    assert_eq!((page.offset, page.lines, page.more), (2, 3, true));
    let last = engine.read_offload("s1", seq, 2_998, 10).unwrap();
    assert_eq!(last.text, "line 98\nline 99\n");
    assert!(!last.more);
    let error = engine.read_offload("s1", 1, 0, 10).unwrap_err();
    assert!(error.to_string().contains("was not offloaded"), "{error}");

    // The session folder swapped for a link to a copy: the read is refused, not led there.
    let folder = dir.path().join(".ctxkit/tool_results/s1");
    let elsewhere = tempfile::tempdir().unwrap();
    let copy = elsewhere.path().join("s1");
    std::fs::rename(&folder, &copy).unwrap();
    symlink(&copy, &folder).unwrap();
    let error = engine.read_offload("s1", seq, 0, 1).unwrap_err();
    assert!(matches!(error, Error::Symlink { .. }), "{error}");
}

#[test]
fn the_cli_still_offloads_into_real_folders() {
    let project = Project::new();
    let output = big_output();
    let messages = serde_json::json!([
        {"role": "user", "content": "run it"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "name": "bash", "arguments": "{}"}]},
        {"role": "tool", "tool_call_id": "c1", "content": output},
    ]);
    let file = project.file("in.json", messages.to_string().as_bytes());
    assert_ok(
        &project.run(&["append", "s", file.to_str().unwrap(), "--create"]),
        "append",
    );
    let folder = project.path().join(".ctxkit/tool_results/s");
    let files: Vec<_> = std::fs::read_dir(&folder).unwrap().collect();
    assert_eq!(files.len(), 1);
}
