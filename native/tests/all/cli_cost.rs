//! `ctxkit cost` end to end on the corpus Claude Code session: the `recorded` row is what the
//! transcript's own usage says (recomputed here from the raw JSONL), every strategy is there
//! with the fields the JSON promises, ctxkit breaks the cache prefix at most once per
//! compaction and keeps every pinned fact, the idle row compacts in the session's 19-minute
//! pause when its view is big enough, and bad input is a usage error.

use std::collections::BTreeSet;
use std::process::Command;

use crate::common::project::BIN;
use serde_json::Value;

const SESSION: &str = "claude-code_marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl";

fn cost(extra: &[&str]) -> std::process::Output {
    let file = ctxkit_tests::corpus_dir().join(SESSION);
    Command::new(BIN)
        .arg("cost")
        .arg(file)
        .args(extra)
        .output()
        .unwrap()
}

fn rows(extra: &[&str]) -> Vec<Value> {
    let output = cost(extra);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// Base-input units of the session's recorded usage, each response id counted once, at
/// Anthropic's multipliers (5-minute writes 1.25, 1-hour writes 2, reads 0.1).
fn recorded_units() -> f64 {
    let text = std::fs::read_to_string(ctxkit_tests::corpus_dir().join(SESSION)).unwrap();
    let mut seen = BTreeSet::new();
    let mut units = 0.0;
    for line in text.lines() {
        let value: Value = serde_json::from_str(line).unwrap();
        if value["type"] != "assistant" || value["message"]["model"] == "<synthetic>" {
            continue;
        }
        if !seen.insert(value["message"]["id"].as_str().unwrap().to_owned()) {
            continue;
        }
        let usage = &value["message"]["usage"];
        let n = |v: &Value| v.as_u64().unwrap_or(0) as f64;
        let long = n(&usage["cache_creation"]["ephemeral_1h_input_tokens"]);
        let short = n(&usage["cache_creation_input_tokens"]) - long;
        units += n(&usage["input_tokens"])
            + short * 1.25
            + long * 2.0
            + n(&usage["cache_read_input_tokens"]) * 0.1;
    }
    units
}

#[test]
fn every_strategy_is_billed_beside_the_recorded_session() {
    let rows = rows(&["--json"]);
    let names: Vec<&str> = rows
        .iter()
        .map(|r| r["strategy"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "ctxkit",
            "ctxkit-clearing",
            "ctxkit-llm-fresh",
            "ctxkit-llm-cache-safe",
            "ctxkit-no-cold-trigger",
            "ctxkit-idle",
            "no-compaction",
            "claude-code-like",
            "sliding-window",
            "observation-masking",
            "recorded"
        ]
    );
    for row in &rows {
        for field in [
            "input_cost_units",
            "cache_read_share",
            "prefix_breaks",
            "peak_tokens",
            "compactions",
            "idle_compactions",
        ] {
            assert!(
                row.get(field).is_some_and(|v| !v.is_null()),
                "{field} in {row}"
            );
        }
        assert_eq!(row["model"], "claude-opus-4-6");
    }
    let recorded = rows.last().unwrap();
    let expected = recorded_units();
    let got = recorded["input_cost_units"].as_f64().unwrap();
    assert!(
        (got - expected).abs() < 1.0,
        "recorded {got}, the raw usage says {expected}"
    );
    let ctxkit = &rows[0];
    assert!(
        ctxkit["prefix_breaks"].as_u64() <= ctxkit["compactions"].as_u64(),
        "{ctxkit}"
    );
    assert_eq!(ctxkit["pinned_recall"], 1.0, "{ctxkit}");
    assert_eq!(
        ctxkit["calls"], recorded["calls"],
        "one call per recorded API call"
    );
    // An LLM summarizer's calls cost something on top of the extractive summaries (the same
    // views, so the same compactions); re-sending the cached prefix costs less than a fresh
    // transcript.
    let units = |name: &str| {
        let row = rows.iter().find(|r| r["strategy"] == name).unwrap();
        assert_eq!(row["compactions"], ctxkit["compactions"], "{row}");
        row["input_cost_units"].as_f64().unwrap()
    };
    let (extractive, fresh, cache_safe) = (
        units("ctxkit"),
        units("ctxkit-llm-fresh"),
        units("ctxkit-llm-cache-safe"),
    );
    assert!(
        extractive < cache_safe && cache_safe < fresh,
        "{extractive} {cache_safe} {fresh}"
    );
    // The session pauses past the cache's lifetime (19 minutes, then hours): compacting from
    // the cold trigger there costs less than the same policy without it, at full recall.
    let warm_only = units("ctxkit-no-cold-trigger");
    assert!(extractive < warm_only, "{extractive} {warm_only}");
    // The reserve is the first call's prompt less its messages: Claude Code's system prompt
    // and tools, tens of thousands of tokens.
    assert!(
        ctxkit["reserve_tokens"].as_u64().unwrap() > 10_000,
        "{ctxkit}"
    );
}

#[test]
fn a_smaller_window_compacts_and_the_text_report_names_the_anchor() {
    let rows = rows(&["--json", "--window", "100000"]);
    let ctxkit = &rows[0];
    assert!(ctxkit["compactions"].as_u64().unwrap() >= 1, "{ctxkit}");
    assert!(
        ctxkit["prefix_breaks"].as_u64() <= ctxkit["compactions"].as_u64(),
        "{ctxkit}"
    );
    let none = rows
        .iter()
        .find(|r| r["strategy"] == "no-compaction")
        .unwrap();
    assert!(none["overflow_calls"].as_u64().unwrap() > 0, "{none}");
    let output = cost(&[]);
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(
        text.contains("read from the first call's recorded usage"),
        "{text}"
    );
    assert!(text.contains("vs recorded"), "{text}");
}

#[test]
fn an_unknown_model_is_a_usage_error() {
    let output = cost(&["--model", "llama-3"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("\"llama-3\" has no default prices"),
        "{stderr}"
    );
}

#[test]
fn gpt_5_6_bills_explicit_breakpoints_writes_at_1_25x_and_reads_them_back() {
    let by_strategy = |model: &str| -> Vec<(String, f64, f64)> {
        rows(&["--model", model, "--json"])
            .iter()
            .map(|row| {
                (
                    row["strategy"].as_str().unwrap().to_owned(),
                    row["input_cost_units"].as_f64().unwrap(),
                    row["cache_read_share"].as_f64().unwrap(),
                )
            })
            .collect()
    };
    let exact = by_strategy("gpt-5.6");
    let automatic = by_strategy("gpt-5.5");
    let ctxkit = |rows: &[(String, f64, f64)]| rows.iter().find(|r| r.0 == "ctxkit").cloned();
    let (_, exact_units, exact_read) = ctxkit(&exact).unwrap();
    let (_, automatic_units, _) = ctxkit(&automatic).unwrap();
    // ctxkit's breakpoints are read back where they were written (exact matches only) ...
    assert!(exact_read > 0.9, "cache read share {exact_read}");
    // ... and its writes cost 1.25x, where gpt-5.5's automatic cache writes for free.
    assert!(
        exact_units > automatic_units,
        "{exact_units} vs {automatic_units}"
    );
    let output = cost(&["--model", "gpt-5.6"]);
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("gpt-5.6 at a 200,000-token window"), "{text}");
    assert!(
        text.contains("(a cache write 1.25, a cache read 0.1)"),
        "{text}"
    );
}

#[test]
fn the_idle_row_compacts_in_a_pause_only_above_its_floor() {
    let units = |rows: &[Value], name: &str| {
        let row = rows.iter().find(|r| r["strategy"] == name).unwrap().clone();
        (row["input_cost_units"].as_f64().unwrap(), row)
    };
    // At 80k the view is above the idle floor when the agent waits 19 minutes for the user's
    // answer to its question: the timer compacts in the pause, 30 seconds before the
    // five-minute lifetime ends.
    let at_80k = rows(&["--json", "--window", "80000"]);
    for row in &at_80k {
        if row["strategy"] != "ctxkit-idle" {
            assert_eq!(row["idle_compactions"], 0, "{row}");
        }
    }
    let (idle, idle_row) = units(&at_80k, "ctxkit-idle");
    let (ctxkit, ctxkit_row) = units(&at_80k, "ctxkit");
    let (warm_only, _) = units(&at_80k, "ctxkit-no-cold-trigger");
    assert_eq!(idle_row["idle_compactions"], 1, "{idle_row}");
    assert_eq!(
        idle_row["compactions"], ctxkit_row["compactions"],
        "{idle_row}"
    );
    assert_eq!(idle_row["pinned_recall"], 1.0, "{idle_row}");
    // The next call writes the compacted prefix instead of the whole one ...
    assert!(idle < warm_only, "{idle} {warm_only}");
    // ... as the cold trigger's compaction at that call does, whose extractive summary needs
    // no call: the idle row pays its summary call (the cached prefix read, the instruction).
    assert!(idle > ctxkit && idle - ctxkit < 20_000.0, "{idle} {ctxkit}");
    let text = String::from_utf8(cost(&["--window", "80000"]).stdout).unwrap();
    let line = text.lines().find(|l| l.contains("ctxkit-idle")).unwrap();
    assert!(line.contains(" (1 idle) "), "{text}");
    assert!(text.contains("made by the idle timer"), "{text}");
    // With the marks 30,000/15,000 at the real 200k window both pauses (19 minutes and 4
    // hours, past the five-minute lifetime) find the view at or below the floor (22,500): the
    // row is ctxkit's.
    let at_200k = rows(&["--json", "--cost-marks", "30000/15000"]);
    let (idle, idle_row) = units(&at_200k, "ctxkit-idle");
    let (ctxkit, ctxkit_row) = units(&at_200k, "ctxkit");
    assert_eq!(idle_row["idle_compactions"], 0, "{idle_row}");
    assert_eq!(idle, ctxkit);
    assert_eq!(idle_row["compactions"], ctxkit_row["compactions"]);
    // Priced as gpt-5.6 (a thirty-minute lifetime) the 19-minute pause ends before the timer's
    // 27 minutes: no idle compaction there.
    let gpt = rows(&["--json", "--model", "gpt-5.6"]);
    let (idle, idle_row) = units(&gpt, "ctxkit-idle");
    assert_eq!(idle_row["idle_compactions"], 0, "{idle_row}");
    assert_eq!(idle, units(&gpt, "ctxkit").0);
}

#[test]
fn needed_next_is_reported_beside_cost_and_the_marks_are_chosen_on_the_command_line() {
    let at_100k = rows(&["--json", "--window", "100000"]);
    let row = |name: &str| at_100k.iter().find(|r| r["strategy"] == name).unwrap();
    // Sending the whole log needs nothing from a summary: no figure.
    let none = row("no-compaction");
    assert!(none["needed_next"].is_null(), "{none}");
    assert_eq!(none["needed_next_needed"], 0, "{none}");
    assert!(row("recorded")["needed_next"].is_null());
    // ctxkit compacts: its calls needed facts it dropped, and its summaries held most.
    let ctxkit = row("ctxkit");
    let (held, needed) = (
        ctxkit["needed_next_held"].as_u64().unwrap(),
        ctxkit["needed_next_needed"].as_u64().unwrap(),
    );
    assert!(needed > 0 && held <= needed, "{ctxkit}");
    let share = ctxkit["needed_next"].as_f64().unwrap();
    assert!(
        (share - held as f64 / needed as f64).abs() < 1e-9,
        "{ctxkit}"
    );
    assert_eq!(ctxkit["cost_trigger_tokens"], 36_000, "{ctxkit}");
    // The text report prints the column, "held/needed" and "–" for none.
    let text = String::from_utf8(cost(&["--window", "100000"]).stdout).unwrap();
    assert!(text.contains("needed next"), "{text}");
    let line = text.lines().find(|l| l.starts_with("  ctxkit ")).unwrap();
    assert!(line.ends_with(&format!("({held}/{needed})")), "{line}");
    let line = text.lines().find(|l| l.contains("no-compaction")).unwrap();
    assert!(line.ends_with('–'), "{line}");
    // Other marks replay ctxkit's rows only: smaller ones compact more often.
    let small = rows(&[
        "--json",
        "--window",
        "100000",
        "--cost-marks",
        "24000/12000",
    ]);
    let small_ctxkit = small.iter().find(|r| r["strategy"] == "ctxkit").unwrap();
    assert!(
        small_ctxkit["compactions"].as_u64() > ctxkit["compactions"].as_u64(),
        "{small_ctxkit}"
    );
    assert_eq!(small_ctxkit["cost_low_water_tokens"], 12_000);
    let sliding = small
        .iter()
        .find(|r| r["strategy"] == "sliding-window")
        .unwrap();
    assert_eq!(
        sliding["input_cost_units"],
        row("sliding-window")["input_cost_units"]
    );
    let window = rows(&["--json", "--cost-marks", "window"]);
    assert!(window[0]["cost_trigger_tokens"].is_null(), "{}", window[0]);
    for bad in ["12000/24000", "36000", "x/y", "0/0"] {
        let output = cost(&["--cost-marks", bad]);
        assert_eq!(output.status.code(), Some(2), "{bad}");
        assert!(
            String::from_utf8_lossy(&output.stderr).contains("--cost-marks"),
            "{bad}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// A file holding several conversations (Claude Code's inline sub-agents become their own):
/// its recorded usage is the whole file's, so no conversation's report has a `recorded` row
/// to compare with, while a file of one conversation keeps it.
#[test]
fn a_file_of_several_conversations_has_no_recorded_row() {
    let file = ctxkit_tests::corpus_dir()
        .join("claude-code_d-kimuson-viewer/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl");
    for index in ["0", "1"] {
        let output = Command::new(BIN)
            .arg("cost")
            .arg(&file)
            .args(["--json", "--window", "200000", "--index", index])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{stdout}");
        let strategies: Vec<Value> = stdout
            .lines()
            .map(|line| serde_json::from_str::<Value>(line).unwrap()["strategy"].clone())
            .collect();
        assert!(strategies.contains(&Value::from("ctxkit")), "{stdout}");
        assert!(!strategies.contains(&Value::from("recorded")), "{stdout}");
    }
    let single = rows(&["--json", "--window", "200000"]);
    assert!(single.iter().any(|row| row["strategy"] == "recorded"));
}
