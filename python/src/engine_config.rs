//! How `ctxkit.Engine(...)`'s arguments become the native engine's database location and
//! [`EngineConfig`]: plain conversions, each bad value an error naming its parameter
//! (`budget.context_window`, `prompt.base`, `timeout`); nothing here opens or writes anything.

use std::path::{Path, PathBuf};

use ctxkit::EngineConfig;
use ctxkit_core::compaction::{fill_window_defaults, Budget, Policy};
use ctxkit_core::CoreError;
use pyo3::prelude::*;
use serde_json::{json, Value};

use crate::convert::{decode, read_or_default, to_json, type_name};
use crate::errors::core;

/// The path or URL of the database: a `postgres://` URL as given, a path as given, `None` the
/// default `<workdir>/.ctxkit/ctxkit.db`.
pub(crate) fn database(db: Option<&Bound<'_, PyAny>>, workdir: &Path) -> PyResult<PathBuf> {
    match db {
        None => Ok(workdir.join(".ctxkit").join("ctxkit.db")),
        Some(db) if db.is_none() => Ok(workdir.join(".ctxkit").join("ctxkit.db")),
        Some(db) => db.extract::<PathBuf>().map_err(|_| {
            core(CoreError::invalid(
                "db",
                format!(
                    "expected a path or a postgres:// URL (str), found {}",
                    type_name(db)
                ),
            ))
        }),
    }
}

/// The native engine's config from `Engine(...)`'s keywords: the budget (from `window` and/or
/// `budget`, validated), the policy, offloading, the prompt's parts, memory extraction.
pub(crate) fn config(
    window: Option<u64>,
    budget: Option<&Bound<'_, PyAny>>,
    policy: Option<&Bound<'_, PyAny>>,
    offload: bool,
    prompt: Option<&Bound<'_, PyAny>>,
    extract_memories: bool,
) -> Result<EngineConfig, CoreError> {
    let budget = match (budget.filter(|b| !b.is_none()), window) {
        (Some(budget), _) => {
            let mut json = to_json(budget, "budget")?;
            if let (Some(window), Value::Object(fields)) = (window, &mut json) {
                fields.entry("context_window").or_insert(json!(window));
            }
            fill_window_defaults(&mut json);
            decode::<Budget>(json, "budget")?
        }
        (None, Some(window)) => Budget::for_window(window),
        (None, None) => Budget::default(),
    };
    budget.validate()?;
    let mut config = EngineConfig {
        budget,
        ..EngineConfig::default()
    };
    config.policy = read_or_default::<Policy>(policy, "policy")?;
    if !offload {
        config.offload = None;
    }
    if let Some(prompt) = prompt.filter(|p| !p.is_none()) {
        let Value::Object(fields) = to_json(prompt, "prompt")? else {
            return Err(CoreError::invalid("prompt", "expected a dict"));
        };
        for (key, value) in fields {
            let at = format!("prompt.{key}");
            let target = &mut config.prompt;
            match key.as_str() {
                "base" => target.base = decode(value, &at)?,
                "todo_guidance" => target.todo_guidance = decode(value, &at)?,
                "read_agents_md" => target.read_agents_md = decode(value, &at)?,
                "agents_md_max_bytes" => target.agents_md_max_bytes = decode(value, &at)?,
                "working_directory" => target.working_directory = decode(value, &at)?,
                "history_guidance" => target.history_guidance = decode(value, &at)?,
                "memory_in_prompt" => config.memory.in_prompt = decode(value, &at)?,
                _ => return Err(CoreError::invalid(at, "unknown field (expected base, todo_guidance, read_agents_md, agents_md_max_bytes, working_directory, history_guidance or memory_in_prompt)")),
            }
        }
    }
    config.memory.extract_before_compaction = extract_memories;
    config.memory.write_memory_file = false;
    Ok(config)
}

/// The summarize timeout in seconds: `timeout`, else `default`; positive and finite.
pub(crate) fn timeout_of(timeout: Option<f64>, default: f64) -> PyResult<f64> {
    let timeout = timeout.unwrap_or(default);
    if timeout.is_finite() && timeout > 0.0 {
        Ok(timeout)
    } else {
        Err(core(CoreError::invalid(
            "timeout",
            format!("expected a positive number of seconds, found {timeout}"),
        )))
    }
}
