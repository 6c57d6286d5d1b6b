//! The `Engine` class: a session kept in wasm memory.
//!
//! An `Engine` wraps the core's `Session` (the complete log with its cached estimates, the
//! checkpoints, the nudge counters and the last real usage), so each turn crosses the boundary
//! with only its new messages: `append` the messages of a turn, then `view` (or, with an LLM
//! for summaries, `await prepare({ summarize })`) to get what the model should see, in the
//! ctxkit, OpenAI or Anthropic shape, with its stats. Planning costs in proportion to the view,
//! not the log.
//!
//! Each `view` or `prepare` is one turn of the core's turn driver (`TurnDriver`), answered
//! from JS: when the turn needs a summary it asks `summarize` (or, without one, or when it
//! throws, rejects or returns something unusable, the driver falls back to the extractive
//! summary); the ready view is rendered; `turn_result::finish` keeps what the turn decided (its checkpoint,
//! the nudge state). `toJSON()` / `Engine.fromJSON()` export and
//! import the whole state (the core's serde form of `Session`), so a front end can keep it in
//! IndexedDB or a file.
//!
//! Guarantees: a call that throws (a message without a role, a bad budget, a view that cannot
//! be written in the asked format) leaves the engine exactly as it was, and the engine stays
//! usable. No borrow of the session is held while JS code runs (the caller's `toJSON`s while
//! reading input, or `summarize`), so callbacks may call back into the engine.

use std::cell::RefCell;
use std::rc::Rc;

use ctxkit_core::tokens::ModelFamily;
use ctxkit_core::tokens::{check_input_bytes, DEFAULT_MAX_INPUT_BYTES};
use ctxkit_core::wire::WireFormat;
use ctxkit_core::{CoreError, Session, TurnDriver, TurnStep};
use serde::Deserialize;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsError, JsValue};

use crate::background::BackgroundCell;
use crate::convert::{busy, fail, read_json, read_or_default, to_js, Result};
use crate::offload_config::{tool_names, OffloadConfig};
use crate::prepare::{prepare_turn, read_prepare_options, Parts};
use crate::readers::read_messages;
use crate::stand_in::stand_in;
use crate::turn_result::finish;
use crate::view::{render_cached, JsTurnInputs, ViewCache};
use crate::wire::read_format;

#[wasm_bindgen(typescript_custom_section)]
const ENGINE_TYPES: &str = r#"
/** Options of `new Engine()`. */
export interface EngineOptions {
  /** The tokenizer family the log's estimates are cached for (default `"openai"`). */
  family?: ModelFamily;
  /** The most bytes one `append` may carry (default 268,435,456: 256 MiB, the CLI's and the Python engine's cap); more is refused, nothing appended. */
  maxInputBytes?: number | null;
}

/** The shape of messages given to `append`. */
export type MessageFormat = "ctxkit" | "openai" | "anthropic" | "responses" | "gemini" | "ai-sdk" | "langchain";

/** One message of the log, with its sequence number and cached token estimate. */
export interface Entry {
  seq: number;
  message: Message;
  tokens: number;
}

/** An engine's whole state, as `toJSON()` gives it and `Engine.fromJSON()` takes it. */
export interface EngineState {
  family: ModelFamily;
  entries: Entry[];
  checkpoints: Checkpoint[];
  nudge_state: NudgeState;
  usage_anchor: UsageAnchor | null;
  refused_usage?: RefusedUsage | null;
  /** The summarizer's circuit breaker (absent when closed with no timeout counted). */
  summarizer_breaker?: SummarizerBreaker;
  /** The system prompt's parts frozen with the latest checkpoint (absent before a turn given `prompt`). */
  frozen_prompt?: FrozenParts | null;
}

/**
 * The summarizer's circuit breaker: after 2 failures of `summarize` in a row (of any kind: a
 * timeout, a throw or rejection, a refusal, an unusable answer), the next 3 compactions (6,
 * 12, up to 24 after each further failure in a row) use the extractive summary without
 * calling it; then it is called again. A usable answer closes it. A state written with
 * `consecutive_timeouts` is read as the same count.
 */
export interface SummarizerBreaker {
  /** `summarize` calls in a row that failed. */
  consecutive_failures: number;
  /** Compactions left that skip `summarize`. */
  skip_compactions: number;
}

