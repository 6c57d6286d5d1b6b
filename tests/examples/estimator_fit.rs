//! Fits the default estimator's pair-cost tables and writes `core/src/tokens/cost_tables.rs`.
//!
//! ```text
//! cargo run --release -p ctxkit-tests --example estimator_fit -- dump   # samples for ctok
//! python3 scripts/ctok_counts.py target/estimator/samples.jsonl tests/fixtures/estimator/ctok_counts.json
//! cargo run --release -p ctxkit-tests --example estimator_fit           # fit, write the tables
//! ```
//!
//! Ground truth: o200k counts from tiktoken-rs for OpenAI; for the Claude families the counts
//! cached in `tests/fixtures/estimator/ctok_counts.json` (ctok, an offline reconstruction of
//! Claude's tokenizer, content tokens only). Only the [`Half::Fit`] samples are read. The fit is
//! a non-negative least squares on relative error (each sample's pair counts divided by its real
//! count, target 1), each content class weighted equally, with a small ridge pulling every cost
//! towards a prior so pairs the corpus never shows keep a sensible price.

use ctxkit_core::tokens::{class_pair_counts, ByteClass, ModelFamily, CLASS_COUNT, COST_SCALE};
use ctxkit_tests::estimator_corpus::{fnv1a64, load_samples, Half, Sample};
use ctxkit_tests::{corpus_dir, fixtures_dir, project_root};
use std::collections::BTreeMap;
use std::fmt::Write as _;

const PAIRS: usize = CLASS_COUNT * CLASS_COUNT;
/// Samples per class and half sent to ctok (it is slow, and the cache is checked in).
const CTOK_SAMPLES_PER_CLASS: usize = 150;
const RIDGE: f64 = 2e-4;

fn main() {
    let samples = load_samples(&corpus_dir(), &fixtures_dir());
    if std::env::args().nth(1).as_deref() == Some("dump") {
        dump(&samples);
        return;
    }
    let claude = read_ctok_counts();
    let bpe = tiktoken_rs::o200k_base().expect("o200k ranks are embedded in tiktoken-rs");
    let fit: Vec<&Sample> = samples
        .iter()
        .filter(|sample| sample.half == Half::Fit)
        .collect();
    let mut source = String::new();
    source.push_str(HEADER);
    for family in ModelFamily::ALL {
        let truth: Vec<(&Sample, f64)> = fit
            .iter()
            .filter_map(|sample| {
                let real = match family {
                    ModelFamily::OpenAi => Some(bpe.encode_ordinary(&sample.text).len() as f64),
                    ModelFamily::Claude => {
                        claude.get(&key(&sample.text)).map(|counts| counts.0 as f64)
                    }
                    ModelFamily::Claude47 => {
                        claude.get(&key(&sample.text)).map(|counts| counts.1 as f64)
                    }
                }?;
                (real > 0.0).then_some((*sample, real))
            })
            .collect();
        eprintln!("{}: fitting on {} samples", family.as_str(), truth.len());
        let costs = fit_costs(&truth);
        write_table(&mut source, family, &costs);
    }
    let path = project_root().join("core/src/tokens/cost_tables.rs");
    // One newline at the end, as rustfmt leaves it.
    let source = format!("{}\n", source.trim_end());
    std::fs::write(&path, source).expect("write cost_tables.rs");
    eprintln!("wrote {}", path.display());
}

/// The cache key of a sample: FNV-1a 64 of its text, in hex.
fn key(text: &str) -> String {
    format!("{:016x}", fnv1a64(text))
}

/// The samples ctok should count: up to [`CTOK_SAMPLES_PER_CLASS`] per class and half.
fn ctok_subset(samples: &[Sample]) -> Vec<&Sample> {
    let mut taken: BTreeMap<(&str, Half), usize> = BTreeMap::new();
    samples
        .iter()
        .filter(|sample| {
            let count = taken.entry((sample.class, sample.half)).or_insert(0);
            *count += 1;
            *count <= CTOK_SAMPLES_PER_CLASS
        })
        .collect()
}

fn dump(samples: &[Sample]) {
    let folder = project_root().join("target/estimator");
    std::fs::create_dir_all(&folder).expect("create target/estimator");
    let mut out = String::new();
    for sample in ctok_subset(samples) {
        let line = serde_json::json!({"key": key(&sample.text), "class": sample.class, "text": sample.text});
        out.push_str(&line.to_string());
        out.push('\n');
    }
    let path = folder.join("samples.jsonl");
    std::fs::write(&path, out).expect("write samples.jsonl");
    eprintln!("wrote {}", path.display());
}

/// `key -> (Claude v3 content tokens, Claude 4.7 content tokens)`.
pub fn read_ctok_counts() -> BTreeMap<String, (u64, u64)> {
    let path = fixtures_dir().join("estimator/ctok_counts.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|_| "{}".into());
    let value: serde_json::Value = serde_json::from_str(&text).expect("ctok_counts.json is JSON");
    value
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(key, counts)| Some((key.clone(), (counts[0].as_u64()?, counts[1].as_u64()?))))
        .collect()
}

