//! A cost report of one transcript: read it, find what it records (its model, its calls'
//! usage and times, the size of the prompt it does not show), then bill every strategy and,
//! when usage is recorded, what the session really cost.

use serde::{Deserialize, Serialize};

use super::call_times::{call_gaps, expired_calls};
use super::compare::{compare_strategies, CostSetup};
use super::prices::{pricing_for, ModelPricing};
use super::recorded::{call_times, recorded_cost, recorded_reserve};
use super::report::StrategyCost;
use super::strategies::{CostMarks, ReplaySetup};
use ctxkit_core::error::{CoreError, Result};
use ctxkit_core::import::{import_claude_code, import_transcript, TranscriptFormat};
use ctxkit_core::tokens::ModelFamily;

/// The system prompt every strategy of a report sends (besides the reserved tokens).
pub const REPORT_SYSTEM_PROMPT: &str = "You are a coding agent working in the user's project.";

/// Tokens reserved for tools and the agent's own system prompt when the transcript records no
/// usage to read them from (about what a coding agent with a dozen tools sends).
pub const DEFAULT_RESERVE_TOKENS: u64 = 12_000;

/// What to report on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CostOptions<'a> {
    /// The transcript's format; `None` detects it.
    pub format: Option<TranscriptFormat>,
    /// Which conversation of a file holding several.
    pub index: usize,
    /// The context window, in tokens.
    pub window: u64,
    /// The model to price; `None`: the one the calls recorded, else the one the transcript
    /// names when the price table has it, else `claude-sonnet-4-5`.
    pub model: Option<&'a str>,
    /// The cost marks ctxkit's strategies compact by (the defaults, or others to compare).
    pub marks: CostMarks,
}

/// A transcript's cost report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CostReport {
    /// The model priced.
    pub model: String,
    /// The window every strategy had.
    pub window: u64,
    /// Tokens reserved in every request for tools and the agent's own system prompt.
    pub reserve_tokens: u64,
    /// The cost marks ctxkit's strategies compacted by.
    #[serde(default)]
    pub cost_trigger_tokens: Option<u64>,
    /// See `cost_trigger_tokens`.
    #[serde(default)]
    pub cost_low_water_tokens: Option<u64>,
    /// Whether the reserve was read from the first call's recorded usage.
    pub reserve_recorded: bool,
    /// How much of the reserve was already cached at the first call (the record says so).
    pub reserve_warm_tokens: u64,
    /// One row per strategy, then `recorded` when the transcript records usage.
    pub rows: Vec<StrategyCost>,
}

impl CostReport {
    /// The rows as `ctxkit cost --json` prints them (and the Python `ctxkit.cost` returns
    /// them): each strategy's row with the report's model, window, reserve and cost marks
    /// added, so every shell gives the same fields.
    pub fn json_rows(&self) -> Vec<serde_json::Value> {
        self.rows
            .iter()
            .map(|row| {
                let mut value = serde_json::to_value(row).unwrap_or_default();
                if let Some(object) = value.as_object_mut() {
                    object.insert("model".into(), self.model.clone().into());
                    object.insert("window".into(), self.window.into());
                    object.insert("reserve_tokens".into(), self.reserve_tokens.into());
                    object.insert(
                        "cost_trigger_tokens".into(),
                        self.cost_trigger_tokens.into(),
                    );
                    object.insert(
                        "cost_low_water_tokens".into(),
                        self.cost_low_water_tokens.into(),
                    );
                }
                value
            })
            .collect()
    }
}

