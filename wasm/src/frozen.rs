//! The frozen prefix in the JS engine: a turn given the system prompt's parts (`prompt`)
//! instead of its text (`system`) asks the core which parts to use
//! ([`freeze_prompt`]: the date, AGENTS.md and memory precis frozen with the latest checkpoint
//! in the engine's state, or the parts given now), builds both prompts, and keeps what the
//! turn froze in the state ([`FrozenPrompt::after_turn`]), which `toJSON()` exports and
//! `Engine.fromJSON()` imports with the rest.

use ctxkit_core::prompt::{build_system_prompt, freeze_prompt, FrozenPrompt};
use ctxkit_core::{CoreError, Session};

use crate::convert::Result;
use crate::view::JsTurnInputs;

/// Sets `options.system` (and the refreshed prompt a compaction's view uses) from
/// `options.prompt` and the frozen parts of `session` (`None`: a stateless call, the parts
/// given are used). Returns the core's decision, for [`keep`]; `None` when the turn gave its
/// system prompt as text.
pub(crate) fn resolve(
    options: &mut JsTurnInputs,
    session: Option<&Session>,
) -> Result<Option<FrozenPrompt>> {
    let Some(parts) = options.prompt.take() else {
        if options.refresh_prompt {
            return Err(CoreError::invalid(
                "options.refresh_prompt",
                "refreshes the frozen parts of `prompt`, which is not given",
            ));
        }
        return Ok(None);
    };
    if !options.system.is_empty() {
        return Err(CoreError::invalid(
            "options.system",
            "give the system prompt as text (`system`) or as parts (`prompt`), not both",
        ));
    }
    let frozen = session.and_then(|session| session.frozen_prompt.as_ref());
    let latest = session
        .and_then(|session| session.latest_checkpoint())
        .map(|checkpoint| checkpoint.through_seq);
    let decided = freeze_prompt(&parts, frozen, latest, options.refresh_prompt);
    options.system = build_system_prompt(&decided.parts)?;
    options.refreshed = Some(build_system_prompt(&decided.fresh)?);
    Ok(Some(decided))
}

/// Keeps in `session` what a finished turn froze.
pub(crate) fn keep(session: &mut Session, decided: Option<&FrozenPrompt>, prompt_refreshed: bool) {
    let Some(decided) = decided else {
        return;
    };
    let latest = session
        .latest_checkpoint()
        .map(|checkpoint| checkpoint.through_seq);
    if let Some(parts) = decided.after_turn(prompt_refreshed, latest) {
        session.frozen_prompt = Some(parts);
    }
}
