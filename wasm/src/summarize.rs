//! Asking the JS summarizer of `Engine.prepare` for a summary, with a deadline.
//!
//! A `summarize` callback is user code: it may throw, reject, answer something that is not a
//! string, answer a string that is not Unicode (a lone surrogate), or never settle at all. Each
//! of these becomes a [`Failure`]: a named reason and its kind (a timeout, or another error),
//! which the core's driver turns into the turn's fallback (`stats.fallbacks`, and its circuit
//! breaker counts the timeouts); the engine never waits forever and never stores a replacement
//! character in place of what the summarizer wrote.
//!
//! The same call serves the memory extractor (`extract`), with its own name in the reasons.
//! Each callback gets the caller's `AbortSignal` (`options.signal`) as `{ signal }`, to pass to
//! its HTTP client; the package's JS entry rejects the wait when the signal aborts.
//!
//! The deadline is a `Promise.race` between the callback's promise and a timer made with the
//! global `setTimeout` (found on `globalThis` through `Reflect`, so the same code runs in Node,
//! browsers and workers without web-sys). The timer is cleared as soon as the race ends: a
//! pending timer would keep a Node process alive for up to the whole timeout.

use ctxkit_core::compaction::{FallbackKind, SummaryRequest};
use ctxkit_core::CoreError;
use serde_json::Value;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use crate::convert::{decode, js_error_message, to_js, Result};

/// The default of `summarize_timeout_ms`: two minutes, longer than a slow LLM's summary.
pub const DEFAULT_SUMMARIZE_TIMEOUT_MS: u32 = 120_000;

/// The longest timeout a JS timer can hold: `setTimeout` treats a larger delay as 1 ms, so a
/// larger value would time out at once instead of late.
pub const MAX_SUMMARIZE_TIMEOUT_MS: u32 = 2_147_483_647;

/// Takes `summarize_timeout_ms` out of the prepare options' JSON (the rest is read as turn
/// options, which refuse unknown keys) and checks it: a whole number of milliseconds from 1 to
/// [`MAX_SUMMARIZE_TIMEOUT_MS`]; absent or null gives [`DEFAULT_SUMMARIZE_TIMEOUT_MS`].
pub fn take_timeout(options: &mut Value) -> Result<u32> {
    const AT: &str = "options.summarize_timeout_ms";
    let value = match options {
        Value::Object(fields) => fields.remove("summarize_timeout_ms"),
        _ => None,
    };
    let ms: Option<u64> = match value {
        None | Some(Value::Null) => None,
        Some(value) => Some(decode(value, AT)?),
    };
    match ms {
        None => Ok(DEFAULT_SUMMARIZE_TIMEOUT_MS),
        Some(ms) => u32::try_from(ms)
            .ok()
            .filter(|ms| (1..=MAX_SUMMARIZE_TIMEOUT_MS).contains(ms))
            .ok_or_else(|| {
                CoreError::invalid(
                    AT,
                    format!(
                        "is {ms}; expected a whole number of milliseconds from 1 to \
                         {MAX_SUMMARIZE_TIMEOUT_MS} (the longest a JS timer can wait)"
                    ),
                )
            }),
    }
}

/// Why a callback gave no answer: its kind (the driver's [`FallbackKind`]) and the reason.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// [`FallbackKind::Timeout`] when it did not settle in time, else [`FallbackKind::Error`].
    pub kind: FallbackKind,
    /// What happened, naming the callback.
    pub reason: String,
}

/// What a callback came to.
pub type Answer = std::result::Result<String, Failure>;

fn failed(reason: String) -> Answer {
    Err(Failure {
        kind: FallbackKind::Error,
        reason,
    })
}

/// Calls the summarizer and waits at most `timeout_ms` for its answer; returns the answer, or
/// why there is none.
pub async fn ask(
    summarize: &js_sys::Function,
    request: &SummaryRequest,
    timeout_ms: u32,
    signal: &JsValue,
) -> Answer {
    match to_js(request) {
        Ok(argument) => {
            call_with_deadline("summarize", summarize, &argument, timeout_ms, signal).await
        }
        Err(error) => failed(error.to_string()),
    }
}

