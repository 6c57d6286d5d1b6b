//! Turn inputs and views, shared by `planTurn` and `Engine`: the inputs of one turn read
//! from JS (system prompt, budget, policy, todos, output format), and a view rendered in the
//! format the caller asked for (any of the seven [`WireFormat`]s), straight from the messages
//! the view borrows from the log, with the count of provider-bound state that format drops.
//!
//! An `Engine` renders through a [`ViewCache`]: a log message never changes, so its JS form
//! (ctxkit or OpenAI shape) is made once and reused by every later view that still shows it
//! unchanged. A turn then converts only its new messages and what the pipeline made or changed
//! (summary, placeholders, nudges, cut or cleared results): the cost of a view in JS grows with
//! what changed, not with the view. Shared message objects are frozen (deeply), so a caller
//! cannot change a later view by changing an earlier one; the arrays and the result objects are
//! new every turn. The Anthropic shape merges neighbouring messages, so it is rendered whole.
//!
//! Guarantees: unknown option keys are errors (a typo never silently falls back to a default);
//! the rendered view is what the core's wire converters write, so it passes that provider's
//! validator whenever the core's view does; a cached rendering equals a fresh one.

use ctxkit_core::compaction::{
    fill_window_defaults, splice_responses_items, Budget, Policy, TodoItem,
};
use ctxkit_core::prompt::PromptParts;
use ctxkit_core::turn::{check_requested_family, policy_for_session};
use ctxkit_core::wire::breakpoints::CacheBreakpoint;
use ctxkit_core::wire::{dropped_state, render_message, render_view_cached, WireFormat};
use ctxkit_core::{Message, ModelFamily, TurnDriver, TurnInputs, View};
use serde::Deserialize;

use serde_json::Value;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};

use crate::convert::{expected, set, to_js, Result};
use crate::readers::{budget, list, optional, policy, prompt_parts, todo_item, Fields};

#[wasm_bindgen(typescript_custom_section)]
const VIEW_TYPES: &str = r#"
/** The shape a view is returned in. */
export type ViewFormat = "ctxkit" | "openai" | "anthropic" | "responses" | "gemini" | "ai-sdk" | "langchain";

/** The inputs of one turn. Every field is optional; unknown keys are errors. */
export interface TurnInputs {
  /** This turn's system prompt (see `buildSystemPrompt`); never stored in the log. */
  system?: string;
  /**
   * The system prompt's parts, instead of `system`: an Engine freezes their date, AGENTS.md
   * and memory precis in its state with the latest checkpoint and uses those until the next
   * compaction, whose view takes the parts given then (set `history_guidance` as usual), so
   * every request between two compactions begins byte for byte like the one before.
   */
  prompt?: PromptParts | null;
  /** With `prompt`: use and freeze the parts given now, whatever is frozen. Default false. */
  refresh_prompt?: boolean;
  /**
   * The token budget (defaults: a 200k window). `output_reserve` and `safety_margin`, when left
   * out, scale with `context_window` (at most 16,384 and an eighth of it, 2,048 and a
   * sixty-fourth); reserves that reach the window are an error naming the numbers.
   */
  budget?: BudgetOptions;
  /** How to compact. Its `family`, if given, must be the engine's. */
  policy?: PolicyOptions;
  /** The agent's todo list: active items are frozen into a new checkpoint. */
  todos?: TodoItem[];
  /** The shape of the returned view (default `"ctxkit"`). */
  format?: ViewFormat;
  /**
   * Mark the view's cache breakpoints (`stats.cache_breakpoints`): with `format: "anthropic"`,
   * `cache_control: {type: "ephemeral"}` on the end of the system prompt, of the checkpoint
   * summary, of the previous turn and of the conversation before its nudges; with
   * `format: "responses"` or `"openai"`, OpenAI's `prompt_cache_breakpoint: {mode: "explicit"}`
   * on the last input part each one ends (GPT-5.6 and later: at most four, never on assistant
   * output, none under 1,024 tokens; older OpenAI models cache prefixes by themselves and may
   * refuse the field). The other shapes have no markers. Default false.
   */
  cache?: boolean;
  /**
   * The provider's cache of the previous request has expired (more than its lifetime, five
   * minutes for Anthropic's default, since your last model call): the next call rewrites the
   * whole prefix anyway, so the turn compacts from the policy's lower `cold_trigger_percent`.
   * Default false.
   */
  cache_expired?: boolean;
}

