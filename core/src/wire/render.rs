//! The one renderer: a view (or any message list) as the request body of a wire format. The
//! CLI's `view`, the native engine's turn result and the wasm shell all render through here, so
//! a view looks the same wherever it is sent from.
//!
//! Guarantees: the output is what the format's writer (`to_openai`, `to_anthropic`,
//! `to_responses`, `to_gemini`, `to_ai_sdk`, `to_langchain`) writes, so it passes that
//! provider's validator whenever the view does (every view [`crate::plan_turn`] makes is
//! repaired); the OpenAI, LangChain and ctxkit shapes are one JSON value per message, so
//! [`render_message`] gives exactly the element [`render_view`] puts at that place. Rendering
//! never fails except for a tool message without `tool_call_id` in the Anthropic shape.

use serde::Serialize;
use serde_json::Value;

use crate::error::{CoreError, Result};
use crate::model::{Message, Role, View};
use crate::wire::breakpoints::openai::mark_openai;
use crate::wire::breakpoints::{anthropic_block_counts, mark_anthropic, CacheBreakpoint};
use crate::wire::{to_ai_sdk, to_anthropic, to_gemini, to_langchain, to_openai, to_responses};

/// A wire format a view can be rendered in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum WireFormat {
    /// ctxkit's own messages (what `ctxkit append` reads): the system prompt first.
    Ctxkit,
    /// OpenAI Chat Completions `messages`: the system prompt first.
    Openai,
    /// An Anthropic Messages request's `{system, messages}`.
    Anthropic,
    /// An OpenAI Responses request's `{instructions, input}`.
    Responses,
    /// A Gemini `generateContent` request's `{systemInstruction, contents}`.
    Gemini,
    /// Vercel AI SDK `ModelMessage`s: the system prompt first.
    #[serde(rename = "ai-sdk")]
    AiSdk,
    /// LangChain message dicts (`{type, content, tool_calls...}`): the system prompt first.
    #[serde(rename = "langchain")]
    LangChain,
}

crate::model::unit_enum::unit_enum_deserialize!(
    WireFormat,
    "WireFormat",
    [
        Ctxkit = "ctxkit",
        Openai = "openai",
        Anthropic = "anthropic",
        Responses = "responses",
        Gemini = "gemini",
        AiSdk = "ai-sdk",
        LangChain = "langchain"
    ]
);

impl WireFormat {
    /// Every format, in the order the command line lists them.
    pub const ALL: [WireFormat; 7] = [
        WireFormat::Ctxkit,
        WireFormat::Openai,
        WireFormat::Anthropic,
        WireFormat::Responses,
        WireFormat::Gemini,
        WireFormat::AiSdk,
        WireFormat::LangChain,
    ];

    /// The format's name on the command line and in JS.
    pub fn as_str(self) -> &'static str {
        match self {
            WireFormat::Ctxkit => "ctxkit",
            WireFormat::Openai => "openai",
            WireFormat::Anthropic => "anthropic",
            WireFormat::Responses => "responses",
            WireFormat::Gemini => "gemini",
            WireFormat::AiSdk => "ai-sdk",
            WireFormat::LangChain => "langchain",
        }
    }

    /// True when each message renders to one JSON value on its own (so a rendering can be
    /// cached per message). Anthropic, Gemini and the AI SDK merge neighbouring messages
    /// (tool results into one turn) and Responses splits them into items: they render whole.
    pub fn renders_per_message(self) -> bool {
        matches!(
            self,
            WireFormat::Ctxkit | WireFormat::Openai | WireFormat::LangChain
        )
    }
}

/// `view` (system prompt first, then its messages) in `format`: a JSON array of messages for
/// ctxkit, OpenAI, the AI SDK and LangChain, a request object for Anthropic (`{system,
/// messages}`), Responses (`{instructions, input}`) and Gemini (`{systemInstruction,
/// contents}`). Fails only where the provider cannot carry a message (see [`to_anthropic`]).
pub fn render_view(view: &View<'_>, format: WireFormat) -> Result<Value> {
    let system = view.system_message();
    let messages: Vec<&Message> = system
        .iter()
        .chain(view.messages.iter().map(|item| &*item.message))
        .collect();
    render_messages(&messages, format)
}

/// `messages` (as they would be sent, system prompt first) in `format`; see [`render_view`].
pub fn render_messages<M: std::borrow::Borrow<Message>>(
    messages: &[M],
    format: WireFormat,
) -> Result<Value> {
    // The body once, for `&Message`, rather than once per `M` the callers use.
    let messages: Vec<&Message> = messages.iter().map(|m| m.borrow()).collect();
    render_refs(&messages, format)
}

fn render_refs(messages: &[&Message], format: WireFormat) -> Result<Value> {
    match format {
        WireFormat::Openai => Ok(to_openai(messages)),
        WireFormat::Anthropic => to_anthropic(messages),
        WireFormat::Responses => Ok(to_responses(messages)),
        WireFormat::Gemini => Ok(to_gemini(messages)),
        WireFormat::AiSdk => Ok(to_ai_sdk(messages)),
        WireFormat::LangChain => Ok(to_langchain(messages)),
        WireFormat::Ctxkit => {
            let all: Vec<&Message> = messages.to_vec();
            serde_json::to_value(all)
                .map_err(|error| CoreError::invalid("messages", error.to_string()))
        }
    }
}

