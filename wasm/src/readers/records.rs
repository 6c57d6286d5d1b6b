//! Hand-written readers of the small records inside the largest inputs (the view's stats, a
//! checkpoint, the summary request, the Engine's state, the turn inputs): the repair report,
//! the pinned facts, the fallbacks, the cache breakpoints, the todos, the usage records, the
//! nudge state, the frozen prompt, the log's entries and the precis options. Why by hand, and the errors they give: `crate::readers`.
//!
//! Each is read wherever the shell reads its type, so the derived reader of the type is no
//! longer compiled into the .wasm (about 1-2 KB of code each).

use ctxkit_core::compaction::{Checkpoint, DroppedFacts, Fallback, PinnedFact, TodoItem};
use ctxkit_core::memory::{NudgeState, PrecisOptions};
use ctxkit_core::model::{Entry, Message, ProviderFields, ToolCall};
use ctxkit_core::prompt::{FrozenParts, Skill};
use ctxkit_core::tokens::{RefusedUsage, UsageAnchor};
use ctxkit_core::turn::SummarizerBreaker;
use ctxkit_core::wire::breakpoints::CacheBreakpoint;
use ctxkit_core::wire::RepairReport;
use ctxkit_core::CoreError;
use serde_json::Value;

use super::{optional, Fields};
use crate::convert::{decode, describe, expected, join, Result};

/// An array read element by element with `read` (paths `<at>[<index>]`); another value is
/// `invalid type: <kind>, expected an array`, as serde's `Vec` reader says it.
#[inline(never)]
pub(crate) fn list<T>(
    value: Value,
    at: &str,
    read: fn(Value, &str) -> Result<T>,
) -> Result<Vec<T>> {
    // A plain loop over non-generic steps: the iterator chain compiled its adapters and
    // collection (GenericShunt, try_fold, from_iter...) anew for every element type.
    let items = array_items(value, at)?;
    let mut out = Vec::with_capacity(items.len());
    for (index, item) in items.into_iter().enumerate() {
        out.push(read(item, &element_path(at, index))?);
    }
    Ok(out)
}

/// [`list`]'s array, or its error.
#[inline(never)]
fn array_items(value: Value, at: &str) -> Result<Vec<Value>> {
    match value {
        Value::Array(items) => Ok(items),
        other => decode::<Vec<Value>>(other, at),
    }
}

/// `<at>[<index>]`.
#[inline(never)]
fn element_path(at: &str, index: usize) -> String {
    format!("{at}[{index}]")
}

/// `value` of a required field that `f` read as `None`: after [`Fields::finish`] succeeded,
/// `None` cannot happen (an absent field is `missing`, a bad one its own error), but the
/// error is kept so no path panics.
pub(super) fn present<T>(value: Option<T>, at: &str, key: &str) -> Result<T> {
    value.ok_or_else(|| CoreError::invalid(join(at, key), "missing"))
}

impl Fields<'_> {
    /// Field `key` read by `read`, required: when absent, `<at>.<key>: missing` (unless an
    /// earlier field is); `None` then, or when it does not read.
    pub(crate) fn required_with<T>(
        &mut self,
        key: &str,
        read: impl FnOnce(Value, &str) -> Result<T>,
    ) -> Option<T> {
        self.note_missing(key);
        self.get_with(key, read)
    }

    /// Field `key`, an array read element by element by `read` ([`list`]); empty when absent.
    #[inline(never)]
    pub(crate) fn list_or_default<T>(
        &mut self,
        key: &str,
        read: fn(Value, &str) -> Result<T>,
    ) -> Vec<T> {
        self.get_with(key, |value, at| list(value, at, read))
            .unwrap_or_default()
    }
}

