//! The offload plan: `planOffload`.
//!
//! Decides whether a tool output is big enough to move to a file and, when it is, computes the
//! file's relative path, what to write in it, and the reference message to store and show
//! instead (the core's `ctxkit_core::offload`). The caller writes the file (folder 0700,
//! file 0600, or IndexedDB in a browser) and keeps the output as it was if writing fails.
//! File names never contain the raw tool-call id, and the path stays inside the session's
//! folder.

use ctxkit_core::offload::{plan_offload, OffloadPolicy};
use ctxkit_core::{CoreError, Message};
use serde::Deserialize;
use serde_json::Value;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsError, JsValue};

use crate::convert::{fail, read_json, to_js, Result};
use crate::readers::{message, offload_policy, Fields};

#[wasm_bindgen(typescript_custom_section)]
const OFFLOAD_TYPES: &str = r#"
/** When and how tool outputs are offloaded. */
export interface OffloadPolicy {
  /** Outputs over this many bytes are offloaded (default 10,000). */
  threshold_bytes: number;
  /** Never offloaded (default `read_file`, `write_file`, `edit_file`); the paging tool and the history tools never are, whatever this says. */
  excluded_tools: string[];
  /** The tool the model pages the file with, and its parameters (default `read_file`, `offset`, `limit`). */
  paging_tool: string;
  offset_param: string;
  limit_param: string;
  head_max_lines: number;
  head_max_bytes: number;
  tail_max_lines: number;
  tail_max_bytes: number;
  /** Relative to the working directory, `/`-separated (default `.ctxkit/tool_results`). */
  folder: string;
  /** An absolute folder the reference names the file under, for an agent whose tools run elsewhere (default empty: the relative path). */
  reference_root: string;
  /** A shell command that pages the file, `{path}` in it, for an agent whose only reader is its shell (default empty: call `paging_tool`). */
  paging_command: string;
}

/** The input of `planOffload`. */
export interface OffloadInput {
  /** The `seq` the result has (or will have) in the log (`engine.nextSeq` before appending it). */
  seq: number;
  /** The session's name (sanitized into a folder name). */
  session: string;
  /** The tool result message. */
  result: Message;
  /** The tool that produced it (default: the message's `name`). */
  tool_name?: string | null;
  policy?: Partial<OffloadPolicy>;
}

/** What to do with one big tool output: write `content` to `relative_path`, then keep `reference` instead of the output. */
export interface OffloadPlan {
  file_name: string;
  relative_path: string;
  content: string;
  bytes: number;
  lines: number;
  is_error: boolean;
  head: string;
  tail: string;
  reference: Message;
}
"#;

/// The input of `planOffload` (TS `OffloadInput`).
#[derive(Debug, PartialEq, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(crate) struct Input {
    seq: u64,
    session: String,
    result: Message,
    #[serde(default)]
    tool_name: Option<String>,
    #[serde(default)]
    policy: OffloadPolicy,
}

/// An [`Input`] from `json`, with the hand-written readers (`crate::readers` says why).
fn read_input(json: Value, at: &str) -> Result<Input> {
    let mut f = Fields::of(json, at)?;
    let seq = f.required("seq");
    let session = f.required("session");
    let result = f.required_with("result", message);
    let tool_name = f.or_default("tool_name");
    let policy = f.get_with("policy", offload_policy).unwrap_or_default();
    f.finish_denying(&["seq", "session", "result", "tool_name", "policy"])?;
    let result = result.ok_or_else(|| CoreError::invalid(format!("{at}.result"), "missing"))?;
    Ok(Input {
        seq,
        session,
        result,
        tool_name,
        policy,
    })
}

/// Plans the offload of one tool result: `null` when it stays as it is (not a tool result,
/// not over the threshold, or from an excluded tool).
#[wasm_bindgen(js_name = planOffload, unchecked_return_type = "OffloadPlan | null")]
pub fn plan_offload_js(
    #[wasm_bindgen(unchecked_param_type = "OffloadInput")] input: JsValue,
) -> Result<JsValue, JsError> {
    (|| {
        let input = read_input(read_json(&input, "input")?, "input")?;
        to_js(&plan_offload(
            input.seq,
            &input.session,
            &input.result,
            input.tool_name.as_deref(),
            &input.policy,
        )?)
    })()
    .map_err(fail("planOffload"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::readers::tests::same;
    use serde_json::json;

    #[test]
    fn input_reads_as_derived() {
        let result = json!({"role": "tool", "content": "x", "tool_call_id": "c"});
        same(read_input, json!({}));
        same(
            read_input,
            json!({"seq": 1, "session": "s", "result": result}),
        );
        same(read_input, json!({"seq": 1, "session": "s"}));
        same(read_input, json!({"seq": "1", "session": "s", "result": 3}));
        same(
            read_input,
            json!({"seq": 1, "session": "s", "result": {"role": "x"}}),
        );
        same(
            read_input,
            json!({"seq": 1, "session": "s", "result": result, "policy": {"folder": 1}}),
        );
        same(
            read_input,
            json!({"seq": 1, "session": "s", "result": result, "tool_name": null, "zz": 1}),
        );
        // An array is not read as the fields in order (crate::readers: the one difference).
        assert_eq!(
            read_input(json!([]), "x").map_err(|error| error.to_string()),
            Err("x: invalid type: sequence, expected an object".to_owned())
        );
    }
}
