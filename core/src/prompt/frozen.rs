//! The frozen prefix: the parts of the system prompt that change without a compaction (the
//! date, AGENTS.md, the memory precis) are frozen with the session's latest checkpoint, so
//! every turn between two compactions begins byte for byte like the one before it and the
//! provider's prompt cache keeps the whole prefix.
//!
//! [`freeze_prompt`] decides, from the parts a shell read this turn, the parts frozen earlier
//! (if any) and the latest checkpoint the turn plans from, which parts the turn uses and
//! whether the shell stores them anew. The rule:
//!
//! - **Frozen parts are used** while they were frozen at the session's latest checkpoint (the
//!   same `through_seq`, or both before any checkpoint) and the caller does not ask for a
//!   refresh. A day that changes, a memory added or an AGENTS.md edited between compactions
//!   shows up at the next one.
//! - **The parts read this turn are used and frozen** when there are none yet (a session's
//!   first turn, or a session older than the frozen prefix), when the caller asks for a
//!   refresh, when a checkpoint came since they were frozen that no turn of this shell froze
//!   parts with (another writer's, an import), and when the frozen date is not a real date (a
//!   damaged store).
//! - **A turn that compacts refreshes**: the driver plans the view that follows its new
//!   checkpoint with the prompt of the parts read this turn
//!   ([`crate::TurnInputs::refreshed_system_prompt`]; the summary request keeps the frozen
//!   prompt, the cached prefix), says so ([`crate::TurnResult::prompt_refreshed`]), and
//!   [`FrozenPrompt::after_turn`] freezes those parts at the new checkpoint. So the turn after
//!   a compaction begins byte for byte like the compaction's request; memories the
//!   compaction's extraction found reach the prompt at the next compaction.
//!
//! Everything else in [`PromptParts`] (the base, the working directory, skills, guidance, and
//! the history guidance, which follows the checkpoint) comes from this turn's parts. The shell
//! only reads and stores; the frozen text comes back byte for byte.

use serde::{Deserialize, Serialize};

use super::system_prompt::{validate_date, PromptParts};

/// The parts of a system prompt frozen with a checkpoint, and the checkpoint they were frozen
/// at.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default, deny_unknown_fields)]
pub struct FrozenParts {
    /// The `through_seq` of the session's latest checkpoint when they were frozen; `None`
    /// before the session had one.
    pub checkpoint_through: Option<u64>,
    /// The date, `YYYY-MM-DD`.
    pub date: String,
    /// AGENTS.md as it was read.
    pub agents_md: Option<String>,
    /// The memory precis as it was rendered.
    pub memory_precis: Option<String>,
}

impl FrozenParts {
    /// The volatile parts of `parts`, frozen at `checkpoint_through`.
    pub fn of(parts: &PromptParts, checkpoint_through: Option<u64>) -> Self {
        FrozenParts {
            checkpoint_through,
            date: parts.date.clone(),
            agents_md: parts.agents_md.clone(),
            memory_precis: parts.memory_precis.clone(),
        }
    }

    /// `parts` with its date, AGENTS.md and memory precis replaced by these.
    pub fn apply(&self, parts: &PromptParts) -> PromptParts {
        PromptParts {
            date: self.date.clone(),
            agents_md: self.agents_md.clone(),
            memory_precis: self.memory_precis.clone(),
            ..parts.clone()
        }
    }
}

/// What [`freeze_prompt`] decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrozenPrompt {
    /// The parts to build this turn's system prompt from
    /// ([`crate::TurnInputs::system_prompt`]).
    pub parts: PromptParts,
    /// The parts read this turn, for a view planned from a checkpoint the turn makes
    /// ([`crate::TurnInputs::refreshed_system_prompt`]); equal to `parts` when those are fresh.
    pub fresh: PromptParts,
    /// The frozen parts `parts` came from, or the fresh ones.
    pub frozen: FrozenParts,
    /// What the store held before this turn.
    pub stored: Option<FrozenParts>,
    /// True when `frozen` differs from `stored`: the shell stores it (a preview stores
    /// nothing; a turn stores [`FrozenPrompt::after_turn`]).
    pub store: bool,
}

impl FrozenPrompt {
    /// What to store after a turn, or `None` when the store already holds it: the fresh parts
    /// frozen at the latest checkpoint after the turn (`checkpoint_after`) when the turn's view
    /// was planned from a checkpoint it made (`prompt_refreshed`, the core's
    /// [`crate::TurnResult::prompt_refreshed`]), else the parts this turn used.
    pub fn after_turn(
        &self,
        prompt_refreshed: bool,
        checkpoint_after: Option<u64>,
    ) -> Option<FrozenParts> {
        let after = if prompt_refreshed {
            FrozenParts::of(&self.fresh, checkpoint_after)
        } else {
            self.frozen.clone()
        };
        (self.stored.as_ref() != Some(&after)).then_some(after)
    }
}

