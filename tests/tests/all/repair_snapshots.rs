//! Snapshots of tool-pair repair on small fixtures (tests/fixtures/repair/*.json, ctxkit
//! format): the repaired view and what the repair changed.

use ctxkit_core::model::ViewMessage;
use ctxkit_core::{repair_view, Message};

#[test]
fn repair_fixtures() {
    insta::glob!("../../fixtures/repair", "*.json", |path| {
        let text = std::fs::read_to_string(path).unwrap();
        let log: Vec<Message> = serde_json::from_str(&text).unwrap();
        let (view, report) = repair_view(log.iter().map(ViewMessage::borrowed).collect());
        let view: Vec<&Message> = view.iter().map(|m| &**m).collect();
        insta::assert_json_snapshot!(serde_json::json!({ "report": report, "view": view }));
    });
}
