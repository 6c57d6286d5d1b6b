//! Hand-written readers of the largest typed inputs (`ViewStats`, `SummaryRequest`, `Policy`;
//! `crate::view` reads the turn inputs with them), field by field from a `serde_json::Value`,
//! with the errors of serde's derived readers.
//!
//! Why: a derived `Deserialize` read through [`decode`] is compiled for serde_json's text
//! reader with every field's parsing inlined into one function per type (7.4 KB of code for
//! `ViewStats`, 5.9 KB for `SummaryRequest`, 5.0 KB for `Policy`). Here a struct reads each
//! field with [`decode`] of the field's own type, code that every struct with a field of that
//! type shares, so a struct costs a call per field (docs/performance.md, "Size").
//!
//! The errors are the derived readers' ones, which the tests below check input by input
//! against them: a value that is not an object is `<at>: invalid type: <kind>, expected an
//! object`; then the object's keys are taken in their order (serde_json's map is sorted, as the
//! JSON text `decode` reads is), and the first key whose value does not read (or that is
//! unknown, for a type that refuses unknown fields) gives the error, at `<at>.<key>`; then the
//! first required field that is absent, in declaration order, is `<at>.<field>: missing`.
//! One difference, on purpose: the derived readers also took a JSON array of the fields'
//! values in declaration order (serde's sequence form of a struct, never documented); these
//! refuse an array as any other value that is not an object.
//!
//! Guarantees: no panics; a failed field leaves its default in place only until the error is
//! returned, never in a value handed back.

use ctxkit_core::compaction::{
    Budget, ClearPolicy, ExtractiveLimits, Policy, RestoreLimits, SummaryRequest, ViewStats,
};
use ctxkit_core::memory::{MemoryEntry, NudgePolicy};
use ctxkit_core::offload::OffloadPolicy;
use ctxkit_core::prompt::{OffloadGuidance, PromptParts};
use ctxkit_core::text::TranscriptLimits;
use ctxkit_core::CoreError;
use ctxkit_core::Session;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::convert::{decode, describe, join, Result};

/// An object's fields being read, with the first error in the derived readers' order.
pub(crate) struct Fields<'a> {
    at: &'a str,
    fields: Map<String, Value>,
    /// The first failed value so far: its key's position in `fields`, and the error.
    failed: Option<(usize, CoreError)>,
    /// The first absent required field, in the order the fields were read.
    missing: Option<CoreError>,
}

impl<'a> Fields<'a> {
    /// The fields of `value`, which must be an object (`at` names it in errors).
    pub(crate) fn of(value: Value, at: &'a str) -> Result<Self> {
        let fields = match value {
            Value::Object(fields) => fields,
            // The error of reading a map from it: `invalid type: <kind>, expected an object`.
            other => decode::<Map<String, Value>>(other, at)?,
        };
        Ok(Fields {
            at,
            fields,
            failed: None,
            missing: None,
        })
    }

    /// Field `key` read by `read` (given the value and its path); `None` when absent, or when
    /// it does not read (the error kept).
    pub(crate) fn get_with<T>(
        &mut self,
        key: &str,
        read: impl FnOnce(Value, &str) -> Result<T>,
    ) -> Option<T> {
        let (position, value, at) = self.take(key)?;
        match read(value, &at) {
            Ok(read) => Some(read),
            Err(error) => {
                self.fail(position, error);
                None
            }
        }
    }

    /// Field `key` taken out, with its position in the key order and its path. Not generic
    /// (nor `fail` and `note_missing`), so the .wasm has it once rather than inlined into the
    /// reading of each field type.
    #[inline(never)]
    fn take(&mut self, key: &str) -> Option<(usize, Value, String)> {
        let position = self.fields.keys().position(|name| name == key)?;
        let value = self.fields.get_mut(key).map(std::mem::take)?;
        Some((position, value, join(self.at, key)))
    }

    /// Notes `<at>.<key>: missing` when `key` is absent and no earlier field was.
    #[inline(never)]
    fn note_missing(&mut self, key: &str) {
        if self.missing.is_none() && !self.fields.contains_key(key) {
            self.missing = Some(CoreError::invalid(join(self.at, key), "missing"));
        }
    }

    /// Keeps `error`, at key `position`, when it comes before the first error so far.
    #[inline(never)]
    fn fail(&mut self, position: usize, error: CoreError) {
        if self
            .failed
            .as_ref()
            .is_none_or(|(first, _)| position < *first)
        {
            self.failed = Some((position, error));
        }
    }

