//! Pins what the `ctxkit` binary prints for every corpus transcript it can import, so that a
//! refactor (the core's modules moving, the turn protocol rewritten) can be checked to leave
//! the CLI's outputs byte-identical on the corpus. Per corpus file: `import --json`, the plain
//! `import` report (into a second database), then for each of its first 3 sessions `view` in
//! the openai, anthropic and ctxkit formats at windows 32,000 and 200,000 and `stats`, then
//! `replay FILE --window 64000` with `--json` and as the report. Then the built-in `replay`
//! (report and `--json`) and the final `sessions` list. Each command is one line of the
//! snapshot `snapshots/all__corpus_outputs__corpus_outputs.snap`: its exit code, then the byte
//! length and 64-bit FNV-1a digest of its stdout, then the same for its stderr.
//!
//! The pin was generated on the code before the refactor: it records what the CLI printed, not
//! what it should print. To update it deliberately (an intended change of output), run
//! `INSTA_UPDATE=always cargo test -p ctxkit --test all corpus_outputs::` (or `cargo insta
//! test --accept`), read the diff of the .snap file, and commit it with the change that caused it.
//!
//! What is made deterministic, and how:
//! - Paths. The commands run in a fresh project folder whose canonical path is replaced by
//!   `<PROJECT>` in every output (the view's system prompt shows the working directory), and
//!   the corpus folder's canonical path by `<CORPUS>` (`import` and `replay FILE` print the
//!   file's path), before lengths and digests are taken.
//! - The project folder's name. It is `/tmp/ctxkit-corpus-outputs-<12 random lowercase
//!   letters>` rather than a `tempfile` name: the token estimator prices neighbouring character
//!   classes, so a name mixing letters and digits at random would change the system prompt's
//!   estimate, and with it the views' token counts and compaction points, from run to run.
//!   Fixed length and one character class make it cost the same every time. The folder is
//!   under `/tmp` itself, not `$TMPDIR`, so the whole path costs the same on every machine
//!   (`common::steady_dir::SteadyDir`, shared with the tests that compare two runs).
//! - The date. The CLI has no fixed-clock setting: the view's system prompt says
//!   `Current date: YYYY-MM-DD` with today's UTC date. That text (for the date read before and
//!   after each command, in case a run crosses midnight) is replaced by
//!   `Current date: <TODAY>`. Every date has the same length and character classes, so its
//!   token estimate does not depend on the day.
//! - Order. `sessions` lists the most recently updated first, to the wall-clock second, so its
//!   lines are sorted before they are measured.
//! - Sequence. Everything runs in one fixed sequence in one database, so session names
//!   (`replay` picks `replay-<name>`, then `replay-<name>-2`) are the same each run.
//! - No colours (`NO_COLOR=1`, and stdout is a pipe), no LLM summarizer (the CLI's default is
//!   the extractive one; the LLM variables are removed from the environment anyway), no
//!   AGENTS.md and no memories in the fresh project.
//!
//! It runs 119 commands in about 2 s (the longest is the 139-turn replay of the Claude Code
//! session), so every corpus file gets the full set.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::common::project::BIN;
use crate::common::steady_dir::SteadyDir;

/// Every corpus file the CLI imports, relative to the corpus folder.
pub(crate) const FILES: [&str; 8] = [
    "claude-code_marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl",
    "claude-code_marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-a2898e3.jsonl",
    "claude-code_marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-acompact-e1f845.jsonl",
    "tau-bench/gpt-4o-airline.json",
    "swe-agent/marshmallow-1867__function_calling_replace_from_source.traj",
    "swe-agent/pydicom-1458__gpt4_default.traj",
    "openhands/multi_swe_bench_examples_output.jsonl",
    "openhands/runtime_trajs_basic.json",
];

/// Sessions of a multi-session file whose views and stats are pinned.
const SESSIONS_PER_FILE: usize = 3;

/// The windows views are pinned at: one small enough that the bigger sessions compact in the
/// view, and the default.
const VIEW_WINDOWS: [&str; 2] = ["32000", "200000"];

