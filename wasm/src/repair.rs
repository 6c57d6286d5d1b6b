//! Tool-pair repair: `repairToolPairs`.
//!
//! Any message list in, a list both providers accept out (the rules are the core's:
//! `ctxkit_core::wire`), with a report of what changed. Total: it never throws on a valid
//! message list, whatever its pairing.

use ctxkit_core::model::ViewMessage;
use ctxkit_core::wire::repair_view;
use ctxkit_core::wire::RepairReport;
use ctxkit_core::Message;
use serde::Serialize;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsError, JsValue};

use crate::convert::{fail, read_json, to_js};
use crate::readers::read_messages;

#[wasm_bindgen(typescript_custom_section)]
const REPAIR_TYPES: &str = r#"
/** What a repair changed. */
export interface RepairReport {
  /** Results dropped: orphaned, duplicated, or answering an unknown id. */
  dropped_results: number;
  /** Results moved up to their call from later in the same exchange. */
  moved_results: number;
  /** Placeholder results inserted for calls without one. */
  missing_results: number;
  /** Blank results given a short placeholder. */
  empty_results: number;
  /** Tool-call ids rewritten because they repeated or broke `^[a-zA-Z0-9_-]+$`. */
  renamed_ids: number;
  /** Blank messages dropped. */
  dropped_blank: number;
  /** Whether a leading user message was inserted. */
  inserted_leading_user: boolean;
}

/** The repaired messages and what the repair changed. */
export interface Repaired {
  messages: Message[];
  report: RepairReport;
}
"#;

/// What `repairToolPairs` returns (TS `Repaired`).
#[derive(Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(crate) struct Repaired<'m> {
    messages: Vec<&'m Message>,
    report: RepairReport,
}

/// Repairs a message list so that both providers accept it: every tool call gets exactly one
/// result right after its assistant message (a placeholder when it was lost), orphaned and
/// duplicate results are dropped, ids are made unique and valid, and the conversation starts
/// with a user message.
#[wasm_bindgen(js_name = repairToolPairs, unchecked_return_type = "Repaired")]
pub fn repair_tool_pairs(
    #[wasm_bindgen(unchecked_param_type = "Message[]")] messages: JsValue,
) -> Result<JsValue, JsError> {
    (|| {
        let messages = read_messages(read_json(&messages, "messages")?, "messages")?;
        let (view, report) = repair_view(messages.iter().map(ViewMessage::borrowed).collect());
        to_js(&Repaired {
            messages: view.iter().map(|item| &*item.message).collect(),
            report,
        })
    })()
    .map_err(fail("repairToolPairs"))
}
