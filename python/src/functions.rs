//! The free functions: `parse`, `render`, `repair`, `validate`, `estimate_tokens` and
//! `import_transcript`, each a core call between two conversions. Messages come and go as plain
//! dicts in any of the seven formats (`ctxkit`, `openai`, `anthropic`, `responses`, `gemini`,
//! `ai-sdk`, `langchain`); the core's work runs with the GIL released.

use std::path::PathBuf;

use ctxkit_core::import::{import_transcript as core_import, TranscriptFormat};
use ctxkit_core::tokens::{estimate_message, estimate_messages, estimate_text, ModelFamily};
use ctxkit_core::wire::{
    from_format, render_messages, repair_tool_pairs, validate as core_validate, WireFormat,
};
use ctxkit_core::{CoreError, Message};
use pyo3::prelude::*;
use pyo3::types::PyString;
use serde_json::{json, Value};

use crate::convert::{decode, serialize_to_py, to_json, to_py, type_name};
use crate::errors::{core, core_in};

/// `name` read as a wire format, or an error naming `at` and the choices.
pub fn wire_format(name: &str, at: &str) -> Result<WireFormat, CoreError> {
    WireFormat::ALL
        .into_iter()
        .find(|format| format.as_str() == name)
        .ok_or_else(|| {
            let names: Vec<&str> = WireFormat::ALL.iter().map(|f| f.as_str()).collect();
            CoreError::invalid(
                at,
                format!(
                    "unknown format {name:?} (expected one of {})",
                    names.join(", ")
                ),
            )
        })
}

/// `value`, messages in `format`, read into ctxkit messages (errors name `messages[i]...`).
pub fn read_messages(value: &Bound<'_, PyAny>, format: &str) -> Result<Vec<Message>, CoreError> {
    let format = wire_format(format, "format")?;
    let json = to_json(value, "messages")?;
    match format {
        // Read one by one, so the error names the message and the field inside it.
        WireFormat::Ctxkit => match json {
            Value::Array(items) => items
                .into_iter()
                .enumerate()
                .map(|(index, item)| decode(item, &format!("messages[{index}]")))
                .collect(),
            other => Err(CoreError::invalid(
                "messages",
                format!("expected a list of messages, found {}", kind(&other)),
            )),
        },
        format => from_format(&json, format),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "None",
        Value::Bool(_) => "a bool",
        Value::Number(_) => "a number",
        Value::String(_) => "a str",
        Value::Array(_) => "a list",
        Value::Object(_) => "a dict",
    }
}

/// Messages in `format` (the wire format's dicts) read as ctxkit's messages.
#[pyfunction]
#[pyo3(signature = (messages, format = "openai"))]
pub fn parse<'py>(
    py: Python<'py>,
    messages: &Bound<'py, PyAny>,
    format: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let messages = read_messages(messages, format).map_err(core_in("parse"))?;
    serialize_to_py(py, &messages)
}

/// Messages (in `format`) rendered as the request body of `to`.
#[pyfunction]
#[pyo3(signature = (messages, to = "openai", format = "ctxkit"))]
pub fn render<'py>(
    py: Python<'py>,
    messages: &Bound<'py, PyAny>,
    to: &str,
    format: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let target = wire_format(to, "to").map_err(core_in("render"))?;
    let messages = read_messages(messages, format).map_err(core_in("render"))?;
    let value = py
        .detach(|| render_messages(&messages, target))
        .map_err(core_in("render"))?;
    to_py(py, &value)
}

/// Messages with every tool call answered and every result matched to a call, in the format
/// they came in.
#[pyfunction]
#[pyo3(signature = (messages, format = "ctxkit"))]
pub fn repair<'py>(
    py: Python<'py>,
    messages: &Bound<'py, PyAny>,
    format: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let wire = wire_format(format, "format").map_err(core_in("repair"))?;
    let messages = read_messages(messages, format).map_err(core_in("repair"))?;
    let repaired = py.detach(|| repair_tool_pairs(&messages));
    match wire {
        WireFormat::Ctxkit => serialize_to_py(py, &repaired),
        other => to_py(
            py,
            &render_messages(&repaired, other).map_err(core_in("repair"))?,
        ),
    }
}

/// What the provider of `format` would reject in `request` (its request body, as `render`
/// writes it): a list of `{"at", "message"}` in the provider's own wording, empty when valid.
#[pyfunction]
#[pyo3(signature = (request, format = "openai"))]
pub fn validate<'py>(
    py: Python<'py>,
    request: &Bound<'py, PyAny>,
    format: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let wire = wire_format(format, "format").map_err(core_in("validate"))?;
    let json = to_json(request, "request").map_err(core_in("validate"))?;
    let Some(violations) = py.detach(|| core_validate(&json, wire)) else {
        return Err(core(CoreError::invalid(
            "format",
            format!("{format:?} is a library's message type, not a provider's API: validate the format it is sent as (openai, anthropic, responses or gemini)"),
        )));
    };
    serialize_to_py(py, &violations)
}

