//! The fidelity report of a replayed session (`ctxkit fidelity`, Python's `ctxkit.fidelity`).
//!
//! The report, its figures and its rows are the lab's ([`FidelityReport`]); this file measures a
//! session stored in an [`Engine`] with it, "found again" meaning found by the agent's own
//! tool: `search_history` over the store, with the query the core makes of the fact.

use ctxkit_core::recall::{fact_query, search_found};
pub use ctxkit_lab::fidelity::FidelityReport;

use ctxkit_core::compaction::Budget;
use ctxkit_core::tokens::ModelFamily;

use crate::{Engine, EngineConfig, Result};

/// The working directory a report's replay shows in its system prompt. Fixed, so a report does
/// not depend on where it runs: the prompt's estimate, and with it where the compactions fall,
/// changed with the folder's length and characters, so the CLI (run in the caller's folder) and
/// Python (in a temporary one) could give different rows for the same transcript.
pub const REPORT_WORKING_DIRECTORY: &str = "/project";

/// The engine configuration a report replays a transcript with, for the CLI and Python alike:
/// a window of `window` tokens, estimates for `family`, the summaries naming the directory the
/// transcript records (`working_directory`, [`ctxkit_core::import::ImportedSession`]), and a
/// system prompt that depends on nothing of this machine (no AGENTS.md, no memories, the fixed
/// [`REPORT_WORKING_DIRECTORY`]). The summarizer is the default (extractive); the CLI may set
/// another.
pub fn report_config(
    window: u64,
    family: ModelFamily,
    working_directory: Option<String>,
) -> EngineConfig {
    let mut config = EngineConfig {
        budget: Budget::for_window(window),
        ..EngineConfig::default()
    };
    config.policy.family = family;
    config.policy.working_directory = working_directory;
    config.prompt.read_agents_md = false;
    config.prompt.working_directory = Some(REPORT_WORKING_DIRECTORY.to_owned());
    config.memory.in_prompt = false;
    config
}

/// Measures the session `session` of `engine` as it is stored (replay it first). "Found again"
/// means found by the agent's own tool: `search_history` over the store, with the query the
/// core makes of the fact; a failed search is an error, not a miss.
pub fn measure_fidelity(engine: &Engine, session: &str) -> Result<FidelityReport> {
    let whole = engine.export_session(session)?;
    FidelityReport::measure(&whole.entries, &whole.checkpoints, |fact| {
        let Some(request) = fact_query(fact) else {
            return Ok(false);
        };
        engine
            .search_history(session, &request)
            .map(|outcome| search_found(&outcome))
    })
}
