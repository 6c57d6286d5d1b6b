//! The texts the token estimator is fitted and measured on, built from the raw corpus and the
//! original fixture texts under `tests/fixtures/estimator/`.
//!
//! Each content class of `shared/corpus/FORMATS.md` that the corpus can supply becomes a list
//! of [`Sample`]s: pieces of 2–8 KB (smaller when a source document is smaller, never below
//! [`MIN_SAMPLE_BYTES`]). Every sample belongs to a source document (a tau-bench task, a group
//! of consecutive Claude Code blocks, a fixture paragraph...) and every document to one
//! [`Half`], by a hash of its key: the fit reads only [`Half::Fit`], the report and the
//! accuracy test only [`Half::Report`], so the reported error is out of sample.
//!
//! The real Claude usage of the same session is in [`crate::claude_usage`].

use serde_json::Value;
use std::path::Path;

/// Samples shorter than this are dropped: relative error on a few tokens is noise.
pub const MIN_SAMPLE_BYTES: usize = 128;
/// Consecutive items of one document are joined until a sample reaches this size.
pub const TARGET_SAMPLE_BYTES: usize = 2048;
/// Longer items are cut (at a line break when there is one) into pieces of about
/// [`TARGET_SAMPLE_BYTES`] to this size.
pub const MAX_SAMPLE_BYTES: usize = 8192;

/// Which half of the documents a sample is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Half {
    /// Used to fit the cost tables.
    Fit,
    /// Used only to measure.
    Report,
}

/// One piece of text of a known content class.
#[derive(Debug, Clone)]
pub struct Sample {
    /// The content class (see [`CLASSES`]).
    pub class: &'static str,
    /// The source document's key.
    pub document: String,
    /// Fit or report.
    pub half: Half,
    /// The text.
    pub text: String,
}

/// The content classes, in report order, with a description of their source.
pub const CLASSES: &[(&str, &str)] = &[
    (
        "english_chat",
        "English chat, simulated users (tau-bench user turns)",
    ),
    (
        "gpt4o_agent",
        "English chat, GPT-4o agent turns (tau-bench assistant text)",
    ),
    (
        "claude_prose",
        "Claude's prose replies (Claude Code text blocks)",
    ),
    (
        "markdown",
        "Markdown: issue texts (SWE-agent, OpenHands), a Claude Code compaction summary",
    ),
    (
        "python_code",
        "Python file views and command output (SWE-agent observations)",
    ),
    (
        "c_pony_code",
        "C and Pony file views with line numbers (OpenHands read observations)",
    ),
    (
        "compact_json",
        "Compact JSON tool outputs (tau-bench tool messages)",
    ),
    (
        "minified_jsonl",
        "Minified JSONL (raw lines of a Claude Code log)",
    ),
    (
        "agent_tool_results",
        "Agent tool results (Claude Code tool_result contents)",
    ),
    ("german", "German prose (original fixture)"),
    ("french", "French prose (original fixture)"),
    ("spanish", "Spanish prose (original fixture)"),
    ("vietnamese", "Vietnamese prose (original fixture)"),
    ("greek", "Greek prose (original fixture)"),
    ("russian", "Russian prose (original fixture)"),
    ("arabic", "Arabic prose (original fixture)"),
    ("hindi", "Hindi prose (original fixture)"),
    ("thai", "Thai prose (original fixture)"),
    ("chinese", "Chinese (simplified) prose (original fixture)"),
    ("japanese", "Japanese prose (original fixture)"),
    ("korean", "Korean prose (original fixture)"),
    ("emoji_chat", "English chat with emoji (original fixture)"),
];

/// The original fixture texts, one per language: `(class, file under tests/fixtures/estimator)`.
pub const FIXTURE_TEXTS: &[(&str, &str)] = &[
    ("german", "german.txt"),
    ("french", "french.txt"),
    ("spanish", "spanish.txt"),
    ("vietnamese", "vietnamese.txt"),
    ("greek", "greek.txt"),
    ("russian", "russian.txt"),
    ("arabic", "arabic.txt"),
    ("hindi", "hindi.txt"),
    ("thai", "thai.txt"),
    ("chinese", "chinese.txt"),
    ("japanese", "japanese.txt"),
    ("korean", "korean.txt"),
    ("emoji_chat", "emoji.txt"),
];

/// The main Claude Code session of the corpus, relative to the corpus folder.
pub const CLAUDE_SESSION: &str =
    "claude-code_marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl";
