//! Snapshots of tool-pair repair on small fixtures (tests/fixtures/repair/*.json, ctxkit
//! format): the repaired view and what the repair changed.

use ctxkit_core::{repair_view, Message};
use std::borrow::Cow;

#[test]
fn repair_fixtures() {
    insta::glob!("../fixtures/repair", "*.json", |path| {
        let text = std::fs::read_to_string(path).unwrap();
        let log: Vec<Message> = serde_json::from_str(&text).unwrap();
        let (view, report) = repair_view(log.iter().map(Cow::Borrowed).collect());
        let view: Vec<&Message> = view.iter().map(|m| m.as_ref()).collect();
        insta::assert_json_snapshot!(serde_json::json!({ "report": report, "view": view }));
    });
}
