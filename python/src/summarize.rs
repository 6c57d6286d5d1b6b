//! A Python `summarize` callable as the native engine's [`Llm`]: the engine's turn calls it for
//! a summary request, and every way it can fail (it raises, returns something that is not a
//! `str`, runs past its timeout) is a [`SummarizerError`], which the engine answers with its
//! usual fallback (the extractive summary and a `summarizer_failed` warning event).
//!
//! The call itself (a sync function, or a coroutine function run on the caller's event loop or
//! a fresh one, bounded by the timeout) is `ctxkit/_summarize.py`'s `call`; this file turns its
//! outcome into the engine's terms. The callable is set per turn in a [`Slot`], shared with the
//! engine, so one engine can be given a different summarizer on each `prepare`.

use std::sync::{Arc, Mutex};

use ctxkit::llm::{Llm, LlmRequest, SummarizerError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use crate::convert::{serialize_to_py, type_name};

/// The summarizer of the turn being prepared.
#[derive(Debug)]
pub struct Summarizer {
    /// `summarize(request: dict) -> str`, sync or async.
    pub callable: Py<PyAny>,
    /// Seconds it may take.
    pub timeout: f64,
    /// The event loop an async callable runs on (`aprepare`'s), else `None`.
    pub event_loop: Option<Py<PyAny>>,
}

/// Where the engine finds the current summarizer.
pub type Slot = Arc<Mutex<Option<Summarizer>>>;

/// The engine's [`Llm`], reading the [`Slot`].
#[derive(Debug)]
pub struct PythonLlm {
    /// The current summarizer.
    pub slot: Slot,
}

const NAME: &str = "summarize";

impl Llm for PythonLlm {
    fn complete(&self, request: &LlmRequest<'_>) -> Result<String, SummarizerError> {
        Python::attach(|py| {
            let (callable, timeout, event_loop) = {
                let guard = self
                    .slot
                    .lock()
                    .map_err(|_| transport("the summarizer slot is poisoned"))?;
                let Some(summarizer) = guard.as_ref() else {
                    return Err(SummarizerError::NotConfigured {
                        setting: NAME.to_owned(),
                        problem: "no summarize callable was given to Engine or prepare".to_owned(),
                    });
                };
                (
                    summarizer.callable.clone_ref(py),
                    summarizer.timeout,
                    summarizer.event_loop.as_ref().map(|l| l.clone_ref(py)),
                )
            };
            let arguments = request_dict(py, request).map_err(|e| transport(&e.to_string()))?;
            let outcome = py
                .import("ctxkit._summarize")
                .and_then(|module| module.getattr("call"))
                .and_then(|call| call.call1((callable, arguments, timeout, event_loop)));
            match outcome {
                Ok(answer) => match answer.cast::<PyString>() {
                    Ok(text) => text.to_cow().map(|s| s.into_owned()).map_err(|_| {
                        SummarizerError::Malformed {
                            url: NAME.to_owned(),
                            problem:
                                "returned a str that is not valid Unicode text (a lone surrogate?)"
                                    .to_owned(),
                        }
                    }),
                    Err(_) => Err(SummarizerError::Malformed {
                        url: NAME.to_owned(),
                        problem: format!("returned {}, expected a str", type_name(&answer)),
                    }),
                },
                Err(error) if error.is_instance_of::<pyo3::exceptions::PyTimeoutError>(py) => {
                    Err(SummarizerError::Timeout {
                        url: NAME.to_owned(),
                        problem: format!("no answer within {timeout} s"),
                    })
                }
                Err(error) => Err(transport(&format!("raised {error}"))),
            }
        })
    }

    fn describe(&self) -> String {
        "a Python summarize callable".to_owned()
    }
}

fn transport(problem: &str) -> SummarizerError {
    SummarizerError::Transport {
        url: NAME.to_owned(),
        problem: problem.to_owned(),
    }
}

/// The request as the callable receives it: `system`, `prompt`, `max_tokens`, and `messages`
/// (ctxkit messages; not empty for a cache-safe request, which is sent instead of the two).
fn request_dict<'py>(py: Python<'py>, request: &LlmRequest<'_>) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("system", request.system)?;
    dict.set_item("prompt", request.prompt)?;
    dict.set_item("max_tokens", request.max_tokens)?;
    dict.set_item("messages", serialize_to_py(py, request.messages)?)?;
    Ok(dict)
}

/// A stored turn whose compaction, if due, is answered by the extractive summary (no
/// summarizer was given): the engine's own fallback, without a "summarizer failed" warning.
pub fn prepare_offline(
    engine: &mut ctxkit::Engine,
    session: &str,
) -> ctxkit::Result<ctxkit::TurnResult> {
    let mut turn = engine.prepare_turn(session)?;
    turn.events.retain(|event| {
        !matches!(
            event,
            ctxkit::Event::Warning {
                kind: ctxkit::WarningKind::SummarizerFailed,
                ..
            }
        )
    });
    Ok(turn)
}
