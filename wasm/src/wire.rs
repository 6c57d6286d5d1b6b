//! Messages and wire formats: `fromOpenAI`, `toOpenAI`, `fromAnthropic`, `toAnthropic`.
//!
//! The ctxkit `Message` is provider-neutral; these functions convert it losslessly to and from
//! OpenAI Chat Completions `messages` and Anthropic Messages `{system, messages}` (the rules,
//! and what "lossless" means, are the core's: `ctxkit_core::wire`). Errors name the path of the
//! bad value: `fromOpenAI: messages[4].tool_calls[0].function.name: missing`.
//!
//! `read_format` reads messages in any format for `Engine.append` and `messageFingerprints`.

use ctxkit_core::wire::WireFormat;
use ctxkit_core::{from_anthropic, from_openai, to_anthropic, to_openai, Message};
use serde_json::Value;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsError, JsValue};

use crate::convert::{fail, read_json, to_js, Result};
use crate::readers::read_messages;

#[wasm_bindgen(typescript_custom_section)]
const MESSAGE_TYPES: &str = r#"
/** Any JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Who wrote a message. */
export type Role = "system" | "user" | "assistant" | "tool";
/** A provider or library format, for opaque blocks and for `validate`. */
export type Provider = "openai" | "anthropic" | "responses" | "gemini" | "ai-sdk" | "langchain";

/** Fields of a message or call that only one format has, kept for that format. */
export interface ProviderFields {
  provider: Provider;
  fields: { [key: string]: Json };
}

/** Where an image's bytes are. */
export type ImageSource =
  | { type: "base64"; media_type: string; data: string }
  | { type: "url"; url: string };

/** One piece of a message's content. */
export type Part =
  | { type: "text"; text: string }
  | { type: "image"; source: ImageSource; detail?: string | null }
  | { type: "thinking"; thinking: string; signature: string }
  /** A provider block ctxkit does not model, kept verbatim and sent back only to its provider. */
  | { type: "opaque"; provider: Provider; block: Json };

/** A message's content: plain text, or a list of parts (`null` reads as empty text). */
export type Content = string | Part[];

/** A tool call an assistant made; `arguments` is JSON text. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
  provider_fields?: ProviderFields | null;
}

/**
 * One message in the ctxkit form (the serde form of `ctxkit_core::Message`). A tool result is
 * `role: "tool"` with the `tool_call_id` it answers; `is_error` says the tool failed. Empty
 * fields are omitted on output; unknown fields are errors on input.
 */
export interface Message {
  role: Role;
  content?: Content | null;
  tool_calls?: ToolCall[];
  tool_call_id?: string | null;
  is_error?: boolean;
  name?: string | null;
  provider_fields?: ProviderFields | null;
}

/**
 * A Chat Completions content part as ctxkit writes it: the official SDK's part types (text,
 * image, audio, file, refusal), so a view's messages are the `openai` package's
 * `ChatCompletionMessageParam`s with no cast. (Other parts are only written back to the format
 * they came from, as they were.)
 */
export type OpenAIContentPart =
  | { type: "text"; text: string }
  | { type: "image_url"; image_url: { url: string; detail?: "auto" | "low" | "high" } }
  | { type: "input_audio"; input_audio: { data: string; format: "wav" | "mp3" } }
  | { type: "file"; file: { file_data?: string; file_id?: string; filename?: string } };

/** A Chat Completions text part. */
export type OpenAITextPart = { type: "text"; text: string };

/** A Chat Completions function tool call, as ctxkit writes it. */
export interface OpenAIToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/** A Chat Completions message as ctxkit writes it (a view, `toOpenAI`). */
export type OpenAIMessage =
  | { role: "system"; content: string | OpenAITextPart[]; name?: string }
  | { role: "developer"; content: string | OpenAITextPart[]; name?: string }
  | { role: "user"; content: string | OpenAIContentPart[]; name?: string }
  | {
      role: "assistant";
      content?: string | (OpenAITextPart | { type: "refusal"; refusal: string })[] | null;
      tool_calls?: OpenAIToolCall[];
      refusal?: string | null;
      name?: string;
    }
  | { role: "tool"; content: string | OpenAITextPart[]; tool_call_id: string };

