//! `ctxkit.cost(path, window=...)` and `ctxkit.fidelity(path, window=...)`: the rows the CLI's
//! `ctxkit cost --json` and `ctxkit fidelity --json` print, as a list of dicts.
//!
//! `cost` is the core's `cost_report` with the three fields the CLI adds to each row (model,
//! window, reserved tokens). `fidelity` replays the transcript as the CLI does (each step's
//! inputs recorded, the turn prepared, the reply recorded, in a store in memory with the
//! extractive summarizer) and measures every checkpoint with the core's `checkpoint_fidelity`,
//! a dropped fact "found again" when `search_history` finds it. Its offload files go to a
//! temporary folder, removed after. The CLI's glue lives in its binary (`native/src/cli/`),
//! so the few lines that walk the steps are repeated here; `python/tests/test_reports.py`
//! checks both against the CLI's output on the corpus.

use ctxkit::store::SqliteStore;
use ctxkit::{Engine, EngineConfig};
use ctxkit_core::compaction::pinned::{checkpoint_fidelity, CheckpointFidelity};
use ctxkit_core::compaction::{Budget, FactKind};
use ctxkit_core::cost::{cost_report, CostOptions};
use ctxkit_core::import::import_transcript;
use ctxkit_core::recall::{fact_query, search_found};
use ctxkit_core::tokens::ModelFamily;
use ctxkit_core::{CoreError, Message, Role};
use pyo3::prelude::*;
use serde_json::{json, Value};

use crate::convert::{decode, to_py};
use crate::errors::{core, core_kind, native, raise};
use crate::functions::{source_text, transcript_format};

/// The CLI's `cost --json` rows for a transcript (a `pathlib.Path` or its text).
#[pyfunction]
#[pyo3(signature = (source, *, window = 200_000, model = None, format = None, index = 0))]
pub fn cost<'py>(
    py: Python<'py>,
    source: &Bound<'py, PyAny>,
    window: u64,
    model: Option<String>,
    format: Option<&str>,
    index: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let (text, path) = source_text(source)?;
    let options = CostOptions {
        format: transcript_format(format).map_err(core)?,
        index,
        window,
        model: model.as_deref(),
    };
    let report = py
        .detach(|| cost_report(&text, &options))
        .map_err(|error| within(&path, error))?;
    let mut rows = Vec::new();
    for row in &report.rows {
        let mut value = serde_json::to_value(row).unwrap_or_default();
        if let Some(object) = value.as_object_mut() {
            object.insert("model".into(), json!(report.model));
            object.insert("window".into(), json!(report.window));
            object.insert("reserve_tokens".into(), json!(report.reserve_tokens));
        }
        rows.push(value);
    }
    to_py(py, &Value::Array(rows))
}

fn within(path: &Option<std::path::PathBuf>, error: CoreError) -> PyErr {
    let place = path
        .as_ref()
        .map_or("transcript".to_owned(), |p| p.display().to_string());
    raise(core_kind(&error), format!("{place}: {error}"))
}

/// One step of a replay: what came before an assistant message, then its reply and results.
struct Step {
    inputs: Vec<Message>,
    reply: Vec<Message>,
}

/// The CLI's split (`native/src/cli/replay.rs`, `split_steps`).
fn split_steps(messages: Vec<Message>) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut open: Option<Step> = None;
    let mut pending = Vec::new();
    for message in messages {
        match (message.role, open.as_mut()) {
            (Role::Assistant, _) => {
                steps.extend(open.take());
                open = Some(Step {
                    inputs: std::mem::take(&mut pending),
                    reply: vec![message],
                });
            }
            (Role::Tool, Some(step)) if pending.is_empty() => step.reply.push(message),
            _ => pending.push(message),
        }
    }
    steps.extend(open);
    if !pending.is_empty() {
        steps.push(Step {
            inputs: pending,
            reply: Vec::new(),
        });
    }
    steps
}

/// The CLI's session name: `fidelity-` and the file's stem, cut and cleaned as the CLI does.
fn session_name(path: &Option<std::path::PathBuf>) -> String {
    let stem = path
        .as_ref()
        .and_then(|p| p.file_stem())
        .map_or_else(|| "text".to_owned(), |s| s.to_string_lossy().into_owned());
    let stem: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .take(40)
        .collect();
    format!("fidelity-{stem}")
}

/// The CLI's `fidelity --json` rows: one per checkpoint, then the totals.
#[pyfunction]
#[pyo3(signature = (source, *, window = 32_000, family = "claude", format = None, index = 0))]
pub fn fidelity<'py>(
    py: Python<'py>,
    source: &Bound<'py, PyAny>,
    window: u64,
    family: &str,
    format: Option<&str>,
    index: usize,
) -> PyResult<Bound<'py, PyAny>> {
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
        let mut config = EngineConfig {
            budget: Budget::for_window(window),
            ..EngineConfig::default()
        };
        config.policy.family = family;
        config.prompt.read_agents_md = false;
        config.memory.in_prompt = false;
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
        for step in split_steps(conversation.messages) {
            if !step.inputs.is_empty() {
                engine
                    .record(&session, step.inputs)
                    .map_err(PyErrSource::Native)?;
            }
            engine.prepare_turn(&session).map_err(PyErrSource::Native)?;
            if !step.reply.is_empty() {
                engine
                    .record(&session, step.reply)
                    .map_err(PyErrSource::Native)?;
            }
        }
        let whole = engine
            .export_session(&session)
            .map_err(PyErrSource::Native)?;
        let mut failure = None;
        let measured = checkpoint_fidelity(&whole.entries, &whole.checkpoints, |fact| {
            let Some(request) = fact_query(fact) else {
                return false;
            };
            match engine.search_history(&session, &request) {
                Ok(outcome) => search_found(&outcome),
                Err(error) => {
                    failure.get_or_insert(error);
                    false
                }
            }
        });
        if let Some(error) = failure {
            return Err(PyErrSource::Native(error));
        }
        let mut rows: Vec<Value> = measured.iter().map(checkpoint_json).collect();
        rows.push(totals_json(&measured, &session, window));
        Ok(rows)
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

fn checkpoint_json(checkpoint: &CheckpointFidelity) -> Value {
    let kinds: serde_json::Map<String, Value> = checkpoint
        .kinds
        .iter()
        .map(|(kind, counts)| (kind.as_str().to_owned(), json!(counts)))
        .collect();
    json!({
        "through_seq": checkpoint.through_seq,
        "method": checkpoint.method,
        "summary_bytes": checkpoint.summary_bytes,
        "kinds": kinds,
    })
}

fn totals_json(measured: &[CheckpointFidelity], session: &str, window: u64) -> Value {
    let mut kinds = serde_json::Map::new();
    for kind in FactKind::ALL {
        let (mut expected, mut kept, mut dropped, mut found) = (0, 0, 0, 0);
        for counts in measured.iter().map(|c| c.of(kind)) {
            expected += counts.expected;
            kept += counts.kept;
            dropped += counts.dropped;
            found += counts.found_again;
        }
        kinds.insert(
            kind.as_str().to_owned(),
            json!({"expected": expected, "kept": kept, "dropped": dropped, "found_again": found}),
        );
    }
    json!({
        "session": session,
        "window": window,
        "checkpoints": measured.len(),
        "max_summary_bytes": measured.iter().map(|c| c.summary_bytes).max().unwrap_or(0),
        "kinds": kinds,
    })
}