/**
 * A view in the ctxkit shape: the system prompt apart, then the messages. In an Engine's views
 * (ctxkit and OpenAI shapes) the message objects are frozen: unchanged ones are shared with
 * later views. Copy one (`structuredClone`) to change it.
 */
export interface CtxkitView {
  format: "ctxkit";
  system: string;
  messages: Message[];
}
/** A view as OpenAI Chat Completions `messages` (the system prompt first). */
export interface OpenAIView {
  format: "openai";
  messages: OpenAIMessage[];
}
/** A view as an Anthropic Messages request's `system` and `messages`. */
export interface AnthropicView {
  format: "anthropic";
  system?: string | AnthropicTextBlock[];
  messages: AnthropicMessage[];
}
/** A view as an OpenAI Responses request's `instructions` and `input` items. */
export interface ResponsesView {
  format: "responses";
  instructions?: string;
  input: { [key: string]: Json }[];
}
/** A view as a Gemini `generateContent` request's `systemInstruction` and `contents`. */
export interface GeminiView {
  format: "gemini";
  systemInstruction?: { parts: { [key: string]: Json }[] };
  contents: { role: "user" | "model"; parts: { [key: string]: Json }[] }[];
}
/** A view as Vercel AI SDK `ModelMessage`s (the system prompt first). */
export interface AiSdkView {
  format: "ai-sdk";
  messages: { role: "system" | "user" | "assistant" | "tool"; content: string | { [key: string]: Json }[]; [key: string]: Json }[];
}
/** A view as LangChain message dicts (`{type, content, tool_calls...}`, the system prompt first). */
export interface LangChainView {
  format: "langchain";
  messages: { type: "system" | "human" | "ai" | "tool"; content: string | { [key: string]: Json }[]; [key: string]: Json }[];
}
/** A view in one of the seven shapes, with what rendering it in that shape left out. */
export type RenderedView = (
  | CtxkitView
  | OpenAIView
  | AnthropicView
  | ResponsesView
  | GeminiView
  | AiSdkView
  | LangChainView
) & {
  /**
   * Pieces of provider-bound state (reasoning signatures, encrypted reasoning, Gemini thought
   * parts, another format's provider fields) that this shape cannot carry and the view dropped;
   * 0 in the ctxkit shape and when every message came from this shape.
   */
  dropped_state: number;
};
"#;

/// The inputs of one turn as JS gives them, owned (the core's [`TurnInputs`] borrows from
/// them).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(default, deny_unknown_fields)]
pub struct JsTurnInputs {
    /// The system prompt.
    pub system: String,
    /// The budget.
    pub budget: Budget,
    /// The policy.
    pub policy: Policy,
    /// The todo list.
    pub todos: Vec<TodoItem>,
    /// The output shape.
    pub format: WireFormat,
    /// Mark the view's cache breakpoints (`stats.cache_breakpoints`) where the shape has
    /// markers: Anthropic's `cache_control`, OpenAI's `prompt_cache_breakpoint`.
    pub cache: bool,
    /// The provider's cache has expired since the caller's last model call.
    pub cache_expired: bool,
    /// The system prompt's parts, frozen by the engine (`frozen::resolve`).
    pub prompt: Option<PromptParts>,
    /// Use and freeze the parts of `prompt` given now.
    pub refresh_prompt: bool,
    /// The prompt of the parts given now, for a view planned from a new checkpoint (set by
    /// `frozen::resolve`).
    #[serde(skip)]
    pub refreshed: Option<String>,
}

