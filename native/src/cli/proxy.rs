//! `ctxkit proxy`: runs the proxy (`ctxkit::proxy`) in the foreground until killed. It prints
//! the address it listens on (one line on standard output, so a script that asked for port 0
//! learns the port) and one line per request on standard error.

use std::io::Write;
use std::net::SocketAddr;

use clap::Args;
use ctxkit::proxy::sessions::engine_config;
use ctxkit::proxy::{server::DEFAULT_MAX_BODY_BYTES, Proxy, ProxyConfig};

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
}

/// Runs `ctxkit proxy`.
pub fn run(places: &Places, args: ProxyArgs) -> Result<(), Failure> {
    let engine = places.engine(engine_config(args.window, args.family.into()))?;
    let config = ProxyConfig {
        listen: args.listen,
        upstream: args.upstream,
        token: args.token,
        max_body_bytes: args.max_body_bytes,
        family: args.family.into(),
        upstream_timeout: std::time::Duration::from_secs(args.upstream_timeout.max(1)),
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
