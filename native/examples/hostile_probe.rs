//! A re-run of the hostile probes of issue 34: loopback fake servers written here (std::net
//! only) attack the release build's public API, and the `ctxkit` binary where the finding was
//! a CLI one, for each of the issue's findings, and a markdown table says per finding how many
//! cases ran, what counts as a failure, how many failed, and a figure.
//!
//! ```sh
//! cargo build --release -p ctxkit --bin ctxkit      # the CLI it attacks (not built by run)
//! cargo run --release -p ctxkit --example hostile_probe                # 5 runs
//! cargo run --release -p ctxkit --example hostile_probe -- --runs 10
//! source scripts/pg-server.sh && cargo run --release -p ctxkit --example hostile_probe
//! ```
//!
//! The findings: redirects ([`redirects`]); hostile summaries ([`goals`]); stalls and the
//! breaker ([`stalls`]); lost acknowledgements on PostgreSQL, directly and through PgBouncer
//! ([`acks`]; "skipped: no database" without `CTXKIT_TEST_POSTGRES_URL`); the smaller ones
//! ([`urls`], [`quarantine`]). Each finding's failures are listed under the table. The
//! process exits 1 when any case failed.

#![warn(clippy::too_many_lines)]

#[path = "hostile_probe/acks.rs"]
mod acks;
#[path = "hostile_probe/goals.rs"]
mod goals;
#[path = "hostile_probe/quarantine.rs"]
mod quarantine;
#[path = "hostile_probe/redirects.rs"]
mod redirects;
#[path = "hostile_probe/server.rs"]
mod server;
#[path = "hostile_probe/setup.rs"]
mod setup;
#[path = "hostile_probe/stalls.rs"]
mod stalls;
#[path = "hostile_probe/urls.rs"]
mod urls;

use std::time::Instant;

/// Runs when `--runs` is not given: about two minutes on two loaded cores.
const DEFAULT_RUNS: usize = 5;

/// One line of the table.
#[derive(Debug)]
pub struct Row {
    /// The finding and what was attacked.
    pub finding: String,
    /// Cases run.
    pub cases: usize,
    /// What counts as a failure.
    pub failure: String,
    /// Cases that failed.
    pub failures: usize,
    /// The figure.
    pub figure: String,
    /// What each failure was.
    pub notes: Vec<String>,
}

/// `--runs N` from the command line.
fn runs() -> usize {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => DEFAULT_RUNS,
        [flag, n] if flag == "--runs" => match n.parse() {
            Ok(n) if n > 0 => n,
            _ => usage(),
        },
        _ => usage(),
    }
}

fn usage() -> ! {
    eprintln!("usage: hostile_probe [--runs N]   (N > 0, default {DEFAULT_RUNS})");
    std::process::exit(2);
}

/// Runs one finding's probe, saying on standard error how long it took.
fn timed<T>(name: &str, probe: impl FnOnce() -> T) -> T {
    let started = Instant::now();
    let done = probe();
    eprintln!("{name}: {:.1} s", started.elapsed().as_secs_f64());
    done
}

fn main() {
    let runs = runs();
    let started = Instant::now();
    let bin = setup::ctxkit_bin();
    let mut rows = vec![timed("redirects", || redirects::probe(&bin, runs))];
    rows.push(timed("hostile summaries", || goals::probe(runs)));
    rows.extend(timed("stalls", || stalls::probe(&bin, runs)));
    rows.push(timed("lost acknowledgements", || acks::probe(runs)));
    rows.push(timed("sslrootcert", || urls::root_certs(&bin, runs)));
    rows.push(timed("leading characters", || urls::leading(&bin, runs)));
    rows.push(timed("hosts", || urls::hosts(&bin, runs)));
    rows.extend(timed("invisible characters", || {
        quarantine::invisible(runs)
    }));
    rows.push(timed("probe --resume", || quarantine::resume(&bin, runs)));

    println!("| finding | cases | a failure is | failures | figure |");
    println!("|---|---|---|---|---|");
    for row in &rows {
        println!(
            "| {} | {} | {} | {} | {} |",
            row.finding, row.cases, row.failure, row.failures, row.figure
        );
    }
    println!(
        "\n{runs} run(s), {:.0} s in all.",
        started.elapsed().as_secs_f64()
    );
    let failed: Vec<&Row> = rows.iter().filter(|row| row.failures > 0).collect();
    for row in &failed {
        println!("\n{}:", row.finding);
        for note in row.notes.iter().take(40) {
            println!("- {}", note.replace('\n', "\\n"));
        }
    }
    if !failed.is_empty() {
        std::process::exit(1);
    }
}