    /// Field `key` read as `T`; `None` when absent, or when it does not read (the error kept).
    // Not inlined, nor `or`, `or_default`, `required`, `require`, `list_or_default` and
    // `list`: one copy per field type rather than one per field read (docs/performance.md).
    #[inline(never)]
    pub(crate) fn get<T: DeserializeOwned>(&mut self, key: &str) -> Option<T> {
        self.get_with(key, decode::<T>)
    }

    /// Field `key`, or `default` when absent (a field of a `#[serde(default)]` struct).
    #[inline(never)]
    pub(crate) fn or<T: DeserializeOwned>(&mut self, key: &str, default: T) -> T {
        self.get(key).unwrap_or(default)
    }

    /// [`Fields::finish`] for a type that refuses unknown fields: a key not in `names` is an
    /// error at its place in the key order, worded as serde words it.
    pub(crate) fn finish_denying(mut self, names: &'static [&'static str]) -> Result<()> {
        let unknown = self
            .fields
            .keys()
            .position(|key| !names.contains(&key.as_str()));
        if let Some((position, key)) =
            unknown.and_then(|position| Some((position, self.fields.keys().nth(position)?)))
        {
            let message = <serde_json::Error as serde::de::Error>::unknown_field(key, names);
            let error = describe(join(self.at, key), &message.to_string());
            self.fail(position, error);
        }
        self.finish()
    }

    /// Field `key`, or its default when absent (an `Option`, or a `#[serde(default)]` field).
    #[inline(never)]
    pub(crate) fn or_default<T: DeserializeOwned + Default>(&mut self, key: &str) -> T {
        self.get(key).unwrap_or_default()
    }

    /// Field `key`, required: when absent, `<at>.<key>: missing` (unless an earlier field is).
    #[inline(never)]
    pub(crate) fn required<T: DeserializeOwned + Default>(&mut self, key: &str) -> T {
        self.note_missing(key);
        self.or_default(key)
    }

    /// Field `key`, required, of a type without a default: `None` when absent (then
    /// `<at>.<key>: missing` unless an earlier field is) or when it does not read.
    #[inline(never)]
    pub(crate) fn require<T: DeserializeOwned>(&mut self, key: &str) -> Option<T> {
        self.note_missing(key);
        self.get(key)
    }

    /// The first error, if any: a value that did not read, else an absent required field.
    pub(crate) fn finish(self) -> Result<()> {
        match (self.failed, self.missing) {
            (Some((_, error)), _) | (None, Some(error)) => Err(error),
            (None, None) => Ok(()),
        }
    }
}

/// A `ViewStats` (as `engine.view().stats` gave it); unknown fields are ignored, as derived.
pub(crate) fn view_stats(value: Value, at: &str) -> Result<ViewStats> {
    let mut f = Fields::of(value, at)?;
    let stats = ViewStats {
        tier: f.or_default("tier"),
        system_tokens: f.required("system_tokens"),
        summary_tokens: f.required("summary_tokens"),
        message_tokens: f.required("message_tokens"),
        nudge_tokens: f.required("nudge_tokens"),
        total_tokens: f.required("total_tokens"),
        calibrated_tokens: f.or_default("calibrated_tokens"),
        budget_tokens: f.required("budget_tokens"),
        trigger_tokens: f.required("trigger_tokens"),
        low_water_tokens: f.required("low_water_tokens"),
        fits: f.required("fits"),
        messages: f.required("messages"),
        checkpoint_through: f.or_default("checkpoint_through"),
        checkpoint_method: f.or_default("checkpoint_method"),
        last_seq: f.or_default("last_seq"),
        dropped_messages: f.required("dropped_messages"),
        cleared_results: f.required("cleared_results"),
        cut_messages: f.required("cut_messages"),
        offload_references: f.required("offload_references"),
        nudges: f.required("nudges"),
        repair: f.required_with("repair", repair_report).unwrap_or_default(),
        dropped_facts: f
            .get_with("dropped_facts", dropped_facts)
            .unwrap_or_default(),
        cache_breakpoints: f.list_or_default("cache_breakpoints", cache_breakpoint),
        refused_usage: f
            .get_with("refused_usage", optional(refused_usage))
            .unwrap_or_default(),
        fallbacks: f.list_or_default("fallbacks", fallback),
    };
    f.finish().map(|()| stats)
}

