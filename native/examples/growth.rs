//! How a session's costs grow with its log (issue 36 item 5): one run builds sessions of
//! 1,000, 10,000 and 100,000 messages and reports, per size, the import's time per message
//! (beside a plain JSON parse of the same file, in Rust and by Python's `json.loads`, for
//! scale), a turn's time, the message rows it
//! read and its process's peak memory, a preview's time before and after the first kept
//! compaction, and the database's size over the JSON's, with the ratios between sizes.
//!
//! ```sh
//! cargo run --release -p ctxkit --example growth            # 1k, 10k, 100k
//! cargo run --release -p ctxkit --example growth -- 1000 5000
//! ```
//!
//! Every measurement after the import runs in a child process of its own (this program
//! started again with `--child STEP DIR`), so each opens the database as a new CLI process
//! would (nothing cached) and its peak memory (`VmHWM`, Linux only) is its own. The sessions
//! are ctxkit's JSON message format, a user request and then turns of an assistant message
//! with one tool call and its result of a few lines (no randomness), planned at a 32k window
//! so every size compacts. Times are wall clock on whatever machine runs it: read the ratios.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use ctxkit::core::compaction::Budget;
use ctxkit::core::import::ctxkit_messages;
use ctxkit::core::model::Entry;
use ctxkit::core::tokens::ModelFamily;
use ctxkit::core::turn::Session;
use ctxkit::core::{Message, ToolCall};
use ctxkit::store::{message_rows_read, SessionImport, SessionStore, SqliteStore};
use ctxkit::{Engine, EngineConfig};

const SIZES: [usize; 3] = [1_000, 10_000, 100_000];
/// The session's name in every database.
const SESSION: &str = "s";
/// Turns measured after the compaction (the median is reported).
const TURNS: usize = 5;

