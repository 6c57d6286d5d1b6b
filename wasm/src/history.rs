//! The `Engine`'s history tools: `historyTools`, `searchHistory`, `readHistory` and
//! `executeTool`, over the log the engine keeps in wasm memory.
//!
//! The core decides everything ([`ctxkit_core::recall`]): the tool definitions, the checks of a
//! call's arguments, the search (exact text first, then every word, case-insensitive, bounded),
//! and the bounded text the model reads. This file reads the JS values, runs the in-memory
//! search over the engine's complete log, and, for `read_offload`, asks the caller's
//! `read_file` callback for the file (the engine keeps no files) after the core checked the
//! path. A search also looks in the offloaded outputs the engine can read back: through its
//! `setOffload` writer's `read` (or `executeTool`'s `read_file` with its `session`), each at the
//! path the core gives its reference's seq and call id.
//!
//! Guarantees: nothing changes the engine (the caller appends the result like any tool
//! result); a call the model got wrong is a tool message with `is_error: true`, a call of
//! another tool or a malformed call object throws; no borrow of the session is held while
//! `read_file` runs.

use ctxkit_core::offload::{
    is_offload_reference, offload_file_name, session_folder, OffloadPolicy,
};
use ctxkit_core::recall::{
    check_offload_path, history_tools, parse_history_call, read_entries, render_offload_page,
    render_read, render_search, search_entries_with, HistoryRequest, OffloadPageRequest,
    OffloadedText, ReadRequest, SearchRequest, ToolDefinition, READ_OFFLOAD, SEARCH_SCAN_MAX_BYTES,
};
use ctxkit_core::wire::WireFormat;
use ctxkit_core::{CoreError, Message, Session, ToolCall};
use serde::Deserialize;
use serde_json::Value;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsError, JsValue};

use crate::convert::busy;
use crate::convert::{
    expected, fail, js_error_message, read, read_json, read_or_default, to_js, Result,
};
use crate::engine::Engine;

#[wasm_bindgen(typescript_custom_section)]
const HISTORY_TYPES: &str = r#"
/** A tool as a model is offered it, in no provider's shape: `parameters` is its JSON schema. */
export interface ToolDefinition {
  name: string;
  description: string;
  parameters: { [key: string]: Json };
}

/** The shape `historyTools` returns the tools in. */
export type ToolFormat = "ctxkit" | "openai" | "anthropic";

/** A tool call to execute: ctxkit's shape, OpenAI's, or an Anthropic `tool_use` block. */
export type ExecutableToolCall =
  | ToolCall
  | OpenAIToolCall
  | { type: "tool_use"; id: string; name: string; input: { [key: string]: Json } };

/** Options of `executeTool`, for `read_offload` (the Engine keeps no files). */
export interface ExecuteToolOptions {
  /** Reads an offloaded output's file, given its path relative to the working directory (default: the reader of the engine's `setOffload` writer, with its session and folder). */
  read_file?: (path: string) => string;
  /** The session name the outputs were offloaded under (`planOffload`'s); any when omitted. */
  session?: string;
  /** The offload folder (default that of the default `OffloadPolicy`). */
  offload_folder?: string;
}
"#;

/// The data fields of `executeTool`'s options.
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(test, derive(PartialEq))]
#[serde(default, deny_unknown_fields)]
pub(crate) struct ExecuteOptions {
    session: Option<String>,
    offload_folder: Option<String>,
}

crate::readers::defaulted!(
    /// `executeTool`'s data options, read by hand as `crate::readers` says why.
    execute_options,
    ExecuteOptions,
    [session, offload_folder]
);

