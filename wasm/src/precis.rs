//! The memory precis: `renderPrecis`.
//!
//! The best long-term memories as bounded markdown, the text of `MEMORY.md` and of the system
//! prompt's `## Long-Term Memory` section (the core's `ctxkit_core::memory`): ranked by source,
//! importance, recency and id; at most `max_entries` entries and `max_bytes` bytes, cut only
//! on a character boundary and marked when anything was left out. Each line says where the
//! memory came from; a memory from a tool's output, an extraction or a document whose text
//! addresses the model is quarantined (never rendered) until the caller sets `approved`, and
//! `memoryQuarantine` says why.

use ctxkit_core::memory::{entry_quarantine, render_precis, PrecisOptions};
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsError, JsValue};

use crate::convert::{fail, read_json};
use crate::readers::{list, memory_entry, precis_options};
use serde_json::Value;

#[wasm_bindgen(typescript_custom_section)]
const PRECIS_TYPES: &str = r#"
/** One long-term memory. Every field has a default. */
export interface MemoryEntry {
  id?: string;
  title?: string;
  content?: string;
  category?: string;
  /** 1 (trivia) to 10 (never forget); higher ranks first. */
  importance?: number;
  /**
   * Where it came from (default `"agent"`). Memories from outside (a tool's output, an
   * extraction over the conversation, a document) rank below the user's and the agent's, and
   * are quarantined when their text addresses the model (see `memoryQuarantine`).
   */
  source?: "user" | "agent" | "tool" | "extracted" | "document";
  scope?: "project" | "global";
  /** Unix seconds (the core has no clock). */
  updated_at?: number;
  tags?: string[];
  /** A person approved it: rendered even when quarantined (default false). */
  approved?: boolean;
}

/** How much of the memory goes into a precis (default 30 entries, 5,120 bytes). */
export interface PrecisOptions {
  max_entries: number;
  max_bytes: number;
}
"#;

/// Renders the memory precis: one markdown line per memory, best first, within the bounds.
#[wasm_bindgen(js_name = renderPrecis)]
pub fn render_precis_js(
    #[wasm_bindgen(unchecked_param_type = "MemoryEntry[]")] entries: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "Partial<PrecisOptions>")] options: JsValue,
) -> Result<String, JsError> {
    (|| {
        let entries = list(read_json(&entries, "entries")?, "entries", memory_entry)?;
        let options: PrecisOptions = match read_json(&options, "options")? {
            Value::Null => PrecisOptions::default(),
            json => precis_options(json, "options")?,
        };
        Ok(render_precis(&entries, &options))
    })()
    .map_err(fail("renderPrecis"))
}

/// Why `entry` is quarantined (kept out of every precis until `approved`), or `undefined`:
/// text from a tool's output, an extraction or a document that addresses the model.
#[wasm_bindgen(js_name = memoryQuarantine)]
pub fn memory_quarantine_js(
    #[wasm_bindgen(unchecked_param_type = "MemoryEntry")] entry: JsValue,
) -> Result<Option<String>, JsError> {
    (|| {
        let entry = memory_entry(read_json(&entry, "entry")?, "entry")?;
        Ok(entry_quarantine(&entry))
    })()
    .map_err(fail("memoryQuarantine"))
}