/** A checkpoint stored during a turn from a summary. */
export interface SummaryOutcome {
  method: SummaryMethod;
  through_seq: number;
  /** Why the summarizer's answer was not used (it threw, rejected, timed out, returned no string or one with a lone surrogate, an empty, oversized or untagged summary, or it was skipped by the circuit breaker): the reason of the summary's entry in `stats.fallbacks`. */
  fallback_reason: string | null;
}

/** A turn's result: its view in the asked shape, its stats, and the summary the turn stored, if any. */
export type TurnResult = RenderedView & {
  stats: ViewStats;
  summary: SummaryOutcome | null;
  /** What memory extraction gave: set by `prepare` with `extract` (`null` when the turn did not summarize, so nothing was asked). */
  extraction?: ExtractionResult | null;
  /** Set by `prepare` when its summarizer (or a background summary started by an earlier turn) answered but another turn had meanwhile stored a checkpoint: why the answer was dropped (also in `stats.fallbacks`, kind `"stale"`). */
  summary_dropped?: string;
  /** Set by `prepare` with `policy.background_percent`: `"started"` when it started `summarize` in the background (not awaited) for a later turn, `"used"` when this turn's checkpoint is one made that way. */
  background?: "started" | "used";
};

/** What an `AbortSignal` offers that ctxkit uses (the DOM's and Node's both fit). */
export interface AbortSignalLike {
  readonly aborted: boolean;
  readonly reason?: unknown;
  addEventListener(type: "abort", listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: "abort", listener: () => void): void;
}

/** What a callback of `prepare` gets besides its request. */
export interface CallbackContext {
  /** The `signal` of `prepare`'s options, to pass to the HTTP client. */
  signal?: AbortSignalLike;
}

/** The view type of each format. */
export interface ViewOfFormat {
  ctxkit: CtxkitView;
  openai: OpenAIView;
  anthropic: AnthropicView;
  responses: ResponsesView;
  gemini: GeminiView;
  "ai-sdk": AiSdkView;
  langchain: LangChainView;
}

/** A turn's result in the shape of `format` (what `view` and `prepare` return for it). */
export type TurnResultOf<F extends ViewFormat> = ViewOfFormat[F] & {
  dropped_state: number;
  stats: ViewStats;
  summary: SummaryOutcome | null;
  extraction?: ExtractionResult | null;
  summary_dropped?: string;
  background?: "started" | "used";
};

/**
 * `view` and `prepare` narrowed by `format`: `format: "openai"` gives an `OpenAIView`,
 * `"anthropic"` one with `system` (the class's own signatures take the ctxkit shape).
 */
export interface Engine {
  view<F extends ViewFormat>(options: TurnInputs & { format: F }): TurnResultOf<F>;
  prepare<F extends ViewFormat>(options: PrepareOptions & { format: F }): Promise<TurnResultOf<F>>;
}

/** Writes a summary for a request: ask an LLM with `request.system` and `request.prompt` (a string), or POST `request.anthropic_compaction` (an `AnthropicCompactionAnswer`) or `request.responses_compaction` (a `ResponsesCompactionAnswer`). */
export type Summarizer = (request: SummarizerRequest, context: CallbackContext) => Promise<string | AnthropicCompactionAnswer | ResponsesCompactionAnswer> | string | AnthropicCompactionAnswer | ResponsesCompactionAnswer;

/** Asks an LLM for memories: `request.system` and `request.prompt`; answer its text (a JSON array). */
export type Extractor = (request: ExtractionRequest, context: CallbackContext) => Promise<string> | string;

/** A memory extraction request (the core's, the same as native ctxkit's). */
export interface ExtractionRequest {
  system: string;
  prompt: string;
  max_output_tokens: number;
}

/** A memory the model proposed that passed the core's checks. */
export interface MemoryDraft {
  title: string;
  content: string;
  category: string;
  importance: number;
}

/** An item of the extractor's answer that was refused, and why. */
export interface RejectedDraft {
  index: number;
  reason: string;
}

/** The drafts an extraction answer gave and the items it rejected. */
export interface ExtractionOutcome {
  drafts: MemoryDraft[];
  rejected: RejectedDraft[];
}

