//! Background compaction's benchmark: how long the compaction turn's `prepare_turn` takes with
//! a summarizer that needs 2 seconds, with and without background compaction.
//!
//! ```sh
//! cargo run --release -p ctxkit --example background_bench
//! ```
//!
//! An agent loop on a small window (3,000 tokens, one read per turn), its own model call taking
//! 1 s between turns; the summarizer is an in-process stand-in that sleeps 2 s and answers.
//! Without background compaction the turn that reaches the trigger waits for the summary; with
//! it (`background_percent: 60`), a turn 60% of the way from the low-water mark to the trigger hands the request to a worker
//! thread and the trigger turn uses the finished checkpoint. Prints, for each, the compaction
//! turn's latency, the slowest and the median other turn, and the summary calls made.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ctxkit::core::compaction::{Budget, Policy};
use ctxkit::core::{Message, ToolCall};
use ctxkit::llm::{Llm, LlmRequest, SummarizerError};
use ctxkit::{Engine, EngineConfig};

const SUMMARIZER_SECONDS: u64 = 2;
const THINK: Duration = Duration::from_millis(1_000);

#[derive(Debug)]
struct SlowSummarizer(Arc<AtomicUsize>);

impl Llm for SlowSummarizer {
    fn complete(&self, request: &LlmRequest<'_>) -> Result<String, SummarizerError> {
        self.0.fetch_add(1, Ordering::SeqCst);
        std::thread::sleep(Duration::from_secs(SUMMARIZER_SECONDS));
        let tag = request
            .prompt
            .rsplit("wrapped in <")
            .next()
            .and_then(|rest| rest.split('>').next())
            .unwrap_or("summary");
        Ok(format!(
            "<{tag}>## Goal\nRead the files.\n## Progress\nRead them in order.\n## Key Decisions\nNone.\n## Next Steps\nKeep reading.\n## Critical Context\nsrc/\n</{tag}>"
        ))
    }

    fn describe(&self) -> String {
        "in-process summarizer taking 2 s".to_owned()
    }
}

fn turn_messages(turn: usize) -> Vec<Message> {
    vec![
        Message::user(format!("step {turn}: look at src/file{turn}.rs")),
        Message::assistant(
            "",
            vec![ToolCall::new(
                format!("c{turn}"),
                "read_file",
                format!(r#"{{"path":"src/file{turn}.rs"}}"#),
            )],
        ),
        Message::tool_result(format!("c{turn}"), "fn main() {}\n".repeat(20), false),
    ]
}

/// Runs the loop to its first compaction: (compaction turn, slowest other, median other, calls).
fn run(background: Option<u8>) -> Result<(Duration, Duration, Duration, usize), ctxkit::Error> {
    let dir = std::env::temp_dir().join(format!(
        "ctxkit-background-bench-{}-{}",
        std::process::id(),
        background.unwrap_or(0)
    ));
    std::fs::create_dir_all(&dir).map_err(|e| ctxkit::Error::io("create", &dir, e))?;
    let calls = Arc::new(AtomicUsize::new(0));
    let config = EngineConfig {
        budget: Budget {
            context_window: 3_000,
            output_reserve: 0,
            tool_schema_tokens: 0,
            safety_margin: 0,
            ..Budget::default()
        },
        policy: Policy {
            max_summary_tokens: 300,
            background_percent: background,
            ..Policy::default()
        },
        memory: ctxkit::MemoryOptions {
            in_prompt: false,
            extract_before_compaction: false,
            ..ctxkit::MemoryOptions::default()
        },
        ..EngineConfig::default()
    };
    let mut engine = Engine::open(dir.join("ctxkit.db"), &dir, config)?
        .with_llm(Box::new(SlowSummarizer(Arc::clone(&calls))));
    engine.create_session("bench")?;
    let mut others = Vec::new();
    for turn in 0..200 {
        engine.record("bench", turn_messages(turn))?;
        let started = Instant::now();
        let view = engine.prepare_turn("bench")?;
        let took = started.elapsed();
        if view.compacted.is_some() {
            let _ = std::fs::remove_dir_all(&dir);
            others.sort();
            let slowest = others.last().copied().unwrap_or_default();
            let median = others.get(others.len() / 2).copied().unwrap_or_default();
            return Ok((took, slowest, median, calls.load(Ordering::SeqCst)));
        }
        others.push(took);
        std::thread::sleep(THINK);
    }
    Err(ctxkit::Error::invalid(
        "bench",
        "no compaction in 200 turns",
    ))
}

fn main() -> Result<(), ctxkit::Error> {
    println!("| background compaction | compaction turn | slowest other turn | median other turn | summary calls |");
    println!("|---|---|---|---|---|");
    for (name, background) in [
        ("off", None),
        ("on (60% of the way to the trigger)", Some(60)),
    ] {
        let (compaction, slowest, median, calls) = run(background)?;
        println!(
            "| {name} | {:.1} ms | {:.1} ms | {:.2} ms | {calls} |",
            compaction.as_secs_f64() * 1000.0,
            slowest.as_secs_f64() * 1000.0,
            median.as_secs_f64() * 1000.0,
        );
    }
    Ok(())
}