impl Default for JsTurnInputs {
    fn default() -> Self {
        JsTurnInputs {
            system: String::new(),
            budget: Budget::default(),
            policy: Policy::default(),
            todos: Vec::new(),
            format: WireFormat::Ctxkit,
            cache: false,
            cache_expired: false,
            prompt: None,
            refresh_prompt: false,
            refreshed: None,
        }
    }
}

impl JsTurnInputs {
    /// The ready view's cache breakpoints to mark: its stats' when `cache` is set, else none.
    pub fn breakpoints(&self, turn: &TurnDriver<'_>) -> Vec<CacheBreakpoint> {
        match turn.ready_stats() {
            Some(stats) if self.cache => stats.cache_breakpoints.clone(),
            _ => Vec::new(),
        }
    }

    /// Reads turn inputs from `json` (an object, or null for all defaults). `family`: the
    /// engine's; a family the policy names must match it (the core's
    /// [`check_requested_family`]), and the engine's is used when none is named.
    pub fn read(json: Value, at: &str, family: Option<ModelFamily>) -> Result<Self> {
        let mut json = match json {
            Value::Null => Value::Object(serde_json::Map::new()),
            object @ Value::Object(_) => object,
            other => return Err(expected(at, "an object of turn options", &other)),
        };
        // The reserves a budget leaves out scale with its window (the core's rule).
        if let Some(budget) = json.get_mut("budget") {
            fill_window_defaults(budget);
        }
        let named = json
            .get("policy")
            .and_then(|policy| policy.get("family"))
            .filter(|family| !family.is_null())
            .is_some();
        let mut inputs = turn_inputs(json, at)?;
        if let Some(family) = family {
            if named {
                check_requested_family(
                    inputs.policy.family,
                    family,
                    &format!("{at}.policy.family"),
                )?;
            }
            inputs.policy = policy_for_session(&inputs.policy, family);
        }
        Ok(inputs)
    }

    /// The inputs the core's turn driver takes (no memory extraction: JS has no extractor).
    pub fn inputs(&self) -> TurnInputs<'_> {
        TurnInputs {
            todos: &self.todos,
            cache_expired: self.cache_expired,
            refreshed_system_prompt: self.refreshed.as_deref(),
            ..TurnInputs::new(&self.system, self.budget, &self.policy)
        }
    }
}

/// `view` in `format`, as a JS object (without stats: the caller adds what it knows): the
/// core's [`render_view_cached`], with the system prompt apart in the ctxkit shape.
///
/// `breakpoints`: the view's cache breakpoints to mark (Anthropic's `cache_control`, OpenAI's
/// `prompt_cache_breakpoint` in the Responses and Chat Completions shapes), or none.
/// `responses_items`: in a Responses view, the checkpoint's compaction items, put in place of
/// the core's marker message ([`crate::stand_in`]); empty otherwise.
pub fn render(
    view: &View<'_>,
    format: WireFormat,
    breakpoints: &[CacheBreakpoint],
    responses_items: &[Value],
) -> Result<JsValue> {
    let out = render_shape(view, format, breakpoints, responses_items)?;
    set_dropped_state(&out, view, format)?;
    Ok(out)
}

/// `dropped_state` on a rendered view: what [`dropped_state`] counts for its messages.
fn set_dropped_state(out: &JsValue, view: &View<'_>, format: WireFormat) -> Result<()> {
    let messages: Vec<&Message> = view.messages.iter().map(|item| &*item.message).collect();
    let dropped = dropped_state(&messages, format);
    set(out, "dropped_state", &JsValue::from_f64(dropped as f64))
}