/** A turn's memory extraction: store `outcome.drafts` with `source: "extracted"` (renderPrecis quarantines what addresses the model). */
export interface ExtractionResult {
  outcome: ExtractionOutcome;
  /** Why the extractor gave no answer (threw, rejected, timed out, returned no string). */
  failure_reason: string | null;
}

/** The options of `prepare`: a turn's options and the summarizer. */
export interface PrepareOptions extends TurnInputs {
  /** Called when the turn needs a summary; without it the extractive summary is used. */
  summarize?: Summarizer;
  /**
   * How long to wait for `summarize`, in milliseconds (1 to 2147483647, default 120000); past
   * it the turn uses the extractive summary and `summary.fallback_reason` says it timed out.
   */
  summarize_timeout_ms?: number;
  /**
   * Asked, before a summary, for the memories worth keeping from what the summary will cover;
   * its answer is checked by the core's rules and the accepted drafts are in `extraction`.
   */
  extract?: Extractor;
  /** Passed to `summarize` and `extract`; when it aborts, their answer is not waited for (the turn falls back). */
  signal?: AbortSignalLike;
}
"#;

/// A session kept in wasm memory: its log, checkpoints and nudge counters.
#[wasm_bindgen]
#[derive(Debug)]
pub struct Engine {
    pub(crate) session: Rc<RefCell<Session>>,
    cache: Rc<RefCell<ViewCache>>,
    background: BackgroundCell,
    offload: RefCell<Option<OffloadConfig>>,
    offload_errors: RefCell<Vec<String>>,
    /// The most bytes one `append` may carry (`EngineOptions.maxInputBytes`).
    max_input_bytes: std::cell::Cell<u64>,
    /// Dropped with the engine (`free()`): a pending `prepare` holds it weakly to know.
    alive: Rc<()>,
}

/// The options of `new Engine()` (TS `EngineOptions`).
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(test, derive(PartialEq))]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(default, deny_unknown_fields)]
pub(crate) struct EngineOptions {
    family: ModelFamily,
    /// The input cap of `append` (the core's rule: [`ctxkit_core::tokens::check_input_bytes`]).
    #[serde(rename = "maxInputBytes")]
    max_input_bytes: Option<u64>,
}

/// `new Engine`'s options, read by hand (`crate::readers` says why); `undefined` and `null`
/// give the defaults.
pub(crate) fn engine_options(json: serde_json::Value, at: &str) -> Result<EngineOptions> {
    if json.is_null() {
        return Ok(EngineOptions::default());
    }
    let mut f = crate::readers::Fields::of(json, at)?;
    let read = EngineOptions {
        family: f.or_default("family"),
        max_input_bytes: f.or_default("maxInputBytes"),
    };
    f.finish_denying(&["family", "maxInputBytes"])
        .map(|()| read)
}