/**
 * A Chat Completions message as ctxkit reads it: any object with a `role` (the official
 * `ChatCompletionMessageParam`, a response's `ChatCompletionMessage`, or ctxkit's own); the
 * core checks the rest and names what is wrong.
 */
export type OpenAIMessageInput = OpenAIMessage | { role: string; content?: unknown };

/** A Chat Completions request body as ctxkit writes it. */
export interface OpenAIRequest {
  messages: OpenAIMessage[];
}

/** A Chat Completions request body, or any object with its `messages` (other fields are ignored). */
export interface OpenAIRequestInput {
  messages: readonly OpenAIMessageInput[];
}

/** An Anthropic text block. */
export type AnthropicTextBlock = { type: "text"; text: string };

/**
 * An Anthropic content block as ctxkit writes it: the official SDK's `ContentBlockParam`s, so
 * a view's messages are the `@anthropic-ai/sdk` package's `MessageParam`s with no cast.
 */
export type AnthropicBlock =
  | AnthropicTextBlock
  | {
      type: "image";
      source:
        | { type: "base64"; media_type: "image/jpeg" | "image/png" | "image/gif" | "image/webp"; data: string }
        | { type: "url"; url: string };
    }
  | { type: "tool_use"; id: string; name: string; input: unknown }
  | {
      type: "tool_result";
      tool_use_id: string;
      content?: string | (AnthropicTextBlock | Extract<AnthropicBlock, { type: "image" }>)[];
      is_error?: boolean;
    }
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "redacted_thinking"; data: string };

/** An Anthropic message as ctxkit writes it. */
export interface AnthropicMessage {
  role: "user" | "assistant";
  content: string | AnthropicBlock[];
}

/**
 * An Anthropic message as ctxkit reads it: a `role` and `content` (the official
 * `MessageParam`, or a response's `role` and `content` blocks, `RedactedThinkingBlock`
 * included); the core checks the blocks and keeps the ones it does not model verbatim.
 */
export type AnthropicMessageInput = AnthropicMessage | { role: string; content: unknown };

/** An Anthropic Messages request's `system` and `messages`, as `toAnthropic` writes them. */
export interface AnthropicRequest {
  system?: string | AnthropicTextBlock[];
  messages: AnthropicMessage[];
}

/** An Anthropic Messages request's `system` and `messages` as ctxkit reads them (other fields are ignored). */
export interface AnthropicRequestInput {
  system?: string | readonly { type: string; text?: string }[];
  messages: readonly AnthropicMessageInput[];
}
"#;

/// Reads Chat Completions `messages` (an array, or a request body holding one) into ctxkit
/// messages.
#[wasm_bindgen(js_name = fromOpenAI, unchecked_return_type = "Message[]")]
pub fn from_openai_js(
    #[wasm_bindgen(unchecked_param_type = "readonly OpenAIMessageInput[] | OpenAIRequestInput")]
    messages: JsValue,
) -> Result<JsValue, JsError> {
    read_from(&messages, from_openai).map_err(fail("fromOpenAI"))
}

/// Writes ctxkit messages as Chat Completions `messages`. What OpenAI has no place for
/// (thinking, Anthropic blocks, `is_error`) is dropped.
#[wasm_bindgen(js_name = toOpenAI, unchecked_return_type = "OpenAIMessage[]")]
pub fn to_openai_js(
    #[wasm_bindgen(unchecked_param_type = "Message[]")] messages: JsValue,
) -> Result<JsValue, JsError> {
    (|| {
        to_js(&to_openai(&read_messages(
            read_json(&messages, "messages")?,
            "messages",
        )?))
    })()
    .map_err(fail("toOpenAI"))
}

