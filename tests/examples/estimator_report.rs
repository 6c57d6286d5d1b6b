//! Regenerates docs/reports/estimator.md: the estimator's measured accuracy and speed.
//!
//! ```text
//! cargo bench -p ctxkit-core --bench estimator        # optional: throughput figures
//! cargo run --release -p ctxkit-tests --example estimator_report
//! ```
//!
//! Reads the corpus (`../shared/corpus/raw` from the project root), the original fixture
//! texts, the cached ctok counts and, when present, criterion's results under
//! `target/criterion/estimator/`. Measures on the report half of the samples only.

use ctxkit_core::tokens::{estimate_text, ModelFamily};
use ctxkit_tests::claude_usage::claude_intervals;
use ctxkit_tests::estimator_corpus::{fnv1a64, load_samples, Half, Sample, CLASSES};
use ctxkit_tests::estimator_eval::{
    chars4, error_stats, interval_ratios, quantile, ErrorStats, INTERVAL_ESTIMATORS,
};
use ctxkit_tests::{corpus_dir, fixtures_dir, project_root};
use std::collections::BTreeMap;
use std::fmt::Write as _;

fn main() {
    let samples = load_samples(&corpus_dir(), &fixtures_dir());
    // `-- fit` measures the fit half instead (in-sample, for diagnosing the fit); the doc is
    // always written from the report half.
    let half = if std::env::args().nth(1).as_deref() == Some("fit") {
        Half::Fit
    } else {
        Half::Report
    };
    let report: Vec<&Sample> = samples
        .iter()
        .filter(|sample| sample.half == half)
        .collect();
    let fit_count = samples.len() - report.len();
    let bpe = tiktoken_rs::o200k_base().expect("o200k ranks are embedded in tiktoken-rs");
    let ctok = read_ctok_counts();

    let mut doc = String::new();
    doc.push_str(INTRO);
    let _ = writeln!(
        doc,
        "Samples: {} in all, {} in the fit half, {} in the report half (every table below).\n",
        samples.len(),
        fit_count,
        report.len()
    );

    // OpenAI family against o200k.
    doc.push_str(OPENAI_HEAD);
    let mut openai_rows = Vec::new();
    for (class, description) in CLASSES {
        let rows: Vec<(&Sample, f64)> = report
            .iter()
            .filter(|sample| sample.class == *class)
            .map(|sample| (*sample, bpe.encode_ordinary(&sample.text).len() as f64))
            .collect();
        if rows.is_empty() {
            continue;
        }
        let bytes: usize = rows.iter().map(|(sample, _)| sample.text.len()).sum();
        let ours = stats(&rows, |text| {
            estimate_text(text, ModelFamily::OpenAi) as f64
        });
        let chars = stats(&rows, chars4);
        let bytes4 = stats(&rows, |text| (text.len() / 4) as f64);
        let _ = writeln!(
            doc,
            "| {description} | {} | {} | **{}** | {} | {:.2} | {} / {:.2} | {} / {:.2} |",
            ours.count,
            kilobytes(bytes),
            percent(ours.median_abs_error),
            percent(ours.p90_abs_error),
            ours.median_ratio,
            percent(chars.median_abs_error),
            chars.median_ratio,
            percent(bytes4.median_abs_error),
            bytes4.median_ratio,
        );
        openai_rows.push((class, ours));
    }
    let worst = openai_rows
        .iter()
        .map(|(_, stats)| stats.median_abs_error)
        .fold(0.0, f64::max);
    let _ = writeln!(
        doc,
        "\nWorst class median absolute error: {}.\n",
        percent(worst)
    );

    // Claude families against ctok.
    doc.push_str(CLAUDE_CLASS_HEAD);
    for (class, description) in CLASSES {
        let rows: Vec<(&Sample, (u64, u64))> = report
            .iter()
            .filter(|sample| sample.class == *class)
            .filter_map(|sample| {
                Some((
                    *sample,
                    *ctok.get(&format!("{:016x}", fnv1a64(&sample.text)))?,
                ))
            })
            .collect();
        if rows.is_empty() {
            continue;
        }
        let v3: Vec<(&Sample, f64)> = rows
            .iter()
            .map(|(sample, counts)| (*sample, counts.0 as f64))
            .collect();
        let v47: Vec<(&Sample, f64)> = rows
            .iter()
            .map(|(sample, counts)| (*sample, counts.1 as f64))
            .collect();
        let claude = stats(&v3, |text| estimate_text(text, ModelFamily::Claude) as f64);
        let claude47 = stats(&v47, |text| {
            estimate_text(text, ModelFamily::Claude47) as f64
        });
        let chars = stats(&v3, chars4);
        let chars47 = stats(&v47, chars4);
        let _ = writeln!(
            doc,
            "| {description} | {} | **{}** | {} | {:.2} | **{}** | {} | {:.2} | {:.2} / {:.2} |",
            claude.count,
            percent(claude.median_abs_error),
            percent(claude.p90_abs_error),
            claude.median_ratio,
            percent(claude47.median_abs_error),
            percent(claude47.p90_abs_error),
            claude47.median_ratio,
            chars.median_ratio,
            chars47.median_ratio,
        );
    }
    doc.push('\n');

    // Real Claude usage intervals.
    let intervals = claude_intervals(&corpus_dir());
    let measurable: Vec<_> = intervals
        .iter()
        .filter(|interval| interval.is_measurable())
        .collect();
    let real_total: u64 = measurable.iter().map(|interval| interval.real_tokens).sum();
    let mut models: BTreeMap<&str, usize> = BTreeMap::new();
    for interval in &measurable {
        *models.entry(interval.model.as_str()).or_insert(0) += 1;
    }
    let model_list: Vec<String> = models
        .iter()
        .map(|(model, count)| format!("{model} ({count})"))
        .collect();
    let _ = writeln!(
        doc,
        "{DELTA_HEAD}{} of {} intervals pass the filter ({} tokens of real growth;\nmodels: {}).\n",
        measurable.len(),
        intervals.len(),
        real_total,
        model_list.join(", ")
    );
    doc.push_str("| estimator | p10 | median | p90 | within ±10% |\n|---|---|---|---|---|\n");
    for (name, ratios) in INTERVAL_ESTIMATORS.iter().zip(interval_ratios(&intervals)) {
        let within = ratios
            .iter()
            .filter(|ratio| (*ratio - 1.0).abs() <= 0.10)
            .count();
        let _ = writeln!(
            doc,
            "| {name} | {:.2} | **{:.2}** | {:.2} | {within}/{} |",
            quantile(&ratios, 0.1),
            quantile(&ratios, 0.5),
            quantile(&ratios, 0.9),
            ratios.len()
        );
    }
    doc.push_str(DELTA_NOTES);

    doc.push_str(&stress_section(&bpe));

    // Throughput.
    doc.push_str(&throughput_section());
    doc.push_str(CAVEATS);

    if half == Half::Fit {
        eprintln!("{doc}");
        return;
    }
    let path = project_root().join("docs/reports/estimator.md");
    std::fs::create_dir_all(path.parent().expect("docs folder")).expect("create docs/");
    std::fs::write(&path, &doc).expect("write docs/reports/estimator.md");
    eprintln!("{doc}\nwrote {}", path.display());
}

