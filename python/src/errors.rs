//! The core's and the native shell's errors as Python exceptions, one class per kind (the
//! classes are defined in `ctxkit/_errors.py`, so they can also subclass `ValueError` and
//! `KeyError` as a Python user expects):
//!
//! - `InvalidInputError` (a `ValueError`): the input has the wrong shape; the message names the
//!   field path (`messages[5].tool_call_id: expected a string`).
//! - `BudgetTooSmallError`: the budget cannot hold the system prompt and the smallest
//!   conversation, or its reserves fill the window; the message names each number.
//! - `SessionNotFoundError` (a `StoreError` and a `KeyError`): no session has that name.
//! - `StoreError`: SQLite, PostgreSQL or a file failed; nothing was written.
//!
//! The message is the Rust error's own `Display`, unchanged.

use ctxkit::Error;
use ctxkit_core::CoreError;
use pyo3::prelude::*;
use pyo3::PyErr;

/// Which exception class an error becomes.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// `InvalidInputError`.
    InvalidInput,
    /// `BudgetTooSmallError`.
    BudgetTooSmall,
    /// `SessionNotFoundError`.
    SessionNotFound,
    /// `StoreError`.
    Store,
}

impl Kind {
    fn class_name(self) -> &'static str {
        match self {
            Kind::InvalidInput => "InvalidInputError",
            Kind::BudgetTooSmall => "BudgetTooSmallError",
            Kind::SessionNotFound => "SessionNotFoundError",
            Kind::Store => "StoreError",
        }
    }
}

/// What a call on a closed `ctxkit.Engine` raises.
pub fn engine_closed() -> PyErr {
    raise(Kind::Store, "this Engine was closed".to_owned())
}

/// An exception of `kind` with `message`.
pub fn raise(kind: Kind, message: String) -> PyErr {
    Python::attach(|py| {
        let class = py
            .import("ctxkit._errors")
            .and_then(|module| module.getattr(kind.class_name()));
        match class {
            Ok(class) => match class.call1((message.clone(),)) {
                Ok(instance) => PyErr::from_value(instance),
                Err(error) => error,
            },
            Err(_) => pyo3::exceptions::PyValueError::new_err(message),
        }
    })
}

/// The kind of a core error.
pub fn core_kind(error: &CoreError) -> Kind {
    match error {
        CoreError::BudgetTooSmall { .. } | CoreError::ReservesFillWindow { .. } => {
            Kind::BudgetTooSmall
        }
        _ => Kind::InvalidInput,
    }
}

/// A core error as its exception.
pub fn core(error: CoreError) -> PyErr {
    raise(core_kind(&error), error.to_string())
}

/// A core error as its exception, its message led by `function` (`render: messages[2]...`).
pub fn core_in(function: &'static str) -> impl Fn(CoreError) -> PyErr {
    move |error| raise(core_kind(&error), format!("{function}: {error}"))
}

/// A native error as its exception.
pub fn native(error: Error) -> PyErr {
    let kind = match &error {
        Error::Core { source, .. } => core_kind(source),
        Error::InvalidInput { .. } => Kind::InvalidInput,
        Error::NoSuchSession(_) => Kind::SessionNotFound,
        _ => Kind::Store,
    };
    raise(kind, error.to_string())
}