/// An array of messages in the ctxkit form, read one by one so errors name the message
/// (`messages[3].role: missing`); another value is `expected an array of messages, found ...`.
pub(crate) fn read_messages(value: Value, at: &str) -> Result<Vec<Message>> {
    match value {
        items @ Value::Array(_) => list(items, at, message),
        other => Err(expected(at, "an array of messages", &other)),
    }
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

/// A `Message`; unknown fields refused, as derived. Its content is read by `Content`'s own
/// reader (text, `null`, or an array of parts).
pub(crate) fn message(value: Value, at: &str) -> Result<Message> {
    let mut f = Fields::of(value, at)?;
    let role = f.require("role");
    let content = f.get_with("content", super::content).unwrap_or_default();
    let tool_calls = f.list_or_default("tool_calls", tool_call);
    let tool_call_id = f.or_default("tool_call_id");
    let is_error = f.or_default("is_error");
    let name = f.or_default("name");
    let provider_fields = f
        .get_with("provider_fields", optional(provider_fields))
        .unwrap_or_default();
    f.finish_denying(&[
        "role",
        "content",
        "tool_calls",
        "tool_call_id",
        "is_error",
        "name",
        "provider_fields",
    ])?;
    Ok(Message {
        role: present(role, at, "role")?,
        content,
        tool_calls,
        tool_call_id,
        is_error,
        name,
        provider_fields,
    })
}

/// A `ToolCall`; unknown fields refused, as derived.
pub(crate) fn tool_call(value: Value, at: &str) -> Result<ToolCall> {
    let mut f = Fields::of(value, at)?;
    let call = ToolCall {
        id: f.required("id"),
        name: f.required("name"),
        arguments: f.required("arguments"),
        provider_fields: f
            .get_with("provider_fields", optional(provider_fields))
            .unwrap_or_default(),
    };
    f.finish_denying(&["id", "name", "arguments", "provider_fields"])
        .map(|()| call)
}

/// A `ProviderFields`; unknown fields refused, as derived.
pub(crate) fn provider_fields(value: Value, at: &str) -> Result<ProviderFields> {
    let mut f = Fields::of(value, at)?;
    let provider = f.require("provider");
    let fields = f.required("fields");
    f.finish_denying(&["provider", "fields"])?;
    Ok(ProviderFields {
        provider: present(provider, at, "provider")?,
        fields,
    })
}

/// A `SummarizerBreaker`: absent fields are 0, unknown fields refused, as derived; its old
/// field name `consecutive_timeouts` reads as `consecutive_failures`, and both given is serde's
/// `duplicate field`, at the second of them in key order (serde stops at that key).
pub(crate) fn summarizer_breaker(value: Value, at: &str) -> Result<SummarizerBreaker> {
    const NAMES: &[&str] = &[
        "consecutive_failures",
        "consecutive_timeouts",
        "skip_compactions",
    ];
    let mut f = Fields::of(value, at)?;
    let old_name = f
        .fields
        .keys()
        .position(|key| key == "consecutive_timeouts");
    if let Some(position) = old_name.filter(|_| f.fields.contains_key("consecutive_failures")) {
        let error = describe(
            join(at, "consecutive_timeouts"),
            "duplicate field `consecutive_failures`",
        );
        f.fail(position, error);
    }
    let consecutive_failures = match f.get("consecutive_failures") {
        Some(count) => count,
        None => f.or_default("consecutive_timeouts"),
    };
    let breaker = SummarizerBreaker {
        consecutive_failures,
        skip_compactions: f.or_default("skip_compactions"),
    };
    f.finish_denying(NAMES).map(|()| breaker)
}

/// A `Checkpoint`; unknown fields are ignored, as derived.
pub(crate) fn checkpoint(value: Value, at: &str) -> Result<Checkpoint> {
    let mut f = Fields::of(value, at)?;
    let through_seq = f.required("through_seq");
    let summary = f.required("summary");
    let method = f.require("method");
    let active_tasks = f.or_default("active_tasks");
    let tokens = f.required("tokens");
    let made_at_turn = f.required("made_at_turn");
    let pinned = f.list_or_default("pinned", pinned_fact);
    let dropped_facts = f
        .get_with("dropped_facts", dropped_facts)
        .unwrap_or_default();
    let compaction_block = f.or_default("compaction_block");
    let restore = f.or_default("restore");
    f.finish()?;
    let method = method.ok_or_else(|| CoreError::invalid(join(at, "method"), "missing"))?;
    Ok(Checkpoint {
        through_seq,
        summary,
        method,
        active_tasks,
        tokens,
        made_at_turn,
        pinned,
        dropped_facts,
        compaction_block,
        restore,
    })
}

/// An `Entry` of the log; unknown fields ignored, as derived.
pub(crate) fn entry(value: Value, at: &str) -> Result<Entry> {
    let mut f = Fields::of(value, at)?;
    let seq = f.required("seq");
    let message = f.required_with("message", self::message);
    let tokens = f.required("tokens");
    f.finish()?;
    Ok(Entry {
        seq,
        message: present(message, at, "message")?,
        tokens,
    })
}

defaulted!(
    /// A `PrecisOptions`.
    precis_options,
    PrecisOptions,
    [max_entries, max_bytes]
);
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
