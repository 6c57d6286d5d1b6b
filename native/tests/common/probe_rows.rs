//! The rows `ctxkit probe --json` prints, read and checked one way for the fake-server tests
//! (`cli_probe.rs`) and the local-model test (`local_llm.rs`): one row per request, then the
//! totals; an answered row's verdict must be the core's grade of its answer.

use std::process::Output;

use ctxkit_lab::probes::{grade, AnswerKey, KeyItem};
use serde_json::Value;

/// The JSON rows of a successful run: the requests, then the totals.
pub fn probe_rows(output: &Output) -> (Vec<Value>, Value) {
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let mut rows: Vec<Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let totals = rows.pop().unwrap();
    (rows, totals)
}

/// The answer key a row prints.
pub fn key_of(row: &Value) -> AnswerKey {
    AnswerKey {
        all_of: serde_json::from_value::<Vec<KeyItem>>(row["key"].clone()).unwrap(),
    }
}

/// Checks one row and returns its status (`answered`, `error` or `skipped`): an answer's
/// `held` is the core's grade of it by the row's key; an error is one of `errors`; a skipped
/// view is one over the model's window.
pub fn check_row<'a>(row: &'a Value, errors: &[&str]) -> &'a str {
    let outcome = &row["outcome"];
    let status = outcome["status"].as_str().unwrap();
    match status {
        "answered" => {
            let answer = outcome["answer"].as_str().unwrap();
            assert_eq!(outcome["held"], grade(answer, &key_of(row)), "{row}");
        }
        "error" => {
            let kind = outcome["error"].as_str().unwrap();
            assert!(errors.contains(&kind), "{row}");
        }
        "skipped" => {
            let reason = outcome["reason"].as_str().unwrap();
            assert!(reason.contains("over the model's window"), "{row}");
        }
        other => panic!("{other}: {row}"),
    }
    status
}
