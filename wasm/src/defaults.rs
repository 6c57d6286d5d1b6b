//! Defaults and version: `defaults`, `version`.
//!
//! Every option object of the package has documented defaults; `defaults()` returns them as
//! the core defines them, so a caller can start from them and a UI can show them.

use ctxkit_core::compaction::Budget;
use ctxkit_core::compaction::ClearPolicy;
use ctxkit_core::compaction::Policy;
use ctxkit_core::memory::PrecisOptions;
use ctxkit_core::offload::OffloadPolicy;
use ctxkit_core::prompt::OffloadGuidance;
use serde::Serialize;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsError, JsValue};

use crate::convert::{fail, to_js_sorted};

#[wasm_bindgen(typescript_custom_section)]
const DEFAULT_TYPES: &str = r#"
/** The defaults of every option object. */
export interface Defaults {
  budget: Budget;
  policy: Policy;
  /** What `policy.clear_tool_results` means when it is set to `{}`. */
  clear_tool_results: ClearPolicy;
  offload: OffloadPolicy;
  offload_guidance: OffloadGuidance;
  precis: PrecisOptions;
}

/** The restore block's limits: the files read before a compaction, brought back after it. */
export interface RestoreLimits {
  /** At most this many files (default 5). */
  max_files: number;
  /** Each file's content at most this many tokens, cut at a line beyond (default 5,000). */
  per_file_tokens: number;
  /** The block at most this share of the usable budget, in percent (default 10). */
  share_percent: number;
  /** And at most this many tokens (default 25,000). */
  max_tokens: number;
}
"#;

/// What `defaults()` returns (TS `Defaults`).
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(crate) struct Defaults {
    budget: Budget,
    policy: Policy,
    clear_tool_results: ClearPolicy,
    offload: OffloadPolicy,
    offload_guidance: OffloadGuidance,
    precis: PrecisOptions,
}

/// The defaults of every option object.
#[wasm_bindgen(unchecked_return_type = "Defaults")]
pub fn defaults() -> Result<JsValue, JsError> {
    to_js_sorted(&Defaults {
        budget: Budget::default(),
        policy: Policy::default(),
        clear_tool_results: ClearPolicy::default(),
        offload: OffloadPolicy::default(),
        offload_guidance: OffloadGuidance::default(),
        precis: PrecisOptions::default(),
    })
    .map_err(fail("defaults"))
}

/// The version of the package (the workspace version it was built from).
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_owned()
}