/// Calls `function` (named `name` in the reasons) with `argument` and, as a second argument,
/// `{ signal }` (the caller's `AbortSignal`, or `undefined`), and waits at most `timeout_ms`
/// for a string; returns it, or why there is none.
pub async fn call_with_deadline(
    name: &str,
    function: &js_sys::Function,
    argument: &JsValue,
    timeout_ms: u32,
    signal: &JsValue,
) -> Answer {
    let context: JsValue = js_sys::Object::new().into();
    if js_sys::Reflect::set(&context, &JsValue::from_str("signal"), signal).is_err() {
        return failed(format!(
            "{name} was not called: its context could not be made"
        ));
    }
    let returned = match function.call2(&JsValue::UNDEFINED, argument, &context) {
        Ok(returned) => returned,
        Err(thrown) => return failed(format!("{name} threw: {}", js_error_message(&thrown))),
    };
    let answer = js_sys::Promise::resolve(&returned);
    let settled = match Deadline::start(timeout_ms, name) {
        Ok(deadline) => {
            let race = js_sys::Promise::race(&js_sys::Array::of2(&answer, &deadline.promise));
            let settled = JsFuture::from(race).await;
            deadline.clear();
            match settled {
                Ok(value) if value == deadline.sentinel => {
                    return Err(Failure {
                        kind: FallbackKind::Timeout,
                        reason: format!(
                            "{name} did not settle within {timeout_ms} ms \
                             (options.summarize_timeout_ms)"
                        ),
                    })
                }
                other => other,
            }
        }
        Err(why) => return failed(why),
    };
    match settled {
        Ok(value) => read_answer(name, &value),
        Err(reason) => failed(format!("{name} rejected: {}", js_error_message(&reason))),
    }
}

/// The callback's resolved value as its answer: a string that is valid UTF-16.
fn read_answer(name: &str, value: &JsValue) -> Answer {
    let Some(text) = value.dyn_ref::<js_sys::JsString>() else {
        return failed(format!("{name} returned {}, not a string", js_kind(value)));
    };
    // Converting a lone surrogate to Rust gives U+FFFD: the stored summary would differ from
    // what the summarizer wrote, silently. Refuse it, saying where it is.
    if !text.is_valid_utf16() {
        let at = char::decode_utf16(text.iter())
            .position(|unit| unit.is_err())
            .unwrap_or_default();
        return failed(format!(
            "{name} returned a string with a lone surrogate (not valid Unicode) at \
             UTF-16 index {at}"
        ));
    }
    Ok(String::from(text))
}

/// A timer promise that resolves to a value of its own (`sentinel`) after the timeout.
struct Deadline {
    promise: js_sys::Promise,
    sentinel: JsValue,
    timer: JsValue,
    clear_timeout: Option<js_sys::Function>,
}

impl Deadline {
    /// Starts the timer with the global `setTimeout`.
    fn start(timeout_ms: u32, name: &str) -> std::result::Result<Deadline, String> {
        let global: JsValue = js_sys::global().into();
        let set_timeout = global_function(&global, "setTimeout").ok_or_else(|| {
            format!("{name} was not called with a deadline: globalThis.setTimeout is missing")
        })?;
        // A fresh object: no value the summarizer resolves with can be identical to it.
        let sentinel: JsValue = js_sys::Object::new().into();
        let mut timer = Ok(JsValue::UNDEFINED);
        let promise = js_sys::Promise::new(&mut |resolve, _reject| {
            // setTimeout(resolve, ms, sentinel) calls resolve(sentinel).
            let arguments = js_sys::Array::of3(
                &resolve,
                &JsValue::from_f64(f64::from(timeout_ms)),
                &sentinel,
            );
            timer = js_sys::Reflect::apply(&set_timeout, &global, &arguments);
        });
        let timer = timer.map_err(|thrown| {
            format!(
                "{name} was not called with a deadline: setTimeout threw: {}",
                js_error_message(&thrown)
            )
        })?;
        Ok(Deadline {
            promise,
            sentinel,
            timer,
            clear_timeout: global_function(&global, "clearTimeout"),
        })
    }

    /// Cancels the timer (a no-op if it already fired).
    fn clear(&self) {
        if let Some(clear_timeout) = &self.clear_timeout {
            // Nothing to do if clearTimeout throws: the timer then fires into a settled race.
            let _ = clear_timeout.call1(&js_sys::global(), &self.timer);
        }
    }
}

/// The function `name` of the global object, if it is one.
fn global_function(global: &JsValue, name: &str) -> Option<js_sys::Function> {
    js_sys::Reflect::get(global, &JsValue::from_str(name))
        .ok()?
        .dyn_into::<js_sys::Function>()
        .ok()
}

/// What a JS value is, for "found X" messages.
pub fn js_kind(value: &JsValue) -> String {
    if value.is_null() {
        return "null".to_owned();
    }
    if value.is_array() {
        return "an array".to_owned();
    }
    match value.js_typeof().as_string().as_deref() {
        Some("undefined") => "undefined".to_owned(),
        Some("object") => "an object".to_owned(),
        Some(kind) => format!("a {kind}"),
        None => "a value".to_owned(),
    }
}