#[wasm_bindgen]
impl Engine {
    /// An empty session whose estimates are for `options.family` (default `"openai"`).
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_optional_param_type = "EngineOptions")] options: JsValue,
    ) -> Result<Engine, JsError> {
        let options = read_json(&options, "options")
            .and_then(|json| engine_options(json, "options"))
            .map_err(fail("new Engine"))?;
        let engine = Engine::from_session(Session::new(options.family));
        if let Some(cap) = options.max_input_bytes {
            engine.max_input_bytes.set(cap);
        }
        Ok(engine)
    }

    /// An engine from a state `toJSON()` gave (the object, or its JSON text). The state is
    /// checked: entries in increasing `seq` order, checkpoints moving forward within the log.
    #[wasm_bindgen(js_name = fromJSON)]
    pub fn from_json(
        #[wasm_bindgen(unchecked_param_type = "EngineState | string")] state: JsValue,
    ) -> Result<Engine, JsError> {
        (|| {
            let json = match state.as_string() {
                Some(text) => serde_json::from_str(&text).map_err(|error| {
                    CoreError::invalid("state", format!("is not valid JSON: {error}"))
                })?,
                None => read_json(&state, "state")?,
            };
            let session = crate::readers::session(json, "state")?;
            Ok(Engine::from_session(Session::validated(session)?))
        })()
        .map_err(fail("Engine.fromJSON"))
    }

    /// The whole state as a plain object (`JSON.stringify(engine)` uses it).
    #[wasm_bindgen(js_name = toJSON, unchecked_return_type = "EngineState")]
    pub fn to_json(&self) -> Result<JsValue, JsError> {
        (|| to_js(&*self.session.try_borrow().map_err(|_| busy())?))()
            .map_err(fail("Engine.toJSON"))
    }

    /// Appends messages to the log (`format`: the shape they are in, default `"ctxkit"`) and
    /// returns the `seq` each stored message got. Nothing is appended when any message is bad.
    /// With an offload set (`setOffload`), big tool outputs are written through its writer and
    /// stored as references.
    #[wasm_bindgen(unchecked_return_type = "number[]")]
    pub fn append(
        &self,
        #[wasm_bindgen(
            unchecked_param_type = "readonly Message[] | readonly OpenAIMessageInput[] | readonly AnthropicMessageInput[] | readonly unknown[]"
        )]
        messages: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "MessageFormat")] format: JsValue,
    ) -> Result<JsValue, JsError> {
        (|| {
            let format: Option<WireFormat> = read_or_default(&format, "format")?;
            let json = read_json(&messages, "messages")?;
            let messages = match format.unwrap_or(WireFormat::Ctxkit) {
                WireFormat::Ctxkit => read_messages(json, "messages")?,
                other => read_format(json, other)?,
            };
            check_input_bytes(
                &messages,
                self.max_input_bytes.get(),
                "new Engine({ maxInputBytes })",
            )?;
            let config = self.offload.try_borrow().map_err(|_| busy())?.clone();
            let messages = match config {
                None => messages,
                Some(config) => {
                    // The writer is JS: no borrow of the session is held while it runs.
                    let (first_seq, names) = {
                        let session = self.session.try_borrow().map_err(|_| busy())?;
                        (session.next_seq(), tool_names(&session, &messages))
                    };
                    let mut errors = Vec::new();
                    let stored = config.apply(messages, &names, first_seq, &mut errors)?;
                    *self.offload_errors.borrow_mut() = errors;
                    if self.session.try_borrow().map_err(|_| busy())?.next_seq() != first_seq {
                        return Err(CoreError::invalid(
                            "engine",
                            "the offload writer appended to the same Engine during append; the batch was not appended",
                        ));
                    }
                    stored
                }
            };
            let mut session = self.session.try_borrow_mut().map_err(|_| busy())?;
            let seqs: Vec<u64> = session
                .append(messages)
                .iter()
                .map(|entry| entry.seq)
                .collect();
            to_js(&seqs)
        })()
        .map_err(fail("Engine.append"))
    }

    /// This turn's view, without an LLM: a needed summary is made by the extractive
    /// summarizer. Advances the turn (nudge counters) and keeps any checkpoint it made.
    #[wasm_bindgen(unchecked_return_type = "TurnResultOf<\"ctxkit\">")]
    pub fn view(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "TurnInputs & { format?: \"ctxkit\" }")]
        options: JsValue,
    ) -> Result<JsValue, JsError> {
        (|| {
            let json = read_json(&options, "options")?;
            let mut session = self.session.try_borrow_mut().map_err(|_| busy())?;
            let mut cache = self.cache.try_borrow_mut().map_err(|_| busy())?;
            let mut options = JsTurnInputs::read(json, "options", Some(session.family))?;
            let frozen = crate::frozen::resolve(&mut options, Some(&session))?;
            let inputs = options.inputs();
            let mut turn = TurnDriver::start(&inputs)?;
            let rendered = loop {
                match turn.step(&session)? {
                    TurnStep::NeedExtraction(_) => turn.answer_extraction(None)?,
                    TurnStep::NeedSummary(_) => turn.answer_summary(&session, None)?,
                    TurnStep::Ready(mut view) => {
                        let items = stand_in(&mut view, options.format, &turn, &session, None);
                        let breakpoints = options.breakpoints(&turn);
                        break render_cached(
                            &view,
                            options.format,
                            &mut cache,
                            &breakpoints,
                            &items,
                        )?;
                    }
                }
            };
            let (result, _) = turn.finish(&mut session)?;
            crate::frozen::keep(&mut session, frozen.as_ref(), result.prompt_refreshed);
            finish(rendered, result)
        })()
        .map_err(fail("Engine.view"))
    }

    /// This turn's view, asking `options.summarize` for a summary when the turn needs one;
    /// falls back to the extractive summary when it throws, rejects or returns something
    /// unusable, or does not settle within `options.summarize_timeout_ms` (default 120,000; the
    /// result's `summary.fallback_reason` says why). Rejects, leaving the engine as it was, on
    /// bad options.
    #[wasm_bindgen(unchecked_return_type = "Promise<TurnResultOf<\"ctxkit\">>")]
    pub fn prepare(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "PrepareOptions & { format?: \"ctxkit\" }")]
        options: JsValue,
    ) -> js_sys::Promise {
        let parts = self.parts();
        // Read now, so later changes to the caller's object do not leak into this turn.
        let read = read_prepare_options(&options, &parts.session);
        wasm_bindgen_futures::future_to_promise(async move {
            let (options, summarizer) = read.map_err(|error| fail("Engine.prepare")(error))?;
            prepare_turn(parts, options, summarizer)
                .await
                .map_err(|error| JsValue::from(fail("Engine.prepare")(error)))
        })
    }

    /// How many messages the log holds.
    #[wasm_bindgen(getter)]
    pub fn length(&self) -> Result<usize, JsError> {
        Ok(self.borrowed("Engine.length")?.entries.len())
    }

    /// The `seq` the next appended message will get (for `planOffload`).
    #[wasm_bindgen(getter, js_name = nextSeq)]
    pub fn next_seq(&self) -> Result<f64, JsError> {
        // Exact: seqs are far below 2^53.
        Ok(self.borrowed("Engine.nextSeq")?.next_seq() as f64)
    }

    /// The tokenizer family of the session.
    #[wasm_bindgen(getter, unchecked_return_type = "ModelFamily")]
    pub fn family(&self) -> Result<String, JsError> {
        Ok(self.borrowed("Engine.family")?.family.as_str().to_owned())
    }

    /// The checkpoint views start from, or `null`.
    #[wasm_bindgen(getter, js_name = latestCheckpoint, unchecked_return_type = "Checkpoint | null")]
    pub fn latest_checkpoint(&self) -> Result<JsValue, JsError> {
        let session = self.borrowed("Engine.latestCheckpoint")?;
        to_js(&session.latest_checkpoint()).map_err(fail("Engine.latestCheckpoint"))
    }
}