#[wasm_bindgen]
impl Engine {
    /// The history tools to offer the model, in ctxkit's shape (`{name, description,
    /// parameters}`), or ready for an OpenAI or Anthropic `tools` array.
    #[wasm_bindgen(js_name = historyTools, unchecked_return_type = "ToolDefinition[] | Json[]")]
    pub fn history_tools_js(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "ToolFormat")] format: JsValue,
    ) -> Result<JsValue, JsError> {
        (|| {
            let format: Option<WireFormat> = read_or_default(&format, "format")?;
            let tools = history_tools();
            match format.unwrap_or(WireFormat::Ctxkit) {
                WireFormat::Ctxkit => to_js(&tools),
                WireFormat::Openai => to_js(&shaped(&tools, ToolDefinition::to_openai)),
                WireFormat::Anthropic => to_js(&shaped(&tools, ToolDefinition::to_anthropic)),
                other => Err(CoreError::invalid(
                    "format",
                    format!(
                        "`{}` is not a tool format: expected ctxkit, openai or anthropic",
                        other.as_str()
                    ),
                )),
            }
        })()
        .map_err(fail("Engine.historyTools"))
    }

    /// What `search_history` answers for `query` (at most `limit` hits, default 10, at most
    /// 25): the hits with their seq and a snippet, exact matches first, in the log and in the
    /// outputs the `setOffload` writer reads back (a hit there gives the `read_offload` call
    /// that pages to its line). Throws on a blank or too long query.
    #[wasm_bindgen(js_name = searchHistory)]
    pub fn search_history(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] query: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "number")] limit: JsValue,
    ) -> Result<String, JsError> {
        (|| {
            let query: String = read(&query, "query")?;
            let limit: Option<i64> = read_or_default(&limit, "limit")?;
            let request = SearchRequest::new(&query, limit.map(i128::from))?;
            let offloads = self.offload_reader()?;
            self.search_text(&request, offloads.as_ref())
        })()
        .map_err(fail("Engine.searchHistory"))
    }

    /// What `read_history` answers for the seqs `from` to `to` (default `from + 9`; at most 40
    /// messages): the messages as a transcript, bounded, saying where to continue.
    #[wasm_bindgen(js_name = readHistory)]
    pub fn read_history(
        &self,
        #[wasm_bindgen(unchecked_param_type = "number")] from: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "number")] to: JsValue,
    ) -> Result<String, JsError> {
        (|| {
            let from: i64 = read(&from, "from")?;
            let to: Option<i64> = read_or_default(&to, "to")?;
            let request = ReadRequest::new(i128::from(from), to.map(i128::from))?;
            let session = self.session_ref()?;
            Ok(read_text(&session, &request))
        })()
        .map_err(fail("Engine.readHistory"))
    }

    /// Executes a call of one of the history tools and returns its tool message (ctxkit shape,
    /// answering the call's id; `is_error` when the call's arguments were wrong). Throws for a
    /// call of another tool.
    #[wasm_bindgen(js_name = executeTool, unchecked_return_type = "Message")]
    pub fn execute_tool(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ExecutableToolCall")] call: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "ExecuteToolOptions")] options: JsValue,
    ) -> Result<JsValue, JsError> {
        (|| {
            let (read_file, mut options) = read_execute_options(&options)?;
            // Without a read_file, the engine's own offload writer reads (setOffload).
            let read_file = match read_file {
                Some(function) => Some(function),
                None => self
                    .offload_cell()
                    .try_borrow()
                    .map_err(|_| busy())?
                    .as_ref()
                    .map(|config| {
                        options
                            .session
                            .get_or_insert_with(|| config.session.clone());
                        options
                            .offload_folder
                            .get_or_insert_with(|| config.policy.folder.clone());
                        config.read_function()
                    }),
            };
            let call = tool_call(read_json(&call, "call")?)?;
            let request = match parse_history_call(&call.name, &call.arguments) {
                Ok(request) => request,
                Err(error) if ctxkit_core::recall::is_history_tool(&call.name) => {
                    return to_js(&Message::tool_result(&call.id, error.to_string(), true));
                }
                Err(error) => return Err(error),
            };
            let answer = match &request {
                HistoryRequest::Search(search) => {
                    let reader = read_file.as_ref().and_then(|read| {
                        let session = options.session.clone()?;
                        let folder = options
                            .offload_folder
                            .clone()
                            .unwrap_or_else(|| OffloadPolicy::default().folder);
                        Some(OffloadReader {
                            read: read.clone(),
                            session,
                            folder,
                        })
                    });
                    Ok(self.search_text(search, reader.as_ref())?)
                }
                HistoryRequest::Read(range) => {
                    let session = self.session_ref()?;
                    Ok(read_text(&session, range))
                }
                HistoryRequest::Offload(page) => read_offload(page, read_file.as_ref(), &options),
            };
            let message = match answer {
                Ok(text) => Message::tool_result(&call.id, text, false),
                Err(problem) => Message::tool_result(&call.id, problem, true),
            };
            to_js(&message)
        })()
        .map_err(fail("Engine.executeTool"))
    }
}

