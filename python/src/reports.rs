//! `ctxkit.cost(path, window=...)` and `ctxkit.fidelity(path, window=...)`: the rows the CLI's
//! `ctxkit cost --json` and `ctxkit fidelity --json` print, as a list of dicts.
//!
//! `cost` is the lab's `cost_report` as rows (`CostReport::json_rows`, the CLI's too: each
//! row with the report's model, window, reserve and cost marks). `fidelity` replays the transcript as the CLI does (each step's
//! inputs recorded, the turn prepared, the reply recorded, in a store in memory with the
//! extractive summarizer) and measures every checkpoint with the lab's `checkpoint_fidelity`,
//! a dropped fact "found again" when `search_history` finds it. Its offload files go to a
//! temporary folder, removed after. The replay and the measure are the native library's
//! (`ctxkit::reports`), the CLI's too; `python/tests/test_corpus.py` checks the rows against
//! the CLI's output on the corpus.

use ctxkit::reports::{measure_fidelity, play_steps, report_config, session_stem, split_steps};
use ctxkit::store::SqliteStore;
use ctxkit::Engine;
use ctxkit_core::import::import_transcript;
use ctxkit_core::tokens::ModelFamily;
use ctxkit_core::CoreError;
use ctxkit_lab::cost::{cost_report, CostOptions};
use pyo3::prelude::*;
use serde_json::{json, Value};

use crate::args::{count, unsigned};
use crate::convert::{decode, to_py};
use crate::errors::{core, core_kind, native, raise};
use crate::functions::{source_text, transcript_format};

/// The CLI's `cost --json` rows for a transcript (a `pathlib.Path` or its text).
#[pyfunction]
#[pyo3(signature = (source, *, window = 200_000, model = None, format = None, index = 0))]
pub fn cost<'py>(
    py: Python<'py>,
    source: &Bound<'py, PyAny>,
    window: i128,
    model: Option<String>,
    format: Option<&str>,
    index: i128,
) -> PyResult<Bound<'py, PyAny>> {
    let (window, index) = (unsigned(window, "window")?, count(index, "index")?);
    let (text, path) = source_text(source)?;
    let options = CostOptions {
        format: transcript_format(format).map_err(core)?,
        index,
        window,
        model: model.as_deref(),
        marks: Default::default(),
    };
    let report = py
        .detach(|| cost_report(&text, &options))
        .map_err(|error| within(&path, error))?;
    let rows = report.json_rows();
    to_py(py, &Value::Array(rows))
}

fn within(path: &Option<std::path::PathBuf>, error: CoreError) -> PyErr {
    let place = path
        .as_ref()
        .map_or("transcript".to_owned(), |p| p.display().to_string());
    raise(core_kind(&error), format!("{place}: {error}"))
}

/// The CLI's session name: `fidelity-` and the file's stem (`text` for a transcript given as
/// text).
fn session_name(path: &Option<std::path::PathBuf>) -> String {
    let stem = path
        .as_ref()
        .filter(|p| p.file_stem().is_some())
        .map_or_else(|| "text".to_owned(), |p| session_stem(p));
    format!("fidelity-{stem}")
}

/// The CLI's `fidelity --json` rows: one per checkpoint, then the totals.
#[pyfunction]
#[pyo3(signature = (source, *, window = 32_000, family = "claude", format = None, index = 0))]
pub fn fidelity<'py>(
    py: Python<'py>,
    source: &Bound<'py, PyAny>,
    window: i128,
    family: &str,
    format: Option<&str>,
    index: i128,
) -> PyResult<Bound<'py, PyAny>> {
    let (window, index) = (unsigned(window, "window")?, count(index, "index")?);
    let (text, path) = source_text(source)?;
    let format = transcript_format(format).map_err(core)?;
    let family: ModelFamily = decode(json!(family), "family").map_err(core)?;
    let session = session_name(&path);
    let rows = py.detach(|| -> Result<Vec<Value>, PyErrSource> {
        let imported = import_transcript(&text, format).map_err(PyErrSource::Core)?;
        let count = imported.sessions.len();
        let conversation = imported.sessions.into_iter().nth(index).ok_or_else(|| {
            PyErrSource::Core(CoreError::invalid(
                "index",
                format!("{index}: the file holds {count} conversation(s)"),
            ))
        })?;
        // The CLI's replay configuration: one function, so both give the same rows.
        let config = report_config(window, family, conversation.working_directory.clone());
        let scratch = tempfile::tempdir().map_err(|e| {
            PyErrSource::Native(ctxkit::Error::io(
                "create a temporary folder",
                std::path::Path::new("."),
                e,
            ))
        })?;
        let store = SqliteStore::open_in_memory().map_err(PyErrSource::Native)?;
        let mut engine = Engine::with_store(Box::new(store), scratch.path(), config)
            .map_err(PyErrSource::Native)?;
        engine
            .create_session(&session)
            .map_err(PyErrSource::Native)?;
        play_steps(&mut engine, &session, split_steps(conversation.messages))
            .map_err(PyErrSource::Native)?;
        let report = measure_fidelity(&engine, &session).map_err(PyErrSource::Native)?;
        Ok(report.json_rows(&session, window))
    });
    match rows {
        Ok(rows) => to_py(py, &Value::Array(rows)),
        Err(PyErrSource::Core(error)) => Err(within(&path, error)),
        Err(PyErrSource::Native(error)) => Err(native(error)),
    }
}

/// An error made without the GIL, raised once it is held again.
enum PyErrSource {
    Core(CoreError),
    Native(ctxkit::Error),
}
