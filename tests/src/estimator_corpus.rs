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
//! It also extracts the Claude usage intervals ([`claude_intervals`]): the real token growth
//! of the prompt between consecutive API calls of a Claude Code session.

use ctxkit_core::{Message, ToolCall};
use serde_json::Value;
use std::collections::BTreeMap;
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

fn read_jsonl(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .map(|text| {
            text.lines()
                .filter_map(|line| serde_json::from_str(line).ok())
                .collect()
        })
        .unwrap_or_default()
}

fn str_of(value: &Value) -> &str {
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

/// One interval between consecutive API calls of a Claude Code session: what was appended to
/// the prompt, and by how many tokens the real prompt grew.
#[derive(Debug, Clone)]
pub struct ClaudeInterval {
    /// Which file.
    pub session: &'static str,
    /// The model of the call that produced the appended assistant turn.
    pub model: String,
    /// The previous assistant turn and the messages after it (tool results, user text).
    pub appended: Vec<Message>,
    /// Real prompt growth in tokens: the next call's prompt minus this call's.
    pub real_tokens: u64,
    /// Characters of tool results in `appended`.
    pub tool_result_chars: usize,
    /// The assistant turn had a thinking block (its cost in the next prompt is unclear).
    pub has_thinking: bool,
    /// A compaction happened between the calls.
    pub crosses_compaction: bool,
}

impl ClaudeInterval {
    /// Whether FORMATS.md's filter keeps it: no thinking, at least 4,000 characters of tool
    /// result, a positive increase, no compaction in between.
    pub fn is_measurable(&self) -> bool {
        !self.has_thinking
            && self.tool_result_chars >= 4000
            && self.real_tokens > 0
            && !self.crosses_compaction
    }
}

/// The intervals of the corpus's Claude Code session and its sub-agent.
pub fn claude_intervals(corpus: &Path) -> Vec<ClaudeInterval> {
    let mut intervals = session_intervals(&corpus.join(CLAUDE_SESSION), "main", true);
    intervals.extend(session_intervals(
        &corpus.join(CLAUDE_SUBAGENT),
        "subagent",
        false,
    ));
    intervals
}

#[derive(Default)]
struct ApiCall {
    prompt_tokens: u64,
    model: String,
    text: String,
    tool_calls: Vec<ToolCall>,
    has_thinking: bool,
    after: Vec<Message>,
    compaction_after: bool,
}

fn session_intervals(
    path: &Path,
    session: &'static str,
    skip_sidechain: bool,
) -> Vec<ClaudeInterval> {
    let mut calls: Vec<ApiCall> = Vec::new();
    let mut index_of: BTreeMap<String, usize> = BTreeMap::new();
    for value in read_jsonl(path) {
        if skip_sidechain && value["isSidechain"].as_bool() == Some(true) {
            continue;
        }
        match str_of(&value["type"]) {
            "assistant" => {
                let message = &value["message"];
                let id = str_of(&message["id"]).to_string();
                let index = *index_of.entry(id).or_insert_with(|| {
                    let usage = &message["usage"];
                    let tokens = [
                        "input_tokens",
                        "cache_creation_input_tokens",
                        "cache_read_input_tokens",
                    ]
                    .iter()
                    .map(|field| usage[field].as_u64().unwrap_or(0))
                    .sum();
                    calls.push(ApiCall {
                        prompt_tokens: tokens,
                        model: str_of(&message["model"]).to_string(),
                        ..ApiCall::default()
                    });
                    calls.len() - 1
                });
                let Some(call) = calls.get_mut(index) else {
                    continue;
                };
                for block in message["content"].as_array().into_iter().flatten() {
                    match str_of(&block["type"]) {
                        "text" => call.text.push_str(str_of(&block["text"])),
                        "thinking" | "redacted_thinking" => call.has_thinking = true,
                        "tool_use" => call.tool_calls.push(ToolCall::new(
                            str_of(&block["id"]),
                            str_of(&block["name"]),
                            block["input"].to_string(),
                        )),
                        _ => {}
                    }
                }
            }
            "user" => {
                let Some(call) = calls.last_mut() else {
                    continue;
                };
                match &value["message"]["content"] {
                    Value::String(text) => call.after.push(Message::user(text.clone())),
                    Value::Array(blocks) => {
                        for block in blocks {
                            match str_of(&block["type"]) {
                                "tool_result" => call.after.push(Message::tool_result(
                                    str_of(&block["tool_use_id"]),
                                    tool_result_text(&block["content"]),
                                    block["is_error"].as_bool().unwrap_or(false),
                                )),
                                "text" => call.after.push(Message::user(str_of(&block["text"]))),
                                _ => {}
                            }
                        }
                    }
                    _ => {}
                }
            }
            "system" if str_of(&value["subtype"]) == "compact_boundary" => {
                if let Some(call) = calls.last_mut() {
                    call.compaction_after = true;
                }
            }
            _ => {}
        }
    }
    calls
        .windows(2)
        .filter_map(|pair| {
            let [call, next] = pair else { return None };
            let mut appended = vec![Message::assistant(
                call.text.clone(),
                call.tool_calls.clone(),
            )];
            appended.extend(call.after.iter().cloned());
            let tool_result_chars = call
                .after
                .iter()
                .filter(|message| message.tool_call_id.is_some())
                .map(|message| message.text_content().chars().count())
                .sum();
            Some(ClaudeInterval {
                session,
                model: call.model.clone(),
                appended,
                real_tokens: next.prompt_tokens.saturating_sub(call.prompt_tokens),
                tool_result_chars,
                has_thinking: call.has_thinking,
                crosses_compaction: call.compaction_after
                    || next.prompt_tokens < call.prompt_tokens,
            })
        })
        .collect()
}
