//! `Engine.prepare`: one turn answered by the caller's async callbacks.
//!
//! The options' callbacks are read apart from its data: `summarize` (a summary when the turn
//! compacts), `extract` (memories from what the summary is about to cover, asked first: the
//! core's memory extraction request, its answer checked by the core's rules, the accepted
//! drafts in the result's `extraction`), and `signal` (an `AbortSignal` passed to both as
//! `{ signal }`). Each is waited for at most `summarize_timeout_ms`; a callback that fails
//! makes the turn fall back (the extractive summary; no memories), which the core's driver
//! lists in `stats.fallbacks` with its reason (and counts toward its circuit breaker when it
//! timed out; while the breaker is open the turn compacts without calling `summarize`). No
//! borrow of the session is held across an await, so a callback may use the engine; one that
//! frees it makes `prepare` reject, keeping nothing.
//!
//! A `summarize` answer with Anthropic's server-compaction response (see
//! [`crate::summarize`]) gives the checkpoint its text and keeps its block beside it
//! (`Checkpoint::compaction_block`, the core's `keep_compaction_block`); one with OpenAI's
//! Responses compaction response keeps its opaque item beside an extractive checkpoint (the
//! plaintext record). A view rendered as `"anthropic"` or `"responses"` sends that provider's
//! state in place of the summary message ([`crate::stand_in`]), every other format the
//! plaintext summary.

use std::cell::RefCell;
use std::rc::{Rc, Weak};

use ctxkit_core::compaction::{keep_compaction_block, FallbackKind, SummaryRequest};
use ctxkit_core::memory::{ExtractionOutcome, ExtractionRequest};
use ctxkit_core::prompt::FrozenPrompt;
use ctxkit_core::{CoreError, Session, TurnDriver, TurnInputs, TurnStep};
use serde::Serialize;
use serde_json::Value;
use wasm_bindgen::{JsCast, JsValue};

use crate::background::{self, BackgroundCell};
use crate::convert::{busy, js_error_message, read_json, set, to_js, to_js_sorted, Result};
use crate::stand_in::{stand_in, KeptBlock};
use crate::summarize::{
    ask, call_with_deadline, js_kind, take_timeout, ProviderConversations, Reply, Summarizer,
};
use crate::turn_result::finish;
use crate::view::{render_cached, JsTurnInputs, ViewCache};

pub(crate) fn read_prepare_options(
    options: &JsValue,
    session: &Rc<RefCell<Session>>,
) -> Result<(JsTurnInputs, Summarizer)> {
    let summarize = if options.is_object() {
        js_sys::Reflect::get(options, &JsValue::from_str("summarize"))
            .map_err(|error| CoreError::invalid("options.summarize", js_error_message(&error)))?
    } else {
        JsValue::UNDEFINED
    };
    let summarize = if summarize.is_undefined() || summarize.is_null() {
        None
    } else {
        match summarize.dyn_into::<js_sys::Function>() {
            Ok(function) => Some(function),
            Err(other) => {
                return Err(CoreError::invalid(
                    "options.summarize",
                    format!(
                        "expected a function returning a Promise<string>, found {}",
                        js_kind(&other)
                    ),
                ))
            }
        }
    };
    let extract = callback(
        options,
        "extract",
        "a function returning a Promise<string> (the model's JSON array of memories)",
    )?;
    let signal = if options.is_object() {
        js_sys::Reflect::get(options, &JsValue::from_str("signal"))
            .map_err(|error| CoreError::invalid("options.signal", js_error_message(&error)))?
    } else {
        JsValue::UNDEFINED
    };
    let signal = if signal.is_null() {
        JsValue::UNDEFINED
    } else {
        signal
    };
    if options.is_object() {
        // JSON.stringify writes NaN and Infinity as null (the default): refuse them here.
        let timeout = js_sys::Reflect::get(options, &JsValue::from_str("summarize_timeout_ms"))
            .map_err(|error| {
                CoreError::invalid("options.summarize_timeout_ms", js_error_message(&error))
            })?;
        if let Some(ms) = timeout.as_f64() {
            if !ms.is_finite() {
                return Err(CoreError::invalid(
                    "options.summarize_timeout_ms",
                    format!("is {ms}; expected a whole number of milliseconds"),
                ));
            }
        }
    }
    let mut json = read_json(options, "options")?;
    if let Value::Object(fields) = &mut json {
        // JSON.stringify drops a function (and writes a signal as {}); a null is the same as none.
        fields.remove("summarize");
        fields.remove("extract");
        fields.remove("signal");
    }
    let timeout_ms = take_timeout(&mut json)?;
    let family = session.try_borrow().map_err(|_| busy())?.family;
    Ok((
        JsTurnInputs::read(json, "options", Some(family))?,
        Summarizer {
            function: summarize,
            extract,
            timeout_ms,
            signal,
        },
    ))
}

