//! Values across the boundary, and errors that say where.
//!
//! In: a JS value is read as JSON first ([`read_json`], through the engine's own
//! `JSON.stringify`, which honours `toJSON`, drops `undefined` and functions, and refuses
//! cycles and BigInts), then into a core type with the path of every value ([`decode`]), so a
//! bad field reads `policy.nudges.memory_every_turns: expected a non-negative integer, found
//! the string "ten"`, never a message about JS internals. Message lists are read element by
//! element (`crate::readers::read_messages`) so an error names the message (`messages[3].role: missing`).
//!
//! In goes through JSON text rather than serde-wasm-bindgen's direct reads on purpose: those
//! call `Object.entries` and property getters without catching, so a throwing getter would
//! unwind through Rust frames (leaving an `Engine` borrowed for good), and a cyclic value would
//! recurse until the wasm stack runs out. `JSON.stringify` reports both as errors, and was
//! also the faster of the two in pkg/bench/convert.mjs.
//!
//! Out: a core value is written into plain JS objects, arrays and numbers by
//! serde-wasm-bindgen ([`to_js`]), exactly what `JSON.parse` of its JSON would give (numbers
//! that JS cannot hold exactly come out as the nearest double, as from any JSON API).
//!
//! Errors: every failure is a [`CoreError`] (`at: problem`) until the exported function turns
//! it into a JS `Error` with its own name in front ([`fail`]).
//!
//! Guarantees: nothing here panics or throws past Rust code: JS exceptions raised while
//! reading (a getter that throws, a cycle) come back as errors, and no call leaves a borrow or
//! any other state behind.

use ctxkit_core::CoreError;

use crate::json_path::path_at;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};
use wasm_bindgen::{JsCast, JsError, JsValue};

/// Shorthand for the shell's internal results.
pub type Result<T, E = CoreError> = std::result::Result<T, E>;

/// The JS `Error` thrown by `function` for `error`: `"<function>: <at>: <problem>"`.
pub fn fail(function: &str) -> impl Fn(CoreError) -> JsError + '_ {
    move |error| JsError::new(&format!("{function}: {error}"))
}

/// `value` as JSON. `undefined` reads as `null` (an omitted optional argument).
pub fn read_json(value: &JsValue, at: &str) -> Result<Value> {
    if value.is_undefined() {
        return Ok(Value::Null);
    }
    if value.is_function() {
        return Err(CoreError::invalid(at, "expected data, found a function"));
    }
    if value.is_symbol() {
        return Err(CoreError::invalid(at, "expected data, found a symbol"));
    }
    if value.is_bigint() {
        return Err(CoreError::invalid(
            at,
            "expected data, found a BigInt (use a number)",
        ));
    }
    let text = js_sys::JSON::stringify(value).map_err(|error| {
        CoreError::invalid(
            at,
            format!("cannot be read as JSON: {}", js_error_message(&error)),
        )
    })?;
    let Some(text) = JsValue::from(text).as_string() else {
        return Err(CoreError::invalid(at, "cannot be read as JSON"));
    };
    serde_json::from_str(&text).map_err(|error| match lone_surrogate(&text, &error) {
        Some(problem) => CoreError::invalid(join(at, &path_at(&text, error.column())), problem),
        None => CoreError::invalid(at, format!("cannot be read as JSON: {error}")),
    })
}

/// The problem of a JS string with a lone surrogate, when that is why `error` stopped reading
/// `text`. `JSON.stringify` writes a lone surrogate as a `\uXXXX` escape (valid JSON, not
/// valid Unicode), which serde_json refuses at the escape; ctxkit keeps text as UTF-8, which
/// cannot hold it. (The text is `JSON.stringify`'s, so its escapes are well formed: serde_json's
/// two hex-escape errors come only from a surrogate.)
fn lone_surrogate(text: &str, error: &serde_json::Error) -> Option<String> {
    let message = error.to_string();
    if !(message.starts_with("lone leading surrogate")
        || message.starts_with("unexpected end of hex escape"))
    {
        return None;
    }
    // The escape is the last surrogate escape before where reading stopped.
    let before = text.get(..error.column().min(text.len()))?;
    let escape = before.rmatch_indices("\\u").find_map(|(at, _)| {
        let hex = text.get(at + 2..at + 6)?;
        let unit = u16::from_str_radix(hex, 16).ok()?;
        (0xD800..=0xDFFF)
            .contains(&unit)
            .then(|| format!(" (\\u{})", hex.to_ascii_lowercase()))
    });
    Some(format!(
        "holds a lone surrogate{}, which is not valid Unicode text; remove it or pair it",
        escape.unwrap_or_default()
    ))
}

