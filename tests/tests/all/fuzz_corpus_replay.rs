//! Replays every committed fuzz corpus file (`fuzz/corpus/<target>/*`) through the check its
//! fuzz target runs (`ctxkit_fuzz_checks::TARGETS`), on stable Rust: the findings the fuzzers
//! made stay fixed in CI, which never runs the fuzzers themselves (see docs/reliability.md).

use std::fs;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use ctxkit_fuzz_checks::TARGETS;
use ctxkit_tests::project_root;

#[test]
fn every_corpus_file_passes_its_targets_checks() {
    let corpus = project_root().join("fuzz/corpus");
    let mut failures = Vec::new();
    let mut replayed = 0;
    for (target, check) in TARGETS {
        let dir = corpus.join(target);
        let files = corpus_files(&dir);
        assert!(
            !files.is_empty(),
            "{}: no corpus for the fuzz target {target} (run scripts/fuzz.sh and commit the minimized corpus)",
            dir.display()
        );
        for file in files {
            let data =
                fs::read(&file).unwrap_or_else(|error| panic!("{}: {error}", file.display()));
            if let Err(panic) = catch_unwind(AssertUnwindSafe(|| check(&data))) {
                let message = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_default();
                failures.push(format!("{target}: {}: {message}", file.display()));
            }
            replayed += 1;
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {replayed} corpus files fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_corpus_folder_is_a_target() {
    let corpus = project_root().join("fuzz/corpus");
    let entries =
        fs::read_dir(&corpus).unwrap_or_else(|error| panic!("{}: {error}", corpus.display()));
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        assert!(
            TARGETS.iter().any(|(target, _)| *target == name),
            "{}: a corpus folder with no fuzz target in ctxkit_fuzz_checks::TARGETS",
            entry.path().display()
        );
    }
}

/// The files of a corpus folder, sorted (none if the folder is missing).
fn corpus_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|entry| entry.path())
                .filter(|path| path.is_file())
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}