/// [`render`] without `dropped_state`.
fn render_shape(
    view: &View<'_>,
    format: WireFormat,
    breakpoints: &[CacheBreakpoint],
    responses_items: &[Value],
) -> Result<JsValue> {
    match format {
        WireFormat::Ctxkit => {
            let conversation: Vec<&Message> =
                view.messages.iter().map(|item| &*item.message).collect();
            let out = js_sys::Object::new().into();
            set(&out, "format", &to_js(&format)?)?;
            set(&out, "system", &JsValue::from_str(&view.system))?;
            // The ctxkit form is the messages' own serde form (see `message_to_js`).
            set(&out, "messages", &to_js(&conversation)?)?;
            Ok(out)
        }
        _ => {
            // Array formats go under `messages`; request formats are objects already.
            let mut request = match render_view_cached(view, format, breakpoints)? {
                messages @ Value::Array(_) => serde_json::json!({ "messages": messages }),
                request => request,
            };
            if !responses_items.is_empty() {
                splice_responses_items(&mut request, responses_items);
            }
            if let Value::Object(fields) = &mut request {
                fields.insert(
                    "format".to_owned(),
                    serde_json::to_value(format).unwrap_or_default(),
                );
            }
            to_js(&request)
        }
    }
}

/// The JS forms of log messages an `Engine` showed in its last view, for one format.
#[derive(Debug, Default)]
pub struct ViewCache {
    format: Option<WireFormat>,
    /// The last view's log messages by `seq`, in its order (`None` once taken): a list, not a
    /// map, as the next view shows them in the same order, so a lookup from the last match finds
    /// them at once, and no B-tree is compiled for these types (docs/performance.md, "Size").
    messages: Vec<(u64, Option<JsValue>)>,
    system: Option<(String, JsValue)>,
}

impl ViewCache {
    /// Takes the JS form of the log message `seq`, looking from `next` (after the last one
    /// found) to the end first, then from the start; sets `next` after the one found.
    fn take(&mut self, seq: u64, next: &mut usize) -> Option<JsValue> {
        let start = (*next).min(self.messages.len());
        let (before, after) = self.messages.split_at(start);
        let found = match after.iter().position(|(cached, _)| *cached == seq) {
            Some(offset) => start + offset,
            None => before.iter().position(|(cached, _)| *cached == seq)?,
        };
        *next = found + 1;
        self.messages.get_mut(found)?.1.take()
    }
}

/// `view` in `format`, reusing (and refilling) `cache` (of JS values) for the ctxkit, OpenAI
/// and LangChain shapes; `breakpoints` and `responses_items` as for [`render`] (an OpenAI view
/// with breakpoints carries OpenAI's markers, so it is rendered whole).
pub fn render_cached(
    view: &View<'_>,
    format: WireFormat,
    cache: &mut ViewCache,
    breakpoints: &[CacheBreakpoint],
    responses_items: &[Value],
) -> Result<JsValue> {
    if !format.renders_per_message() || (format == WireFormat::Openai && !breakpoints.is_empty()) {
        return render(view, format, breakpoints, responses_items);
    }
    if cache.format != Some(format) {
        *cache = ViewCache {
            format: Some(format),
            ..ViewCache::default()
        };
    }
    let list = js_sys::Array::new();
    if format == WireFormat::Openai {
        if let Some(system) = view.system_message() {
            let reused = cache
                .system
                .take()
                .filter(|(text, _)| *text == view.system)
                .map(|(_, value)| value);
            let value = match reused {
                Some(value) => value,
                None => frozen(message_to_js(&system, format)?),
            };
            list.push(&value);
            cache.system = Some((view.system.clone(), value));
        }
    }
    let mut shown = Vec::new();
    let mut next = 0;
    for item in &view.messages {
        // A message borrowed from the log is the log's own, unchanged: its form can be shared.
        let from_log = item.seq.filter(|_| item.is_borrowed());
        let value = match from_log.and_then(|seq| cache.take(seq, &mut next)) {
            Some(value) => value,
            None => frozen(message_to_js(&item.message, format)?),
        };
        list.push(&value);
        if let Some(seq) = from_log {
            shown.push((seq, Some(value)));
        }
    }
    cache.messages = shown;
    let out: JsValue = js_sys::Object::new().into();
    set(&out, "format", &to_js(&format)?)?;
    if format == WireFormat::Ctxkit {
        set(&out, "system", &JsValue::from_str(&view.system))?;
    }
    set(&out, "messages", &list)?;
    set_dropped_state(&out, view, format)?;
    Ok(out)
}

