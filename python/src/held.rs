//! What is new, for the Python adapters: `message_fingerprint` and `held_prefix`, the core's
//! rule (`ctxkit_core::turn::held_prefix_by`) over a framework's own messages.
//!
//! A framework hands its adapter the whole conversation at every model call. Reading all of it
//! into the engine (`Engine.append_new`) costs the conversation; so an adapter keeps, per
//! conversation, how many of the framework's messages the log holds and the fingerprints of the
//! first and the last of them (the held ends), and asks `held_prefix` which of a call's
//! messages are held: the rule reads at most two fingerprints (the first message and the last
//! held one), which the adapter makes by converting those two messages only. A step then
//! converts its new messages and three more, whatever the conversation's length (the JS router,
//! `pkg/src/conversations.mjs`, does the same through wasm's `messageFingerprints`).
//!
//! A framework message may read as several ctxkit messages (a pydantic-ai request with a user
//! prompt and tool results) or none; its fingerprint is the core's `message_fingerprint` of
//! each, chained, so the same framework message gives the same fingerprint on every call.

use ctxkit_core::text::fingerprint_hex;
use ctxkit_core::turn::{
    held_prefix_by, message_fingerprint as core_fingerprint, HeldEnds, HeldPrefix,
};
use ctxkit_core::CoreError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyDictMethods};

use crate::args::unsigned;
use crate::errors::{core, core_in};
use crate::functions::read_messages;

/// The fingerprint (16 hex digits) of one framework message, given as the messages it reads as
/// (`messages`, in `format`): each message's content fingerprint (ids and metadata left out, a
/// tool result known by its call), chained in order.
#[pyfunction]
#[pyo3(signature = (messages, format = "ctxkit"))]
pub fn message_fingerprint(messages: &Bound<'_, PyAny>, format: &str) -> PyResult<String> {
    let read = read_messages(messages, format).map_err(core_in("message_fingerprint"))?;
    let chain: Vec<String> = read
        .iter()
        .map(|m| format!("{:016x}", core_fingerprint(m)))
        .collect();
    Ok(fingerprint_hex(&chain.join(".")))
}

/// `held["first"]` or `held["last"]` (a fingerprint from [`message_fingerprint`], or `None`).
fn end(held: &Bound<'_, PyDict>, name: &str) -> PyResult<Option<u64>> {
    let Some(value) = held.get_item(name)? else {
        return Ok(None);
    };
    if value.is_none() {
        return Ok(None);
    }
    let text: String = value.extract().map_err(|_| {
        core(CoreError::invalid(
            format!("held.{name}"),
            "expected a fingerprint (a str of 16 hex digits) or None",
        ))
    })?;
    u64::from_str_radix(&text, 16).map(Some).map_err(|_| {
        core(CoreError::invalid(
            format!("held.{name}"),
            format!("expected 16 hex digits, found {text:?}"),
        ))
    })
}

/// Which of `incoming` messages are held, by the core's rule: `held` is `{"count", "first",
/// "last"}` (how many framework messages the log holds and the fingerprints of the first and
/// the last), `fingerprint_at(index) -> str` gives a message's fingerprint and is asked at most
/// twice. Returns `{"held": n}` (the first `n` are held, the rest new) or `{"diverged": reason}`.
#[pyfunction]
pub fn held_prefix<'py>(
    py: Python<'py>,
    held: &Bound<'py, PyDict>,
    incoming: i128,
    fingerprint_at: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyDict>> {
    let count = match held.get_item("count")? {
        Some(value) => unsigned(value.extract()?, "held.count")?,
        None => return Err(core(CoreError::invalid("held.count", "missing"))),
    };
    let ends = HeldEnds {
        count,
        first: end(held, "first")?,
        last: end(held, "last")?,
    };
    let incoming = usize::try_from(unsigned(incoming, "incoming")?).unwrap_or(usize::MAX);
    // The callable's own error is raised as it is, once the rule has returned.
    let mut failure: Option<PyErr> = None;
    let decided = held_prefix_by(&ends, incoming, |at| {
        let answer = fingerprint_at
            .call1((at,))
            .and_then(|value| value.extract::<String>());
        match answer {
            Ok(text) => u64::from_str_radix(&text, 16).ok(),
            Err(error) => {
                failure.get_or_insert(error);
                None
            }
        }
    });
    if let Some(error) = failure {
        return Err(error);
    }
    let out = PyDict::new(py);
    match decided {
        HeldPrefix::Held { held } => out.set_item("held", held)?,
        HeldPrefix::Diverged(reason) => out.set_item("diverged", reason.as_str())?,
    }
    Ok(out)
}