/// The window of `replay FILE`.
const REPLAY_WINDOW: &str = "64000";

/// 64-bit FNV-1a.
fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in bytes {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// Today's UTC date as `YYYY-MM-DD` (the date the CLI's system clock gives), from Howard
/// Hinnant's `civil_from_days`.
fn today_utc() -> String {
    let seconds = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("the clock is after 1970")
        .as_secs();
    let days = i64::try_from(seconds / 86_400).expect("days fit i64");
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// One command's line of the table: its label, exit code, and (length, digest) of its
/// normalized stdout and stderr.
struct Row {
    label: String,
    code: String,
    stdout: (usize, u64),
    stderr: (usize, u64),
}

/// Runs the commands and keeps one row per command.
pub(crate) struct Pin {
    project: SteadyDir,
    corpus: PathBuf,
    rows: Vec<Row>,
    /// Variables set for every command (after the LLM variables are removed).
    env: Vec<(String, String)>,
    /// Texts replaced in every output, with what replaces them (a server's address).
    hidden: Vec<(String, String)>,
}

impl Pin {
    pub(crate) fn new(corpus: PathBuf) -> Pin {
        Pin {
            project: SteadyDir::new("ctxkit-corpus-outputs"),
            corpus,
            rows: Vec::new(),
            env: Vec::new(),
            hidden: Vec::new(),
        }
    }

    /// Replaces `text` by `placeholder` in every output from now on (before the paths are).
    pub(crate) fn hide(&mut self, text: &str, placeholder: &str) {
        self.hidden.push((text.to_owned(), placeholder.to_owned()));
    }

    /// Sets `name` to `value` for every command run from now on.
    pub(crate) fn set_env(&mut self, name: &str, value: &str) {
        self.env.push((name.to_owned(), value.to_owned()));
    }

    /// The table: a header, then one aligned line per command in the order they ran.
    pub(crate) fn table(&self) -> String {
        let width = self
            .rows
            .iter()
            .map(|row| row.label.len())
            .max()
            .unwrap_or(0);
        let mut table = format!(
            "{:<width$}  exit  {:>9} {:<16}  {:>6} {:<16}\n",
            "command", "stdout", "fnv1a64", "stderr", "fnv1a64"
        );
        for row in &self.rows {
            writeln!(
                table,
                "{:<width$}  {:>4}  {:>9} {:016x}  {:>6} {:016x}",
                row.label, row.code, row.stdout.0, row.stdout.1, row.stderr.0, row.stderr.1,
            )
            .unwrap();
        }
        table
    }

    pub(crate) fn file(&self, relative: &str) -> String {
        self.corpus.join(relative).to_str().unwrap().to_owned()
    }

    /// `bytes` with the machine-specific parts replaced (see the module doc).
    fn normalize(&self, bytes: &[u8], dates: &[String]) -> Vec<u8> {
        let mut text = String::from_utf8(bytes.to_vec()).unwrap_or_else(|error| {
            panic!("output is not UTF-8: {error}");
        });
        for (hidden, placeholder) in &self.hidden {
            text = text.replace(hidden, placeholder);
        }
        let project = self.project.path().to_str().unwrap();
        let corpus = self.corpus.to_str().unwrap();
        // The longer path first, in case one holds the other.
        let mut paths = [(project, "<PROJECT>"), (corpus, "<CORPUS>")];
        paths.sort_by_key(|(path, _)| std::cmp::Reverse(path.len()));
        for (path, placeholder) in paths {
            text = text.replace(path, placeholder);
        }
        for date in dates {
            text = text.replace(&format!("Current date: {date}"), "Current date: <TODAY>");
        }
        text.into_bytes()
    }

    /// Runs `ctxkit args` in the project, adds its row to the table under `label`, and
    /// returns its normalized stdout.
    pub(crate) fn run(&mut self, label: &str, args: &[&str]) -> String {
        self.run_with(label, args, false)
    }

    /// [`Pin::run`]; with `sort_lines`, stdout's lines are sorted before they are measured.
    fn run_with(&mut self, label: &str, args: &[&str], sort_lines: bool) -> String {
        let before = today_utc();
        let output: Output = Command::new(BIN)
            .args(args)
            .current_dir(self.project.path())
            .env("NO_COLOR", "1")
            .env_remove("CTXKIT_SUMMARIZER")
            .env_remove("CTXKIT_MODEL")
            .env_remove("OPENAI_BASE_URL")
            .env_remove("OPENAI_API_KEY")
            .env_remove("ANTHROPIC_API_KEY")
            .envs(self.env.iter().map(|(name, value)| (name, value)))
            .output()
            .unwrap();
        let dates = [before, today_utc()];
        let mut stdout = self.normalize(&output.stdout, &dates);
        if sort_lines {
            let text = String::from_utf8(stdout).unwrap();
            let mut lines: Vec<&str> = text.lines().collect();
            lines.sort_unstable();
            stdout = lines
                .iter()
                .map(|line| format!("{line}\n"))
                .collect::<String>()
                .into_bytes();
        }
        let stderr = self.normalize(&output.stderr, &dates);
        let code = output
            .status
            .code()
            .map_or_else(|| "signal".to_owned(), |code| code.to_string());
        self.rows.push(Row {
            label: label.to_owned(),
            code,
            stdout: (stdout.len(), fnv1a64(&stdout)),
            stderr: (stderr.len(), fnv1a64(&stderr)),
        });
        String::from_utf8(stdout).unwrap()
    }
}

/// The short name of a corpus file in the table: its path under the corpus folder, with the
/// long Claude Code session id shortened.
pub(crate) fn short(file: &str) -> String {
    file.replace("4d5611e5-241a-462a-8d15-5122611a9569", "4d5611e5")
}

#[test]
fn cli_outputs_on_the_corpus_are_pinned() {
    let corpus = ctxkit_tests::corpus_dir();
    let corpus = corpus
        .canonicalize()
        .unwrap_or_else(|error| panic!("the corpus at {}: {error}", corpus.display()));
    let mut pin = Pin::new(corpus);
    for file in FILES {
        let path = pin.file(file);
        assert!(Path::new(&path).is_file(), "missing corpus file {path}");
        let name = short(file);
        let report = pin.run(
            &format!("import {name} --json"),
            &["import", &path, "--json"],
        );
        let report: serde_json::Value = serde_json::from_str(&report)
            .unwrap_or_else(|error| panic!("import {file}: {error}: {report}"));
        let sessions: Vec<String> = report["sessions"]
            .as_array()
            .unwrap_or_else(|| panic!("import {file}: no sessions in {report}"))
            .iter()
            .map(|session| session["session"].as_str().unwrap().to_owned())
            .collect();
        assert!(!sessions.is_empty(), "{file}");
        // The human-readable report too, into a database of its own (the names would clash).
        pin.run(
            &format!("import {name} --db plain.db"),
            &["import", &path, "--db", "plain.db"],
        );
        for session in sessions.iter().take(SESSIONS_PER_FILE) {
            for window in VIEW_WINDOWS {
                for format in ["openai", "anthropic", "ctxkit"] {
                    pin.run(
                        &format!("view {session} --format {format} --window {window}"),
                        &["view", session, "--format", format, "--window", window],
                    );
                }
            }
            pin.run(&format!("stats {session}"), &["stats", session]);
        }
        pin.run(
            &format!("replay {name} --window {REPLAY_WINDOW} --json"),
            &["replay", &path, "--window", REPLAY_WINDOW, "--json"],
        );
        pin.run(
            &format!("replay {name} --window {REPLAY_WINDOW}"),
            &["replay", &path, "--window", REPLAY_WINDOW],
        );
    }
    pin.run("replay (built-in)", &["replay"]);
    pin.run("replay (built-in) --json", &["replay", "--json"]);
    // Sessions are listed most recently updated first, to the second, and sessions updated in
    // the same second by name: the order depends on how fast the commands ran, so the lines
    // are pinned sorted.
    pin.run_with("sessions (lines sorted)", &["sessions"], true);
    insta::assert_snapshot!("corpus_outputs", pin.table());
}
