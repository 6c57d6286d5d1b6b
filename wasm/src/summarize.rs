//! Asking the JS summarizer of `Engine.prepare` for a summary, with a deadline.
//!
//! A `summarize` callback is user code: it may throw, reject, answer something that is not a
//! string, answer a string that is not Unicode (a lone surrogate), or never settle at all. Each
//! of these becomes a [`Failure`]: a named reason and its kind (a timeout, or another error),
//! which the core's driver turns into the turn's fallback (`stats.fallbacks`, and its circuit
//! breaker counts the timeouts); the engine never waits forever and never stores a replacement
//! character in place of what the summarizer wrote.
//!
//! A `summarize` callback is also given the Anthropic server-compaction request
//! (`request.anthropic_compaction`: `{ headers, body }`, the core's `compaction_body` of the
//! turn's own request) and may answer `{ anthropic_compaction: <the Messages response, parsed
//! or as its text> }` instead of a string: the core's `parse_compaction_answer` reads it, its
//! text becomes the summary and its block is kept beside the checkpoint ([`Reply`]). Likewise
//! OpenAI Responses compaction (`request.responses_compaction`: `{ body }`, the core's
//! `responses_compaction_body`, ending in a `compaction_trigger` item), answered as
//! `{ responses_compaction: <the Responses response> }`: the core's
//! `parse_responses_compaction_answer` reads its one opaque item, kept beside an extractive
//! checkpoint. A refused or malformed response is a [`Failure`] naming why.
//!
//! The same call serves the memory extractor (`extract`), with its own name in the reasons.
//! Each callback gets the caller's `AbortSignal` (`options.signal`) as `{ signal }`, to pass to
//! its HTTP client; the package's JS entry rejects the wait when the signal aborts.
//!
//! The deadline is a `Promise.race` between the callback's promise and a timer made with the
//! global `setTimeout` (found on `globalThis` through `Reflect`, so the same code runs in Node,
//! browsers and workers without web-sys). The timer is cleared as soon as the race ends: a
//! pending timer would keep a Node process alive for up to the whole timeout.

use ctxkit_core::compaction::{
    anthropic_conversation, compaction_body, parse_compaction_answer,
    parse_responses_compaction_answer, responses_compaction_body, responses_conversation,
    CompactionAnswer, CompactionProblem, FallbackKind, SummaryRequest, COMPACTION_BETA,
};
use ctxkit_core::{CoreError, Message, Session};
use serde_json::{json, Value};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use crate::convert::{decode, js_error_message, set, to_js, Result};

#[wasm_bindgen::prelude::wasm_bindgen(typescript_custom_section)]
const SERVER_COMPACTION_TYPES: &str = r#"
/**
 * Anthropic's server compaction (beta `compact-2026-09-04`) for this summary: POST `body` (add
 * `model`) to `/v1/messages` with `headers` (add `anthropic-version` and the API key). `body`
 * is the turn's own Anthropic request (`system` and `messages` with their cache breakpoints,
 * or `request.system` and `request.prompt` without `cache_safe_messages`) plus
 * `compaction: {type: "summarize"}`; never `context_management`.
 */
export interface AnthropicCompactionRequest {
  headers: { "anthropic-beta": string };
  body: Record<string, unknown>;
}

/**
 * OpenAI Responses compaction for this summary: POST `body` (add `model`) to `/v1/responses`
 * with your API key. `body` is the turn's own request as Responses items (the previous
 * checkpoint's compaction item first, when the session has one) with
 * `{type: "compaction_trigger"}` as the last input item and `store: false`.
 */
export interface ResponsesCompactionRequest {
  body: Record<string, unknown>;
}

/** The argument of `prepare`'s `summarize`: the summary request, and its server-compaction forms. */
export interface SummarizerRequest extends SummaryRequest {
  anthropic_compaction: AnthropicCompactionRequest;
  responses_compaction: ResponsesCompactionRequest;
}