/// The optional callback `name` of the options.
fn callback(options: &JsValue, name: &str, expected: &str) -> Result<Option<js_sys::Function>> {
    let at = format!("options.{name}");
    let value = if options.is_object() {
        js_sys::Reflect::get(options, &JsValue::from_str(name))
            .map_err(|error| CoreError::invalid(&at, js_error_message(&error)))?
    } else {
        JsValue::UNDEFINED
    };
    if value.is_undefined() || value.is_null() {
        return Ok(None);
    }
    value
        .dyn_into::<js_sys::Function>()
        .map(Some)
        .map_err(|other| {
            CoreError::invalid(
                &at,
                format!("expected {expected}, found {}", js_kind(&other)),
            )
        })
}

/// What one step of an awaited turn left to do.
enum Next {
    Extract(Box<ExtractionRequest>),
    /// The request, and its conversation as the agent's Anthropic and Responses requests sent
    /// it when that differs (the previous checkpoint's compaction block or item in place of its
    /// summary).
    Summarize(Box<SummaryRequest>, Box<ProviderConversations>),
    Rendered(JsValue),
}

/// The engine's parts a `prepare` works on, and a handle that fails once the engine is freed.
pub(crate) struct Parts {
    pub(crate) session: Rc<RefCell<Session>>,
    pub(crate) cache: Rc<RefCell<ViewCache>>,
    pub(crate) background: BackgroundCell,
    pub(crate) alive: Weak<()>,
}

pub(crate) async fn prepare_turn(
    parts: Parts,
    mut options: JsTurnInputs,
    summarizer: Summarizer,
) -> Result<JsValue> {
    let Parts {
        session,
        cache,
        background,
        alive,
    } = parts;
    let frozen = {
        let borrowed = session.try_borrow().map_err(|_| busy())?;
        crate::frozen::resolve(&mut options, Some(&borrowed))?
    };
    let waiting = background::current(&background, &options, &summarizer);
    let inputs = TurnInputs {
        extract_memories: summarizer.extract.is_some(),
        has_summarizer: summarizer.function.is_some(),
        background: background::slot(&waiting),
        ..options.inputs()
    };
    let mut turn = TurnDriver::start(&inputs)?;
    let mut extract_failure = None;
    // A server-compaction answer's (through_seq, text, block), kept with its checkpoint.
    let mut kept_block: Option<KeptBlock> = None;
    loop {
        // The borrow of the session ends with each step: no borrow is held across the await,
        // so `summarize` may use the engine.
        let next = {
            let borrowed = session.try_borrow().map_err(|_| busy())?;
            match turn.step(&borrowed)? {
                TurnStep::NeedExtraction(request) => Next::Extract(Box::new(request)),
                TurnStep::NeedSummary(request) => {
                    let conversations = ProviderConversations::of(&request, &borrowed);
                    Next::Summarize(Box::new(request), Box::new(conversations))
                }
                TurnStep::Ready(mut view) => {
                    let kept = kept_block.as_ref();
                    let items = stand_in(&mut view, options.format, &turn, &borrowed, kept);
                    let mut cache = cache.try_borrow_mut().map_err(|_| busy())?;
                    let breakpoints = options.breakpoints(&turn);
                    Next::Rendered(render_cached(
                        &view,
                        options.format,
                        &mut cache,
                        &breakpoints,
                        &items,
                    )?)
                }
            }
        };
        match next {
            Next::Extract(request) => {
                if let Some(reason) = extract(&mut turn, &request, &summarizer, &alive).await? {
                    extract_failure = Some(reason);
                }
            }
            Next::Summarize(request, conversations) => {
                let answer = Asked {
                    request: &request,
                    conversations: &conversations,
                };
                let step = summarize(&mut turn, &session, &answer, &summarizer, &alive).await?;
                if let Some(kept) = step {
                    kept_block = Some(kept);
                }
            }
            Next::Rendered(rendered) => {
                let done = Done {
                    kept_block: kept_block.take(),
                    frozen: frozen.as_ref(),
                    extract_failure,
                };
                let engine = EngineParts {
                    session: &session,
                    background: &background,
                    options: &options,
                    summarizer: &summarizer,
                };
                return finish_turn(turn, rendered, done, &engine);
            }
        }
    }
}

