//! The system prompt of an agent that brings its own: only ctxkit's parts about the context.
//!
//! A framework adapter serves an agent with its own instructions (a billing bot, a support
//! agent), so ctxkit's coding-agent role, its working directory, AGENTS.md, skills and todo
//! guidance would be instructions the caller never asked for. [`context_only`] keeps what
//! concerns the context ctxkit manages: today's date (the prompt's one required line), how to
//! read offloaded outputs back, the history tools' guidance, and the memory precis. Guarantees:
//! the result never holds the default base ([`super::DEFAULT_BASE`]) or any part it drops.

use super::PromptParts;

/// `parts` without the coding agent's parts (see the module doc).
///
/// ```
/// use ctxkit_core::prompt::{build_system_prompt, context_only, PromptParts, DEFAULT_BASE};
/// let parts = PromptParts {
///     working_directory: "/project".into(),
///     date: "2026-01-02".into(),
///     agents_md: Some("Use tabs.".into()),
///     ..PromptParts::default()
/// };
/// let prompt = build_system_prompt(&context_only(parts)).unwrap();
/// assert_eq!(prompt, "Current date: 2026-01-02");
/// assert!(!prompt.contains(DEFAULT_BASE));
/// ```
pub fn context_only(parts: PromptParts) -> PromptParts {
    PromptParts {
        base: Some(String::new()),
        working_directory: String::new(),
        agents_md: None,
        skills: Vec::new(),
        todo_guidance: None,
        ..parts
    }
}
