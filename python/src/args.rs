//! Arguments read from Python with errors that name them, as `InvalidInputError`s (a
//! `CtxkitError`), never a bare `OverflowError`: a session name (a str without NUL: every store
//! and file name would cut it there or refuse it) and whole numbers that must not be negative
//! (read as Python ints of any size, then checked, so `-1` names its parameter).

use std::ops::Deref;

use ctxkit_core::CoreError;
use pyo3::prelude::*;

use crate::errors::core;

/// A session name: a str without NUL characters.
#[derive(Debug, Clone)]
pub struct SessionName(String);

impl Deref for SessionName {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl<'a, 'py> FromPyObject<'a, 'py> for SessionName {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let name: String = obj.extract()?;
        if name.contains('\0') {
            return Err(core(CoreError::invalid(
                "session",
                "a session name must not contain NUL characters",
            )));
        }
        Ok(SessionName(name))
    }
}

/// `value` (the Python argument `name`) as a `u64`, or `InvalidInputError` naming it.
pub fn unsigned(value: i128, name: &str) -> PyResult<u64> {
    u64::try_from(value).map_err(|_| {
        core(CoreError::invalid(
            name,
            format!(
                "expected a whole number from 0 to {}, found {value}",
                u64::MAX
            ),
        ))
    })
}

/// [`unsigned`] as a `usize`.
pub fn count(value: i128, name: &str) -> PyResult<usize> {
    let value = unsigned(value, name)?;
    usize::try_from(value).map_err(|_| {
        core(CoreError::invalid(
            name,
            format!("{value} is too large here"),
        ))
    })
}

/// The idempotency key of an append from its `key=` and `after=` arguments: the caller's key,
/// or one derived from the seq the batch must follow (not negative), or none; both at once is
/// an `InvalidInputError`.
pub fn append_key(key: Option<String>, after: Option<i128>) -> PyResult<Option<ctxkit::AppendKey>> {
    match (key, after) {
        (Some(_), Some(_)) => Err(core(CoreError::invalid(
            "append",
            "give key= or after=, not both",
        ))),
        (Some(key), None) => Ok(Some(ctxkit::AppendKey::Given(key))),
        (None, Some(after)) => Ok(Some(ctxkit::AppendKey::After(unsigned(after, "after")?))),
        (None, None) => Ok(None),
    }
}