/// `value` read into `T`, with errors that give the path below `at`. `null` and a missing
/// field read as the default where `T` has one.
///
/// Read from the value's compact JSON text, so a serde error's column is a byte offset that
/// [`path_at`] turns into the path (`crate::json_path` says why not a path-tracking wrapper).
pub fn decode<T: DeserializeOwned>(value: Value, at: &str) -> Result<T> {
    let text = value.to_string();
    serde_json::from_str(&text).map_err(|error| decode_error(&text, &error, at))
}

/// [`decode`]'s error for `error` from reading `text`: not generic, so the .wasm has it once
/// rather than inlined into each type's `decode` (41 of them).
#[inline(never)]
fn decode_error(text: &str, error: &serde_json::Error, at: &str) -> CoreError {
    let path = join(at, &path_at(text, error.column()));
    let message = error.to_string();
    // serde_json ends its messages with the position, which the path replaces.
    let message = message
        .rsplit_once(" at line ")
        .map_or(message.as_str(), |(message, _)| message);
    describe(path, message)
}

/// A JS value read into `T` (see [`read_json`] and [`decode`]).
// Not inlined, nor `read_or_default`, `take_decoded` and `to_js`: one copy per type rather
// than one per call (docs/performance.md, "Size").
#[inline(never)]
pub fn read<T: DeserializeOwned>(value: &JsValue, at: &str) -> Result<T> {
    decode(read_json(value, at)?, at)
}

/// An optional argument read into `T`: `undefined` and `null` give `T::default()`.
#[inline(never)]
pub fn read_or_default<T: DeserializeOwned + Default>(value: &JsValue, at: &str) -> Result<T> {
    match read_json(value, at)? {
        Value::Null => Ok(T::default()),
        json => decode(json, at),
    }
}

/// The error for a JSON value of the wrong kind: `at: expected <what>, found <kind>`.
pub fn expected(at: &str, what: &str, found: &Value) -> CoreError {
    CoreError::invalid(at, format!("expected {what}, found {}", kind(found)))
}

/// The kind of a JSON value, worded for "found X" (`undefined` arrives as null).
pub fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null or undefined",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `value` as a JS value (plain objects, arrays, strings, numbers, booleans and null).
///
/// Written straight into JS objects by serde-wasm-bindgen: pkg/bench/convert.mjs measured
/// `fromOpenAI` and `repairToolPairs` of 10k messages about 25% faster than through JSON text,
/// and the other exports the same. serde-wasm-bindgen refuses an integer beyond 2^53, which
/// only the caller's own raw JSON can hold (an opaque block, a tool call's `input` parsed from
/// its arguments); such a value is written again with its 64-bit integers as BigInts, each then
/// turned into the nearest double (`numbers_for_bigints`), as from any JSON API, so nothing
/// that went in fails to come out. The second write uses the same serializer type with another
/// setting, so the .wasm keeps one writer per type: writing through JSON text instead
/// (`serde_json::to_string`, as before) compiled a second writer of every result type, 4.6 KB
/// of the gzipped module.
#[inline(never)]
pub fn to_js<T: Serialize + ?Sized>(value: &T) -> Result<JsValue> {
    let numbers = serde_wasm_bindgen::Serializer::json_compatible();
    match value.serialize(&numbers) {
        Ok(js) => Ok(js),
        Err(_) => value
            .serialize(&numbers.serialize_large_number_types_as_bigints(true))
            .map(numbers_for_bigints)
            .map_err(write_error),
    }
}

