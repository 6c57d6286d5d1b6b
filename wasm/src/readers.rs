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

use ctxkit_core::compaction::{Policy, SummaryRequest, ViewStats};
use ctxkit_core::CoreError;
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
        let position = self.fields.keys().position(|name| name == key)?;
        let value = self.fields.get_mut(key).map(std::mem::take)?;
        match read(value, &join(self.at, key)) {
            Ok(read) => Some(read),
            Err(error) => {
                self.fail(position, error);
                None
            }
        }
    }

    /// Keeps `error`, at key `position`, when it comes before the first error so far.
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
    pub(crate) fn get<T: DeserializeOwned>(&mut self, key: &str) -> Option<T> {
        self.get_with(key, decode::<T>)
    }

    /// Field `key`, or `default` when absent (a field of a `#[serde(default)]` struct).
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
    pub(crate) fn or_default<T: DeserializeOwned + Default>(&mut self, key: &str) -> T {
        self.get(key).unwrap_or_default()
    }

    /// Field `key`, required: when absent, `<at>.<key>: missing` (unless an earlier field is).
    pub(crate) fn required<T: DeserializeOwned + Default>(&mut self, key: &str) -> T {
        if self.missing.is_none() && !self.fields.contains_key(key) {
            self.missing = Some(CoreError::invalid(join(self.at, key), "missing"));
        }
        self.or_default(key)
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
        repair: f.required("repair"),
        dropped_facts: f.or_default("dropped_facts"),
        cache_breakpoints: f.or_default("cache_breakpoints"),
        refused_usage: f.or_default("refused_usage"),
        fallbacks: f.or_default("fallbacks"),
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
        pinned: f.or_default("pinned"),
        dropped_facts: f.or_default("dropped_facts"),
        answer_tag: f.or_default("answer_tag"),
        cache_safe_messages: f.or_default("cache_safe_messages"),
    };
    f.finish().map(|()| request)
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
];

/// A `Policy`: an absent field is the default policy's; unknown fields are refused.
pub(crate) fn policy(value: Value, at: &str) -> Result<Policy> {
    let mut f = Fields::of(value, at)?;
    let d = Policy::default();
    let policy = Policy {
        family: f.or("family", d.family),
        strategy: f.or("strategy", d.strategy),
        keep_last_messages: f.or("keep_last_messages", d.keep_last_messages),
        max_summary_tokens: f.or("max_summary_tokens", d.max_summary_tokens),
        summary_share_percent: f.or("summary_share_percent", d.summary_share_percent),
        transcript: f.or("transcript", d.transcript),
        extractive: f.or("extractive", d.extractive),
        clear_tool_results: f.or("clear_tool_results", d.clear_tool_results),
        nudges: f.or("nudges", d.nudges),
        summary_mode: f.or("summary_mode", d.summary_mode),
        background_percent: f.or("background_percent", d.background_percent),
        cold_trigger_percent: f.or("cold_trigger_percent", d.cold_trigger_percent),
        idle_trigger_percent: f.or("idle_trigger_percent", d.idle_trigger_percent),
        idle_margin_percent: f.or("idle_margin_percent", d.idle_margin_percent),
        restore: f.or("restore", d.restore),
    };
    f.finish_denying(POLICY_FIELDS).map(|()| policy)
}

