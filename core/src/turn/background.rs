//! Compaction off the critical path: at a soft threshold below the trigger, a turn that is
//! ready also hands out a summary request to answer in the background; the finished
//! checkpoint waits beside the session and is used, instead of a summary call, by the first
//! turn that reaches the trigger.
//!
//! - **The request** ([`background_request`]) is the one the turn would make if the trigger
//!   were the soft threshold ([`crate::compaction::Policy::background_percent`] of the way
//!   from the low-water mark to the trigger) and the low-water mark lower by what the view
//!   grows until the trigger ([`background_marks`]), so the view at the trigger is about the
//!   one a compaction there would give.
//! - **The answer** ([`background_checkpoint`]) is turned into a checkpoint as a summary call's
//!   would be (an unusable answer falls back to the extractive summary), and remembers which
//!   checkpoint the request was built on.
//! - **Used only at the trigger, and only when still current** ([`BackgroundCheckpoint::usable`]):
//!   before the trigger a background checkpoint changes nothing (the view of every turn before
//!   the trigger is the one it would be without it); at the trigger it is used only when the
//!   session's latest checkpoint is still the one it was built on (else it is stale: a
//!   compaction reached the session meanwhile) and it covers only logged messages. Otherwise
//!   the turn compacts synchronously, as without it.
//!
//! At most one is in flight per session: the shell holds the slot and says so in
//! [`crate::turn::TurnInputs::background`].

use serde::{Deserialize, Serialize};

use crate::compaction::{plan_turn, summary_checkpoint, Checkpoint, Plan, SummaryRequest};
use crate::error::Result;
use crate::turn::rules::policy_for_session;
use crate::turn::{Session, TurnInputs};

/// A checkpoint made in the background, waiting for the trigger.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BackgroundCheckpoint {
    /// The `through_seq` of the checkpoint its request was built on (`None`: none).
    pub based_on: Option<u64>,
    /// The checkpoint.
    pub checkpoint: Checkpoint,
}

impl BackgroundCheckpoint {
    /// True when `session` can use it: its latest checkpoint is still the one this was built
    /// on, and this covers only logged messages and more than that checkpoint.
    pub fn usable(&self, session: &Session) -> bool {
        let latest = session.latest_checkpoint().map(|c| c.through_seq);
        let last_seq = session.entries.last().map_or(0, |entry| entry.seq);
        latest == self.based_on
            && self.checkpoint.through_seq <= last_seq
            && Some(self.checkpoint.through_seq) > latest
    }

    /// True when another checkpoint reached `session` after this one's request started (a
    /// view or a turn compacted meanwhile), so this one can never be used: the work it holds
    /// is lost. This checkpoint itself, once a turn stored it, is not another.
    pub fn is_stale(&self, session: &Session) -> bool {
        match session.latest_checkpoint() {
            Some(latest) => {
                Some(latest.through_seq) != self.based_on
                    && (latest.through_seq, &latest.summary)
                        != (self.checkpoint.through_seq, &self.checkpoint.summary)
            }
            None => self.based_on.is_some(),
        }
    }
}

/// What the shell holds for a session between turns.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub enum BackgroundSlot<'x> {
    /// Nothing in flight, nothing ready: a ready turn past the soft threshold may hand out a
    /// request.
    #[default]
    Idle,
    /// A request is being answered: no other is handed out.
    InFlight,
    /// A checkpoint is ready for the trigger.
    Ready(&'x BackgroundCheckpoint),
}

impl BackgroundSlot<'_> {
    /// The ready checkpoint, owned (for a caller that must let go of the slot's borrow).
    pub fn cloned_ready(&self) -> Option<BackgroundCheckpoint> {
        match self {
            BackgroundSlot::Ready(ready) => Some((*ready).clone()),
            _ => None,
        }
    }
}

/// The background request for `session`'s next turn, if the policy asks for background
/// compaction and the view has passed the soft threshold: the summary request the turn would
/// make with [`background_marks`] as its trigger and low-water mark. `None` otherwise.
pub fn background_request(
    session: &Session,
    inputs: &TurnInputs<'_>,
) -> Result<Option<SummaryRequest>> {
    let policy = policy_for_session(inputs.policy, session.family);
    let Some(percent) = policy.background_percent else {
        return Ok(None);
    };
    let (soft, low) = background_marks(&inputs.budget, percent);
    if soft >= inputs.budget.trigger() {
        return Ok(None);
    }
    let budget = crate::compaction::Budget {
        cost_trigger_tokens: Some(soft),
        cost_low_water_tokens: Some(low),
        ..inputs.budget
    };
    let plan = plan_turn(&crate::compaction::PlanInput {
        log: &session.entries,
        checkpoint: session.latest_checkpoint(),
        system_prompt: inputs.system_prompt,
        budget,
        policy: &policy,
        nudge_state: session.nudge_state,
        usage_anchor: session.usage_anchor.as_ref(),
        todos: inputs.todos,
    })?;
    Ok(match plan {
        Plan::Summarize(request) => Some(*request),
        Plan::Ready(_) => None,
    })
}

/// The soft threshold and the background summary's low-water mark for `budget`: the soft
/// threshold is `percent` of the way from the low-water mark to the trigger, and the summary
/// aims lower than a synchronous one by what the view will grow until the trigger (but at
/// least half the low-water mark), so that the view it gives at the trigger is about the one
/// a compaction there would give.
pub fn background_marks(budget: &crate::compaction::Budget, percent: u8) -> (u64, u64) {
    let (trigger, low) = (budget.trigger(), budget.low_water());
    let soft = low + (trigger - low) * u64::from(percent.min(100)) / 100;
    let growth = trigger - soft;
    (soft, low.saturating_sub(growth).max(low / 2))
}

/// The background checkpoint for `request` from the summarizer's `answer` (`None`, or an
/// unusable answer: the extractive summary), made on `session` as it now is (the log only
/// grows, so everything the request covers is there).
pub fn background_checkpoint(
    request: &SummaryRequest,
    answer: Option<&str>,
    session: &Session,
    inputs: &TurnInputs<'_>,
) -> Result<BackgroundCheckpoint> {
    let policy = policy_for_session(inputs.policy, session.family);
    let (checkpoint, _) = summary_checkpoint(
        request,
        answer,
        &session.entries,
        &policy.extractive,
        session.family,
    )?;
    Ok(BackgroundCheckpoint {
        based_on: request.after_seq,
        checkpoint,
    })
}
