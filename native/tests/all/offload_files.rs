//! The offload writer through the engine, on real files: model-made ids cannot escape the
//! session folder or collide, previews are bounded even for one 40 KB line, modes are 0700
//! and 0600, and any failure keeps the output in the log with a warning (fail-open).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::common::exchange;
use ctxkit::clock::FixedClock;
use ctxkit::core::offload::is_offload_reference;
use ctxkit::core::{Message, ToolCall};
use ctxkit::{Engine, EngineConfig, Event, WarningKind};

fn engine(dir: &Path) -> Engine {
    let mut engine = Engine::open(dir.join("ctxkit.db"), dir, EngineConfig::default())
        .unwrap()
        .with_clock(FixedClock(1_770_768_000));
    engine.create_session("s1").unwrap();
    engine
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn model_made_ids_stay_inside_the_session_folder_with_bounded_previews() {
    let dir = tempfile::tempdir().unwrap();
    let mut engine = engine(dir.path());
    let multi_line = "line of output\n".repeat(1_000);
    let one_line = "x".repeat(40 * 1024);
    let mut outputs = Vec::new();
    let mut batches = vec![exchange("../../etc/x", multi_line.clone())];
    for turn in 0..3 {
        batches.push(exchange("call_0", format!("turn {turn}\n{multi_line}")));
    }
    batches.push(exchange("call_1", one_line.clone()));
    for batch in batches {
        outputs.push(batch[1].text_content().into_owned());
        let outcome = engine.record("s1", batch).unwrap();
        assert!(
            outcome.recorded[1].offload.is_some(),
            "{:?}",
            outcome.events
        );
        assert!(outcome
            .events
            .iter()
            .any(|event| matches!(event, Event::Offloaded { .. })));
    }

    let folder = dir.path().join(".ctxkit/tool_results/s1");
    let canonical_folder = folder.canonicalize().unwrap();
    let records = engine.store().offloads("s1").unwrap();
    assert_eq!(records.len(), 5);
    let mut names = std::collections::BTreeSet::new();
    for (record, output) in records.iter().zip(&outputs) {
        let path = dir.path().join(&record.relative_path);
        assert_eq!(
            path.canonicalize().unwrap().parent(),
            Some(canonical_folder.as_path())
        );
        assert!(
            Path::new(&record.relative_path)
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_))),
            "{}",
            record.relative_path
        );
        assert_eq!(&std::fs::read_to_string(&path).unwrap(), output);
        assert_eq!(record.bytes, output.len() as u64);
        assert_eq!(mode(&path), 0o600);
        names.insert(record.relative_path.clone());
    }
    assert_eq!(names.len(), 5, "every output has its own file");
    for folder in [".ctxkit", ".ctxkit/tool_results", ".ctxkit/tool_results/s1"] {
        assert_eq!(mode(&dir.path().join(folder)), 0o700, "{folder}");
    }
    assert!(!dir.path().join("etc").exists());

    // The log holds references whose previews are bounded (head 2 KB, tail 512 B).
    let log = engine.export_session("s1").unwrap();
    let references: Vec<_> = log
        .entries
        .iter()
        .filter(|entry| is_offload_reference(&entry.message))
        .collect();
    assert_eq!(references.len(), 5);
    for reference in references {
        let text = reference.message.text_content();
        assert!(text.len() < 3_500, "{} bytes", text.len());
    }
    let view = engine.prepare_turn("s1").unwrap();
    assert_eq!(view.stats.offload_references, 5);
    assert!(!view
        .messages
        .iter()
        .any(|message| message.text_content().contains(&one_line)));
}

fn assert_fail_open(engine: &mut Engine, session: &str, output: &str) {
    let outcome = engine
        .record(session, exchange("call_9", output.to_owned()))
        .unwrap();
    assert!(outcome.recorded[1].offload.is_none());
    assert!(
        outcome.events.iter().any(|event| matches!(
            event,
            Event::Warning {
                kind: WarningKind::OffloadFailed,
                ..
            }
        )),
        "{:?}",
        outcome.events
    );
    let log = engine.export_session(session).unwrap();
    let last = log.entries.last().unwrap();
    assert_eq!(
        last.message.text_content(),
        output,
        "the output stays in the log"
    );
    assert!(engine.store().offloads(session).unwrap().is_empty());
    let view = engine.prepare_turn(session).unwrap();
    assert!(view
        .messages
        .iter()
        .any(|message| message.text_content() == output));
}

#[test]
fn an_unwritable_folder_keeps_the_output_in_the_view() {
    let output = "big output\n".repeat(2_000);

    // A file where the folder should be: fails for every user, root included.
    let dir = tempfile::tempdir().unwrap();
    let mut blocked = engine(dir.path());
    std::fs::create_dir_all(dir.path().join(".ctxkit")).unwrap();
    std::fs::write(dir.path().join(".ctxkit/tool_results"), "not a folder").unwrap();
    assert_fail_open(&mut blocked, "s1", &output);

    // A session folder that is a symlink leading out of the working directory.
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let mut escaping = engine(dir.path());
    std::fs::create_dir_all(dir.path().join(".ctxkit/tool_results")).unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join(".ctxkit/tool_results/s1")).unwrap();
    assert_fail_open(&mut escaping, "s1", &output);
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);

    // A session folder that is a symlink to another folder of the project.
    let dir = tempfile::tempdir().unwrap();
    let mut redirected = engine(dir.path());
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::create_dir_all(dir.path().join(".ctxkit/tool_results")).unwrap();
    std::os::unix::fs::symlink(
        dir.path().join("src"),
        dir.path().join(".ctxkit/tool_results/s1"),
    )
    .unwrap();
    assert_fail_open(&mut redirected, "s1", &output);
    assert_eq!(
        std::fs::read_dir(dir.path().join("src")).unwrap().count(),
        0
    );

    // A read-only folder (skipped when running as root, who can write anyway).
    let dir = tempfile::tempdir().unwrap();
    let mut read_only = engine(dir.path());
    let folder = dir.path().join(".ctxkit/tool_results/s1");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o500)).unwrap();
    let probe = folder.join("probe");
    if std::fs::write(&probe, "x").is_err() {
        assert_fail_open(&mut read_only, "s1", &output);
    } else {
        let _ = std::fs::remove_file(probe);
    }
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o700)).unwrap();
}

#[test]
fn excluded_tools_and_small_outputs_stay_in_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let mut engine = engine(dir.path());
    let big = "y\n".repeat(10_000);
    let outcome = engine
        .record(
            "s1",
            vec![
                Message::assistant("", vec![ToolCall::new("r1", "read_file", "{}")]),
                Message::tool_result("r1", big.clone(), false),
                Message::assistant("", vec![ToolCall::new("b1", "bash", "{}")]),
                Message::tool_result("b1", "small", false),
            ],
        )
        .unwrap();
    assert!(outcome.recorded.iter().all(|r| r.offload.is_none()));
    assert!(outcome.events.is_empty(), "{:?}", outcome.events);
    assert!(!dir.path().join(".ctxkit/tool_results").exists());
    let log = engine.export_session("s1").unwrap();
    assert_eq!(log.entries[1].message.text_content(), big);
}
