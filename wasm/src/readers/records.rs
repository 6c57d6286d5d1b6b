//! Hand-written readers of the small records inside the largest inputs (the view's stats, a
//! checkpoint, the summary request, the Engine's state, the turn inputs): the repair report,
//! the pinned facts, the fallbacks, the cache breakpoints, the todos, the usage records, the
//! nudge state and the frozen prompt. Why by hand, and the errors they give: `crate::readers`.
//!
//! Each is read wherever the shell reads its type, so the derived reader of the type is no
//! longer compiled into the .wasm (about 1-2 KB of code each).

use ctxkit_core::compaction::{DroppedFacts, Fallback, PinnedFact, TodoItem};
use ctxkit_core::memory::NudgeState;
use ctxkit_core::prompt::{FrozenParts, Skill};
use ctxkit_core::tokens::{RefusedUsage, UsageAnchor};
use ctxkit_core::wire::breakpoints::CacheBreakpoint;
use ctxkit_core::wire::RepairReport;
use ctxkit_core::CoreError;
use serde_json::Value;

use super::Fields;
use crate::convert::{join, Result};

/// `value` of a required field that `f` read as `None`: after [`Fields::finish`] succeeded,
/// `None` cannot happen (an absent field is `missing`, a bad one its own error), but the
/// error is kept so no path panics.
fn present<T>(value: Option<T>, at: &str, key: &str) -> Result<T> {
    value.ok_or_else(|| CoreError::invalid(join(at, key), "missing"))
}

/// A `RepairReport`; every field required, unknown fields ignored, as derived.
pub(crate) fn repair_report(value: Value, at: &str) -> Result<RepairReport> {
    let mut f = Fields::of(value, at)?;
    let report = RepairReport {
        dropped_results: f.required("dropped_results"),
        moved_results: f.required("moved_results"),
        missing_results: f.required("missing_results"),
        empty_results: f.required("empty_results"),
        renamed_ids: f.required("renamed_ids"),
        dropped_blank: f.required("dropped_blank"),
        inserted_leading_user: f.required("inserted_leading_user"),
    };
    f.finish().map(|()| report)
}

/// A `DroppedFacts`: absent fields are 0, unknown fields ignored, as derived.
pub(crate) fn dropped_facts(value: Value, at: &str) -> Result<DroppedFacts> {
    let mut f = Fields::of(value, at)?;
    let facts = DroppedFacts {
        paths: f.or_default("paths"),
        errors: f.or_default("errors"),
        requests: f.or_default("requests"),
        identifiers: f.or_default("identifiers"),
    };
    f.finish().map(|()| facts)
}

/// A `PinnedFact`; unknown fields ignored, as derived.
pub(crate) fn pinned_fact(value: Value, at: &str) -> Result<PinnedFact> {
    let mut f = Fields::of(value, at)?;
    let kind = f.require("kind");
    let text = f.required("text");
    f.finish()?;
    Ok(PinnedFact {
        kind: present(kind, at, "kind")?,
        text,
    })
}

/// A `Fallback`; unknown fields ignored, as derived.
pub(crate) fn fallback(value: Value, at: &str) -> Result<Fallback> {
    let mut f = Fields::of(value, at)?;
    let call = f.require("call");
    let kind = f.require("kind");
    let reason = f.required("reason");
    f.finish()?;
    Ok(Fallback {
        call: present(call, at, "call")?,
        kind: present(kind, at, "kind")?,
        reason,
    })
}

/// A `CacheBreakpoint`; unknown fields ignored, as derived.
pub(crate) fn cache_breakpoint(value: Value, at: &str) -> Result<CacheBreakpoint> {
    let mut f = Fields::of(value, at)?;
    let reason = f.require("reason");
    let after_message = f.or_default("after_message");
    f.finish()?;
    Ok(CacheBreakpoint {
        reason: present(reason, at, "reason")?,
        after_message,
    })
}

/// A `TodoItem`; unknown fields ignored, as derived.
pub(crate) fn todo_item(value: Value, at: &str) -> Result<TodoItem> {
    let mut f = Fields::of(value, at)?;
    let content = f.required("content");
    let status = f.require("status");
    f.finish()?;
    Ok(TodoItem {
        content,
        status: present(status, at, "status")?,
    })
}

/// A `RefusedUsage`; unknown fields refused, as derived.
pub(crate) fn refused_usage(value: Value, at: &str) -> Result<RefusedUsage> {
    let mut f = Fields::of(value, at)?;
    let usage = RefusedUsage {
        input_tokens: f.required("input_tokens"),
        estimated_tokens: f.required("estimated_tokens"),
        lowest_plausible: f.required("lowest_plausible"),
        highest_plausible: f.required("highest_plausible"),
    };
    f.finish_denying(&[
        "input_tokens",
        "estimated_tokens",
        "lowest_plausible",
        "highest_plausible",
    ])
    .map(|()| usage)
}

/// A `UsageAnchor`; unknown fields refused, as derived.
pub(crate) fn usage_anchor(value: Value, at: &str) -> Result<UsageAnchor> {
    let mut f = Fields::of(value, at)?;
    let anchor = UsageAnchor {
        checkpoint_through: f.or_default("checkpoint_through"),
        last_seq: f.or_default("last_seq"),
        input_tokens: f.required("input_tokens"),
        estimated_tokens: f.required("estimated_tokens"),
    };
    f.finish_denying(&[
        "checkpoint_through",
        "last_seq",
        "input_tokens",
        "estimated_tokens",
    ])
    .map(|()| anchor)
}

defaulted!(
    /// A `NudgeState`.
    nudge_state,
    NudgeState,
    [turn, last_seq, turns_without_progress]
);
defaulted!(
    /// A `FrozenParts`.
    frozen_parts,
    FrozenParts,
    [checkpoint_through, date, agents_md, memory_precis]
);
defaulted!(
    /// A `Skill`.
    skill,
    Skill,
    [name, description]
);

#[cfg(test)]
mod tests;
