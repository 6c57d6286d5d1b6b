//! How `ctxkit cost` scales with the length of the transcript: wall time and peak memory of
//! the whole report (every strategy replayed and billed) over synthetic agent sessions of
//! 1,000 to 100,000 short messages, with the ratio to the size before.
//!
//! ```sh
//! cargo run --release -p ctxkit --example cost_scale
//! cargo run --release -p ctxkit --example cost_scale -- 1000 2000 5000   # chosen sizes
//! cargo run --release -p ctxkit --example cost_scale -- --strategies 5000 # per strategy
//! cargo run --release -p ctxkit --example cost_scale -- --strategies 5000 sliding-window
//! cargo run --release -p ctxkit --example cost_scale -- --write 5000 FILE # the transcript
//! ```
//!
//! Each size runs in a child process of its own (this program started again with `--one N`),
//! so the peak memory it prints (`VmHWM` of `/proc/self/status`, Linux only) is that size's.
//! The transcript is ctxkit's JSON message format: a user request, then turns of an assistant
//! message with one tool call and its short result (a path, a line or two, now and then an
//! error line or a new user message), the same for every run (no randomness).

use std::process::Command;
use std::time::Instant;

use ctxkit::core::{Message, ToolCall};
use ctxkit_lab::cost::{cost_report, strategy_cost, CostOptions, CostSetup, Strategy};

const SIZES: [usize; 7] = [1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000];

/// A transcript of `count` messages (about 15 to 40 tokens each).
fn transcript(count: usize) -> Vec<Message> {
    let mut out = vec![Message::user(
        "Fix the failing test in `src/parser.rs` and keep the public API as it is.",
    )];
    let mut turn = 0usize;
    while out.len() < count {
        let id = format!("call_{turn}");
        let path = format!("src/module_{}/file_{}.rs", turn % 37, turn % 101);
        if turn % 50 == 49 {
            out.push(Message::user(format!(
                "Now also check `{path}` and run the tests again (step {turn})."
            )));
        }
        let (tool, arguments, result) = match turn % 4 {
            0 => (
                "read",
                format!(r#"{{"file_path":"{path}"}}"#),
                format!("{path}:\nfn item_{turn}() -> u32 {{ {turn} }}\n"),
            ),
            1 => (
                "bash",
                format!(r#"{{"command":"cargo test -p module_{}"}}"#, turn % 37),
                if turn % 12 == 1 {
                    format!("error[E0308]: mismatched types at {path}:{}:9", turn % 400)
                } else {
                    format!("test result: ok. {} passed; 0 failed", turn % 90)
                },
            ),
            2 => (
                "grep",
                format!(r#"{{"pattern":"item_{turn}"}}"#),
                format!("{path}:{}: item_{turn}", turn % 300),
            ),
            _ => (
                "edit",
                format!(
                    r#"{{"file_path":"{path}","old":"{turn}","new":"{}"}}"#,
                    turn + 1
                ),
                "The file was updated.".to_owned(),
            ),
        };
        out.push(Message::assistant(
            format!("Checking {path} (step {turn})."),
            vec![ToolCall::new(&id, tool, arguments)],
        ));
        out.push(Message::tool_result(&id, result, false));
        turn += 1;
    }
    out.truncate(count);
    out.push(Message::assistant("Done: the tests pass.", vec![]));
    out
}

fn text(count: usize) -> String {
    serde_json::to_string(&transcript(count)).unwrap_or_default()
}

/// The seconds this process has run on a CPU (`/proc/self/schedstat`, Linux only; 0 where
/// there is none): unlike the wall time, not stretched by other programs on the machine.
fn cpu_seconds() -> f64 {
    std::fs::read_to_string("/proc/self/schedstat")
        .ok()
        .and_then(|stat| stat.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(0.0, |nanoseconds| nanoseconds / 1e9)
}

/// The process's peak resident memory in kB (`VmHWM`), 0 where `/proc` has none.
fn peak_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
            line.split_whitespace().nth(1)?.parse().ok()
        })
        .unwrap_or(0)
}

fn options() -> CostOptions<'static> {
    CostOptions {
        format: None,
        index: 0,
        window: 200_000,
        model: None,
        marks: Default::default(),
    }
}

