//! `ctxkit proxy`: runs the proxy (`ctxkit::proxy`) in the foreground until killed. It prints
//! the address it listens on (one line on standard output, so a script that asked for port 0
//! learns the port) and one line per request on standard error.

use std::io::Write;
use std::net::SocketAddr;

use clap::{Args, ValueEnum};
use ctxkit::proxy::offload::{offload_policy, OffloadPreset};
use ctxkit::proxy::sessions::engine_config;
use ctxkit::proxy::{server::DEFAULT_MAX_BODY_BYTES, IdleTimer, Proxy, ProxyConfig};

use super::{Failure, FamilyArg, Places};

/// Options of `ctxkit proxy`.
#[derive(Debug, Args)]
pub struct ProxyArgs {
    /// Where to listen. Loopback unless --token is given.
    #[arg(long, default_value = "127.0.0.1:8787", value_name = "IP:PORT")]
    pub listen: SocketAddr,
    /// The provider the agent's requests go to.
    #[arg(long, default_value = "https://api.anthropic.com", value_name = "URL")]
    pub upstream: String,
    /// The model's context window, in tokens: every request forwarded fits it.
    #[arg(long, default_value_t = 200_000)]
    pub window: u64,
    /// The tokenizer family the window is counted in.
    #[arg(long, value_enum, default_value = "claude")]
    pub family: FamilyArg,
    /// A secret every request must send in the x-ctxkit-token header; required to listen on
    /// an address that is not loopback.
    #[arg(long, value_name = "SECRET")]
    pub token: Option<String>,
    /// How many seconds the upstream may take to begin its answer before the agent gets a
    /// 504 (a model may think long before its first byte).
    #[arg(long, default_value_t = 600, value_name = "SECONDS")]
    pub upstream_timeout: u64,
    /// The largest request body accepted, in bytes.
    #[arg(long, default_value_t = DEFAULT_MAX_BODY_BYTES, value_name = "BYTES")]
    pub max_body_bytes: usize,
    /// Tool outputs over 10,000 bytes go to files under the working directory, and the
    /// reference left in their place tells the model to page them with this agent's own tool.
    #[arg(long, value_enum, default_value = "off")]
    pub offload: OffloadArg,
    /// Offload, and page with this tool of the agent's (taking `offset` and `limit`).
    #[arg(long, value_name = "TOOL", conflicts_with = "paging_command")]
    pub paging_tool: Option<String>,
    /// Offload, and page with this shell command (`{path}` in it is the file).
    #[arg(long, value_name = "COMMAND")]
    pub paging_command: Option<String>,
    /// The provider's cache lifetime in seconds: a conversation quiet until just before it
    /// ends is compacted then, so the next request writes the small prefix. 0: never.
    #[arg(long, default_value_t = 300, value_name = "SECONDS")]
    pub cache_ttl: u64,
    /// Who writes a compaction's summary: the extractive summary (offline), or the agent's
    /// own model through the upstream, asked with the agent's request as it last sent it (its
    /// prefix read from the provider's cache) and the agent's credentials.
    #[arg(long, value_enum, default_value = "extractive")]
    pub summarizer: ProxySummarizer,
}

/// Who writes the proxy's summaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProxySummarizer {
    /// The core's extractive summary (no model call).
    Extractive,
    /// The agent's own model, through the upstream, as the cache-safe request.
    Upstream,
}

/// How often the idle timer looks at the quiet conversations.
const IDLE_TICK: std::time::Duration = std::time::Duration::from_secs(10);

/// Which agent's tools offload references are written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OffloadArg {
    /// Nothing is offloaded.
    Off,
    /// Claude Code: page with `Read` (`file_path`, `offset`, `limit`).
    ClaudeCode,
    /// Codex: page with its shell (a bounded `sed`).
    Codex,
}

impl From<OffloadArg> for OffloadPreset {
    fn from(arg: OffloadArg) -> Self {
        match arg {
            OffloadArg::Off => OffloadPreset::Off,
            OffloadArg::ClaudeCode => OffloadPreset::ClaudeCode,
            OffloadArg::Codex => OffloadPreset::Codex,
        }
    }
}

/// Runs `ctxkit proxy`.
pub fn run(places: &Places, args: ProxyArgs) -> Result<(), Failure> {
    let mut config = engine_config(args.window, args.family.into());
    let summarize_upstream = args.summarizer == ProxySummarizer::Upstream;
    if summarize_upstream {
        config.policy.summary_mode = ctxkit_core::compaction::SummaryMode::CacheSafe;
    }
    // The agent's tools run elsewhere: references name the files by their absolute path.
    let root = std::fs::canonicalize(&places.workdir).map_err(|error| {
        Failure::runtime(format!(
            "the working directory {}: {error}",
            places.workdir.display()
        ))
    })?;
    config.offload = offload_policy(
        args.offload.into(),
        &root,
        args.paging_tool.as_deref(),
        args.paging_command.as_deref(),
    );
    if let Some(policy) = &config.offload {
        ctxkit_core::offload::check_offload_policy(policy)
            .map_err(|error| Failure::usage(format!("--paging-tool/--paging-command: {error}")))?;
    }
    let engine = places.engine(config)?;
    let config = ProxyConfig {
        listen: args.listen,
        upstream: args.upstream,
        token: args.token,
        max_body_bytes: args.max_body_bytes,
        family: args.family.into(),
        upstream_timeout: std::time::Duration::from_secs(args.upstream_timeout.max(1)),
        idle: (args.cache_ttl > 0).then(|| IdleTimer {
            ttl: std::time::Duration::from_secs(args.cache_ttl),
            tick: IDLE_TICK,
        }),
        summarize_upstream,
    };
    let proxy = Proxy::bind(config, engine).map_err(Failure::usage)?;
    let address = proxy
        .local_addr()
        .map_err(|error| Failure::runtime(format!("the listening address: {error}")))?;
    let mut stdout = std::io::stdout();
    // A closed standard output does not stop the proxy: the line is for whoever reads it.
    let _ = writeln!(stdout, "ctxkit proxy listening on http://{address}");
    let _ = stdout.flush();
    proxy
        .serve()
        .map_err(|error| Failure::runtime(format!("serving: {error}")))
}