/// A `SummaryRequest` (as `planTurn` gave it); unknown fields are ignored, as derived.
pub(crate) fn summary_request(value: Value, at: &str) -> Result<SummaryRequest> {
    let mut f = Fields::of(value, at)?;
    let request = SummaryRequest {
        after_seq: f.or_default("after_seq"),
        through_seq: f.required("through_seq"),
        messages: f.required("messages"),
        covered_tokens: f.required("covered_tokens"),
        previous_summary: f.or_default("previous_summary"),
        system: f.required("system"),
        prompt: f.required("prompt"),
        max_summary_tokens: f.required("max_summary_tokens"),
        max_output_tokens: f.required("max_output_tokens"),
        turn: f.required("turn"),
        active_tasks: f.or_default("active_tasks"),
        restore: f.or_default("restore"),
        pinned: f.list_or_default("pinned", pinned_fact),
        dropped_facts: f
            .get_with("dropped_facts", dropped_facts)
            .unwrap_or_default(),
        answer_tag: f.or_default("answer_tag"),
        cache_safe_messages: f.list_or_default("cache_safe_messages", message),
        working_directory: f.or_default("working_directory"),
    };
    f.finish().map(|()| request)
}

/// A reader of a `#[serde(default, deny_unknown_fields)]` struct whose serde names are its
/// field names: `$read(value, at)`; an absent field is the default's, a field given as
/// `field => reader` is read by that reader (a hand-written one), the others with `decode`.
/// The struct literal names every field, so a field added to the type and not here does not
/// compile.
macro_rules! defaulted {
    ($(#[$doc:meta])* $read:ident, $ty:ident, [$($field:ident $(=> $with:expr)?),+ $(,)?]) => {
        $(#[$doc])*
        pub(crate) fn $read(
            value: serde_json::Value,
            at: &str,
        ) -> $crate::convert::Result<$ty> {
            let mut f = $crate::readers::Fields::of(value, at)?;
            let d = $ty::default();
            let read = $ty { $($field: $crate::readers::defaulted!(@field f, d, $field $(, $with)?)),+ };
            f.finish_denying(&[$(stringify!($field)),+]).map(|()| read)
        }
    };
    (@field $f:ident, $d:ident, $field:ident) => {
        $f.or(stringify!($field), $d.$field)
    };
    (@field $f:ident, $d:ident, $field:ident, $with:expr) => {
        $f.get_with(stringify!($field), $with).unwrap_or($d.$field)
    };
}

pub(crate) use defaulted;

defaulted!(
    /// An `ExtractiveLimits`.
    extractive_limits,
    ExtractiveLimits,
    [
        max_bytes,
        recent_calls,
        later_requests,
        decisions,
        errors,
        files,
        identifiers,
    ]
);
defaulted!(
    /// An `OffloadPolicy`.
    offload_policy,
    OffloadPolicy,
    [
        threshold_bytes,
        excluded_tools,
        paging_tool,
        offset_param,
        limit_param,
        head_max_lines,
        head_max_bytes,
        tail_max_lines,
        tail_max_bytes,
        folder,
        reference_root,
        paging_command,
    ]
);
defaulted!(
    /// A `NudgePolicy`.
    nudge_policy,
    NudgePolicy,
    [
        memory_every_turns,
        stall_after_turns,
        progress_tools,
        memory_tools,
        agent_tools,
        memory_text,
        stall_text,
    ]
);
defaulted!(
    /// A `ClearPolicy`.
    clear_policy,
    ClearPolicy,
    [keep_last_exchanges, batch_exchanges, exclude_tools, min_bytes]
);
defaulted!(
    /// A `TranscriptLimits`.
    transcript_limits,
    TranscriptLimits,
    [
        per_tool_output_bytes,
        per_tool_call_bytes,
        per_message_bytes,
        total_bytes,
    ]
);
defaulted!(
    /// A `RestoreLimits`.
    restore_limits,
    RestoreLimits,
    [max_files, per_file_tokens, share_percent, max_tokens]
);
defaulted!(
    /// A `Budget` (before the window's defaults: `crate::view` fills them in the JSON first).
    budget,
    Budget,
    [
        context_window,
        output_reserve,
        tool_schema_tokens,
        safety_margin,
        trigger_percent,
        low_water_percent,
        cost_trigger_tokens,
        cost_low_water_tokens,
    ]
);

defaulted!(
    /// The state of `Engine.fromJSON`, a `Session` (checked by the caller).
    session,
    Session,
    [
        family,
        entries => |value, at: &str| list(value, at, entry),
        checkpoints => |value, at: &str| list(value, at, checkpoint),
        nudge_state => nudge_state,
        usage_anchor => optional(usage_anchor),
        refused_usage => optional(refused_usage),
        summarizer_breaker => summarizer_breaker,
        frozen_prompt => optional(frozen_parts),
    ]
);

defaulted!(
    /// An `OffloadGuidance`.
    offload_guidance,
    OffloadGuidance,
    [folder, paging_tool, offset_param, limit_param]
);
defaulted!(
    /// A `PromptParts`.
    prompt_parts,
    PromptParts,
    [
        base,
        working_directory,
        date,
        agents_md,
        agents_md_max_bytes,
        skills => |value, at: &str| list(value, at, skill),
        todo_guidance,
        offload_guidance => optional(offload_guidance),
        history_guidance,
        memory_precis,
    ]
);

defaulted!(
    /// A `MemoryEntry`.
    memory_entry,
    MemoryEntry,
    [
        id,
        title,
        content,
        category,
        importance,
        source,
        scope,
        updated_at,
        tags,
        approved,
    ]
);

/// `read` for an `Option`: null is `None`, as serde reads an `Option` field.
pub(crate) fn optional<T>(
    read: fn(Value, &str) -> Result<T>,
) -> impl FnOnce(Value, &str) -> Result<Option<T>> {
    move |value, at| match value {
        Value::Null => Ok(None),
        value => read(value, at).map(Some),
    }
}

/// The fields of `Policy`, in declaration order (serde's list, for the unknown-field error).
const POLICY_FIELDS: &[&str] = &[
    "family",
    "strategy",
    "keep_last_messages",
    "max_summary_tokens",
    "summary_share_percent",
    "transcript",
    "extractive",
    "clear_tool_results",
    "nudges",
    "summary_mode",
    "background_percent",
    "cold_trigger_percent",
    "idle_trigger_percent",
    "idle_margin_percent",
    "restore",
    "working_directory",
];

/// A `Policy`: an absent field is the default policy's; unknown fields are refused.
pub(crate) fn policy(value: Value, at: &str) -> Result<Policy> {
    let mut f = Fields::of(value, at)?;
    let d = Policy::default();
    let policy = Policy {
        family: f.or("family", d.family),
        strategy: f.get_with("strategy", strategy).unwrap_or(d.strategy),
        keep_last_messages: f.or("keep_last_messages", d.keep_last_messages),
        max_summary_tokens: f.or("max_summary_tokens", d.max_summary_tokens),
        summary_share_percent: f.or("summary_share_percent", d.summary_share_percent),
        transcript: f
            .get_with("transcript", transcript_limits)
            .unwrap_or(d.transcript),
        extractive: f
            .get_with("extractive", extractive_limits)
            .unwrap_or(d.extractive),
        clear_tool_results: f
            .get_with("clear_tool_results", optional(clear_policy))
            .unwrap_or(d.clear_tool_results),
        nudges: f.get_with("nudges", nudge_policy).unwrap_or(d.nudges),
        summary_mode: f.or("summary_mode", d.summary_mode),
        background_percent: f.or("background_percent", d.background_percent),
        cold_trigger_percent: f.or("cold_trigger_percent", d.cold_trigger_percent),
        idle_trigger_percent: f.or("idle_trigger_percent", d.idle_trigger_percent),
        idle_margin_percent: f.or("idle_margin_percent", d.idle_margin_percent),
        restore: f
            .get_with("restore", optional(restore_limits))
            .unwrap_or(d.restore),
        working_directory: f.or("working_directory", d.working_directory),
    };
    f.finish_denying(POLICY_FIELDS).map(|()| policy)
}

mod records;
mod tagged;
pub(crate) use records::{
    cache_breakpoint, checkpoint, dropped_facts, entry, fallback, frozen_parts, list, message,
    nudge_state, pinned_fact, precis_options, read_messages, refused_usage, repair_report, skill,
    summarizer_breaker, todo_item, usage_anchor,
};
pub(crate) use tagged::{content, strategy};

#[cfg(test)]
pub(crate) mod tests;
