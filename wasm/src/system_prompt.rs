//! System prompt assembly: `buildSystemPrompt`.
//!
//! The prompt from explicit parts, in a fixed order, each section skipped when empty (the
//! core's `ctxkit_core::prompt`): base with working directory and today's date,
//! AGENTS.md (size-capped), skills, todo guidance, offload guidance, the history tools'
//! guidance (when asked for), long-term memory (fenced as data). The date is given by the caller every turn (the core has no clock), so the same
//! parts give the same prompt byte for byte.

use ctxkit_core::prompt::build_system_prompt;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsError, JsValue};

use crate::convert::{fail, read_json};
use crate::readers::prompt_parts;

#[wasm_bindgen(typescript_custom_section)]
const PROMPT_TYPES: &str = r#"
/** A skill the agent can use. */
export interface Skill {
  /** A skill without a name is left out. */
  name: string;
  /** When to use it, in one line (without one, the skill is listed by name only). */
  description?: string;
}

/** How the model reads an offloaded output back (default: that of the default `OffloadPolicy`). */
export interface OffloadGuidance {
  folder: string;
  paging_tool: string;
  offset_param: string;
  limit_param: string;
}

/** Everything a system prompt is made of. Only `date` is required. */
export interface PromptParts {
  /** The role text (default: a general software-agent role). */
  base?: string | null;
  working_directory?: string;
  /** Today's date, `YYYY-MM-DD`. */
  date: string;
  agents_md?: string | null;
  /** AGENTS.md is cut to this many bytes, marker included (default 16,384). */
  agents_md_max_bytes?: number;
  skills?: Skill[];
  todo_guidance?: string | null;
  offload_guidance?: Partial<OffloadGuidance> | null;
  /** Add `## Conversation History` (the Engine's history tools); set it once `engine.latestCheckpoint` is not null (default false). */
  history_guidance?: boolean;
  /** The memory precis (see `renderPrecis`). */
  memory_precis?: string | null;
}

/** The system prompt's parts an Engine froze with its latest checkpoint (its state's `frozen_prompt`). */
export interface FrozenParts {
  /** The latest checkpoint's `through_seq` when they were frozen; null before any. */
  checkpoint_through: number | null;
  date: string;
  agents_md: string | null;
  memory_precis: string | null;
}
"#;

/// Builds the system prompt from its parts. Throws when the date is not a real `YYYY-MM-DD`
/// date.
#[wasm_bindgen(js_name = buildSystemPrompt)]
pub fn build_system_prompt_js(
    #[wasm_bindgen(unchecked_param_type = "PromptParts")] parts: JsValue,
) -> Result<String, JsError> {
    read_json(&parts, "parts")
        .and_then(|parts| prompt_parts(parts, "parts"))
        .and_then(|parts| build_system_prompt(&parts))
        .map_err(fail("buildSystemPrompt"))
}