impl Engine {
    /// The session, borrowed (refused while another call on this engine runs).
    fn session_ref(&self) -> Result<std::cell::Ref<'_, Session>> {
        self.session_cell().try_borrow().map_err(|_| busy())
    }

    /// The reader of the engine's own offload writer (`setOffload`), if it has one.
    fn offload_reader(&self) -> Result<Option<OffloadReader>> {
        let config = self.offload_cell().try_borrow().map_err(|_| busy())?;
        Ok(config.as_ref().map(|config| OffloadReader {
            read: config.read_function(),
            session: config.session.clone(),
            folder: config.policy.folder.clone(),
        }))
    }

    /// `search_history`'s answer to `request`: the log, and the offloaded outputs `offloads`
    /// can read, searched by the core. No borrow of the session is held while the reader runs.
    fn search_text(
        &self,
        request: &SearchRequest,
        offloads: Option<&OffloadReader>,
    ) -> Result<String> {
        let wanted: Vec<(u64, String)> = match offloads {
            Some(reader) => {
                let session = self.session_ref()?;
                offloaded_paths(&session, reader)
            }
            None => Vec::new(),
        };
        let texts = offloads.map_or_else(Vec::new, |reader| reader.texts(&wanted));
        let found: Vec<OffloadedText<'_>> = texts
            .iter()
            .map(|(seq, path, text)| OffloadedText {
                seq: *seq,
                path,
                text,
            })
            .collect();
        let session = self.session_ref()?;
        Ok(render_search(
            request,
            &search_entries_with(&session.entries, &found, request),
        ))
    }
}

/// Reads offloaded outputs for the search: a `read(path)` function, and the session and
/// folder the outputs were offloaded under (their paths are the core's, from each reference's
/// seq and call id, never read out of the reference's text).
struct OffloadReader {
    read: js_sys::Function,
    session: String,
    folder: String,
}

impl OffloadReader {
    /// The texts of `paths` (seq and path, newest first) the reader gives, at most
    /// [`SEARCH_SCAN_MAX_BYTES`] together; a path it cannot read (it throws, or gives no
    /// string) is left out.
    fn texts(&self, paths: &[(u64, String)]) -> Vec<(u64, String, String)> {
        let mut texts = Vec::new();
        let mut read_bytes = 0usize;
        for (seq, path) in paths {
            if read_bytes >= SEARCH_SCAN_MAX_BYTES {
                break;
            }
            let text = self
                .read
                .call1(&JsValue::UNDEFINED, &JsValue::from_str(path))
                .ok()
                .and_then(|value| value.as_string());
            if let Some(text) = text {
                read_bytes = read_bytes.saturating_add(text.len());
                texts.push((*seq, path.clone(), text));
            }
        }
        texts
    }
}

/// The paths of the outputs offloaded from `session`'s log (its offload references), newest
/// first, as the core names them under `reader`'s session and folder.
fn offloaded_paths(session: &Session, reader: &OffloadReader) -> Vec<(u64, String)> {
    let Ok(folder) = session_folder(&reader.session, &reader.folder) else {
        return Vec::new();
    };
    session
        .entries
        .iter()
        .rev()
        .filter(|entry| is_offload_reference(&entry.message))
        .map(|entry| {
            let id = entry.message.tool_call_id.as_deref().unwrap_or_default();
            (
                entry.seq,
                format!("{folder}/{}", offload_file_name(entry.seq, id)),
            )
        })
        .collect()
}

/// Each tool in a provider's shape.
fn shaped(tools: &[ToolDefinition], shape: fn(&ToolDefinition) -> Value) -> Vec<Value> {
    tools.iter().map(shape).collect()
}

/// The rendered read of `request` from `session`'s log.
fn read_text(session: &Session, request: &ReadRequest) -> String {
    let last_seq = session.next_seq().saturating_sub(1);
    render_read(request, &read_entries(&session.entries, request), last_seq)
}