/// A prior cost per pair, in tokens: what the pair's second byte usually costs.
fn prior(next: ByteClass) -> f64 {
    match next {
        ByteClass::Continuation => 0.3,
        ByteClass::LeadKana
        | ByteClass::LeadHan
        | ByteClass::LeadHangul
        | ByteClass::Lead3Other => 0.5,
        ByteClass::Lead4 => 0.6,
        ByteClass::Lead2Latin | ByteClass::Lead2Other | ByteClass::LeadSymbol3 => 0.5,
        _ => 0.25,
    }
}

/// Non-negative ridge least squares by projected coordinate descent on the normal equations.
fn fit_costs(truth: &[(&Sample, f64)]) -> Vec<f64> {
    let mut per_class: BTreeMap<&str, usize> = BTreeMap::new();
    for (sample, _) in truth {
        *per_class.entry(sample.class).or_insert(0) += 1;
    }
    let mut gram = vec![0.0f64; PAIRS * PAIRS];
    let mut rhs = vec![0.0f64; PAIRS];
    for (sample, real) in truth {
        let weight = 1.0 / per_class[sample.class] as f64;
        let features: Vec<(usize, f64)> = class_pair_counts(&sample.text)
            .into_iter()
            .enumerate()
            .filter(|(_, count)| *count > 0)
            .map(|(index, count)| (index, count as f64 / real))
            .collect();
        for &(i, xi) in &features {
            rhs[i] += weight * xi;
            for &(j, xj) in &features {
                gram[i * PAIRS + j] += weight * xi * xj;
            }
        }
    }
    let priors: Vec<f64> = (0..PAIRS)
        .map(|index| prior(ByteClass::ALL[index % CLASS_COUNT]))
        .collect();
    for index in 0..PAIRS {
        gram[index * PAIRS + index] += RIDGE;
        rhs[index] += RIDGE * priors[index];
    }
    let mut costs = priors.clone();
    for _sweep in 0..3000 {
        let mut change = 0.0f64;
        for i in 0..PAIRS {
            let row = &gram[i * PAIRS..(i + 1) * PAIRS];
            let residual: f64 = row.iter().zip(&costs).map(|(g, c)| g * c).sum::<f64>() - rhs[i];
            let updated = (costs[i] - residual / row[i]).clamp(0.0, 8.0);
            change = change.max((updated - costs[i]).abs());
            costs[i] = updated;
        }
        if change < 1e-9 {
            break;
        }
    }
    costs
}

fn write_table(source: &mut String, family: ModelFamily, costs: &[f64]) {
    let (name, doc) = match family {
        ModelFamily::OpenAi => (
            "OPENAI",
            "OpenAI, fitted to o200k_base counts (tiktoken-rs).",
        ),
        ModelFamily::Claude => ("CLAUDE", "Claude 3 to Opus 4.6, fitted to ctok v3 counts."),
        ModelFamily::Claude47 => ("CLAUDE_47", "Claude Opus 4.7+, fitted to ctok v4.7 counts."),
    };
    let _ = writeln!(
        source,
        "/// {doc}\n#[rustfmt::skip]\npub(crate) const {name}: FittedCosts = ["
    );
    let _ = write!(source, "    //");
    for class in ByteClass::ALL {
        let _ = write!(source, " {:>5}", short_name(class));
    }
    let _ = writeln!(source);
    for prev in ByteClass::ALL {
        let _ = write!(source, "    [");
        for next in ByteClass::ALL {
            let cost = costs[prev.index() * CLASS_COUNT + next.index()];
            let fixed = (cost * COST_SCALE as f64)
                .round()
                .clamp(0.0, f64::from(u16::MAX)) as u16;
            let _ = write!(source, "{fixed:>5},");
        }
        let _ = writeln!(source, "], // after {}", prev.name());
    }
    let _ = writeln!(source, "];\n");
}

/// A unique name of at most five characters, for the column header.
fn short_name(class: ByteClass) -> &'static str {
    match class {
        ByteClass::Lower => "lower",
        ByteClass::Upper => "upper",
        ByteClass::Digit => "digit",
        ByteClass::Space => "space",
        ByteClass::Newline => "nl",
        ByteClass::Control => "ctrl",
        ByteClass::Quote => "quote",
        ByteClass::Open => "open",
        ByteClass::Close => "close",
        ByteClass::Separator => "sep",
        ByteClass::Symbol => "sym",
        ByteClass::Lead2Latin => "l2lat",
        ByteClass::Lead2Other => "l2oth",
        ByteClass::LeadKana => "kana",
        ByteClass::LeadHan => "han",
        ByteClass::LeadHangul => "hangl",
        ByteClass::LeadSymbol3 => "l3sym",
        ByteClass::Lead3Other => "l3oth",
        ByteClass::Lead4 => "lead4",
        ByteClass::Continuation => "cont",
    }
}

const HEADER: &str = "//! Fitted pair-cost tables of the default estimator, one per model family.
//!
//! @generated by `cargo run --release -p ctxkit-tests --example estimator_fit` (see
//! docs/estimator.md for the method); do not edit by hand. Row: the class of the previous
//! byte; column: the class of this byte; value: tokens × 4096 (see `text::COST_SCALE`).
//!
//! Guarantees: every value is non-negative and below 8 tokens, so appending text never lowers
//! an estimate.

use super::text::FittedCosts;

";