/// The report for `text` (a transcript file's contents).
pub fn cost_report(text: &str, options: &CostOptions<'_>) -> Result<CostReport> {
    let imported = import_transcript(text, options.format)?;
    let count = imported.sessions.len();
    let session = imported
        .sessions
        .into_iter()
        .nth(options.index)
        .ok_or_else(|| {
            CoreError::invalid(
                "index",
                format!("{}: the file holds {count} conversation(s)", options.index),
            )
        })?;
    let claude = (imported.format == TranscriptFormat::ClaudeCode)
        .then(|| import_claude_code(text))
        .transpose()?;
    let recorded_model = claude
        .as_ref()
        .and_then(|c| c.api_calls.first().map(|call| call.model.clone()));
    // The model the caller names, else the one the calls recorded (Claude Code), else the one
    // the transcript names (Codex's turn_context, pi's model_change) when the table prices it,
    // else the default: a Codex rollout is priced as the OpenAI model it ran on, not as Claude.
    let named_model = session
        .model
        .clone()
        .filter(|named| pricing_for(named).is_some());
    let model = options
        .model
        .map(str::to_owned)
        .or(recorded_model)
        .or(named_model)
        .unwrap_or_else(|| "claude-sonnet-4-5".to_owned());
    let pricing: ModelPricing = pricing_for(&model).ok_or_else(|| {
        CoreError::invalid(
            "model",
            format!("{model:?} has no default prices: name a model of the table (claude-opus-4-6, claude-sonnet-4-5, gpt-4o, ...)"),
        )
    })?;
    let family = if model.starts_with("claude") {
        ModelFamily::Claude
    } else {
        ModelFamily::OpenAi
    };
    let reserve = claude.as_ref().and_then(|c| recorded_reserve(c, family));
    let reserve_tokens = reserve.unwrap_or(DEFAULT_RESERVE_TOKENS);
    let first_read = claude.as_ref().and_then(|c| {
        c.api_calls
            .iter()
            .find_map(|call| call.usage.map(|usage| usage.cache_read))
    });
    if reserve_tokens >= options.window {
        return Err(CoreError::invalid(
            "window",
            format!(
                "{}: the transcript's first call alone sent {reserve_tokens} tokens of tools and system prompt, more than the window holds",
                options.window
            ),
        ));
    }
    let times = claude.as_ref().map(call_times).unwrap_or_default();
    let setup = CostSetup {
        replay: ReplaySetup {
            window: options.window,
            family,
            reserve_tokens,
            system: REPORT_SYSTEM_PROMPT.to_owned(),
            cache_expired: expired_calls(&times, pricing.cache.ttl_seconds),
            call_gaps: call_gaps(&times),
            cache_ttl_seconds: u64::try_from(pricing.cache.ttl_seconds).unwrap_or(0),
            marks: options.marks,
            working_directory: session.working_directory.clone(),
        },
        pricing: pricing.clone(),
        call_times: times,
        warm_reserve_tokens: if reserve.is_some() {
            first_read.unwrap_or(0).min(reserve_tokens)
        } else {
            0
        },
    };
    let mut rows = compare_strategies(&session.messages, &setup);
    refuse_unplanned(&rows, options.window, reserve_tokens)?;
    // The recorded usage is the file's calls: with several conversations in one file (Claude
    // Code's inline sub-agents) it is no single conversation's cost, so no row compares with it.
    if let Some(recorded) = claude
        .as_ref()
        .filter(|_| count == 1)
        .and_then(|c| recorded_cost(&c.api_calls, &pricing.prices))
    {
        rows.push(recorded);
    }
    Ok(CostReport {
        model,
        window: options.window,
        reserve_tokens,
        cost_trigger_tokens: options.marks.trigger_tokens,
        cost_low_water_tokens: options.marks.low_water_tokens,
        reserve_recorded: reserve.is_some(),
        reserve_warm_tokens: setup.warm_reserve_tokens,
        rows,
    })
}

/// An error when a ctxkit strategy made no call where the transcript has some: its turn could
/// not plan a view in what the reserve leaves of the window (a row of zeros would read as a
/// free session).
fn refuse_unplanned(rows: &[StrategyCost], window: u64, reserve_tokens: u64) -> Result<()> {
    let made = |row: &&StrategyCost| row.calls > 0;
    let baseline_calls = rows
        .iter()
        .find(|row| row.strategy == "no-compaction")
        .map_or(0, |row| row.calls);
    match rows
        .iter()
        .filter(|row| row.strategy.starts_with("ctxkit"))
        .find(|row| !made(row))
    {
        Some(row) if baseline_calls > 0 => Err(CoreError::invalid(
            "window",
            format!(
                "{window}: the {} strategy could not plan a view in the {} tokens left after the {reserve_tokens} tokens of tools and system prompt the transcript's calls carry",
                row.strategy,
                window.saturating_sub(reserve_tokens)
            ),
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(text: &str, model: Option<&str>) -> Result<CostReport> {
        let options = CostOptions {
            format: None,
            index: 0,
            window: 200_000,
            model,
            marks: CostMarks::default(),
        };
        cost_report(text, &options)
    }

    #[test]
    fn a_codex_rollout_is_priced_as_the_model_it_names_unless_the_caller_names_one() {
        let rollout = include_str!("../../../tests/fixtures/import/codex_rollout.jsonl");
        assert_eq!(report(rollout, None).unwrap().model, "gpt-5.3-codex");
        assert_eq!(
            report(rollout, Some("claude-opus-4-6")).unwrap().model,
            "claude-opus-4-6"
        );
    }

    #[test]
    fn a_window_the_reserve_nearly_fills_is_refused_not_billed_as_free() {
        let rollout = include_str!("../../../tests/fixtures/import/codex_rollout.jsonl");
        let options = |window| CostOptions {
            format: None,
            index: 0,
            window,
            model: None,
            marks: CostMarks::default(),
        };
        // The default reserve (no recorded usage) plus the turn's output reserve fill it.
        let window = DEFAULT_RESERVE_TOKENS + 100;
        let error = cost_report(rollout, &options(window))
            .unwrap_err()
            .to_string();
        assert!(error.contains("could not plan a view"), "{error}");
        assert!(cost_report(rollout, &options(200_000)).is_ok());
    }

    #[test]
    fn a_named_model_without_prices_falls_back_to_the_default() {
        let rollout = include_str!("../../../tests/fixtures/import/codex_rollout.jsonl")
            .replace("gpt-5.3-codex", "llama-3-70b");
        assert_eq!(report(&rollout, None).unwrap().model, "claude-sonnet-4-5");
        let named = report(&rollout, Some("llama-3-70b")).unwrap_err();
        assert!(named.to_string().contains("no default prices"), "{named}");
    }
}