/**
 * A server-compaction answer: the Messages response to `request.anthropic_compaction`, parsed
 * or as its JSON text. Its `compaction` block's text becomes the summary (held to the pinned
 * facts) and the block is kept beside the checkpoint, sent first in `"anthropic"` views only; a
 * refused or malformed response falls back to the extractive summary, saying why.
 */
export interface AnthropicCompactionAnswer {
  anthropic_compaction: unknown;
}

/**
 * A Responses compaction answer: the response to `request.responses_compaction`, parsed or as
 * its JSON text. Its one opaque `compaction` item is kept beside the checkpoint, whose
 * plaintext summary is the extractive one; the item is sent in `"responses"` views only, in
 * the summary's place. A refusal or any other shape falls back, saying why.
 */
export interface ResponsesCompactionAnswer {
  responses_compaction: unknown;
}

"#;

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
    Err(failure(reason))
}

/// What `summarize` answered: a summary's text, or a provider's compaction response read by
/// the core.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// A string answer.
    Text(String),
    /// An `{ anthropic_compaction }` answer, read: its text and the block to keep.
    Compaction(CompactionAnswer),
    /// An `{ responses_compaction }` answer, read: the opaque item to keep (no text).
    ResponsesCompaction(CompactionAnswer),
}

impl Reply {
    /// The summary's text, or `None` for an opaque Responses item (whose plaintext record is
    /// the extractive summary).
    pub fn text(&self) -> Option<&str> {
        match self {
            Reply::Text(text) => Some(text),
            Reply::Compaction(answer) => Some(&answer.text),
            Reply::ResponsesCompaction(_) => None,
        }
    }
}

/// A summary request's conversation as the agent's Anthropic and Responses requests sent it,
/// when that differs from `cache_safe_messages` (the session's latest checkpoint keeps that
/// provider's compaction state in place of its summary message).
#[derive(Debug, Clone, Default)]
pub struct ProviderConversations {
    anthropic: Option<Vec<Message>>,
    responses: Option<Value>,
}

impl ProviderConversations {
    /// `request`'s conversations in `session` (the core's `anthropic_conversation` and
    /// `responses_conversation`; the latter without the request's final instruction, since
    /// the server writes its own summary).
    pub fn of(request: &SummaryRequest, session: &Session) -> Self {
        let latest = session.latest_checkpoint();
        let conversation = request
            .cache_safe_messages
            .split_last()
            .map_or(&[][..], |(_, conversation)| conversation);
        ProviderConversations {
            anthropic: anthropic_conversation(&request.cache_safe_messages, latest),
            responses: responses_conversation(conversation, latest),
        }
    }
}

/// Calls the summarizer with `request` and its `anthropic_compaction` and
/// `responses_compaction` requests (over `conversations` where the agent's requests differ
/// from `request.cache_safe_messages`), and waits at most `timeout_ms` for its answer; returns
/// the answer, or why there is none.
pub async fn ask(
    summarize: &js_sys::Function,
    request: &SummaryRequest,
    conversations: &ProviderConversations,
    timeout_ms: u32,
    signal: &JsValue,
) -> std::result::Result<Reply, Failure> {
    let argument = match summary_argument(request, conversations) {
        Ok(argument) => argument,
        Err(error) => return Err(failure(error.to_string())),
    };
    let value = settled("summarize", summarize, &argument, timeout_ms, signal).await?;
    read_reply("summarize", &value)
}

/// The JS argument of `summarize`: the request with `anthropic_compaction` and
/// `responses_compaction` added.
fn summary_argument(
    request: &SummaryRequest,
    conversations: &ProviderConversations,
) -> Result<JsValue> {
    let argument = to_js(request)?;
    let body = compaction_body(
        &request.system,
        &request.prompt,
        conversations
            .anthropic
            .as_deref()
            .unwrap_or(&request.cache_safe_messages),
        request.max_output_tokens,
    );
    let compaction = json!({"headers": {"anthropic-beta": COMPACTION_BETA}, "body": body});
    set(&argument, "anthropic_compaction", &to_js(&compaction)?)?;
    let body = responses_compaction_body(
        &request.system,
        &request.prompt,
        &request.cache_safe_messages,
        conversations.responses.as_ref(),
    );
    set(
        &argument,
        "responses_compaction",
        &to_js(&json!({"body": body}))?,
    )?;
    Ok(argument)
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
    let value = settled(name, function, argument, timeout_ms, signal).await?;
    read_answer(name, &value)
}

