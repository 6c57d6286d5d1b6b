//! The small rules every shell and every store applies around a turn, kept here once:
//!
//! - **the model-family rule** ([`policy_for_session`], [`check_requested_family`]): a session's
//!   token estimates are cached for one family, so a turn always plans for the session's family;
//!   a caller that names another family explicitly is told so, never silently overridden;
//! - **the turn-tail rule** ([`turn_tail_after`]): which entries a turn reads (a store loads
//!   only those, an engine keeps only those cached);
//! - **which tool produced a result** ([`crate::model::tool_name_for_result`], kept with the
//!   log it reads), for the offload exclusions;
//! - **when the provider's cache has expired** ([`cache_expired`]), for
//!   [`crate::turn::TurnInputs::cache_expired`].
//!
//! The output caps of the LLM calls a turn asks for travel in the requests themselves
//! ([`crate::SummaryRequest::max_output_tokens`], [`crate::memory::ExtractionRequest::max_output_tokens`]).

use crate::compaction::Policy;
use crate::error::{CoreError, Result};
use crate::memory::NudgeState;
use crate::tokens::ModelFamily;

/// The cache lifetime a shell assumes when it knows no other: Anthropic's default five minutes,
/// and the shortest OpenAI keeps a prefix.
pub const DEFAULT_CACHE_TTL_SECONDS: i64 = 300;

/// True when the provider's cache of the previous request has expired by `now`: the previous
/// call was made at `last_call_at` (`None`: none this process knows of, so not expired) more
/// than `ttl_seconds` ago. Times in seconds.
pub fn cache_expired(last_call_at: Option<i64>, now: i64, ttl_seconds: i64) -> bool {
    last_call_at.is_some_and(|before| now.saturating_sub(before) > ttl_seconds)
}

/// The policy a turn of a session with estimates cached for `session_family` plans with: the
/// caller's policy with the session's family.
pub fn policy_for_session(policy: &Policy, session_family: ModelFamily) -> Policy {
    Policy {
        family: session_family,
        ..policy.clone()
    }
}

/// Checks a family the caller named explicitly for a turn (`at`: where it was named) against the
/// session's. A session's estimates are cached for one family, so another is an error.
pub fn check_requested_family(
    requested: ModelFamily,
    session_family: ModelFamily,
    at: &str,
) -> Result<()> {
    if requested == session_family {
        return Ok(());
    }
    Err(CoreError::invalid(
        at,
        format!(
            "\"{}\" differs from the engine's family \"{}\" (a session's estimates are cached for one family; create the Engine with the family you plan for)",
            requested.as_str(),
            session_family.as_str()
        ),
    ))
}

/// The last `seq` a turn does not need: a turn reads the entries after the latest checkpoint,
/// or after the previous turn's last `seq` if that is earlier (nudges count every message
/// since the previous turn). `None`: the turn reads the whole log.
pub fn turn_tail_after(checkpoint_through: Option<u64>, nudge_state: &NudgeState) -> Option<u64> {
    let through = checkpoint_through?;
    Some(
        nudge_state
            .last_seq
            .map_or(through, |last| through.min(last)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{tool_name_for_result, Entry, Message, ToolCall};

    #[test]
    fn the_tail_starts_at_the_earlier_of_checkpoint_and_last_turn() {
        let state = |last_seq| NudgeState {
            turn: 3,
            last_seq,
            turns_without_progress: 0,
        };
        assert_eq!(turn_tail_after(None, &state(Some(9))), None);
        assert_eq!(turn_tail_after(Some(10), &state(None)), Some(10));
        assert_eq!(turn_tail_after(Some(10), &state(Some(7))), Some(7));
        assert_eq!(turn_tail_after(Some(10), &state(Some(12))), Some(10));
    }

    #[test]
    fn a_result_names_the_tool_of_its_call() {
        let log = Entry::number(
            [
                Message::assistant("", vec![ToolCall::new("a", "read_file", "{}")]),
                Message::tool_result("a", "x", false),
                Message::assistant("", vec![ToolCall::new("b", "bash", "{}")]),
            ],
            1,
            ModelFamily::OpenAi,
        );
        assert_eq!(tool_name_for_result(&log, "a"), Some("read_file"));
        assert_eq!(tool_name_for_result(&log, "b"), Some("bash"));
        assert_eq!(tool_name_for_result(&log, "c"), None);
    }

    #[test]
    fn the_session_family_wins_and_a_named_other_is_an_error() {
        let policy = policy_for_session(&Policy::default(), ModelFamily::Claude);
        assert_eq!(policy.family, ModelFamily::Claude);
        assert!(check_requested_family(ModelFamily::Claude, ModelFamily::Claude, "p").is_ok());
        let error = check_requested_family(ModelFamily::OpenAi, ModelFamily::Claude, "p.family");
        assert!(error.is_err_and(|e| e.to_string().starts_with("p.family: \"openai\" differs")));
    }
}
