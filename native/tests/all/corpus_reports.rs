//! Pins what the measurement commands print for every corpus transcript, so that moving the
//! measurement (the cost simulator, probes, needed-next grading, the report builders) between
//! crates can be checked to leave their outputs byte-identical. Per corpus file of
//! [`corpus_outputs`](super::corpus_outputs)'s list: `cost FILE` at the default window and at
//! 32,000 tokens, `fidelity FILE` at the default window and at 8,000 (where every transcript
//! compacts), each as the report and with `--json`, and `probe FILE --window 8000
//! --max-probes 6` as the report and with `--json` against a fake OpenAI-compatible server on loopback that
//! answers each probe with the conversation it was sent (`cli_probe.rs`'s echo: deterministic,
//! and its answers hold whatever the view holds, so the grading is exercised). Each command is
//! one line of `snapshots/all__corpus_reports__corpus_reports.snap`, in the same table as
//! `corpus_outputs.rs`'s (exit code, then byte length and 64-bit FNV-1a digest of the
//! normalized stdout and stderr), made by the same runner, so the same things are made
//! deterministic the same way (paths, the date, no colours), and the fake server's address,
//! which the probe report names, is replaced by `<SERVER>`.
//!
//! The pin was generated on the code before the measurement moved to `ctxkit-lab`: it records
//! what the CLI printed then. To update it deliberately, run `INSTA_UPDATE=always cargo test
//! -p ctxkit --test all corpus_reports::`, read the diff of the .snap file, and commit it with
//! the change that caused it.

use std::path::Path;

use super::cli_probe::echo_of_the_log;
use super::corpus_outputs::{short, Pin, FILES};
use crate::common::{openai_answer, LoopbackServer, Reply};

/// Probes asked per transcript: enough for every kind to appear on the bigger sessions.
const MAX_PROBES: &str = "6";

/// The windows `cost` and `fidelity` run at: the default (`None`) and one small enough that
/// the transcripts compact in the replay.
const WINDOWS: [(&str, [Option<&str>; 2]); 2] = [
    ("cost", [None, Some("32000")]),
    ("fidelity", [None, Some("8000")]),
];

/// The window of the probe replay: every corpus transcript compacts at it, so each has probes.
const PROBE_WINDOW: &str = "8000";

#[test]
fn report_outputs_on_the_corpus_are_pinned() {
    let corpus = ctxkit_tests::corpus_dir();
    let corpus = corpus
        .canonicalize()
        .unwrap_or_else(|error| panic!("the corpus at {}: {error}", corpus.display()));
    let server =
        LoopbackServer::start(|request, _| Reply::ok(openai_answer(&echo_of_the_log(request))));
    let mut pin = Pin::new(corpus);
    pin.set_env("OPENAI_BASE_URL", &format!("{}/v1", server.base_url));
    pin.set_env("CTXKIT_MODEL", "fake");
    // The probe report names the server, whose port changes from run to run.
    pin.hide(&server.base_url, "<SERVER>");
    for file in FILES {
        let path = pin.file(file);
        assert!(Path::new(&path).is_file(), "missing corpus file {path}");
        let name = short(file);
        for (command, windows) in WINDOWS {
            for window in windows {
                let mut args = vec![command, path.as_str()];
                let mut label = format!("{command} {name}");
                if let Some(window) = window {
                    args.extend(["--window", window]);
                    label.push_str(&format!(" --window {window}"));
                }
                pin.run(&label, &args);
                args.push("--json");
                pin.run(&format!("{label} --json"), &args);
            }
        }
        let probe = [
            "probe",
            &path,
            "--window",
            PROBE_WINDOW,
            "--max-probes",
            MAX_PROBES,
        ];
        let label = format!("probe {name} --window {PROBE_WINDOW} --max-probes {MAX_PROBES}");
        pin.run(&label, &probe);
        pin.run(
            &format!("{label} --json"),
            &[&probe[..], &["--json"]].concat(),
        );
    }
    insta::assert_snapshot!("corpus_reports", pin.table());
}
