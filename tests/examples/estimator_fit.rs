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
//! Claude's tokenizer, content tokens only). Only the [`Half::Fit`] samples are read.
//!
//! The fit is a non-negative least squares on relative error (features: each sample's pair
//! counts divided by its real count; target 1), each content class weighted equally, in two
//! stages: first one cost per byte class (whatever came before), then the pair costs with a
//! ridge pulling each pair towards its class's cost, so pairs the samples rarely show fall back
//! to the class's price. The ridge strength is chosen by two-fold cross-validation inside the
//! fit half (the lowest mean over classes of the held-out median absolute error).

use ctxkit_core::tokens::{class_pair_counts, ByteClass, ModelFamily, CLASS_COUNT, COST_SCALE};
use ctxkit_tests::estimator_corpus::{fnv1a64, load_samples, Half, Sample};
use ctxkit_tests::{corpus_dir, fixtures_dir, project_root};
use std::collections::BTreeMap;
use std::fmt::Write as _;

const PAIRS: usize = CLASS_COUNT * CLASS_COUNT;
/// Samples per class and half sent to ctok (it is slow, and the cache is checked in).
const CTOK_SAMPLES_PER_CLASS: usize = 150;
/// Latin-script fixture languages and their class weight (see [`class_weights`]).
const LATIN_FIXTURES: &[&str] = &["german", "french", "spanish"];
const LATIN_FIXTURE_WEIGHT: f64 = 0.3;
/// Every byte costs at least this (tokens), so no run of any byte is free; and at most this.
const MIN_COST: f64 = 1.0 / 64.0;
const MAX_COST: f64 = 8.0;
/// Ridge strengths tried by the cross-validation.
const RIDGES: &[f64] = &[1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2];

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
        let costs = fit_costs(&rows(&truth));
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

/// One sample as the fit sees it: its class, its fold, its sparse pair counts divided by its
/// real token count.
struct Row<'a> {
    class: &'a str,
    fold: bool,
    features: Vec<(usize, f64)>,
}

fn rows<'a>(truth: &[(&'a Sample, f64)]) -> Vec<Row<'a>> {
    truth
        .iter()
        .map(|(sample, real)| Row {
            class: sample.class,
            fold: fnv1a64(&sample.document) & 2 == 0,
            features: class_pair_counts(&sample.text)
                .into_iter()
                .enumerate()
                .filter(|(_, count)| *count > 0)
                .map(|(index, count)| (index, count as f64 / real))
                .collect(),
        })
        .collect()
}

/// The fitted pair costs (tokens) of the rows: stage one, then stage two at the ridge the
/// cross-validation picks.
fn fit_costs(rows: &[Row]) -> Vec<f64> {
    let all: Vec<&Row> = rows.iter().collect();
    let mut best = (f64::INFINITY, RIDGES[0]);
    for &ridge in RIDGES {
        let mut score = 0.0;
        for fold in [false, true] {
            let train: Vec<&Row> = rows.iter().filter(|row| row.fold != fold).collect();
            let test: Vec<&Row> = rows.iter().filter(|row| row.fold == fold).collect();
            score += held_out_error(&test, &fit_pairs(&train, ridge));
        }
        eprintln!(
            "  ridge {ridge:e}: cross-validated error {:.4}",
            score / 2.0
        );
        if score < best.0 {
            best = (score, ridge);
        }
    }
    eprintln!("  chosen ridge {:e}", best.1);
    fit_pairs(&all, best.1)
}

/// Mean over classes of the median absolute relative error of `costs` on `rows`.
fn held_out_error(rows: &[&Row], costs: &[f64]) -> f64 {
    let mut errors: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for row in rows {
        let ratio: f64 = row
            .features
            .iter()
            .map(|(index, x)| x * costs[*index])
            .sum();
        errors
            .entry(row.class)
            .or_default()
            .push((ratio - 1.0).abs());
    }
    let medians: Vec<f64> = errors
        .into_values()
        .map(|mut values| {
            values.sort_by(f64::total_cmp);
            values[values.len() / 2]
        })
        .collect();
    medians.iter().sum::<f64>() / medians.len().max(1) as f64
}

