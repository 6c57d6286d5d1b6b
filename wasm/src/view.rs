//! Turn options and views, shared by `planTurn` and `Engine`: the options of one turn read
//! from JS (system prompt, budget, policy, todos, output format), and a view rendered in the
//! format the caller asked for (`ctxkit`, `openai` or `anthropic`), straight from the messages
//! the view borrows from the log.
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

use ctxkit_core::budget::Budget;
use ctxkit_core::plan::Policy;
use ctxkit_core::session::TurnSettings;
use ctxkit_core::todo::TodoItem;
use ctxkit_core::tokens::ModelFamily;
use ctxkit_core::view::View;
use ctxkit_core::{to_anthropic, to_openai, CoreError, Message};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use serde_json::Value;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};

use crate::convert::{decode, expected, set, to_js, Result};

#[wasm_bindgen(typescript_custom_section)]
const VIEW_TYPES: &str = r#"
/** The shape a view is returned in. */
export type ViewFormat = "ctxkit" | "openai" | "anthropic";

/** The options of one turn. Every field is optional; unknown keys are errors. */
export interface TurnOptions {
  /** This turn's system prompt (see `buildSystemPrompt`); never stored in the log. */
  system?: string;
  /** The token budget (defaults: a 200k window, 16,384 reserved for output, 2,048 margin). */
  budget?: BudgetOptions;
  /** How to compact. Its `family`, if given, must be the engine's. */
  policy?: PolicyOptions;
  /** The agent's todo list: active items are frozen into a new checkpoint. */
  todos?: TodoItem[];
  /** The shape of the returned view (default `"ctxkit"`). */
  format?: ViewFormat;
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
  system?: string | AnthropicBlock[];
  messages: AnthropicMessage[];
}
/** A view in one of the three shapes. */
export type RenderedView = CtxkitView | OpenAIView | AnthropicView;
"#;

/// The shape a view is returned in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ViewFormat {
    /// `{format, system, messages}` with ctxkit messages.
    #[default]
    Ctxkit,
    /// `{format, messages}` with Chat Completions messages, the system prompt first.
    Openai,
    /// `{format, system?, messages}` as an Anthropic Messages request.
    Anthropic,
}

/// The options of one turn, owned (a [`TurnSettings`] borrows from them).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TurnOptions {
    /// The system prompt.
    pub system: String,
    /// The budget.
    pub budget: Budget,
    /// The policy.
    pub policy: Policy,
    /// The todo list.
    pub todos: Vec<TodoItem>,
    /// The output shape.
    pub format: ViewFormat,
}

impl TurnOptions {
    /// Reads turn options from `json` (an object, or null for all defaults). `family`: the
    /// engine's; the policy's family must match it, and is set to it when not given.
    pub fn read(json: Value, at: &str, family: Option<ModelFamily>) -> Result<Self> {
        let mut json = match json {
            Value::Null => Value::Object(serde_json::Map::new()),
            object @ Value::Object(_) => object,
            other => return Err(expected(at, "an object of turn options", &other)),
        };
        if let (Some(family), Some(options)) = (family, json.as_object_mut()) {
            let policy = options
                .entry("policy")
                .or_insert_with(|| Value::Object(serde_json::Map::new()));
            if let Value::Object(policy) = policy {
                match policy.get("family") {
                    None | Some(Value::Null) => {
                        policy.insert("family".to_owned(), Value::from(family.as_str()));
                    }
                    Some(given) if given.as_str() != Some(family.as_str()) => {
                        return Err(CoreError::invalid(
                            format!("{at}.policy.family"),
                            format!(
                                "{given} differs from the engine's family \"{}\" (a session's estimates are cached for one family; create the Engine with the family you plan for)",
                                family.as_str()
                            ),
                        ));
                    }
                    Some(_) => {}
                }
            }
        }
        decode(json, at)
    }

    /// The settings the core takes.
    pub fn settings(&self) -> TurnSettings<'_> {
        TurnSettings {
            system_prompt: &self.system,
            budget: self.budget,
            policy: &self.policy,
            todos: &self.todos,
        }
    }
}

/// `view` in `format`, as a JS object (without stats: the caller adds what it knows).
pub fn render(view: &View<'_>, format: ViewFormat) -> Result<JsValue> {
    let conversation = view.messages.iter().map(|item| &*item.message);
    match format {
        ViewFormat::Ctxkit => {
            #[derive(Serialize)]
            struct Rendered<'v> {
                format: ViewFormat,
                system: &'v str,
                messages: Vec<&'v Message>,
            }
            to_js(&Rendered {
                format,
                system: &view.system,
                messages: conversation.collect(),
            })
        }
        ViewFormat::Openai | ViewFormat::Anthropic => {
            let system = view.system_message();
            let messages: Vec<&Message> = system.iter().chain(conversation).collect();
            let mut request = match format {
                ViewFormat::Openai => serde_json::json!({ "messages": to_openai(&messages) }),
                _ => to_anthropic(&messages)?,
            };
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

/// The JS forms of log messages an `Engine` showed in its last view, by `seq`, for one format.
#[derive(Debug, Default)]
pub struct ViewCache {
    format: Option<ViewFormat>,
    messages: BTreeMap<u64, JsValue>,
    system: Option<(String, JsValue)>,
}

/// `view` in `format`, reusing (and refilling) `cache` for the ctxkit and OpenAI shapes.
pub fn render_cached(
    view: &View<'_>,
    format: ViewFormat,
    cache: &mut ViewCache,
) -> Result<JsValue> {
    if format == ViewFormat::Anthropic {
        return render(view, format);
    }
    if cache.format != Some(format) {
        *cache = ViewCache {
            format: Some(format),
            ..ViewCache::default()
        };
    }
    let list = js_sys::Array::new();
    if format == ViewFormat::Openai {
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
    let mut shown = BTreeMap::new();
    for item in &view.messages {
        // A message borrowed from the log is the log's own, unchanged: its form can be shared.
        let from_log = item.seq.filter(|_| item.is_borrowed());
        let value = match from_log.and_then(|seq| cache.messages.remove(&seq)) {
            Some(value) => value,
            None => frozen(message_to_js(&item.message, format)?),
        };
        list.push(&value);
        if let Some(seq) = from_log {
            shown.insert(seq, value);
        }
    }
    cache.messages = shown;
    let out: JsValue = js_sys::Object::new().into();
    set(&out, "format", &to_js(&format)?)?;
    if format == ViewFormat::Ctxkit {
        set(&out, "system", &JsValue::from_str(&view.system))?;
    }
    set(&out, "messages", &list)?;
    Ok(out)
}

fn message_to_js(message: &Message, format: ViewFormat) -> Result<JsValue> {
    match format {
        ViewFormat::Openai => match to_openai(std::slice::from_ref(message)) {
            Value::Array(mut one) => to_js(&one.pop().unwrap_or_default()),
            other => to_js(&other),
        },
        _ => to_js(message),
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
