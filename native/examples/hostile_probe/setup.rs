//! What every attack shares: an endpoint of each summarizer API at a fake server, an engine
//! whose small window compacts after a few turns, the turns themselves (their words varied per
//! run), the `ctxkit` binary of the same build (built by the cargo that runs this example),
//! a child process run under a watchdog, and a generated transcript for `ctxkit probe`.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use ctxkit::core::compaction::{Budget, Policy};
use ctxkit::core::{Message, ToolCall};
use ctxkit::llm::{Api, HttpOptions, LlmEndpoint, SummarizerConfig};
use ctxkit::{Engine, EngineConfig, TurnResult};

/// The key every fake host is given.
pub const KEY: &str = "sk-hostile-probe-secret";

/// The summarizer APIs an engine can be configured with, by their CLI names.
pub const APIS: [(Api, &str); 4] = [
    (Api::OpenAiChat, "openai"),
    (Api::AnthropicMessages, "anthropic"),
    (Api::AnthropicCompaction, "anthropic-compaction"),
    (Api::ResponsesCompaction, "openai-responses-compaction"),
];

/// An endpoint of `api` at `base_url` with the key and `http`.
pub fn endpoint(api: Api, base_url: &str, http: HttpOptions) -> LlmEndpoint {
    let base_url = match api {
        Api::OpenAiChat | Api::ResponsesCompaction => format!("{base_url}/v1"),
        Api::AnthropicMessages | Api::AnthropicCompaction => base_url.to_owned(),
    };
    LlmEndpoint {
        api,
        base_url,
        api_key: Some(KEY.to_owned()),
        model: "hostile-model".to_owned(),
        http,
    }
}

/// The engine configuration: a 3,000-token window, so a few turns compact.
pub fn small_window(summarizer: SummarizerConfig) -> EngineConfig {
    EngineConfig {
        budget: Budget {
            context_window: 3_000,
            output_reserve: 0,
            tool_schema_tokens: 0,
            safety_margin: 0,
            ..Budget::default()
        },
        policy: Policy {
            max_summary_tokens: 300,
            ..Policy::default()
        },
        prompt: ctxkit::PromptConfig {
            read_agents_md: false,
            ..ctxkit::PromptConfig::default()
        },
        memory: ctxkit::MemoryOptions {
            in_prompt: false,
            ..ctxkit::MemoryOptions::default()
        },
        summarizer,
        ..EngineConfig::default()
    }
}

/// An engine on a SQLite file in `dir` with session `s`.
pub fn engine(dir: &Path, summarizer: SummarizerConfig) -> Engine {
    let config = small_window(summarizer);
    let mut engine = Engine::open(dir.join("ctxkit.db"), dir, config).expect("open the engine");
    engine.create_session("s").expect("create the session");
    engine
}

