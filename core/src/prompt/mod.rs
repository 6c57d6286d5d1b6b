//! Layer 1, the system prompt: assembled every turn from explicit parts (the base with the
//! working directory and today's date, AGENTS.md, the skills index, todo and offload guidance,
//! long-term memory), so it is never stored and always current.

pub(crate) mod system_prompt;

pub use system_prompt::{
    build_system_prompt, validate_date, OffloadGuidance, PromptParts, Skill, AGENTS_MD_TRUNCATED,
    DEFAULT_BASE, DEFAULT_TODO_GUIDANCE,
};