/// Its sub-agent session.
pub const CLAUDE_SUBAGENT: &str =
    "claude-code_marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-a2898e3.jsonl";
/// The compaction call beside it (its summary is markdown).
pub const CLAUDE_COMPACT: &str =
    "claude-code_marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-acompact-e1f845.jsonl";

/// FNV-1a 64 of a string: a stable hash for splitting documents and keying cached counts
/// (`scripts/ctok_counts.py` computes the same).
pub fn fnv1a64(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The half a document key falls in.
pub fn half_of(document: &str) -> Half {
    if fnv1a64(document) % 2 == 0 {
        Half::Fit
    } else {
        Half::Report
    }
}

/// Every sample of every class. Missing corpus files contribute nothing (the caller checks
/// the counts).
pub fn load_samples(corpus: &Path, fixtures: &Path) -> Vec<Sample> {
    let mut items: Vec<(&'static str, String, String)> = Vec::new();
    tau_bench_items(&corpus.join("tau-bench/gpt-4o-airline.json"), &mut items);
    claude_code_items(corpus, &mut items);
    swe_agent_items(corpus, &mut items);
    openhands_items(
        &corpus.join("openhands/multi_swe_bench_examples_output.jsonl"),
        &mut items,
    );
    fixture_items(&fixtures.join("estimator"), &mut items);
    chunk(items)
}

/// Joins consecutive items of one (class, document) into samples of about
/// [`TARGET_SAMPLE_BYTES`], cuts long items, drops tiny samples.
fn chunk(mut items: Vec<(&'static str, String, String)>) -> Vec<Sample> {
    // A document's items of one class are joined even when other classes come between them
    // (a tau-bench dialog alternates user, assistant and tool turns); the sort is stable, so
    // their order is kept.
    items.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    let mut samples = Vec::new();
    let mut current: Option<Sample> = None;
    let flush = |sample: Option<Sample>, samples: &mut Vec<Sample>| {
        if let Some(sample) = sample.filter(|sample| sample.text.len() >= MIN_SAMPLE_BYTES) {
            samples.push(sample);
        }
    };
    for (class, document, text) in items {
        for piece in cut(&text) {
            let same = current
                .as_ref()
                .is_some_and(|sample| sample.class == class && sample.document == document);
            if !same {
                flush(current.take(), &mut samples);
            }
            let sample = current.get_or_insert_with(|| Sample {
                class,
                half: half_of(&document),
                document: document.clone(),
                text: String::new(),
            });
            if !sample.text.is_empty() {
                sample.text.push('\n');
            }
            sample.text.push_str(piece);
            if sample.text.len() >= TARGET_SAMPLE_BYTES {
                flush(current.take(), &mut samples);
            }
        }
    }
    flush(current, &mut samples);
    samples
}

/// Cuts a text longer than [`MAX_SAMPLE_BYTES`] into pieces of at least
/// [`TARGET_SAMPLE_BYTES`], at line breaks when possible, always at character boundaries.
fn cut(text: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut rest = text;
    while rest.len() > MAX_SAMPLE_BYTES {
        let mut end = TARGET_SAMPLE_BYTES * 2;
        while !rest.is_char_boundary(end) {
            end += 1;
        }
        if let Some(newline) = rest.as_bytes()[TARGET_SAMPLE_BYTES..end]
            .iter()
            .rposition(|&byte| byte == b'\n')
        {
            end = TARGET_SAMPLE_BYTES + newline + 1;
        }
        pieces.push(&rest[..end]);
        rest = &rest[end..];
    }
    pieces.push(rest);
    pieces
}

fn read_json(path: &Path) -> Option<Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

pub(crate) fn read_jsonl(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .map(|text| {
            text.lines()
                .filter_map(|line| serde_json::from_str(line).ok())
                .collect()
        })
        .unwrap_or_default()
}

pub(crate) fn str_of(value: &Value) -> &str {
    value.as_str().unwrap_or("")
}

fn tau_bench_items(path: &Path, items: &mut Vec<(&'static str, String, String)>) {
    let Some(Value::Array(runs)) = read_json(path) else {
        return;
    };
    for run in &runs {
        // Trials of one task repeat its data: key by task so they stay in one half.
        let document = format!("tau-{}", run["task_id"]);
        for message in run["traj"].as_array().into_iter().flatten() {
            let text = str_of(&message["content"]).to_string();
            if text.is_empty() {
                continue;
            }
            let class = match str_of(&message["role"]) {
                "user" => "english_chat",
                "assistant" => "gpt4o_agent",
                "tool" => "compact_json",
                _ => continue,
            };
            items.push((class, document.clone(), text));
        }
    }
}

/// Keys consecutive texts into groups of about [`TARGET_SAMPLE_BYTES`], so each group is one
/// document.
fn grouped(
    prefix: &str,
    class: &'static str,
    texts: Vec<String>,
    items: &mut Vec<(&'static str, String, String)>,
) {
    let (mut group, mut size) = (0usize, 0usize);
    for text in texts {
        items.push((class, format!("{prefix}-{group}"), text.clone()));
        size += text.len();
        if size >= TARGET_SAMPLE_BYTES {
            group += 1;
            size = 0;
        }
    }
}

fn claude_code_items(corpus: &Path, items: &mut Vec<(&'static str, String, String)>) {
    for (key, file) in [("cc", CLAUDE_SESSION), ("cc-sub", CLAUDE_SUBAGENT)] {
        let path = corpus.join(file);
        let (mut prose, mut results, mut lines) = (Vec::new(), Vec::new(), Vec::new());
        for line in std::fs::read_to_string(&path).unwrap_or_default().lines() {
            let Ok(value) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            let kind = str_of(&value["type"]);
            if kind == "user" || kind == "assistant" {
                lines.push(line.to_string());
            }
            for block in value["message"]["content"].as_array().into_iter().flatten() {
                match (kind, str_of(&block["type"])) {
                    ("assistant", "text") if !str_of(&block["text"]).trim().is_empty() => {
                        prose.push(str_of(&block["text"]).to_string())
                    }
                    ("user", "tool_result") => results.push(tool_result_text(&block["content"])),
                    _ => {}
                }
            }
        }
        grouped(&format!("{key}-prose"), "claude_prose", prose, items);
        grouped(
            &format!("{key}-result"),
            "agent_tool_results",
            results,
            items,
        );
        grouped(&format!("{key}-line"), "minified_jsonl", lines, items);
    }
    // The compaction summary: markdown written by Claude.
    for value in read_jsonl(&corpus.join(CLAUDE_COMPACT)) {
        if str_of(&value["type"]) != "assistant" {
            continue;
        }
        let texts = value["message"]["content"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|block| str_of(&block["text"]).to_string())
            .collect();
        grouped("cc-compact", "markdown", texts, items);
    }
}

/// The text of a tool_result's `content`: a string, or its text blocks joined by newlines.
pub fn tool_result_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .map(|block| str_of(&block["text"]))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn swe_agent_items(corpus: &Path, items: &mut Vec<(&'static str, String, String)>) {
    for file in [
        "swe-agent/marshmallow-1867__function_calling_replace_from_source.traj",
        "swe-agent/pydicom-1458__gpt4_default.traj",
    ] {
        let Some(trajectory) = read_json(&corpus.join(file)) else {
            continue;
        };
        for (index, message) in trajectory["history"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            let text = str_of(&message["content"]).to_string();
            let role = str_of(&message["role"]);
            let document = format!("{file}-{index}");
            if text.contains("ISSUE:\n") {
                // The task statement: an issue written in markdown.
                items.push(("markdown", document, text));
            } else if role == "tool"
                || (role == "user" && message["is_demo"].as_bool() != Some(true))
            {
                items.push(("python_code", document, text));
            }
        }
    }
}

fn openhands_items(path: &Path, items: &mut Vec<(&'static str, String, String)>) {
    for run in read_jsonl(path) {
        let instance = str_of(&run["instance_id"]).to_string();
        for event in run["history"].as_array().into_iter().flatten() {
            let document = format!("{instance}-{}", event["id"]);
            if str_of(&event["observation"]) == "read" {
                items.push((
                    "c_pony_code",
                    document,
                    str_of(&event["content"]).to_string(),
                ));
            } else if str_of(&event["source"]) == "user" && str_of(&event["action"]) == "message" {
                items.push(("markdown", document, str_of(&event["message"]).to_string()));
            }
        }
    }
}

fn fixture_items(folder: &Path, items: &mut Vec<(&'static str, String, String)>) {
    for &(class, file) in FIXTURE_TEXTS {
        let text = std::fs::read_to_string(folder.join(file)).unwrap_or_default();
        // Each paragraph is a document (and a sample): a few hundred bytes.
        let paragraphs: Vec<String> = text
            .split("\n\n")
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(String::from)
            .collect();
        for (index, paragraph) in paragraphs.into_iter().enumerate() {
            items.push((class, format!("{file}-{index}"), paragraph));
        }
    }
}