/// Turn `turn` of run `run`: a request, a call and its result (the request's words differ
/// from run to run, so no Goal is the same twice).
pub fn turn(run: usize, turn: usize) -> Vec<Message> {
    let id = format!("c{turn}");
    vec![
        Message::user(format!(
            "run {run}, step {turn}: look at src/mod{run}/file{turn}.rs and keep the API"
        )),
        Message::assistant(
            "",
            vec![ToolCall::new(
                id.clone(),
                "read_file",
                format!(r#"{{"path":"src/mod{run}/file{turn}.rs"}}"#),
            )],
        ),
        Message::tool_result(id, format!("fn item_{turn}() {{}}\n").repeat(20), false),
    ]
}

/// Records turns of `run` from `*next` on until a turn compacts; that turn, and how long its
/// `prepare_turn` took.
pub fn next_compaction(
    engine: &mut Engine,
    run: usize,
    next: &mut usize,
) -> (TurnResult, Duration) {
    for _ in 0..200 {
        engine.record("s", turn(run, *next)).expect("record");
        *next += 1;
        let started = Instant::now();
        let view = engine.prepare_turn("s").expect("prepare a turn");
        if view.compacted.is_some() {
            return (view, started.elapsed());
        }
    }
    panic!("no compaction in 200 turns");
}

/// The `ctxkit` binary: `CTXKIT_BIN`, else the one of this example's build profile
/// (`target/PROFILE/ctxkit`; `cargo run --example` does not build it: `cargo build --release
/// -p ctxkit --bin ctxkit` first). Said on standard error with its age, to be judged.
pub fn ctxkit_bin() -> PathBuf {
    let bin = match std::env::var_os("CTXKIT_BIN") {
        Some(bin) => PathBuf::from(bin),
        None => {
            let exe = std::env::current_exe().expect("the example's path");
            let profile_dir = exe
                .parent()
                .and_then(Path::parent)
                .expect("target/PROFILE/examples/");
            profile_dir.join("ctxkit")
        }
    };
    let Some(modified) = std::fs::metadata(&bin)
        .and_then(|meta| meta.modified())
        .ok()
    else {
        eprintln!(
            "no ctxkit binary at {}: build it first (cargo build --release -p ctxkit --bin ctxkit), or set CTXKIT_BIN",
            bin.display()
        );
        std::process::exit(2);
    };
    let age = modified.elapsed().unwrap_or_default().as_secs();
    eprintln!("ctxkit binary: {} (built {age} s ago)", bin.display());
    bin
}

/// What a watched child did: its output, and how long it ran (`None` when the watchdog
/// killed it).
#[derive(Debug)]
pub struct Watched {
    pub output: Option<Output>,
    pub elapsed: Duration,
}

impl Watched {
    /// Its exit code (`None` when killed or ended by a signal).
    pub fn code(&self) -> Option<i32> {
        self.output.as_ref().and_then(|output| output.status.code())
    }

    /// Its standard error, or what the watchdog did.
    pub fn stderr(&self) -> String {
        match &self.output {
            Some(output) => String::from_utf8_lossy(&output.stderr).into_owned(),
            None => "(killed by the watchdog)".to_owned(),
        }
    }

    /// Its standard output.
    pub fn stdout(&self) -> String {
        match &self.output {
            Some(output) => String::from_utf8_lossy(&output.stdout).into_owned(),
            None => String::new(),
        }
    }
}

/// Reads all of `pipe` on a thread of its own (a full pipe would stop the child).
fn drain(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut all = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut all);
        }
        all
    })
}

/// Runs `command` (standard input closed), killing it after `limit`.
pub fn watched(command: &mut Command, limit: Duration) -> Watched {
    let started = Instant::now();
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the child");
    let (stdout, stderr) = (drain(child.stdout.take()), drain(child.stderr.take()));
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() < limit => std::thread::sleep(Duration::from_millis(5)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    let elapsed = started.elapsed();
    let (stdout, stderr) = (
        stdout.join().unwrap_or_default(),
        stderr.join().unwrap_or_default(),
    );
    Watched {
        output: status.map(|status| Output {
            status,
            stdout,
            stderr,
        }),
        elapsed,
    }
}

/// `ctxkit` in `dir` with `args` and `env`, no provider variables of the caller's.
pub fn ctxkit(bin: &Path, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut command = Command::new(bin);
    command
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("ANTHROPIC_BASE_URL")
        .env_remove("CTXKIT_DATABASE_URL")
        .env_remove("CTXKIT_SUMMARIZER");
    for (name, value) in env {
        command.env(name, value);
    }
    command
}

/// A transcript for `ctxkit probe` (ctxkit's JSON messages): run `run`'s turns, enough for
/// a 32k replay to compact.
pub fn probe_transcript(dir: &Path, run: usize) -> PathBuf {
    let messages: Vec<Message> = (0..160).flat_map(|step| turn(run, step)).collect();
    let file = dir.join("transcript.json");
    let json = serde_json::to_string(&messages).expect("messages as JSON");
    std::fs::write(&file, json).expect("write the transcript");
    file
}