impl Engine {
    /// An engine around `session`.
    pub fn from_session(session: Session) -> Self {
        Engine {
            session: Rc::new(RefCell::new(session)),
            cache: Rc::new(RefCell::new(ViewCache::default())),
            background: BackgroundCell::default(),
            offload: RefCell::new(None),
            offload_errors: RefCell::new(Vec::new()),
            max_input_bytes: std::cell::Cell::new(DEFAULT_MAX_INPUT_BYTES),
            alive: Rc::new(()),
        }
    }

    /// A copy of the session (for tests and for Rust callers).
    pub fn session(&self) -> Option<Session> {
        self.session
            .try_borrow()
            .ok()
            .map(|session| session.clone())
    }

    /// The offload set by `setOffload` (`crate::offload_store`).
    pub(crate) fn offload_cell(&self) -> &RefCell<Option<OffloadConfig>> {
        &self.offload
    }

    /// Why the last append kept outputs in the log (`crate::offload_store`).
    pub(crate) fn offload_errors_cell(&self) -> &RefCell<Vec<String>> {
        &self.offload_errors
    }

    /// The session's cell (for the history tools, `crate::history`).
    /// What a turn run off the engine holds: shared handles to its state, and a weak one to
    /// the engine itself (so a turn outliving a dropped engine keeps nothing).
    pub(crate) fn parts(&self) -> Parts {
        Parts {
            session: Rc::clone(&self.session),
            cache: Rc::clone(&self.cache),
            background: Rc::clone(&self.background),
            alive: Rc::downgrade(&self.alive),
        }
    }

    pub(crate) fn session_cell(&self) -> &RefCell<Session> {
        &self.session
    }

    fn borrowed(&self, function: &str) -> Result<std::cell::Ref<'_, Session>, JsError> {
        self.session
            .try_borrow()
            .map_err(|_| fail(function)(busy()))
    }
}
