//! OpenAI's explicit cache breakpoints (GPT-5.6 and later) as the validators check them: a
//! `prompt_cache_breakpoint` only on a part that takes one (`input_text`, `input_image`,
//! `input_file` in Responses; `text`, `image_url`, `file` of a non-assistant message in Chat
//! Completions), with the documented value (`{"mode": "explicit"}`), and at most four in a
//! request. The field's name, value and the eligible types are `crate::wire::breakpoints`'s,
//! the one place ctxkit spells them.

use serde_json::Value;

use super::{violation, Violation};
use crate::wire::breakpoints::{
    openai_breakpoint_marker, MAX_BREAKPOINTS, OPENAI_BREAKPOINT_FIELD,
};

/// Checks the marker of one part at `at`; `eligible` when the part may carry one. Returns
/// whether it carries one.
pub(super) fn check_mark(
    part: &Value,
    at: &str,
    eligible: bool,
    violations: &mut Vec<Violation>,
) -> bool {
    let Some(marker) = part.get(OPENAI_BREAKPOINT_FIELD) else {
        return false;
    };
    let field_at = format!("{at}.{OPENAI_BREAKPOINT_FIELD}");
    if !eligible {
        violations.push(violation(
            field_at.clone(),
            format!("Unknown parameter: '{field_at}'."),
        ));
        return false;
    }
    let expected = openai_breakpoint_marker();
    let mode_ok = marker.get("mode") == expected.get("mode");
    let only_known = marker
        .as_object()
        .is_some_and(|fields| fields.keys().all(|key| key == "mode" || key == "ttl"));
    if !mode_ok || !only_known {
        violations.push(violation(
            field_at.clone(),
            format!("Invalid value for '{field_at}': expected an object {expected}."),
        ));
    }
    true
}

/// The violation of a request that carries `count` markers, past the limit, at `at`.
pub(super) fn check_count(count: usize, at: &str, violations: &mut Vec<Violation>) {
    if count > MAX_BREAKPOINTS {
        violations.push(violation(
            at,
            format!(
                "Too many '{OPENAI_BREAKPOINT_FIELD}' markers: {count} were given, at most {MAX_BREAKPOINTS} are allowed per request."
            ),
        ));
    }
}