/// A session of `count` messages: a request, then calls and their results of a few lines.
fn transcript(count: usize) -> Vec<Message> {
    let mut out = vec![Message::user(
        "Fix the failing test in `src/parser.rs` and keep the public API as it is.",
    )];
    let mut turn = 0usize;
    while out.len() < count {
        let id = format!("call_{turn}");
        let path = format!("src/module_{}/file_{}.rs", turn % 37, turn % 101);
        if turn % 50 == 49 {
            out.push(Message::user(format!("Now check `{path}` (step {turn}).")));
        }
        let call = ToolCall {
            id: id.clone(),
            name: "read".to_owned(),
            arguments: format!(r#"{{"file_path":"{path}"}}"#),
            provider_fields: None,
        };
        out.push(Message::assistant(format!("Reading {path}."), vec![call]));
        let lines: Vec<String> = (0..6)
            .map(|line| format!("fn item_{turn}_{line}() -> u32 {{ {} }}", turn * line))
            .collect();
        out.push(Message::tool_result(id, lines.join("\n"), false));
        turn += 1;
    }
    out.truncate(count);
    out
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

fn config() -> EngineConfig {
    EngineConfig {
        budget: Budget::for_window(32_000),
        ..EngineConfig::default()
    }
}

fn open(dir: &Path) -> Result<Engine, String> {
    Engine::open(dir.join("ctxkit.db"), dir, config()).map_err(|e| e.to_string())
}

/// The import, as `ctxkit import` of a ctxkit JSON file does it: the file parsed into
/// messages, each estimated, the session stored in one transaction. Prints
/// `json_seconds import_seconds peak_kb`.
fn import(dir: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(dir.join("session.json")).map_err(|e| e.to_string())?;
    let started = Instant::now();
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let json_seconds = started.elapsed().as_secs_f64();
    drop(value);
    let started = Instant::now();
    let messages = ctxkit_messages(&text).map_err(|e| e.to_string())?;
    let family = ModelFamily::Claude;
    let mut session = Session::new(family);
    session.entries = messages
        .into_iter()
        .zip(1..)
        .map(|(message, seq)| Entry::new(seq, message, family))
        .collect();
    let mut store = SqliteStore::open(dir.join("ctxkit.db")).map_err(|e| e.to_string())?;
    let import = SessionImport {
        name: SESSION,
        session: &session,
        offloads: &[],
    };
    store
        .import_sessions(&[import], &[], "growth", 0)
        .map_err(|e| e.to_string())?;
    let import_seconds = started.elapsed().as_secs_f64();
    println!("{json_seconds} {import_seconds} {}", peak_kb());
    Ok(())
}

/// One measured step in a fresh engine. Prints `seconds rows peak_kb`.
fn child(step: &str, dir: &Path) -> Result<(), String> {
    if step == "import" {
        return import(dir);
    }
    let mut engine = open(dir)?;
    let rows = message_rows_read();
    let started = Instant::now();
    let seconds = match step {
        "preview" => {
            engine.preview_turn(SESSION).map_err(|e| e.to_string())?;
            started.elapsed().as_secs_f64()
        }
        "keep" => {
            let turn = engine.prepare_turn(SESSION).map_err(|e| e.to_string())?;
            if turn.compacted.is_none() {
                return Err("the first turn did not compact".to_owned());
            }
            started.elapsed().as_secs_f64()
        }
        "turn" => median_turn(&mut engine)?,
        other => return Err(format!("unknown step {other:?}")),
    };
    // A turn's rows are its first's (a new process's: the tail read once, then cached).
    let rows = message_rows_read() - rows;
    let rows = if step == "turn" {
        rows / TURNS as u64
    } else {
        rows
    };
    println!("{seconds} {rows} {}", peak_kb());
    Ok(())
}

/// The median time of [`TURNS`] turns: three messages appended (a call, its result, a
/// request), then the turn prepared.
fn median_turn(engine: &mut Engine) -> Result<f64, String> {
    let mut times = Vec::new();
    for turn in 0..TURNS {
        let id = format!("late_{turn}");
        let call = ToolCall {
            id: id.clone(),
            name: "read".to_owned(),
            arguments: r#"{"file_path":"src/late.rs"}"#.to_owned(),
            provider_fields: None,
        };
        let batch = vec![
            Message::assistant("Reading src/late.rs.", vec![call]),
            Message::tool_result(id, "fn late() {}", false),
            Message::user(format!("Go on ({turn}).")),
        ];
        let started = Instant::now();
        engine
            .record_batch(SESSION, batch, false)
            .map_err(|e| e.to_string())?;
        engine.prepare_turn(SESSION).map_err(|e| e.to_string())?;
        times.push(started.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    Ok(times.get(TURNS / 2).copied().unwrap_or_default())
}

/// Seconds Python's `json.loads` takes over the file at `path` (read before the clock starts,
/// as the import's is), in a `python3` process of its own; `None` without a `python3`.
fn python_json_loads(path: &Path) -> Option<f64> {
    const SCRIPT: &str = "import json, sys, time\n\
        text = open(sys.argv[1], encoding='utf-8').read()\n\
        started = time.perf_counter()\n\
        json.loads(text)\n\
        print(time.perf_counter() - started)";
    let output = Command::new("python3")
        .args(["-c", SCRIPT])
        .arg(path)
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    String::from_utf8_lossy(&output.stdout).trim().parse().ok()
}

/// Runs `step` in a child process; its three printed numbers.
fn run_child(step: &str, dir: &Path) -> Result<[f64; 3], String> {
    let program = std::env::current_exe().map_err(|e| e.to_string())?;
    let output = Command::new(program)
        .args(["--child", step])
        .arg(dir)
        .output()
        .map_err(|e| e.to_string())?;
    if !output.status.success() {
        return Err(format!(
            "{step}: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let numbers: Vec<f64> = text
        .split_whitespace()
        .filter_map(|word| word.parse().ok())
        .collect();
    match numbers.as_slice() {
        [a, b, c] => Ok([*a, *b, *c]),
        _ => Err(format!("{step}: unexpected output {text:?}")),
    }
}

/// What one size measured.
struct Row {
    messages: usize,
    json_bytes: u64,
    db_bytes: u64,
    json_parse: f64,
    json_loads: Option<f64>,
    import: f64,
    import_kb: f64,
    preview: [f64; 3],
    keep: [f64; 3],
    turn: [f64; 3],
    preview_after: [f64; 3],
}

fn file_bytes(path: PathBuf) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

fn measure(messages: usize) -> Result<Row, String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let json = serde_json::to_string(&transcript(messages)).map_err(|e| e.to_string())?;
    std::fs::write(dir.path().join("session.json"), &json).map_err(|e| e.to_string())?;
    let json_loads = python_json_loads(&dir.path().join("session.json"));
    let [json_parse, import, import_kb] = run_child("import", dir.path())?;
    let preview = run_child("preview", dir.path())?;
    let keep = run_child("keep", dir.path())?;
    let turn = run_child("turn", dir.path())?;
    let preview_after = run_child("preview", dir.path())?;
    let db = dir.path().join("ctxkit.db");
    let db_bytes = file_bytes(db.clone()) + file_bytes(db.with_extension("db-wal"));
    Ok(Row {
        messages,
        json_bytes: json.len() as u64,
        db_bytes,
        json_parse,
        json_loads,
        import,
        import_kb,
        preview,
        keep,
        turn,
        preview_after,
    })
}

/// `now` over `before`, as `×N.NN` (a dash for the first size).
fn ratio(now: f64, before: Option<f64>) -> String {
    match before {
        Some(before) if before > 0.0 => format!(" (×{:.2})", now / before),
        _ => String::new(),
    }
}

fn print(rows: &[Row]) {
    println!(
        "| messages | import µs/msg (Rust JSON parse; Python json.loads; import / json.loads) | preview, no checkpoint | first turn \
         (compacts) | turn: time, rows read, peak memory | preview after | DB / JSON |"
    );
    println!("|---|---|---|---|---|---|---|");
    let mut before: Option<&Row> = None;
    for row in rows {
        let per = |seconds: f64| seconds * 1e6 / row.messages as f64;
        let ms = |seconds: f64| seconds * 1e3;
        println!(
            "| {} | {:.1}{} ({:.2}; {}), peak {:.0} MB | {:.1} ms{} | {:.1} ms{} | {:.2} ms{}, {} rows, \
             {:.0} MB | {:.2} ms{} | {:.2} ({:.1} / {:.1} MB) |",
            row.messages,
            per(row.import),
            ratio(per(row.import), before.map(|b| b.import * 1e6 / b.messages as f64)),
            per(row.json_parse),
            row.json_loads.map_or("no python3".to_owned(), |loads| format!(
                "{:.2}; {:.2}x",
                per(loads),
                row.import / loads
            )),
            row.import_kb / 1024.0,
            ms(row.preview[0]),
            ratio(row.preview[0], before.map(|b| b.preview[0])),
            ms(row.keep[0]),
            ratio(row.keep[0], before.map(|b| b.keep[0])),
            ms(row.turn[0]),
            ratio(row.turn[0], before.map(|b| b.turn[0])),
            row.turn[1],
            row.turn[2] / 1024.0,
            ms(row.preview_after[0]),
            ratio(row.preview_after[0], before.map(|b| b.preview_after[0])),
            row.db_bytes as f64 / row.json_bytes as f64,
            row.db_bytes as f64 / 1e6,
            row.json_bytes as f64 / 1e6,
        );
        before = Some(row);
    }
    println!(
        "\nrows read: the preview with no checkpoint {}, the first turn {}, a turn after it {}, \
         a preview after it {} (at the largest size)",
        rows.last().map_or(0.0, |r| r.preview[1]),
        rows.last().map_or(0.0, |r| r.keep[1]),
        rows.last().map_or(0.0, |r| r.turn[1]),
        rows.last().map_or(0.0, |r| r.preview_after[1]),
    );
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, step, dir] = args.as_slice() {
        if flag == "--child" {
            return child(step, Path::new(dir));
        }
    }
    let sizes: Vec<usize> = if args.is_empty() {
        SIZES.to_vec()
    } else {
        args.iter()
            .map(|a| a.parse().map_err(|_| format!("not a size: {a}")))
            .collect::<Result<_, _>>()?
    };
    let rows = sizes
        .into_iter()
        .map(measure)
        .collect::<Result<Vec<_>, _>>()?;
    print(&rows);
    Ok(())
}