/// One size, in this process: prints `seconds cpu_seconds peak_kb calls` (the report's, not
/// the transcript's making).
fn one(count: usize) -> Result<(), String> {
    let input = text(count);
    let (started, cpu_before) = (Instant::now(), cpu_seconds());
    let report = cost_report(&input, &options()).map_err(|e| e.to_string())?;
    let seconds = started.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu_before;
    let calls = report.rows.first().map_or(0, |row| row.calls);
    println!("{seconds:.3} {cpu:.3} {} {calls}", peak_kb());
    Ok(())
}

/// Each strategy's time at one size (or only the strategy named `only`), in this process.
fn strategies(count: usize, only: Option<&str>) -> Result<(), String> {
    let input = text(count);
    let messages: Vec<Message> = serde_json::from_str(&input).map_err(|e| e.to_string())?;
    let report = cost_report(&text(2), &options()).map_err(|e| e.to_string())?;
    let pricing = ctxkit_lab::cost::pricing_for(&report.model).ok_or("no pricing")?;
    let setup = CostSetup {
        replay: ctxkit_lab::cost::ReplaySetup {
            window: 200_000,
            family: ctxkit::core::ModelFamily::Claude,
            reserve_tokens: report.reserve_tokens,
            system: ctxkit_lab::cost::REPORT_SYSTEM_PROMPT.to_owned(),
            cache_expired: Vec::new(),
            call_gaps: Vec::new(),
            cache_ttl_seconds: 300,
            marks: Default::default(),
            working_directory: None,
        },
        pricing,
        call_times: Vec::new(),
        warm_reserve_tokens: 0,
    };
    for strategy in Strategy::ALL {
        if only.is_some_and(|name| name != strategy.name()) {
            continue;
        }
        let (started, cpu_before) = (Instant::now(), cpu_seconds());
        let row = strategy_cost(strategy, &messages, &setup);
        println!(
            "{:<24} {:>8.3} s ({:.3} s CPU)  peak so far {:>8} kB  ({} compactions)",
            strategy.name(),
            started.elapsed().as_secs_f64(),
            cpu_seconds() - cpu_before,
            peak_kb(),
            row.compactions
        );
    }
    Ok(())
}

fn table(sizes: &[usize]) -> Result<(), String> {
    let program = std::env::current_exe().map_err(|e| e.to_string())?;
    println!(
        "| messages | calls | wall time | CPU time | ×CPU time per step | peak memory | ×memory per step |"
    );
    println!("|---|---|---|---|---|---|---|");
    let mut previous: Option<(usize, f64, f64)> = None;
    for &count in sizes {
        let output = Command::new(&program)
            .args(["--one", &count.to_string()])
            .output()
            .map_err(|e| e.to_string())?;
        if !output.status.success() {
            return Err(String::from_utf8_lossy(&output.stderr).into_owned());
        }
        let line = String::from_utf8_lossy(&output.stdout).into_owned();
        let fields: Vec<f64> = line
            .split_whitespace()
            .filter_map(|f| f.parse().ok())
            .collect();
        let [seconds, cpu, kb, calls] = fields[..] else {
            return Err(format!("unexpected child output {line:?}"));
        };
        let mb = kb / 1024.0;
        let ratio = |now: f64, before: f64| {
            if before > 0.0 {
                format!("{:.2}×", now / before)
            } else {
                "–".to_owned()
            }
        };
        let (time_ratio, memory_ratio) = match previous {
            Some((size, before_cpu, before_mb)) => (
                format!(
                    "{} (size ×{:.1})",
                    ratio(cpu, before_cpu),
                    count as f64 / size as f64
                ),
                ratio(mb, before_mb),
            ),
            None => ("–".to_owned(), "–".to_owned()),
        };
        println!(
            "| {count} | {calls} | {seconds:.2} s | {cpu:.2} s | {time_ratio} | {mb:.0} MB | {memory_ratio} |"
        );
        previous = Some((count, cpu, mb));
    }
    Ok(())
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let number = |at: usize| -> Result<usize, String> {
        args.get(at)
            .and_then(|a| a.parse().ok())
            .ok_or_else(|| format!("expected a message count after {:?}", args.first()))
    };
    match args.first().map(String::as_str) {
        Some("--one") => one(number(1)?),
        Some("--strategies") => strategies(number(1)?, args.get(2).map(String::as_str)),
        Some("--write") => {
            let file = args.get(2).ok_or("--write N FILE")?;
            std::fs::write(file, text(number(1)?)).map_err(|e| e.to_string())
        }
        Some(_) => {
            let sizes: Result<Vec<usize>, String> = (0..args.len()).map(number).collect();
            table(&sizes?)
        }
        None => table(&SIZES),
    }
}
