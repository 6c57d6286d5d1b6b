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
//!   first turn, or a session older than the frozen prefix), when a checkpoint came since they
//!   were frozen (the turn after a compaction: a compaction rewrites the prefix after the
//!   system prompt anyway, and memories its extraction found reach the prompt), when the caller
//!   asks for a refresh, and when the frozen date is not a real date (a damaged store).
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
    /// The parts to build this turn's system prompt from.
    pub parts: PromptParts,
    /// The frozen parts after this turn.
    pub frozen: FrozenParts,
    /// True when `frozen` differs from what was stored: the shell stores it.
    pub store: bool,
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
/// let compacted = freeze_prompt(&tuesday, Some(&first.frozen), Some(40), false);
/// assert_eq!((compacted.parts.date.as_str(), compacted.store), ("2026-03-03", true));
/// assert_eq!(compacted.frozen.checkpoint_through, Some(40));
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
    match current {
        Some(frozen) => FrozenPrompt {
            parts: frozen.apply(read),
            frozen: frozen.clone(),
            store: false,
        },
        None => {
            let fresh = FrozenParts::of(read, latest_checkpoint);
            FrozenPrompt {
                parts: read.clone(),
                store: frozen != Some(&fresh),
                frozen: fresh,
            }
        }
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