/// [`to_js`]'s error (not inlined into each of its instances).
#[inline(never)]
fn write_error(error: serde_wasm_bindgen::Error) -> CoreError {
    CoreError::invalid("result", format!("cannot be written: {error}"))
}

/// `value` with every BigInt in it, at any depth of its arrays and plain objects (which
/// [`to_js`] just made), replaced by the nearest double: what `JSON.parse` gives for an integer
/// a double cannot hold exactly (JS's `Number` of a BigInt rounds to nearest, ties to even, as
/// the reading of a decimal literal does). Converted by JS rather than through an `i128`, which
/// linked the BigInt reader and the 128-bit integer to double conversion (docs/performance.md,
/// "Size").
fn numbers_for_bigints(value: JsValue) -> JsValue {
    if value.is_bigint() {
        return JsValue::from_f64(js_number(&value));
    }
    if let Some(array) = value.dyn_ref::<js_sys::Array>() {
        for index in 0..array.length() {
            array.set(index, numbers_for_bigints(array.get(index)));
        }
    } else if value.is_object() {
        for key in js_sys::Object::keys(value.unchecked_ref::<js_sys::Object>()).iter() {
            if let Ok(field) = js_sys::Reflect::get(&value, &key) {
                // Cannot fail: the object is a plain one that serde-wasm-bindgen just made.
                let _ = js_sys::Reflect::set(&value, &key, &numbers_for_bigints(field));
            }
        }
    }
    value
}

#[wasm_bindgen::prelude::wasm_bindgen]
extern "C" {
    /// JS's `Number(value)`: for a BigInt, the double nearest to it (ties to even).
    #[wasm_bindgen(js_name = Number)]
    fn js_number(value: &JsValue) -> f64;
}

/// A small result object as a JS value, written through a `serde_json::Value`: its keys come
/// out sorted, and the .wasm keeps the one JS writer of [`to_js`] for all such objects rather
/// than a writer per type (their fields' types are written to JSON elsewhere already).
pub fn to_js_sorted<T: Serialize>(value: &T) -> Result<JsValue> {
    let json = serde_json::to_value(value).map_err(|error| {
        CoreError::invalid("result", format!("cannot be written as JSON: {error}"))
    })?;
    to_js(&json)
}

/// Sets `key` of the JS object `target` to `value` (an object this shell made).
pub fn set(target: &JsValue, key: &str, value: &JsValue) -> Result<()> {
    js_sys::Reflect::set(target, &JsValue::from_str(key), value)
        .map(|_| ())
        .map_err(|error| CoreError::invalid(key, js_error_message(&error)))
}

/// The message of a thrown JS value: an `Error`'s message, a thrown string, or its kind.
pub fn js_error_message(thrown: &JsValue) -> String {
    if let Some(error) = thrown.dyn_ref::<js_sys::Error>() {
        return String::from(error.message());
    }
    if let Some(text) = thrown.as_string() {
        return text;
    }
    if thrown.is_undefined() {
        return "undefined".to_owned();
    }
    if thrown.is_null() {
        return "null".to_owned();
    }
    match thrown.as_f64() {
        Some(number) => format!("{number}"),
        None => "a value that is not an Error".to_owned(),
    }
}

/// `at` followed by a [`path_at`] path (`.` for the root, `[3].role` below it).
pub(crate) fn join(at: &str, path: &str) -> String {
    match path {
        "." | "" => at.to_owned(),
        _ if at.is_empty() => path.trim_start_matches('.').to_owned(),
        _ if path.starts_with('[') => format!("{at}{path}"),
        _ => format!("{at}.{path}"),
    }
}

