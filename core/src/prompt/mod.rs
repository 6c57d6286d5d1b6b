//! Layer 1, the system prompt: assembled every turn from explicit parts (the base with the
//! working directory and today's date, AGENTS.md, the skills index, todo and offload guidance,
//! long-term memory), so it is never stored. The parts that change between compactions (the
//! date, AGENTS.md, the memory precis) are frozen with the latest checkpoint ([`freeze_prompt`])
//! so the prompt, and the provider's cached prefix, stay the same until the next one. An agent
//! that brings its own instructions gets only the parts about the context ([`context_only`]).

pub(crate) mod context_only;
pub(crate) mod frozen;
pub(crate) mod system_prompt;

#[cfg(test)]
mod guidance_tests;

pub use context_only::context_only;
pub use frozen::{freeze_prompt, FrozenParts, FrozenPrompt};

pub use system_prompt::{
    build_system_prompt, validate_date, OffloadGuidance, PromptParts, Skill, AGENTS_MD_TRUNCATED,
    DEFAULT_BASE, DEFAULT_TODO_GUIDANCE,
};