/// Test support: `read` and the derived reader give the same value or the same error for
/// `input`.
#[cfg(test)]
pub(crate) fn same<T: DeserializeOwned + PartialEq + std::fmt::Debug>(
    read: fn(Value, &str) -> Result<T>,
    input: Value,
) {
    let hand = read(input.clone(), "x").map_err(|error| error.to_string());
    let derived = decode::<T>(input.clone(), "x").map_err(|error| error.to_string());
    assert_eq!(hand, derived, "{input}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The keys of the object `value` (none for another value).
    fn keys(value: &Value) -> Vec<String> {
        value
            .as_object()
            .map(|fields| fields.keys().cloned().collect())
            .unwrap_or_default()
    }

    fn stats() -> Value {
        serde_json::to_value(ViewStats::default()).unwrap_or_default()
    }

    /// `base` with `key` set to `value` (removed when `value` is `None`).
    fn with(base: &Value, key: &str, value: Option<Value>) -> Value {
        let mut base = base.clone();
        if let Value::Object(fields) = &mut base {
            match value {
                Some(value) => fields.insert(key.to_owned(), value),
                None => fields.remove(key),
            };
        }
        base
    }

    #[test]
    fn view_stats_reads_as_derived() {
        let base = stats();
        same(view_stats, base.clone());
        same(view_stats, json!({}));
        same(view_stats, json!({"fits": true, "system_tokens": "ten"}));
        same(
            view_stats,
            json!({"zeta": 1, "budget_tokens": -1, "fits": 3}),
        );
        for kind in [
            json!(7),
            json!(-2),
            json!(1.5),
            json!("s"),
            json!(null),
            json!(true),
        ] {
            same(view_stats, kind);
        }
        let keys = keys(&base);
        assert!(!keys.is_empty(), "{base}");
        for key in &keys {
            same(view_stats, with(&base, key, None));
            same(view_stats, with(&base, key, Some(json!("bad"))));
            same(view_stats, with(&base, key, Some(json!(null))));
            same(view_stats, with(&base, key, Some(json!({"nested": [1]}))));
        }
        let nested = with(&base, "repair", Some(json!({"dropped_results": "x"})));
        same(view_stats, with(&nested, "tier", Some(json!("fits"))));
        same(view_stats, with(&base, "tier", Some(json!("nope"))));
        same(view_stats, with(&base, "unknown", Some(json!(1))));
    }

    #[test]
    fn summary_request_reads_as_derived() {
        let base = json!({
            "after_seq": 3, "through_seq": 9, "messages": 6, "covered_tokens": 900,
            "previous_summary": null, "system": "s", "prompt": "p", "max_summary_tokens": 100,
            "max_output_tokens": 200, "turn": 2, "active_tasks": "t", "restore": "r",
            "pinned": [], "answer_tag": "summary",
            "cache_safe_messages": [{"role": "user", "content": "hi"}]
        });
        same(summary_request, base.clone());
        same(summary_request, json!({}));
        // The one difference: an array is not read as the fields in declaration order.
        assert_eq!(
            summary_request(json!([]), "x").map_err(|error| error.to_string()),
            Err("x: invalid type: sequence, expected an object".to_owned())
        );
        let keys = keys(&base);
        assert!(!keys.is_empty(), "{base}");
        for key in &keys {
            same(summary_request, with(&base, key, None));
            same(summary_request, with(&base, key, Some(json!(-1))));
            same(summary_request, with(&base, key, Some(json!(null))));
        }
        same(
            summary_request,
            with(
                &base,
                "cache_safe_messages",
                Some(json!([{"role": "user"}])),
            ),
        );
        same(
            summary_request,
            with(&base, "pinned", Some(json!([{"x": 1}]))),
        );
    }

    #[test]
    fn policy_reads_as_derived() {
        let base = serde_json::to_value(Policy::default()).unwrap_or_default();
        same(policy, base.clone());
        same(policy, json!({}));
        same(policy, json!(3));
        same(policy, json!({"nudges": {"memory_every_turns": "ten"}}));
        same(policy, json!({"zz": 1, "family": "nope"}));
        same(policy, json!({"aa": 1, "family": "nope"}));
        same(policy, json!({"background_percent": null, "restore": null}));
        let keys = keys(&base);
        assert!(!keys.is_empty(), "{base}");
        for key in &keys {
            same(policy, with(&base, key, None));
            same(policy, with(&base, key, Some(json!("bad"))));
            same(policy, with(&base, key, Some(json!(null))));
            same(policy, with(&base, key, Some(json!({"nested": 1}))));
        }
    }
}
