//! `ctxkit fidelity` end to end: the corpus Claude Code session replayed at a 64k window
//! through the real binary; every checkpoint's summary keeps every pinned path and request, the
//! JSON and the text report agree, every checkpoint and the transcript's own compaction carry a
//! needed-next figure with the facts not held listed, and bad input is a usage error.

use crate::common::project::BIN;
use std::process::Command;

const SESSION: &str = "claude-code_marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl";

fn fidelity(extra: &[&str]) -> (std::process::Output, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let file = ctxkit_tests::corpus_dir().join(SESSION);
    let output = Command::new(BIN)
        .args(["fidelity", file.to_str().unwrap(), "--window", "64000"])
        .args(extra)
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    (output, dir)
}

#[test]
fn the_corpus_session_keeps_every_pinned_path_and_request() {
    let (output, _dir) = fidelity(&["--json"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let (total, rows) = lines.split_last().unwrap();
    let (anchors, checkpoints): (Vec<_>, Vec<_>) =
        rows.iter().partition(|row| row["method"] == "transcript");
    assert!(checkpoints.len() >= 2, "{stdout}");
    // The session compacted once itself (Claude Code's continuation summary): the anchor.
    assert_eq!(anchors.len(), 1, "{stdout}");
    assert_eq!(total["transcript_compactions"], 1);
    for row in rows {
        let next = &row["needed_next"];
        let (needed, held) = (
            next["needed"].as_u64().unwrap(),
            next["held"].as_u64().unwrap(),
        );
        assert!(held <= needed, "{row}");
        assert_eq!(
            next["missed"].as_array().unwrap().len() as u64,
            needed - held,
            "{row}"
        );
    }
    assert!(
        total["needed_next"]["needed"].as_u64().unwrap() > 0,
        "{total}"
    );
    assert_eq!(total["checkpoints"], checkpoints.len());
    for checkpoint in &checkpoints {
        for kind in ["path", "request"] {
            let counts = &checkpoint["kinds"][kind];
            assert!(counts["expected"].as_u64().unwrap() > 0, "{checkpoint}");
            assert_eq!(counts["kept"], counts["expected"], "{kind}: {checkpoint}");
        }
        assert!(
            checkpoint["summary_bytes"].as_u64().unwrap() <= 8_000,
            "{checkpoint}"
        );
    }

    let (text, _dir) = fidelity(&[]);
    let report = String::from_utf8(text.stdout).unwrap();
    let all = report
        .lines()
        .find(|line| line.trim_start().starts_with("all"))
        .unwrap();
    let paths = &total["kinds"]["path"];
    assert!(
        all.contains(&format!("{}/{}", paths["kept"], paths["expected"])),
        "{report}"
    );
    let next = &total["needed_next"];
    assert!(report.contains("needed next"), "{report}");
    assert!(
        all.contains(&format!("{}/{}", next["held"], next["needed"])),
        "{report}"
    );
    assert!(report.contains("transcript"), "{report}");
}

#[test]
fn a_missing_file_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(BIN)
        .args(["fidelity", "no-such-file.jsonl"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("no-such-file.jsonl"), "{stderr}");
}