/// Stage one (one cost per class of the second byte) then stage two (pair costs pulled
/// towards stage one with strength `ridge`).
fn fit_pairs(rows: &[&Row], ridge: f64) -> Vec<f64> {
    let per_class = class_weights(rows);
    let collapse = |index: usize| index % CLASS_COUNT;
    let (gram, rhs) = normal_equations(rows, &per_class, CLASS_COUNT, collapse);
    let by_class = solve_non_negative(gram, rhs, 1e-6, &vec![0.25; CLASS_COUNT]);
    let prior: Vec<f64> = (0..PAIRS)
        .map(|index| by_class[index % CLASS_COUNT])
        .collect();
    let (gram, rhs) = normal_equations(rows, &per_class, PAIRS, |index| index);
    solve_non_negative(gram, rhs, ridge, &prior)
}

/// Each class weighs 1 in all, split over its samples, except the Latin-script European
/// fixture languages: they share every ASCII pair with English and code but tokenize
/// differently, so they weigh less and the agent-traffic classes lead those pairs.
fn class_weights<'a>(rows: &[&Row<'a>]) -> BTreeMap<&'a str, f64> {
    let mut counts: BTreeMap<&str, f64> = BTreeMap::new();
    for row in rows {
        *counts.entry(row.class).or_insert(0.0) += 1.0;
    }
    counts
        .into_iter()
        .map(|(class, count)| {
            let weight = if LATIN_FIXTURES.contains(&class) {
                LATIN_FIXTURE_WEIGHT
            } else {
                1.0
            };
            (class, weight / count)
        })
        .collect()
}

/// `AᵀWA` and `AᵀW1` of the rows, with features mapped to `dimension` columns by `column`.
fn normal_equations(
    rows: &[&Row],
    weights: &BTreeMap<&str, f64>,
    dimension: usize,
    column: impl Fn(usize) -> usize,
) -> (Vec<f64>, Vec<f64>) {
    let mut gram = vec![0.0f64; dimension * dimension];
    let mut rhs = vec![0.0f64; dimension];
    for row in rows {
        let weight = weights[row.class];
        let mut features: BTreeMap<usize, f64> = BTreeMap::new();
        for &(index, x) in &row.features {
            *features.entry(column(index)).or_insert(0.0) += x;
        }
        for (&i, &xi) in &features {
            rhs[i] += weight * xi;
            for (&j, &xj) in &features {
                gram[i * dimension + j] += weight * xi * xj;
            }
        }
    }
    (gram, rhs)
}

/// argmin over w ≥ 0 of |Aw − 1|²_W + ridge·|w − prior|², by projected coordinate descent on
/// the normal equations. Columns no sample touches stay at their prior.
fn solve_non_negative(
    mut gram: Vec<f64>,
    mut rhs: Vec<f64>,
    ridge: f64,
    prior: &[f64],
) -> Vec<f64> {
    let dimension = rhs.len();
    let active: Vec<usize> = (0..dimension)
        .filter(|&i| gram[i * dimension + i] > 0.0)
        .collect();
    for i in 0..dimension {
        gram[i * dimension + i] += ridge;
        rhs[i] += ridge * prior[i];
    }
    let mut costs: Vec<f64> = prior
        .iter()
        .map(|cost| cost.clamp(MIN_COST, MAX_COST))
        .collect();
    for _sweep in 0..5000 {
        let mut change = 0.0f64;
        for &i in &active {
            let row = &gram[i * dimension..(i + 1) * dimension];
            let residual: f64 = row.iter().zip(&costs).map(|(g, c)| g * c).sum::<f64>() - rhs[i];
            let updated = (costs[i] - residual / row[i]).clamp(MIN_COST, MAX_COST);
            change = change.max((updated - costs[i]).abs());
            costs[i] = updated;
        }
        if change < 1e-8 {
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
        let _ = write!(source, " {:>5}", class.short_name());
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

const HEADER: &str = "//! Fitted pair-cost tables of the default estimator, one per model family.
//!
//! @generated by `cargo run --release -p ctxkit-tests --example estimator_fit` (see
//! docs/reports/estimator.md for the method); do not edit by hand. Row: the class of the previous
//! byte; column: the class of this byte; value: tokens × 4096 (see `text::COST_SCALE`).
//!
//! Guarantees: every value is between 1/64 and 8 tokens (64 and 32768), so appending text never
//! lowers an estimate and no run of any byte is free.

use super::text::FittedCosts;

";
