//! The engine the provider-compaction tests drive (`server_compaction.rs` for Anthropic's,
//! `responses_compaction.rs` for OpenAI Responses', `cache_safe_summary.rs` for the summary
//! request's shape): the small workload's config with a 6,000
//! token window (2,000 reserved for the answer), summaries from `api` at a loopback server in
//! cache-safe mode (the turn's own request), no retries and no memory extraction, so each
//! compaction makes exactly one summary request.

use std::path::Path;
use std::time::Duration;

use ctxkit::core::compaction::{Budget, Policy, SummaryMode};
use ctxkit::llm::{Api, HttpOptions, LlmEndpoint, SummarizerConfig};
use ctxkit::{Engine, EngineConfig};

use super::backends::Backend;
use super::{small_window_config, LoopbackServer};

/// The config: see the module doc.
pub fn config(server: &LoopbackServer, api: Api) -> EngineConfig {
    let small = small_window_config();
    EngineConfig {
        summarizer: SummarizerConfig::Llm(LlmEndpoint {
            api,
            base_url: server.base_url.clone(),
            api_key: Some("test-key".to_owned()),
            model: "agent-model".to_owned(),
            http: HttpOptions {
                read_timeout: Duration::from_secs(5),
                max_retries: 0,
                ..HttpOptions::default()
            },
        }),
        budget: Budget {
            context_window: 6_000,
            output_reserve: 2_000,
            ..small.budget
        },
        policy: Policy {
            summary_mode: SummaryMode::CacheSafe,
            ..small.policy.clone()
        },
        memory: ctxkit::MemoryOptions {
            extract_before_compaction: false,
            ..small.memory
        },
        ..small
    }
}

/// An engine on `backend`'s store in `dir` with [`config`].
pub fn open(backend: &Backend, dir: &Path, server: &LoopbackServer, api: Api) -> Engine {
    Engine::with_store(backend.open(), dir, config(server, api)).unwrap()
}