/// A serde error at `path`, reworded the way the core words its own errors: a missing or
/// unknown field is named in the path, and Rust type names become JSON kinds.
pub(crate) fn describe(path: String, message: &str) -> CoreError {
    if let Some(field) = between(message, "missing field `", "`") {
        return CoreError::invalid(join(&path, field), "missing");
    }
    if message.starts_with("unknown field `") {
        let expected = message
            .split_once("`, ")
            .map(|(_, rest)| rest)
            .unwrap_or("there are no fields");
        // The path already ends with the unknown key.
        return CoreError::invalid(path, format!("unknown field ({expected})"));
    }
    let mut problem = message.to_owned();
    for (rust, json) in [
        ("expected u8", "expected an integer from 0 to 255"),
        ("expected u32", "expected a non-negative integer"),
        ("expected u64", "expected a non-negative integer"),
        ("expected usize", "expected a non-negative integer"),
        ("expected i32", "expected an integer"),
        ("expected i64", "expected an integer"),
        ("expected a sequence", "expected an array"),
        ("expected a map", "expected an object"),
        ("integer `", "number `"),
        ("floating point `", "number `"),
    ] {
        problem = problem.replace(rust, json);
    }
    if let Some(start) = problem.find("expected struct ") {
        problem.replace_range(start.., "expected an object");
    }
    CoreError::invalid(path, problem)
}

fn between<'t>(text: &'t str, open: &str, close: &str) -> Option<&'t str> {
    let start = text.find(open)? + open.len();
    let rest = text.get(start..)?;
    rest.get(..rest.find(close)?)
}

/// `json` as an object's fields, or an error saying what was expected.
pub fn object(json: Value, at: &str, what: &str) -> Result<Map<String, Value>> {
    match json {
        Value::Object(fields) => Ok(fields),
        other => Err(expected(at, what, &other)),
    }
}

/// Removes `key` from `fields`; a null value counts as absent.
pub fn take(fields: &mut Map<String, Value>, key: &str) -> Option<Value> {
    fields.remove(key).filter(|value| !value.is_null())
}

/// Removes `key` from `fields` and reads it (path `input.<key>`); absent or null is `None`.
#[inline(never)]
pub fn take_decoded<T: serde::de::DeserializeOwned>(
    fields: &mut Map<String, Value>,
    key: &str,
) -> Result<Option<T>> {
    take(fields, key)
        .map(|value| decode(value, &format!("input.{key}")))
        .transpose()
}

/// The error of a call made while another call on the same engine runs.
pub(crate) fn busy() -> CoreError {
    CoreError::invalid(
        "engine",
        "is in the middle of another call on the same Engine; call it again afterwards",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use ctxkit_core::compaction::Budget;
    use ctxkit_core::Message;

    fn error<T: DeserializeOwned + std::fmt::Debug>(json: Value, at: &str) -> String {
        match decode::<T>(json, at) {
            Ok(value) => format!("no error: {value:?}"),
            Err(error) => error.to_string(),
        }
    }

    #[test]
    fn serde_errors_are_reworded_with_their_path() {
        assert_eq!(
            error::<Vec<Message>>(serde_json::json!([{"content": "hi"}]), "messages"),
            "messages[0].role: missing"
        );
        assert_eq!(
            error::<Message>(
                serde_json::json!({"role": "assistant", "tool_calls": [{"name": "ls", "arguments": "{}"}]}),
                "messages[1]"
            ),
            "messages[1].tool_calls[0].id: missing"
        );
        assert_eq!(
            error::<Message>(serde_json::json!({"role": "user", "contnet": "x"}), "m"),
            "m.contnet: unknown field (expected one of `role`, `content`, `tool_calls`, `tool_call_id`, `is_error`, `name`, `provider_fields`)"
        );
        assert_eq!(
            error::<Budget>(serde_json::json!({"context_window": "big"}), "budget"),
            "budget.context_window: invalid type: string \"big\", expected a non-negative integer"
        );
        assert_eq!(
            error::<Budget>(serde_json::json!(7), "budget"),
            "budget: invalid type: number `7`, expected an object"
        );
    }

    #[test]
    fn paths_join() {
        assert_eq!(join("messages", "."), "messages");
        assert_eq!(join("messages", "[2].role"), "messages[2].role");
        assert_eq!(
            join("policy", "nudges.stall_text"),
            "policy.nudges.stall_text"
        );
        assert_eq!(join("", "budget"), "budget");
    }
}