/// [`render_view`] with the view's cache breakpoints (its `ViewStats::cache_breakpoints`)
/// rendered where the format has markers for them: for Anthropic, `cache_control: {"type":
/// "ephemeral"}` on the last content block each breakpoint ends (a string system prompt or
/// content becomes one text block to carry it); for OpenAI Chat Completions and Responses
/// (GPT-5.6 and later), `prompt_cache_breakpoint: {"mode": "explicit"}` on the last eligible
/// input part each one ends, moved back past assistant output and left out under 1,024
/// tokens (`crate::wire::breakpoints::openai`; a string content becomes one part to carry it,
/// and a marked Responses system prompt is a leading `system` message instead of
/// `instructions`). Gemini caches through a separate API, and the SDK shapes have no marker:
/// for them the rendering is [`render_view`]'s. Models before GPT-5.6 cache prefixes by
/// themselves and may refuse the field: render for them without breakpoints.
pub fn render_view_cached(
    view: &View<'_>,
    format: WireFormat,
    breakpoints: &[CacheBreakpoint],
) -> Result<Value> {
    let system = view.system_message();
    let messages: Vec<&Message> = system
        .iter()
        .chain(view.messages.iter().map(|item| &*item.message))
        .collect();
    render_messages_cached(&messages, format, breakpoints)
}

/// [`render_messages`] with `breakpoints` rendered, as [`render_view_cached`] does: `messages`
/// are as sent (the view's system prompt first, when it has one: then `breakpoints` has a
/// breakpoint at its end), and each breakpoint's `after_message` counts the messages after it.
pub fn render_messages_cached<M: std::borrow::Borrow<Message>>(
    messages: &[M],
    format: WireFormat,
    breakpoints: &[CacheBreakpoint],
) -> Result<Value> {
    // The body once, for `&Message`, rather than once per `M` the callers use.
    let messages: Vec<&Message> = messages.iter().map(std::borrow::Borrow::borrow).collect();
    render_refs_cached(&messages, format, breakpoints)
}

fn render_refs_cached(
    messages: &[&Message],
    format: WireFormat,
    breakpoints: &[CacheBreakpoint],
) -> Result<Value> {
    if matches!(format, WireFormat::Openai | WireFormat::Responses) && !breakpoints.is_empty() {
        let skip = usize::from(breakpoints.iter().any(|b| b.after_message.is_none()));
        let marked = mark_openai(messages, breakpoints, skip, format);
        return render_messages(&marked, format);
    }
    let mut request = render_messages(messages, format)?;
    if format == WireFormat::Anthropic && !breakpoints.is_empty() {
        // The view's system prompt is there exactly when a breakpoint ends it (the placement
        // rule puts one there whenever it is not empty).
        let skip = usize::from(breakpoints.iter().any(|b| b.after_message.is_none()));
        let conversation = messages.get(skip..).unwrap_or_default();
        let mut counts = anthropic_block_counts(conversation);
        // Leading system messages of the conversation (a transcript's own system prompt) are
        // written into `system`, not as message blocks.
        let leading = conversation
            .iter()
            .take_while(|message| message.role == Role::System)
            .count();
        counts.iter_mut().take(leading).for_each(|count| *count = 0);
        mark_anthropic(&mut request, breakpoints, &counts);
    }
    Ok(request)
}

/// One message in a per-message format ([`WireFormat::renders_per_message`]): the element
/// [`render_view`] writes for it. The other formats have no per-message form: an error.
pub fn render_message(message: &Message, format: WireFormat) -> Result<Value> {
    match format {
        _ if !format.renders_per_message() => Err(CoreError::invalid(
            "format",
            format!(
                "{} merges or splits neighbouring messages: render the whole view",
                format.as_str()
            ),
        )),
        _ => match render_messages(std::slice::from_ref(message), format)? {
            Value::Array(mut one) if one.len() == 1 => Ok(one.pop().unwrap_or_default()),
            other => Err(CoreError::invalid(
                "message",
                format!("rendered to {other} instead of one value"),
            )),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ViewMessage;

    #[test]
    fn a_view_renders_whole_and_per_message_alike() {
        let first = Message::user("hi");
        let view = View {
            system: "sys".into(),
            messages: vec![
                ViewMessage::borrowed(&first),
                ViewMessage::owned(Message::assistant("hello", vec![])),
            ],
        };
        for format in [WireFormat::Openai, WireFormat::Ctxkit] {
            let Value::Array(whole) = render_view(&view, format).unwrap() else {
                panic!("{format:?} renders an array");
            };
            assert_eq!(whole.len(), 3);
            assert_eq!(whole[1], render_message(&first, format).unwrap());
        }
        let anthropic = render_view(&view, WireFormat::Anthropic).unwrap();
        assert_eq!(anthropic["system"], "sys");
        assert_eq!(anthropic["messages"].as_array().map(Vec::len), Some(2));
        assert!(render_message(&first, WireFormat::Anthropic).is_err());
    }
}