/// Asks the caller's `extract` for the memories of the extraction `request` (none without
/// one) and gives the driver the answer; returns the reason of a failed call.
async fn extract(
    turn: &mut TurnDriver<'_>,
    request: &ExtractionRequest,
    summarizer: &Summarizer,
    alive: &Weak<()>,
) -> Result<Option<String>> {
    let answer = match &summarizer.extract {
        Some(extract) => Some(
            call_with_deadline(
                "extract",
                extract,
                &to_js(request)?,
                summarizer.timeout_ms,
                &summarizer.signal,
            )
            .await,
        ),
        None => None,
    };
    still_alive(alive, "extract")?;
    match answer {
        Some(Ok(text)) => turn.answer_extraction(Some(&text))?,
        Some(Err(failure)) => {
            let reason = failure.reason.clone();
            turn.extraction_failed(failure.kind, failure.reason)?;
            return Ok(Some(reason));
        }
        None => turn.answer_extraction(None)?,
    }
    Ok(None)
}

/// A summary request, and its conversation as the agent's provider requests sent it.
struct Asked<'r> {
    request: &'r SummaryRequest,
    conversations: &'r ProviderConversations,
}

/// Asks the caller's `summarize` for the summary (none without one) and gives the driver the
/// answer; returns a provider compaction's (through_seq, text, block) to keep with the
/// checkpoint.
async fn summarize(
    turn: &mut TurnDriver<'_>,
    session: &Rc<RefCell<Session>>,
    asked: &Asked<'_>,
    summarizer: &Summarizer,
    alive: &Weak<()>,
) -> Result<Option<KeptBlock>> {
    let request = asked.request;
    let answer = match &summarizer.function {
        Some(summarize) => Some(
            ask(
                summarize,
                request,
                asked.conversations,
                summarizer.timeout_ms,
                &summarizer.signal,
            )
            .await,
        ),
        None => None,
    };
    still_alive(alive, "summarize")?;
    let borrowed = session.try_borrow().map_err(|_| busy())?;
    match answer {
        Some(Ok(Reply::Text(text))) => turn.answer_summary(&borrowed, Some(&text))?,
        Some(Ok(Reply::Compaction(answer))) => {
            turn.answer_summary(&borrowed, Some(&answer.text))?;
            return Ok(Some((request.through_seq, answer.text, answer.block)));
        }
        Some(Ok(Reply::ResponsesCompaction(answer))) => {
            // An opaque item: the plaintext record is the extractive summary.
            turn.answer_summary(&borrowed, None)?;
            return Ok(Some((request.through_seq, answer.text, answer.block)));
        }
        Some(Err(failure)) => turn.summary_failed(&borrowed, failure.kind, failure.reason)?,
        None => turn.answer_summary(&borrowed, None)?,
    }
    Ok(None)
}

