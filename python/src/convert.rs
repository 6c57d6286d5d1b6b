//! Python values in and out: plain `dict`/`list`/`str`/`int`/`float`/`bool`/`None` read into
//! JSON and typed values, JSON written back as plain Python objects.
//!
//! Guarantees: a value that cannot be JSON (bytes, a set, a `float('nan')`, a string with a lone
//! surrogate, a nesting deeper than [`MAX_DEPTH`], a dict key that is not a string) is refused
//! with an [`InvalidInput`] naming its path (`messages[5].content: a str with a lone
//! surrogate`), never a panic; a typed read reports serde's problem at the path of the bad field
//! (`messages[5].tool_call_id: invalid type: integer ...`). Strings come back byte for byte.

use ctxkit_core::CoreError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Number, Value};

/// The JSON path of a serde error's offset, shared with the JS shell: the same file, so both
/// shells name a bad field alike.
#[path = "../../wasm/src/json_path.rs"]
#[allow(dead_code)]
mod json_path;

/// How deep a Python value may nest (a deeper one is refused rather than risk the stack).
pub const MAX_DEPTH: usize = 256;

/// A refused input: where and what.
pub type InvalidInput = CoreError;

/// `value` as JSON, refusing what JSON cannot hold, with the path below `at`.
pub fn to_json(value: &Bound<'_, PyAny>, at: &str) -> Result<Value, InvalidInput> {
    read(value, at, 0)
}

fn read(value: &Bound<'_, PyAny>, at: &str, depth: usize) -> Result<Value, InvalidInput> {
    if depth > MAX_DEPTH {
        return Err(CoreError::invalid(
            at,
            format!("nested deeper than {MAX_DEPTH} levels"),
        ));
    }
    if value.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(flag) = value.cast::<PyBool>() {
        return Ok(Value::Bool(flag.is_true()));
    }
    if let Ok(int) = value.cast::<PyInt>() {
        if let Ok(n) = int.extract::<i64>() {
            return Ok(Value::from(n));
        }
        if let Ok(n) = int.extract::<u64>() {
            return Ok(Value::from(n));
        }
        return Err(CoreError::invalid(at, "an int too big for 64 bits"));
    }
    if let Ok(float) = value.cast::<PyFloat>() {
        return Number::from_f64(float.value())
            .map(Value::Number)
            .ok_or_else(|| {
                CoreError::invalid(
                    at,
                    "a float that is not finite (JSON has no NaN or infinity)",
                )
            });
    }
    if let Ok(text) = value.cast::<PyString>() {
        return text
            .to_cow()
            .map(|s| Value::String(s.into_owned()))
            .map_err(|_| {
                CoreError::invalid(
                    at,
                    "a str that is not valid Unicode text (a lone surrogate?)",
                )
            });
    }
    if let Ok(dict) = value.cast::<PyDict>() {
        let mut object = Map::new();
        for (key, item) in dict.iter() {
            let Ok(key) = key.cast::<PyString>() else {
                return Err(CoreError::invalid(
                    at,
                    format!("a dict key of type {} (keys must be str)", type_name(&key)),
                ));
            };
            let key = key
                .to_cow()
                .map_err(|_| CoreError::invalid(at, "a dict key that is not valid Unicode text"))?;
            let path = format!("{at}.{key}");
            object.insert(key.into_owned(), read(&item, &path, depth + 1)?);
        }
        return Ok(Value::Object(object));
    }
    if value.cast::<PyList>().is_ok() || value.cast::<PyTuple>().is_ok() {
        let mut items = Vec::new();
        for (index, item) in value
            .try_iter()
            .map_err(|e| CoreError::invalid(at, e.to_string()))?
            .enumerate()
        {
            let item = item.map_err(|e| CoreError::invalid(at, e.to_string()))?;
            items.push(read(&item, &format!("{at}[{index}]"), depth + 1)?);
        }
        return Ok(Value::Array(items));
    }
    Err(CoreError::invalid(
        at,
        format!(
            "expected a dict, list, str, int, float, bool or None, found {}",
            type_name(value)
        ),
    ))
}

/// The Python type's name of `value`, for errors.
pub fn type_name(value: &Bound<'_, PyAny>) -> String {
    value
        .get_type()
        .name()
        .map(|name| name.to_string())
        .unwrap_or_else(|_| "object".to_owned())
}

/// `value` read into `T`, with errors that give the path below `at` (serde's column turned
/// into the path, as the JS shell does).
pub fn decode<T: DeserializeOwned>(value: Value, at: &str) -> Result<T, InvalidInput> {
    let text = value.to_string();
    serde_json::from_str(&text).map_err(|error| {
        let inner = json_path::path_at(&text, error.column());
        let path = match inner.as_str() {
            "." => at.to_owned(),
            p if p.starts_with('[') => format!("{at}{p}"),
            p => format!("{at}.{p}"),
        };
        let message = error.to_string();
        let message = message
            .rsplit_once(" at line ")
            .map_or(message.as_str(), |(message, _)| message);
        CoreError::invalid(path, message)
    })
}

/// A Python value read into `T` (see [`to_json`] and [`decode`]); `None` reads as `T`'s
/// default.
pub fn read_or_default<T: DeserializeOwned + Default>(
    value: Option<&Bound<'_, PyAny>>,
    at: &str,
) -> Result<T, InvalidInput> {
    match value {
        None => Ok(T::default()),
        Some(value) if value.is_none() => Ok(T::default()),
        Some(value) => decode(to_json(value, at)?, at),
    }
}

/// `value` as plain Python objects.
pub fn to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(flag) => PyBool::new(py, *flag).to_owned().into_any(),
        Value::Number(number) => {
            if let Some(n) = number.as_i64() {
                n.into_pyobject(py)?.into_any()
            } else if let Some(n) = number.as_u64() {
                n.into_pyobject(py)?.into_any()
            } else {
                number
                    .as_f64()
                    .unwrap_or(f64::NAN)
                    .into_pyobject(py)?
                    .into_any()
            }
        }
        Value::String(text) => PyString::new(py, text).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_py(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(object) => {
            let dict = PyDict::new(py);
            for (key, item) in object {
                dict.set_item(key, to_py(py, item)?)?;
            }
            dict.into_any()
        }
    })
}

/// Any serializable value as plain Python objects.
pub fn serialize_to_py<'py, T: Serialize + ?Sized>(
    py: Python<'py>,
    value: &T,
) -> PyResult<Bound<'py, PyAny>> {
    let json = serde_json::to_value(value)
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
    to_py(py, &json)
}