/// A page of an offloaded output through the caller's `read_file`, or why there is none.
fn read_offload(
    page: &OffloadPageRequest,
    read_file: Option<&js_sys::Function>,
    options: &ExecuteOptions,
) -> Result<String, String> {
    let Some(read_file) = read_file else {
        return Err(format!(
            "{READ_OFFLOAD}: this agent's Engine keeps no files (pass executeTool(call, {{ read_file }}) \
             to page offloaded outputs); read the file with a file tool instead"
        ));
    };
    let default_folder = OffloadPolicy::default().folder;
    let folder = options.offload_folder.as_deref().unwrap_or(&default_folder);
    let path = check_offload_path(&page.path, options.session.as_deref(), folder)
        .map_err(|error| error.to_string())?;
    let relative = path.relative_path();
    let content = read_file
        .call1(&JsValue::UNDEFINED, &JsValue::from_str(&relative))
        .map_err(|thrown| {
            format!(
                "{READ_OFFLOAD}.path: {relative} cannot be read: {}",
                js_error_message(&thrown)
            )
        })?
        .as_string()
        .ok_or_else(|| format!("{READ_OFFLOAD}.path: {relative}: read_file returned no string"))?;
    Ok(render_offload_page(
        page,
        &path,
        &content,
        content.len() as u64,
    ))
}

/// `executeTool`'s options: the `read_file` callback and the data fields.
fn read_execute_options(options: &JsValue) -> Result<(Option<js_sys::Function>, ExecuteOptions)> {
    let read_file = if options.is_object() {
        js_sys::Reflect::get(options, &JsValue::from_str("read_file"))
            .map_err(|error| CoreError::invalid("options.read_file", js_error_message(&error)))?
    } else {
        JsValue::UNDEFINED
    };
    let read_file = if read_file.is_undefined() || read_file.is_null() {
        None
    } else {
        Some(read_file.dyn_into::<js_sys::Function>().map_err(|_| {
            CoreError::invalid("options.read_file", "expected a function (path) => string")
        })?)
    };
    let mut json = read_json(options, "options")?;
    if let Value::Object(fields) = &mut json {
        // JSON.stringify drops a function; a null read_file is the same as none.
        fields.remove("read_file");
    }
    let data = match json {
        Value::Null => ExecuteOptions::default(),
        json => execute_options(json, "options")?,
    };
    Ok((read_file, data))
}

/// A tool call in ctxkit's shape (`{id, name, arguments}`), OpenAI's (`{id, function: {name,
/// arguments}}`) or as an Anthropic `tool_use` block (`{id, name, input}`); arguments given as
/// an object are written as JSON text.
fn tool_call(json: Value) -> Result<ToolCall> {
    let Value::Object(fields) = &json else {
        return Err(expected("call", "a tool call object", &json));
    };
    let text = |value: Option<&Value>, at: &str| -> Result<String> {
        match value {
            Some(Value::String(text)) => Ok(text.clone()),
            Some(other) => Err(expected(at, "a string", other)),
            None => Err(CoreError::invalid(at, "missing")),
        }
    };
    let id = text(fields.get("id"), "call.id")?;
    let (name, arguments, at) = match fields.get("function") {
        Some(Value::Object(function)) => (
            text(function.get("name"), "call.function.name")?,
            function.get("arguments"),
            "call.function.arguments",
        ),
        Some(other) => return Err(expected("call.function", "an object", other)),
        None => (
            text(fields.get("name"), "call.name")?,
            fields.get("arguments").or_else(|| fields.get("input")),
            "call.arguments",
        ),
    };
    let arguments = match arguments {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(value @ (Value::Object(_) | Value::Array(_))) => value.to_string(),
        Some(other) => return Err(expected(at, "JSON text or an object", other)),
    };
    Ok(ToolCall::new(id, name, arguments))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{engine_options, EngineOptions};
    use crate::readers::tests::same;
    use serde_json::json;

    #[test]
    fn options_read_as_derived() {
        for input in [
            json!({}),
            json!({"session": "s", "offload_folder": "f"}),
            json!({"session": 3}),
            json!({"offload_folder": null, "sesion": "s"}),
            json!({"zz": 1, "session": []}),
            json!("s"),
            json!(7),
        ] {
            same(execute_options, input.clone());
            same::<EngineOptions>(engine_options, input);
        }
        for input in [
            json!({"family": "claude", "maxInputBytes": 10}),
            json!({"family": "nope"}),
            json!({"maxInputBytes": -1, "family": 3}),
            json!({"max_input_bytes": 1}),
            json!({"maxInputBytes": null}),
        ] {
            same::<EngineOptions>(engine_options, input);
        }
    }
}
