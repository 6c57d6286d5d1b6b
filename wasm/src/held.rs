//! Message fingerprints for the adapters' conversation router: `messageFingerprints`.
//!
//! The JS adapters (ctxkit/ai-sdk, ctxkit/langchain) decide which of a framework call's messages
//! a conversation's Engine already holds by the core's rule (`ctxkit_core::turn::held_prefix_by`:
//! the count, the first message and the last held one), so they fingerprint a few framework
//! messages per call, never the whole prompt. The fingerprint is the core's own
//! [`message_fingerprint`], so JS and Rust agree on what "the same message" is (what it says,
//! not ids or metadata; a tool result by its call, since the log may hold an offload reference).
//!
//! One framework message may be several ctxkit messages (an AI SDK tool message with two
//! results), so each input message gives the list of its ctxkit messages' fingerprints.

use ctxkit_core::turn::message_fingerprint;
use ctxkit_core::wire::WireFormat;
use serde_json::Value;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsError, JsValue};

use crate::convert::{expected, fail, read_json, read_or_default, to_js, Result};
use crate::wire::read_format;

/// For each of `messages` (in `format`, default `"ctxkit"`), the fingerprints (16 hex digits)
/// of the ctxkit messages it reads as: one for most messages, several for a framework message
/// that holds several (an AI SDK tool message with two results), none for one that holds
/// nothing.
#[wasm_bindgen(js_name = messageFingerprints, unchecked_return_type = "string[][]")]
pub fn message_fingerprints(
    #[wasm_bindgen(unchecked_param_type = "readonly unknown[]")] messages: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "MessageFormat")] format: JsValue,
) -> Result<JsValue, JsError> {
    (|| {
        let format: Option<WireFormat> = read_or_default(&format, "format")?;
        let format = format.unwrap_or(WireFormat::Ctxkit);
        let json = read_json(&messages, "messages")?;
        let Value::Array(list) = json else {
            return Err(expected("messages", "an array of messages", &json));
        };
        let mut out = Vec::with_capacity(list.len());
        for (index, message) in list.into_iter().enumerate() {
            // One at a time: the ctxkit messages of each framework message stay apart. A ctxkit
            // message is one message, named in errors by its place in the list.
            let read = match format {
                WireFormat::Ctxkit => vec![crate::readers::message(
                    message,
                    &format!("messages[{index}]"),
                )?],
                other => read_format(Value::Array(vec![message]), other)?,
            };
            let prints: Vec<String> = read
                .iter()
                .map(|m| format!("{:016x}", message_fingerprint(m)))
                .collect();
            out.push(prints);
        }
        to_js(&out)
    })()
    .map_err(fail("messageFingerprints"))
}
