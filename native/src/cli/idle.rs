//! `ctxkit compact-if-idle SESSION`: the idle compaction a loop's timer runs, for a stored
//! session (see `Engine::compact_if_idle`). The idle time is the time since the session last
//! changed, by this machine's clock, unless `--idle` gives it.

use clap::Args;
use ctxkit::clock::{Clock, SystemClock};
use ctxkit::EngineConfig;
use ctxkit_core::compaction::Budget;
use ctxkit_core::turn::{IdleDecision, IdleSkip, DEFAULT_CACHE_TTL_SECONDS};

use super::output::line;
use super::replay::{summarizer_config, SummarizerArg};
use super::report::{printable, thousands};
use super::{Failure, Places};

/// Options of `ctxkit compact-if-idle`.
#[derive(Debug, Args)]
pub struct CompactIfIdleArgs {
    /// The session.
    pub session: String,
    /// Seconds since the session's last model call (default: since it last changed).
    #[arg(long, value_name = "SECONDS")]
    pub idle: Option<u64>,
    /// The provider's cache lifetime in use, in seconds (300: Anthropic's default; 3600: its
    /// one-hour cache; 1800: OpenAI's explicit breakpoints).
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_CACHE_TTL_SECONDS as u64)]
    pub ttl: u64,
    /// The model's context window, in tokens.
    #[arg(long, default_value_t = 200_000)]
    pub window: u64,
    /// Who writes the summary (as for `replay`).
    #[arg(long, value_enum, default_value = "extractive")]
    pub summarizer: SummarizerArg,
    /// One JSON object instead of the sentence.
    #[arg(long)]
    pub json: bool,
}

/// Runs `ctxkit compact-if-idle`.
pub fn run(places: &Places, args: CompactIfIdleArgs) -> Result<(), Failure> {
    let config = EngineConfig {
        budget: Budget::for_window(args.window),
        summarizer: summarizer_config(args.summarizer)?,
        ..EngineConfig::default()
    };
    let mut engine = places.engine(config)?;
    let idle = match args.idle {
        Some(idle) => idle,
        None => {
            let changed = engine.session_info(&args.session)?.updated_at;
            u64::try_from(SystemClock.now_unix().saturating_sub(changed)).unwrap_or(0)
        }
    };
    let outcome = engine.compact_if_idle(&args.session, idle, args.ttl)?;
    let compacted = outcome.turn.as_ref().and_then(|turn| turn.compacted);
    if args.json {
        let mut value =
            serde_json::to_value(&outcome).map_err(|e| Failure::runtime(e.to_string()))?;
        value["idle_seconds"] = idle.into();
        value["compacted"] = compacted.map(|method| method.as_str()).into();
        value["tokens_after"] = outcome
            .turn
            .as_ref()
            .map(|turn| turn.stats.total_tokens)
            .into();
        return line(value);
    }
    let name = printable(&args.session);
    let tokens = thousands(outcome.view_tokens);
    let sentence = match (outcome.decision, &outcome.turn) {
        (IdleDecision::Compact { expired, .. }, Some(turn)) => format!(
            "{name}: compacted ({}) {} s idle of a {} s cache lifetime{}: {tokens} → {} tokens",
            compacted.map_or("nothing to summarize", |method| method.as_str()),
            idle,
            args.ttl,
            if expired { " (already expired)" } else { "" },
            thousands(turn.stats.total_tokens)
        ),
        (IdleDecision::Wait { seconds }, _) => {
            format!("{name}: {tokens} tokens, {idle} s idle: not yet; ask again in {seconds} s")
        }
        (
            IdleDecision::Skip {
                reason: IdleSkip::BelowFloor { floor_tokens, .. },
            },
            _,
        ) => format!(
            "{name}: {tokens} tokens, at or below the idle floor of {}: nothing to do",
            thousands(floor_tokens)
        ),
        (IdleDecision::Skip { .. }, _) | (IdleDecision::Compact { .. }, None) => {
            format!("{name}: idle compaction is off")
        }
    };
    line(sentence)
}