/// The parts this turn's system prompt is built from, and whether to freeze them anew (see the
/// module doc). `read` is what the shell read this turn, `frozen` what it stored earlier,
/// `latest_checkpoint` the `through_seq` of the checkpoint the turn plans from, and `refresh`
/// the caller's request to use `read` now.
///
/// ```
/// use ctxkit_core::prompt::{freeze_prompt, FrozenParts, PromptParts};
///
/// let monday = PromptParts { date: "2026-03-02".into(), ..PromptParts::default() };
/// let first = freeze_prompt(&monday, None, None, false);
/// assert!(first.store);
/// let tuesday = PromptParts { date: "2026-03-03".into(), ..PromptParts::default() };
/// let kept = freeze_prompt(&tuesday, Some(&first.frozen), None, false);
/// assert_eq!((kept.parts.date.as_str(), kept.store), ("2026-03-02", false));
/// assert_eq!(kept.fresh.date, "2026-03-03");
/// // The turn compacted: its view holds the fresh parts, frozen at its checkpoint.
/// let stored = kept.after_turn(true, Some(40)).unwrap();
/// assert_eq!((stored.date.as_str(), stored.checkpoint_through), ("2026-03-03", Some(40)));
/// assert_eq!(kept.after_turn(false, None), None);
/// ```
pub fn freeze_prompt(
    read: &PromptParts,
    frozen: Option<&FrozenParts>,
    latest_checkpoint: Option<u64>,
    refresh: bool,
) -> FrozenPrompt {
    let current = frozen.filter(|frozen| {
        !refresh
            && frozen.checkpoint_through == latest_checkpoint
            && validate_date(&frozen.date).is_ok()
    });
    let (parts, decided) = match current {
        Some(frozen) => (frozen.apply(read), frozen.clone()),
        None => (read.clone(), FrozenParts::of(read, latest_checkpoint)),
    };
    FrozenPrompt {
        parts,
        fresh: read.clone(),
        store: frozen != Some(&decided),
        frozen: decided,
        stored: frozen.cloned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prompt::build_system_prompt;

    fn read(date: &str, precis: &str) -> PromptParts {
        PromptParts {
            working_directory: "/work/app".into(),
            date: date.into(),
            agents_md: Some("# Rules\nRun the tests.".into()),
            memory_precis: Some(precis.into()),
            ..PromptParts::default()
        }
    }

    #[test]
    fn a_session_without_frozen_parts_freezes_what_it_read() {
        let parts = read("2026-03-02", "- one");
        let decided = freeze_prompt(&parts, None, None, false);
        assert_eq!(decided.parts, parts);
        assert_eq!(decided.frozen, FrozenParts::of(&parts, None));
        assert!(decided.store);
        let compacted = freeze_prompt(&parts, None, Some(7), false);
        assert_eq!(compacted.frozen.checkpoint_through, Some(7));
        assert!(compacted.store);
    }

    #[test]
    fn between_compactions_the_prompt_is_byte_identical() {
        let first = freeze_prompt(&read("2026-03-02", "- one"), None, Some(3), false);
        let mut later = read("2026-03-03", "- one\n- two");
        later.agents_md = Some("# Rules\nEdited.".into());
        later.history_guidance = true;
        let second = freeze_prompt(&later, Some(&first.frozen), Some(3), false);
        assert!(!second.store);
        assert_eq!(second.frozen, first.frozen);
        let without_guidance = PromptParts {
            history_guidance: false,
            ..second.parts.clone()
        };
        assert_eq!(
            build_system_prompt(&without_guidance).unwrap(),
            build_system_prompt(&first.parts).unwrap()
        );
        // The history guidance still follows this turn's parts.
        assert!(second.parts.history_guidance);
    }

    #[test]
    fn a_new_checkpoint_or_a_refresh_takes_what_was_read() {
        let first = freeze_prompt(&read("2026-03-02", "- one"), None, None, false);
        let later = read("2026-03-03", "- one\n- two");
        for (checkpoint, refresh) in [(Some(9), false), (None, true)] {
            let decided = freeze_prompt(&later, Some(&first.frozen), checkpoint, refresh);
            assert_eq!(decided.parts, later);
            assert_eq!(decided.frozen, FrozenParts::of(&later, checkpoint));
            assert!(decided.store);
        }
        // A refresh that reads the same parts stores nothing.
        let same = freeze_prompt(&later, Some(&FrozenParts::of(&later, None)), None, true);
        assert!(!same.store);
    }

    #[test]
    fn a_damaged_frozen_date_is_refreshed() {
        let damaged = FrozenParts {
            date: "2026-02-30".into(),
            ..FrozenParts::of(&read("2026-03-02", "- one"), None)
        };
        let parts = read("2026-03-04", "- one");
        let decided = freeze_prompt(&parts, Some(&damaged), None, false);
        assert_eq!(decided.parts, parts);
        assert!(decided.store);
    }
}
