//! Accuracy regression test of the default token estimator, on the report half of the
//! estimator samples (never used by the fit): per content class, the OpenAI family against
//! exact o200k counts (tiktoken-rs) and the Claude families against cached ctok counts; and the
//! Claude family against real prompt growth in the corpus's Claude Code session.
//! docs/reports/estimator.md has the full figures; this test samples a few per class to stay fast.

use ctxkit_core::tokens::{estimate_text, ModelFamily};
use ctxkit_tests::claude_usage::claude_intervals;
use ctxkit_tests::estimator_corpus::{fnv1a64, load_samples, Half, Sample, CLASSES};
use ctxkit_tests::estimator_eval::{error_stats, interval_ratios, quantile, INTERVAL_ESTIMATORS};
use ctxkit_tests::{corpus_dir, fixtures_dir};
use std::collections::BTreeMap;

/// Samples per class checked against o200k (tiktoken-rs is slow-ish even optimized).
const SAMPLES_PER_CLASS: usize = 12;
const MAX_MEDIAN_ABS_ERROR: f64 = 0.10;

fn report_samples() -> Vec<Sample> {
    load_samples(&corpus_dir(), &fixtures_dir())
        .into_iter()
        .filter(|sample| sample.half == Half::Report)
        .collect()
}

fn by_class(samples: &[Sample]) -> BTreeMap<&'static str, Vec<&Sample>> {
    let mut classes: BTreeMap<&'static str, Vec<&Sample>> = BTreeMap::new();
    for sample in samples {
        classes.entry(sample.class).or_default().push(sample);
    }
    classes
}

#[test]
fn openai_family_is_within_ten_percent_of_o200k_per_class() {
    let samples = report_samples();
    let classes = by_class(&samples);
    let bpe = tiktoken_rs::o200k_base().expect("o200k ranks are embedded in tiktoken-rs");
    let mut failures = Vec::new();
    for (class, _) in CLASSES {
        let members = classes.get(class).map(Vec::as_slice).unwrap_or_default();
        assert!(
            members.len() >= 3,
            "class {class} has {} report samples: is the corpus at ../shared/corpus/raw?",
            members.len()
        );
        // Spread the picks over the class rather than taking its first documents.
        let step = (members.len() / SAMPLES_PER_CLASS).max(1);
        let pairs: Vec<(f64, f64)> = members
            .iter()
            .step_by(step)
            .take(SAMPLES_PER_CLASS)
            .map(|sample| {
                let real = bpe.encode_ordinary(&sample.text).len() as f64;
                (
                    estimate_text(&sample.text, ModelFamily::OpenAi) as f64,
                    real,
                )
            })
            .collect();
        let stats = error_stats(&pairs);
        if stats.median_abs_error > MAX_MEDIAN_ABS_ERROR {
            failures.push(format!(
                "{class}: median abs error {:.3} over {} samples",
                stats.median_abs_error, stats.count
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn claude_families_are_within_ten_percent_of_ctok_per_class() {
    let text = std::fs::read_to_string(fixtures_dir().join("estimator/ctok_counts.json"))
        .expect("ctok counts");
    let counts: BTreeMap<String, (u64, u64)> =
        serde_json::from_str(&text).expect("ctok counts JSON");
    let samples = report_samples();
    let mut failures = Vec::new();
    for (class, members) in by_class(&samples) {
        for family in [ModelFamily::Claude, ModelFamily::Claude47] {
            let pairs: Vec<(f64, f64)> = members
                .iter()
                .filter_map(|sample| {
                    let (v3, v47) = counts.get(&format!("{:016x}", fnv1a64(&sample.text)))?;
                    let real = if family == ModelFamily::Claude {
                        v3
                    } else {
                        v47
                    };
                    Some((estimate_text(&sample.text, family) as f64, *real as f64))
                })
                .collect();
            assert!(
                pairs.len() >= 3,
                "{class}: only {} samples have ctok counts: rerun scripts/ctok_counts.py",
                pairs.len()
            );
            let stats = error_stats(&pairs);
            if stats.median_abs_error > MAX_MEDIAN_ABS_ERROR {
                failures.push(format!(
                    "{class} {}: median abs error {:.3}",
                    family.as_str(),
                    stats.median_abs_error
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn claude_family_matches_real_prompt_growth() {
    let intervals = claude_intervals(&corpus_dir());
    let ratios = interval_ratios(&intervals);
    let claude = &ratios[0];
    assert_eq!(INTERVAL_ESTIMATORS[0], "ctxkit claude");
    assert!(
        claude.len() >= 15,
        "only {} measurable intervals",
        claude.len()
    );
    let median = quantile(claude, 0.5);
    assert!(
        (0.9..=1.1).contains(&median),
        "median estimate / real growth {median:.3}"
    );
    // And the reference rule is as far off as FORMATS.md measured, so the check has teeth.
    let chars4 = quantile(&ratios[3], 0.5);
    assert!(chars4 < 0.85, "chars/4 median {chars4:.3}");
}