/// The estimated tokens of a text, a message or a list of messages (in `format`).
#[pyfunction]
#[pyo3(signature = (input, family = "claude", format = "ctxkit"))]
pub fn estimate_tokens(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    family: &str,
    format: &str,
) -> PyResult<u64> {
    let family: ModelFamily =
        decode(json!(family), "family").map_err(core_in("estimate_tokens"))?;
    if let Ok(text) = input.cast::<PyString>() {
        let text = text
            .to_cow()
            .map_err(|_| {
                core(CoreError::invalid(
                    "input",
                    "a str that is not valid Unicode text (a lone surrogate?)",
                ))
            })?
            .into_owned();
        return Ok(py.detach(|| estimate_text(&text, family)));
    }
    if input.is_instance_of::<pyo3::types::PyDict>() && format == "ctxkit" {
        let message: Message = decode(to_json(input, "input").map_err(core)?, "input")
            .map_err(core_in("estimate_tokens"))?;
        return Ok(py.detach(|| estimate_message(&message, family)));
    }
    if input.is_instance_of::<pyo3::types::PyList>()
        || input.is_instance_of::<pyo3::types::PyDict>()
    {
        let messages = read_messages(input, format).map_err(core_in("estimate_tokens"))?;
        return Ok(py.detach(|| estimate_messages(&messages, family)));
    }
    Err(core(CoreError::invalid(
        "input",
        format!(
            "expected a str, a message dict or a list of messages, found {}",
            type_name(input)
        ),
    )))
}

/// The text of `source`: a path-like object is read from disk (UTF-8), and so is a one-line
/// `str` that does not start with `{` or `[`; any other `str` is the text itself.
pub fn source_text(source: &Bound<'_, PyAny>) -> PyResult<(String, Option<PathBuf>)> {
    if let Ok(text) = source.cast::<PyString>() {
        let text = text.to_cow().map_err(|_| {
            core(CoreError::invalid(
                "text",
                "a str that is not valid Unicode text (a lone surrogate?)",
            ))
        })?;
        // A one-line str that cannot be JSON text is a path (`"session.jsonl"`): a
        // transcript's text starts with `{` or `[`, and a path never holds a line break.
        let trimmed = text.trim_start();
        if trimmed.starts_with(['{', '[']) || text.contains('\n') || text.is_empty() {
            return Ok((text.into_owned(), None));
        }
        let path = PathBuf::from(text.as_ref());
        let read = std::fs::read_to_string(&path)
            .map_err(|e| crate::errors::native(ctxkit::Error::io("read", &path, e)))?;
        return Ok((read, Some(path)));
    }
    let Ok(path) = source.extract::<PathBuf>() else {
        return Err(core(CoreError::invalid(
            "source",
            format!(
                "expected the transcript's text (str) or a path (pathlib.Path), found {}",
                type_name(source)
            ),
        )));
    };
    let text = std::fs::read_to_string(&path)
        .map_err(|e| crate::errors::native(ctxkit::Error::io("read", &path, e)))?;
    Ok((text, Some(path)))
}

/// A transcript format by name (`None`: detected).
pub fn transcript_format(name: Option<&str>) -> Result<Option<TranscriptFormat>, CoreError> {
    match name {
        None | Some("auto") => Ok(None),
        Some(name) => name.parse().map(Some),
    }
}

/// A transcript (Claude Code, Codex, pi, SWE-agent, OpenHands, any chat format; its text, or a
/// `pathlib.Path`) imported: `{"format", "sessions": [{"label", "messages", "compactions",
/// "model", "family"}]}` (`model`: the one the transcript names, `family`: its tokenizer family;
/// both `None` when it names none).
#[pyfunction]
#[pyo3(signature = (source, format = None))]
pub fn import_transcript<'py>(
    py: Python<'py>,
    source: &Bound<'py, PyAny>,
    format: Option<&str>,
) -> PyResult<Bound<'py, PyAny>> {
    let (text, path) = source_text(source)?;
    let format = transcript_format(format).map_err(core_in("import_transcript"))?;
    let imported = py.detach(|| core_import(&text, format)).map_err(|error| {
        let place = path
            .as_ref()
            .map_or("import_transcript".to_owned(), |p| p.display().to_string());
        crate::errors::raise(
            crate::errors::core_kind(&error),
            format!("{place}: {error}"),
        )
    })?;
    let sessions: Vec<Value> = imported
        .sessions
        .iter()
        .map(|session| {
            json!({
                "label": session.label,
                "messages": session.messages,
                "compactions": session.compactions,
                "model": session.model,
                "family": session
                    .model
                    .as_deref()
                    .and_then(ctxkit_core::tokens::ModelFamily::of_model)
                    .map(|family| family.as_str()),
                "working_directory": session.working_directory,
            })
        })
        .collect();
    to_py(
        py,
        &json!({"format": imported.format.as_str(), "sessions": sessions}),
    )
}