fn failure(reason: String) -> Failure {
    Failure {
        kind: FallbackKind::Error,
        reason,
    }
}

/// Calls `function` as [`call_with_deadline`] does and returns what it resolved with.
async fn settled(
    name: &str,
    function: &js_sys::Function,
    argument: &JsValue,
    timeout_ms: u32,
    signal: &JsValue,
) -> std::result::Result<JsValue, Failure> {
    let context: JsValue = js_sys::Object::new().into();
    if js_sys::Reflect::set(&context, &JsValue::from_str("signal"), signal).is_err() {
        return Err(failure(format!(
            "{name} was not called: its context could not be made"
        )));
    }
    let returned = match function.call2(&JsValue::UNDEFINED, argument, &context) {
        Ok(returned) => returned,
        Err(thrown) => {
            return Err(failure(format!(
                "{name} threw: {}",
                js_error_message(&thrown)
            )))
        }
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
        Err(why) => return Err(failure(why)),
    };
    settled.map_err(|reason| failure(format!("{name} rejected: {}", js_error_message(&reason))))
}

/// The summarizer's resolved value: a string ([`read_answer`]), or an object with
/// `anthropic_compaction` or `responses_compaction` (the provider's response as an object or
/// as its text) read by the core's parser.
fn read_reply(name: &str, value: &JsValue) -> std::result::Result<Reply, Failure> {
    let field = |key: &str| {
        if value.is_object() {
            js_sys::Reflect::get(value, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
        } else {
            JsValue::UNDEFINED
        }
    };
    let (anthropic, responses) = (field("anthropic_compaction"), field("responses_compaction"));
    match (anthropic.is_undefined(), responses.is_undefined()) {
        (true, true) => read_answer(name, value).map(Reply::Text),
        (false, true) => {
            let text = response_text(name, "anthropic_compaction", "a Messages", &anthropic)?;
            read_compaction(name, "anthropic_compaction", parse_compaction_answer(&text))
                .map(Reply::Compaction)
        }
        (true, false) => {
            let text = response_text(name, "responses_compaction", "a Responses", &responses)?;
            let parsed = parse_responses_compaction_answer(&text);
            read_compaction(name, "responses_compaction", parsed).map(Reply::ResponsesCompaction)
        }
        (false, false) => Err(failure(format!(
            "{name} returned both anthropic_compaction and responses_compaction; expected one"
        ))),
    }
}

/// The text of a compaction `response` (an object, stringified, or its JSON text).
fn response_text(
    name: &str,
    key: &str,
    kind: &str,
    response: &JsValue,
) -> std::result::Result<String, Failure> {
    if let Some(text) = response.as_string() {
        return Ok(text);
    }
    js_sys::JSON::stringify(response)
        .ok()
        .and_then(|text| text.as_string())
        .filter(|_| response.is_object())
        .ok_or_else(|| {
            failure(format!(
                "{name} returned {key} as {}, not {kind} response (an object or its JSON text)",
                js_kind(response)
            ))
        })
}

/// A parsed compaction answer, or why `name`'s `key` response gives no summary.
fn read_compaction(
    name: &str,
    key: &str,
    parsed: std::result::Result<CompactionAnswer, CompactionProblem>,
) -> std::result::Result<CompactionAnswer, Failure> {
    parsed.map_err(|problem| {
        failure(format!(
            "{name}'s {key} response gives no summary: {problem}"
        ))
    })
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

/// The summarizer and memory extractor of a `prepare`, how long to wait for them, and the
/// caller's `AbortSignal` they are given.
pub(crate) struct Summarizer {
    pub(crate) function: Option<js_sys::Function>,
    pub(crate) extract: Option<js_sys::Function>,
    pub(crate) timeout_ms: u32,
    pub(crate) signal: JsValue,
}