/// What the turn's steps left for its end.
struct Done<'f> {
    kept_block: Option<KeptBlock>,
    frozen: Option<&'f FrozenPrompt>,
    extract_failure: Option<String>,
}

/// The engine's parts and the caller's options, as the end of a turn reads them.
struct EngineParts<'p> {
    session: &'p Rc<RefCell<Session>>,
    background: &'p BackgroundCell,
    options: &'p JsTurnInputs,
    summarizer: &'p Summarizer,
}

/// Finishes the turn on the session (its checkpoint, a kept compaction block, the frozen
/// prompt), starts a background summary when one is due, and sets the result's fields on the
/// rendered view.
fn finish_turn(
    turn: TurnDriver<'_>,
    rendered: JsValue,
    done: Done<'_>,
    engine: &EngineParts<'_>,
) -> Result<JsValue> {
    let mut borrowed = engine.session.try_borrow_mut().map_err(|_| busy())?;
    let (result, _) = turn.finish(&mut borrowed)?;
    if let (Some((through_seq, text, block)), Some(last)) =
        (done.kept_block, borrowed.checkpoints.last_mut())
    {
        // The driver's checkpoint is the core's; the block kept beside it is ours.
        if result.summary.is_some() {
            keep_compaction_block(last, through_seq, &text, block);
        }
    }
    crate::frozen::keep(&mut borrowed, done.frozen, result.prompt_refreshed);
    let extraction = ExtractionOutput {
        asked: engine.summarizer.extract.is_some(),
        outcome: result.extraction.clone(),
        failure: done.extract_failure,
    };
    let dropped = result
        .stats
        .fallbacks
        .iter()
        .find(|fallback| fallback.kind == FallbackKind::Stale)
        .map(|fallback| fallback.reason.clone());
    let used = result.summary.as_ref().is_some_and(|s| s.background);
    drop(borrowed);
    let started = background::after_turn(
        engine.background,
        engine.session,
        engine.options,
        engine.summarizer,
    );
    let rendered = finish(rendered, result)?;
    if used || started {
        let note = if used { "used" } else { "started" };
        set(&rendered, "background", &JsValue::from_str(note))?;
    }
    extraction.set_on(&rendered)?;
    if let Some(reason) = dropped {
        // The driver dropped the answer as stale: said here too, as before.
        set(&rendered, "summary_dropped", &JsValue::from_str(&reason))?;
    }
    Ok(rendered)
}

/// Fails once the engine was freed while `callback` ran: the turn is not kept, and the caller
/// learns why instead of getting a view of an engine it can no longer use.
fn still_alive(alive: &Weak<()>, callback: &str) -> Result<()> {
    if alive.upgrade().is_some() {
        return Ok(());
    }
    Err(CoreError::invalid(
        "engine",
        format!(
            "this Engine was freed (free() was called on it) while prepare awaited {callback}; \
             the turn was not kept"
        ),
    ))
}

/// What a turn's memory extraction gave (TS `ExtractionResult`), when it was asked for.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(crate) struct ExtractionResult {
    /// The drafts the core accepted and the items it rejected (empty when none was asked).
    outcome: ExtractionOutcome,
    /// Why the extractor gave no answer (it threw, rejected, timed out...).
    failure_reason: Option<String>,
}

/// The extraction of a turn, before it is set on the result.
struct ExtractionOutput {
    asked: bool,
    outcome: Option<ExtractionOutcome>,
    failure: Option<String>,
}

impl ExtractionOutput {
    /// Sets `extraction` on the result when the turn was given an extractor: `null` when the
    /// turn did not summarize (so nothing was asked).
    fn set_on(self, rendered: &JsValue) -> Result<()> {
        if !self.asked {
            return Ok(());
        }
        let value = if self.outcome.is_some() || self.failure.is_some() {
            to_js_sorted(&ExtractionResult {
                outcome: self.outcome.unwrap_or_default(),
                failure_reason: self.failure,
            })?
        } else {
            JsValue::NULL
        };
        set(rendered, "extraction", &value)
    }
}
