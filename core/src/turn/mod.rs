//! The turn: a [`Session`] in memory and the [`TurnDriver`], the one implementation of the
//! turn protocol (plan → extraction if asked → summary → plan again → ready → finish), plus the small
//! rules every shell and store applies around a turn (`rules`), and the decision to compact a
//! session that sits idle as its cache is about to expire (`idle`).
//!
//! The native `Engine` answers the driver's steps with SQLite, files and HTTP; the wasm
//! `Engine` with JS callbacks; [`Session::prepare_offline`] with the deterministic fallbacks.

pub(crate) mod background;
pub mod breaker;
pub(crate) mod driver;
#[cfg(test)]
mod fallback_tests;
pub(crate) mod held_prefix;
pub(crate) mod idle;
#[cfg(test)]
mod restore_tests;
pub(crate) mod rules;
pub(crate) mod session;
#[cfg(test)]
mod tests;

pub use background::{
    background_checkpoint, background_marks, background_request, BackgroundCheckpoint,
    BackgroundSlot,
};
pub use breaker::SummarizerBreaker;
pub use driver::{
    SummaryOutcome, TurnChanges, TurnDriver, TurnResult, TurnStep, STALE_ANSWER,
    STALE_BACKGROUND_ANSWER,
};
pub use held_prefix::{
    first_difference, fork_name, held_prefix, held_prefix_by, message_fingerprint, Divergence,
    HeldEnds, HeldPrefix,
};
pub use idle::{
    idle_decision, idle_margin_seconds, IdleDecision, IdleSkip, MIN_IDLE_MARGIN_SECONDS,
};
// Kept with the log they read; named here too, where the turn's rules are.
pub use crate::model::{tool_name_for_result, CALL_LOOKBACK};
pub use rules::{
    cache_expired, check_requested_family, policy_for_session, turn_tail_after,
    DEFAULT_CACHE_TTL_SECONDS,
};
pub use session::{Session, TurnInputs};

#[cfg(test)]
mod unit_enum_names;