/// Reads an Anthropic Messages request (`{system?, messages}`) or a bare `messages` array into
/// ctxkit messages: each `tool_result` block becomes its own tool message.
#[wasm_bindgen(js_name = fromAnthropic, unchecked_return_type = "Message[]")]
pub fn from_anthropic_js(
    #[wasm_bindgen(
        unchecked_param_type = "AnthropicRequestInput | readonly AnthropicMessageInput[]"
    )]
    request: JsValue,
) -> Result<JsValue, JsError> {
    read_from(&request, from_anthropic).map_err(fail("fromAnthropic"))
}

/// Writes ctxkit messages as an Anthropic request's `{system?, messages}`. Throws on a tool
/// message without `tool_call_id` or tool call arguments that are not a JSON object.
#[wasm_bindgen(js_name = toAnthropic, unchecked_return_type = "AnthropicRequest")]
pub fn to_anthropic_js(
    #[wasm_bindgen(unchecked_param_type = "Message[]")] messages: JsValue,
) -> Result<JsValue, JsError> {
    (|| {
        let messages = read_messages(read_json(&messages, "messages")?, "messages")?;
        to_js(&to_anthropic(&messages)?)
    })()
    .map_err(fail("toAnthropic"))
}

fn read_from(
    value: &JsValue,
    reader: impl Fn(&serde_json::Value) -> Result<Vec<ctxkit_core::Message>>,
) -> Result<JsValue> {
    to_js(&reader(&read_json(value, "messages")?)?)
}

/// Messages in `format`: the ctxkit format by [`read_messages`] (the hand-written reader, as
/// `Engine.append` reads it: `messages[3].role: missing`), the others by the core's readers.
///
/// Not through the core's `from_format`, whose ctxkit reader (`serde_json::from_value` of each
/// message, with serde's own errors) compiled serde's derived reader of `Message`, `ToolCall`,
/// `Part` and `ProviderFields` for serde_json's `Value`, about 15 KB of code the shell reads
/// no other way.
pub(crate) fn read_format(value: Value, format: WireFormat) -> Result<Vec<Message>> {
    use ctxkit_core::wire::{from_ai_sdk, from_gemini, from_langchain, from_responses};
    match format {
        WireFormat::Ctxkit => read_messages(value, "messages"),
        WireFormat::Openai => from_openai(&value),
        WireFormat::Anthropic => from_anthropic(&value),
        WireFormat::Responses => from_responses(&value),
        WireFormat::Gemini => from_gemini(&value),
        WireFormat::AiSdk => from_ai_sdk(&value),
        WireFormat::LangChain => from_langchain(&value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ctxkit_core::wire::from_format;

    #[test]
    fn formats_read_as_the_core_reads_them() {
        let openai = serde_json::json!([{"role": "user", "content": "hi"}, {"role": "tool"}]);
        let anthropic =
            serde_json::json!([{"role": "user", "content": [{"type": "text", "text": "hi"}]}]);
        for (input, format) in [
            (&openai, WireFormat::Openai),
            (&anthropic, WireFormat::Anthropic),
            (&anthropic, WireFormat::AiSdk),
            (&openai, WireFormat::LangChain),
            (&openai, WireFormat::Gemini),
            (&openai, WireFormat::Responses),
            (&openai, WireFormat::Ctxkit),
        ] {
            assert_eq!(
                read_format(input.clone(), format).map_err(|e| e.to_string()),
                from_format(input, format).map_err(|e| e.to_string()),
                "{format:?}"
            );
        }
        let bad = serde_json::json!([{"role": "user"}, {"role": "usr"}]);
        assert_eq!(
            read_format(bad, WireFormat::Ctxkit).map_err(|e| e.to_string()),
            Err(
                "messages[1].role: unknown variant `usr`, expected one of `system`, `user`, `assistant`, `tool`"
                    .to_owned()
            )
        );
    }
}
