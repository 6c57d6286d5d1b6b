//! How `ctxkit.Engine(...)`'s arguments become the native engine's database location and
//! [`EngineConfig`]: plain conversions, each bad value an error naming its parameter
//! (`budget.context_window`, `prompt.base`, `timeout`); nothing here opens or writes anything.

use std::path::{Path, PathBuf};

use ctxkit::EngineConfig;
use ctxkit_core::compaction::{fill_window_defaults, Budget, Policy};
use ctxkit_core::offload::OffloadPolicy;
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
    offload: Option<&Bound<'_, PyAny>>,
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
    config.offload = offload_policy(offload)?;
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

/// The history tools the engine answers itself ([`ctxkit::Engine::execute_tool`]).
const HISTORY_TOOLS: [&str; 3] = ["search_history", "read_history", "read_offload"];

/// The offload policy from `offload=`: `True` (or `None`, the default) the Python default, `False` none, a
/// dict the default with its fields replaced. The Python default pages with `read_offload`, a
/// tool the engine answers itself (a Python agent has no `read_file` unless it brings one),
/// and never offloads a history tool's answer again (it is a page of the log or of an
/// offloaded output already).
fn offload_policy(offload: Option<&Bound<'_, PyAny>>) -> Result<Option<OffloadPolicy>, CoreError> {
    let mut policy = OffloadPolicy {
        paging_tool: "read_offload".to_owned(),
        ..OffloadPolicy::default()
    };
    policy
        .excluded_tools
        .extend(HISTORY_TOOLS.iter().map(|name| (*name).to_owned()));
    let Some(offload) = offload.filter(|o| !o.is_none()) else {
        return Ok(Some(policy));
    };
    if let Ok(on) = offload.extract::<bool>() {
        return Ok(on.then_some(policy));
    }
    let Value::Object(fields) = to_json(offload, "offload")? else {
        return Err(CoreError::invalid(
            "offload",
            "expected True, False or a dict",
        ));
    };
    let Value::Object(mut merged) = serde_json::to_value(&policy).unwrap_or(Value::Null) else {
        return Err(CoreError::invalid(
            "offload",
            "the default policy did not serialize",
        ));
    };
    merged.extend(fields);
    decode(Value::Object(merged), "offload").map(Some)
}

/// Checks that `value` (the argument `name`), when given, can be called.
pub(crate) fn check_callable(
    py: Python<'_>,
    value: Option<&Py<PyAny>>,
    name: &str,
) -> PyResult<()> {
    match value {
        Some(callable) if !callable.bind(py).is_callable() => {
            Err(core(CoreError::invalid(name, "expected a callable")))
        }
        _ => Ok(()),
    }
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