/// One message in a per-message format. The ctxkit form is the message's own serde form, so
/// it is written straight from the message (in its fields' order); OpenAI goes through the
/// core's renderer.
fn message_to_js(message: &Message, format: WireFormat) -> Result<JsValue> {
    match format {
        WireFormat::Ctxkit => to_js(message),
        _ => to_js(&render_message(message, format)?),
    }
}

/// `value` frozen, with everything inside it.
fn frozen(value: JsValue) -> JsValue {
    fn freeze(value: &JsValue) {
        if let Some(object) = value.dyn_ref::<js_sys::Object>() {
            for inner in js_sys::Object::values(object).iter() {
                freeze(&inner);
            }
            js_sys::Object::freeze(object);
        }
    }
    freeze(&value);
    value
}

/// The fields of `JsTurnInputs` that are read (`refreshed` is set, never read).
const TURN_INPUTS_FIELDS: &[&str] = &[
    "system",
    "budget",
    "policy",
    "todos",
    "format",
    "cache",
    "cache_expired",
    "prompt",
    "refresh_prompt",
];

/// A turn's inputs (an object): an absent field is the default; unknown fields are refused.
pub(crate) fn turn_inputs(value: Value, at: &str) -> Result<JsTurnInputs> {
    let mut f = Fields::of(value, at)?;
    let d = JsTurnInputs::default();
    let inputs = JsTurnInputs {
        system: f.or("system", d.system),
        budget: f.get_with("budget", budget).unwrap_or(d.budget),
        policy: f.get_with("policy", policy).unwrap_or(d.policy),
        todos: f
            .get_with("todos", |value, at| list(value, at, todo_item))
            .unwrap_or(d.todos),
        format: f.or("format", d.format),
        cache: f.or("cache", d.cache),
        cache_expired: f.or("cache_expired", d.cache_expired),
        prompt: f
            .get_with("prompt", optional(prompt_parts))
            .unwrap_or(d.prompt),
        refresh_prompt: f.or("refresh_prompt", d.refresh_prompt),
        refreshed: d.refreshed,
    };
    f.finish_denying(TURN_INPUTS_FIELDS).map(|()| inputs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::readers::tests::same;
    use serde_json::json;

    #[test]
    fn turn_inputs_read_as_derived() {
        same(turn_inputs, json!({}));
        same(turn_inputs, json!("x"));
        same(
            turn_inputs,
            json!({"policy": {"keep_last_messages": -1}, "budget": 1}),
        );
        same(
            turn_inputs,
            json!({"policy": {"keep_last_messages": -1}, "todos": 1}),
        );
        same(turn_inputs, json!({"policy": null}));
        same(turn_inputs, json!({"refreshed": "x"}));
        same(
            turn_inputs,
            json!({"system": "s", "cache": true, "format": "anthropic", "todos": [],
                   "policy": {"strategy": "truncate"}, "refresh_prompt": true,
                   "budget": {"context_window": 1000, "output_reserve": 100, "safety_margin": 10}}),
        );
        for key in TURN_INPUTS_FIELDS {
            same(turn_inputs, json!({ *key: "bad" }));
            same(turn_inputs, json!({ *key: null }));
            if !["policy", "budget", "prompt"].contains(key) {
                same(turn_inputs, json!({ *key: [1] }));
            }
        }
        // The one difference: a policy, budget or prompt is not read from an array of its
        // fields' values (serde's sequence form of a struct).
        for key in ["policy", "budget", "prompt"] {
            assert_eq!(
                turn_inputs(json!({ key: [1] }), "x").map_err(|error| error.to_string()),
                Err(format!(
                    "x.{key}: invalid type: sequence, expected an object"
                ))
            );
        }
    }
}