fn stats(rows: &[(&Sample, f64)], estimate: impl Fn(&str) -> f64) -> ErrorStats {
    let pairs: Vec<(f64, f64)> = rows
        .iter()
        .map(|(sample, real)| (estimate(&sample.text), *real))
        .collect();
    error_stats(&pairs)
}

fn percent(value: f64) -> String {
    format!("{:.1}%", value * 100.0)
}

fn kilobytes(bytes: usize) -> String {
    format!("{:.0} KB", bytes as f64 / 1000.0)
}

fn read_ctok_counts() -> BTreeMap<String, (u64, u64)> {
    let text = std::fs::read_to_string(fixtures_dir().join("estimator/ctok_counts.json"))
        .unwrap_or_else(|_| "{}".into());
    let value: serde_json::Value = serde_json::from_str(&text).expect("ctok_counts.json is JSON");
    value
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(key, counts)| Some((key.clone(), (counts[0].as_u64()?, counts[1].as_u64()?))))
        .collect()
}

/// Synthetic inputs outside the fitted classes, to show where a byte-pair model breaks.
fn stress_section(bpe: &tiktoken_rs::CoreBPE) -> String {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut random = move |below: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % below
    };
    let mut pick = |alphabet: &[u8], length: usize| -> String {
        (0..length)
            .map(|_| char::from(alphabet[random(alphabet.len() as u64) as usize]))
            .collect()
    };
    let base64 = pick(
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
        4000,
    );
    let hex = pick(b"0123456789abcdef", 4000);
    let digits = pick(b"0123456789", 4000);
    let cases: Vec<(&str, String)> = vec![
        ("random base64, 4,000 chars", base64),
        ("random hex, 4,000 chars", hex),
        ("random digits, 4,000", digits),
        ("`=` × 80 per line, 50 lines", format!("{}\n", "=".repeat(80)).repeat(50)),
        ("4,000 spaces", " ".repeat(4000)),
        ("dense emoji", "😀👍🏽🎉🚀❤️🔥✅".repeat(100)),
        ("minified JavaScript", "function(e,t){var n=e.length,r=0;for(;r<n;r++){if(t(e[r],r)===!1)break}return e}".repeat(40)),
        ("file tree with box drawing", "│ ├── src/\n│ │   ├── lib.rs\n│ │   └── main.rs\n".repeat(60)),
        ("CSV rows", "2024-01-15,42.17,1337,ACME Corp,true\n".repeat(100)),
        ("log lines", "2026-02-12T16:02:27.718Z INFO  server: request id=7f3a2 path=/api/v1/items status=200 dur=12ms\n".repeat(40)),
    ];
    let mut out = String::from(STRESS_HEAD);
    for (name, text) in cases {
        let real = bpe.encode_ordinary(&text).len() as f64;
        let ours = estimate_text(&text, ModelFamily::OpenAi) as f64;
        let _ = writeln!(
            out,
            "| {name} | {} | {real} | {ours} | **{:.2}** | {:.2} |",
            text.len(),
            ours / real,
            chars4(&text) / real
        );
    }
    out.push('\n');
    out
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|line| line.starts_with("model name"))
                .and_then(|line| line.split_once(':'))
                .map(|(_, name)| name.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

fn throughput_section() -> String {
    let mut out = String::from(THROUGHPUT_HEAD);
    let _ = writeln!(
        out,
        "Machine: {} (one core; the machine has {} logical CPUs, shared).\n",
        cpu_model(),
        num_cpus()
    );
    out.push_str("| input | throughput (10⁹ bytes/s) |\n|---|---|\n");
    let folder = project_root().join("target/criterion/estimator");
    let mut found = false;
    for (name, label) in [
        ("ascii_english", "ASCII English prose, `estimate_text`"),
        (
            "mixed_code",
            "mixed code, JSON and line-numbered tool output",
        ),
        ("cjk", "CJK (Chinese and Japanese)"),
        (
            "messages",
            "`estimate_messages`: 1,024 messages (tool calls, 1 KiB results)",
        ),
    ] {
        let read = |file: &str| {
            std::fs::read_to_string(folder.join(name).join("new").join(file))
                .ok()
                .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        };
        // Criterion's headline time is the slope of its linear sampling, else the mean.
        let time_ns = read("estimates.json").and_then(|value| {
            value["slope"]["point_estimate"]
                .as_f64()
                .or(value["mean"]["point_estimate"].as_f64())
        });
        let bytes = read("benchmark.json").and_then(|value| value["throughput"]["Bytes"].as_f64());
        if let (Some(time_ns), Some(bytes)) = (time_ns, bytes) {
            found = true;
            let _ = writeln!(out, "| {label} | **{:.2} GB/s** |", bytes / time_ns);
        }
    }
    if !found {
        out.push_str("| (no criterion results found: run the bench, then this program) | |\n");
    }
    out.push('\n');
    out
}

fn num_cpus() -> usize {
    std::thread::available_parallelism()
        .map(usize::from)
        .unwrap_or(1)
}

const INTRO: &str = "# Token estimation: method and measured accuracy

<!-- Generated by `cargo run --release -p ctxkit-tests --example estimator_report` (run
`cargo bench -p ctxkit-core --bench estimator` first for the throughput table). Do not edit by
hand: change the program or the estimator and regenerate. -->

> A generated report: `cargo bench -p ctxkit-core --bench estimator` then
> `cargo run --release -p ctxkit-tests --example estimator_report` write it.

ctxkit-core offers two estimators (`ctxkit_core::tokens`):

- **bytes / 4** (`bytes4_message`, `bytes4_messages`): the reference design's rule, for
  compatibility and golden tests. It counts the bytes of text, thinking text, opaque blocks'
  JSON, tool call ids, names and arguments and `tool_call_id`; images count nothing;
  `bytes4_messages` divides the total once.
- **the default** (`estimate_text`, `estimate_message`, `estimate_messages`,
  `estimate_tool_schemas`, `estimate_image`), per `ModelFamily` (`openai` = o200k;
  `claude` = Claude 3 … Opus 4.6; `claude-4.7` = Opus 4.7+).

## Method

Every byte falls in one of 32 classes: lowercase, uppercase, digit, space, newline, other
control, quote, opening and closing bracket, sentence end (`.!?`), comma, colon (`:;`), dash,
equals, underscore, slash, backslash, markup (`#*`), other symbol; for non-ASCII text, the lead
byte by script (2-byte leads `C0`–`CD`: accented Latin; `CE`–`CF`: Greek; `D0`–`D7`: Cyrillic,
Hebrew; `D8`–`DF`: Arabic; 3-byte leads `E0`: Indic, Thai; `E1`: Vietnamese and other extended
letters; `E2`: punctuation, arrows, box drawing; `E3`: kana; `E4`–`E9`: Han; `EA`–`ED`: Hangul;
`EE`–`EF`: full-width forms, private use; 4-byte leads: emoji) and the continuation byte.
The estimate of a text is the sum over its bytes of `cost[class of previous byte][class of this
byte]` (fixed point, 1/4096 token), rounded, at least 1 for non-empty text: one branch-free pass
with two table loads per byte. A byte pair sees what makes BPE tokenizers cut: word starts after
spaces, case changes, digit runs (grouped by three), punctuation runs, and the cost of each
script's characters.

One 32×32 table per family is fitted by non-negative least squares on relative error
(features: each sample's pair counts divided by its real token count; target 1), in two stages:
one cost per byte class first, then the pair costs with a ridge pulling each pair towards its
class's cost, so rare pairs fall back to the class's price. The ridge strength is picked by
two-fold cross-validation inside the fit half. Each content class weighs the same, except
German, French and Spanish (0.3): they share every ASCII pair with English and code but
tokenize differently, and agent traffic comes first. Every pair costs between 1/64 and 8
tokens, so appending text never lowers an estimate and no run of a byte is free. The fit is
`cargo run --release -p ctxkit-tests --example estimator_fit`, which writes
`core/src/tokens/cost_tables.rs` (the program's doc comment lists the steps, including
refreshing the ctok cache). Ground truth:

- OpenAI: exact `o200k_base` counts from the `tiktoken-rs` crate (`encode_ordinary`, content
  only).
- Claude: no official offline tokenizer exists; the tables are fitted to **ctok** 1.3.0 (PyPI,
  MIT), an unofficial offline reconstruction of Claude's token counts that its author reports
  exact on held-out `count_tokens` measurements, for both the v3 (Claude 3 … Opus 4.6) and v4.7
  vocabularies (content tokens: ctok's single-message frame subtracted). The counts are cached in
  `tests/fixtures/estimator/ctok_counts.json` by `scripts/ctok_counts.py`. The estimator is then
  checked against **real** Claude usage from a Claude Code session (last table but one), which
  ctok played no part in.

Samples: the content classes of `shared/corpus/FORMATS.md` that the corpus supplies, cut into
pieces of 2–8 KB (smaller when the source document is smaller, at least 128 bytes), plus original
paragraphs written for this project in German, French, Spanish, Vietnamese, Greek, Russian,
Arabic, Hindi, Thai, Chinese, Japanese and Korean, and English chat with emoji
(`tests/fixtures/estimator/`; the corpus has almost no text in other scripts). Every sample
belongs to a source document (a tau-bench task with all its trials, a group of consecutive
Claude Code blocks or log lines of about 2 KB, one observation, one fixture paragraph), and
documents are split in two halves by a hash of their key:
**the tables are fitted on one half and every figure below is measured on the other half.**
For the Claude families only up to 150 samples per class and half were counted by ctok.

Framing (`estimate_message`): per message 4 tokens for OpenAI (the cookbook's 3 plus the role),
plus 6 per tool call and 2 per tool result; for Claude 4 per message, 10 per tool call, 6 per tool
result. Ids, names and arguments are priced as text. Images: OpenAI 85 (`detail: low`) or
85 + 170 per 512-px tile after scaling to 2048 and a 768-px short side; Claude `w·h/750` after
scaling the long edge to 1568, capped at 1600. Dimensions are sniffed from PNG/GIF/JPEG headers in
base64 data; unknown sizes cost 765 (OpenAI) or 1600 (Claude). `estimate_messages` is the sum of
`estimate_message` (additive, for caching); per-request costs are separate:
`request_overhead` (reply priming) and `estimate_tool_schemas` (each definition's JSON text + 8
(OpenAI) or 10 (Claude) per tool + 12 (OpenAI) or 346 (Claude's tool-use system prompt) once).

";

const OPENAI_HEAD: &str = "## OpenAI family vs exact o200k counts (report half)

Error = |estimate ÷ real − 1| per sample, text content only (no message framing).
chars/4 and bytes/4 columns: median absolute error / median ratio.

| content class | samples | size | median abs error | p90 abs error | median ratio | chars/4 | bytes/4 |
|---|---|---|---|---|---|---|---|
";

const CLAUDE_CLASS_HEAD: &str = "## Claude families vs reconstructed counts (ctok, report half)

| content class | samples | claude: median abs error | p90 | median ratio | claude-4.7: median abs error | p90 | median ratio | chars/4 ratio (v3 / 4.7) |
|---|---|---|---|---|---|---|---|---|
";

const DELTA_HEAD: &str = "## Claude family vs real Claude usage

The corpus's Claude Code session (`claude-code_marot-spotter/4d5611e5-….jsonl`, Opus 4.6) and its
sub-agent (`agent-a2898e3.jsonl`, Sonnet 4.5) log the real prompt size of every API call
(`input_tokens + cache_creation_input_tokens + cache_read_input_tokens`, once per `message.id`).
The growth between consecutive calls is the real count of what was appended: the previous
assistant turn (text and tool_use blocks) and the tool results and user text after it. As in
FORMATS.md, only intervals with no thinking block, at least 4,000 characters of tool result and a
positive growth are kept; intervals across a compaction are skipped. The estimate is
`estimate_messages` over the appended messages (framing included). Ratio = estimate ÷ real growth.

";

const DELTA_NOTES: &str = "
The `claude-4.7` row is a consistency check, not an error: these calls went to Opus 4.6 and
Sonnet 4.5, and Opus 4.7's tokenizer needs 1.2–1.45× more tokens on code and Latin text, so its
estimate should sit about that much above the real growth. The `openai` row shows how far o200k
counts are from Claude's on agent traffic (FORMATS.md measured 0.83 with tiktoken itself).
The low tail comes from intervals where Claude Code added text the transcript does not hold
(system reminders, file-change notices), so medians are the meaningful figures. FORMATS.md found
chars/4 at a median of 0.70 on 66 such intervals from five sessions of the same project.

";

const STRESS_HEAD: &str = "## Stress cases (synthetic, not in any fitted class)

Where a byte-pair model is weakest, OpenAI family vs o200k (ratio = estimate ÷ real). Random
identifiers and base64 cost more than their letter pairs suggest; long runs of one symbol merge
into few tokens, which pairs cannot see; the floor of 1/64 token per byte keeps runs from being
free.

| input | bytes | o200k | estimate | ratio | chars/4 ratio |
|---|---|---|---|---|---|
";

const THROUGHPUT_HEAD: &str = "## Throughput

`cargo bench -p ctxkit-core --bench estimator` (criterion; inputs of 1 MiB; one thread; the
workspace bench profile). The machine is shared with other jobs, so these are lower bounds.

";

const CAVEATS: &str = "## Caveats

- Out of sample means unseen documents of the same sources: the report half shares sources and
  kinds of content with the fit half. New kinds of content can be further off; the stress
  table shows the worst known cases (random base64, long runs of one symbol).
- The Claude tables rest on ctok's reconstruction; the only real Claude check here is the usage
  table (agent tool traffic of one project, 21 intervals). Anthropic's tokenizer may change
  with new models.
- The fixture languages are small original texts (a few KB each, 3–11 report samples per
  language), so their figures are noisier than the corpus classes'.
- Framing and tool-schema constants are published rules of thumb and estimates, not fitted per
  model. When the API reports real usage, calibrate instead: the real count of the last request
  plus the estimate of what was appended since.
";
