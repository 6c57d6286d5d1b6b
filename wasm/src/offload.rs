//! The offload plan: `planOffload`.
//!
//! Decides whether a tool output is big enough to move to a file and, when it is, computes the
//! file's relative path, what to write in it, and the reference message to store and show
//! instead (the core's `ctxkit_core::offload`). The caller writes the file (folder 0700,
//! file 0600, or IndexedDB in a browser) and keeps the output as it was if writing fails.
//! File names never contain the raw tool-call id, and the path stays inside the session's
//! folder.

use ctxkit_core::offload::{plan_offload, OffloadPolicy};
use ctxkit_core::Message;
use serde::Deserialize;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsError, JsValue};

use crate::convert::{fail, read, to_js};

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
#[derive(Debug, Deserialize)]
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

/// Plans the offload of one tool result: `null` when it stays as it is (not a tool result,
/// not over the threshold, or from an excluded tool).
#[wasm_bindgen(js_name = planOffload, unchecked_return_type = "OffloadPlan | null")]
pub fn plan_offload_js(
    #[wasm_bindgen(unchecked_param_type = "OffloadInput")] input: JsValue,
) -> Result<JsValue, JsError> {
    (|| {
        let input: Input = read(&input, "input")?;
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
