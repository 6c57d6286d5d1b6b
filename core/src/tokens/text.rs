//! The default text estimator: one pass over the bytes, pricing each pair of neighbouring byte
//! classes.
//!
//! A BPE tokenizer cuts text at places a byte-pair model can see: a word starts after a space,
//! digits go in groups of three, punctuation runs split off, CJK costs about a token per
//! character and Hangul or emoji more. So the estimate is the sum, over the bytes of the text,
//! of `cost[class of the previous byte][class of this byte]`, in fixed point (1/4096 token).
//! One table per [`ModelFamily`], fitted by least squares against real counts (o200k for
//! OpenAI, reconstructed Claude counts for the Claude families) on a corpus of agent traffic
//! and prose in several scripts; `docs/reports/estimator.md` has the method and the measured error.
//!
//! Guarantees: never panics, on any string; O(n) with no allocation and no data-dependent
//! branch in the loop (over 1 GB/s on ASCII on one core, see the estimator bench); the
//! estimate of a non-empty text is at least 1 and the empty text costs 0; appending text never
//! lowers the estimate (every pair costs at least 1/64 token).

use super::byte_class::{CLASS_COUNT, CLASS_OF, START_CLASS};
use super::cost_tables::{CLAUDE, CLAUDE_47, OPENAI};
use super::family::ModelFamily;

/// Fixed-point scale of the cost tables: a cost of `COST_SCALE` is one token.
pub const COST_SCALE: u64 = 1 << 12;

/// Row stride of the widened table: a power of two, so `(prev << 5 | next) & MASK` stays in
/// bounds by construction and the compiler drops the bounds check from the hot loop.
const STRIDE_BITS: usize = 5;
const STRIDE: usize = 1 << STRIDE_BITS;
const MASK: usize = STRIDE * STRIDE - 1;
const _: () = assert!(
    CLASS_COUNT <= STRIDE,
    "the byte classes must fit the table stride"
);

/// A fitted table: `cost[prev][next]` in 1/[`COST_SCALE`] tokens.
pub(crate) type FittedCosts = [[u16; CLASS_COUNT]; CLASS_COUNT];

/// The same table laid out with a power-of-two stride for the hot loop.
type WideCosts = [u16; STRIDE * STRIDE];

// Only evaluated at compile time (the statics below): an index out of bounds there fails the
// build, it cannot panic at run time.
#[allow(clippy::indexing_slicing)]
const fn widen(costs: &FittedCosts) -> WideCosts {
    let mut wide = [0u16; STRIDE * STRIDE];
    let mut prev = 0;
    while prev < CLASS_COUNT {
        let mut next = 0;
        while next < CLASS_COUNT {
            wide[(prev << STRIDE_BITS) | next] = costs[prev][next];
            next += 1;
        }
        prev += 1;
    }
    wide
}

static OPENAI_WIDE: WideCosts = widen(&OPENAI);
static CLAUDE_WIDE: WideCosts = widen(&CLAUDE);
static CLAUDE_47_WIDE: WideCosts = widen(&CLAUDE_47);

fn wide_costs(family: ModelFamily) -> &'static WideCosts {
    match family {
        ModelFamily::OpenAi => &OPENAI_WIDE,
        ModelFamily::Claude => &CLAUDE_WIDE,
        ModelFamily::Claude47 => &CLAUDE_47_WIDE,
    }
}

/// Estimated tokens of `text` for `family`, as the tokenizer would count the text alone (no
/// message framing).
pub fn estimate_text(text: &str, family: ModelFamily) -> u64 {
    let units = text_cost_units(text, family);
    if text.is_empty() {
        0
    } else {
        (units.saturating_add(COST_SCALE / 2) / COST_SCALE).max(1)
    }
}

/// The unrounded estimate of `text` in 1/[`COST_SCALE`] tokens. Sums of these round better
/// than sums of [`estimate_text`] when a caller prices many small pieces.
pub fn text_cost_units(text: &str, family: ModelFamily) -> u64 {
    sum_pair_costs(text.as_bytes(), wide_costs(family))
}

// The hot loop. Bytes are taken eight at a time; each byte's class is loaded once and serves
// as `prev` of the next pair; four accumulators keep the adds independent. Every lookup index
// is masked into its table, so the compiler drops the bounds checks and the loop has no
// data-dependent branch. The sums cannot overflow: a pair costs under 2^15, so it would take
// 2^49 bytes of text.
fn sum_pair_costs(bytes: &[u8], costs: &WideCosts) -> u64 {
    let class_of = |byte: u8| usize::from(CLASS_OF.get(usize::from(byte)).copied().unwrap_or(0));
    let cost = |prev: usize, next: usize| {
        u64::from(
            costs
                .get(((prev << STRIDE_BITS) | next) & MASK)
                .copied()
                .unwrap_or(0),
        )
    };
    let mut prev = START_CLASS.index();
    let (mut sum0, mut sum1, mut sum2, mut sum3) = (0u64, 0u64, 0u64, 0u64);
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        if let [b0, b1, b2, b3, b4, b5, b6, b7] = *word {
            let (c0, c1, c2, c3) = (class_of(b0), class_of(b1), class_of(b2), class_of(b3));
            let (c4, c5, c6, c7) = (class_of(b4), class_of(b5), class_of(b6), class_of(b7));
            sum0 += cost(prev, c0) + cost(c3, c4);
            sum1 += cost(c0, c1) + cost(c4, c5);
            sum2 += cost(c1, c2) + cost(c5, c6);
            sum3 += cost(c2, c3) + cost(c6, c7);
            prev = c7;
        }
    }
    for &byte in words.remainder() {
        let next = class_of(byte);
        sum0 += cost(prev, next);
        prev = next;
    }
    sum0.saturating_add(sum1)
        .saturating_add(sum2)
        .saturating_add(sum3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_is_zero_and_non_empty_is_at_least_one() {
        for family in ModelFamily::ALL {
            assert_eq!(estimate_text("", family), 0);
            assert!(estimate_text("a", family) >= 1);
            assert!(estimate_text(" ", family) >= 1);
        }
    }

    #[test]
    fn loop_matches_the_pair_count_features() {
        // The unrolled loop must price exactly the pairs the fit counted, for every length
        // (so both the 8-byte words and the remainder are covered).
        let text = "Hello, 世界! x=1\n\tñ 😀 → {\"a\": [1, 2]} ok";
        for family in ModelFamily::ALL {
            let costs = match family {
                ModelFamily::OpenAi => &OPENAI,
                ModelFamily::Claude => &CLAUDE,
                ModelFamily::Claude47 => &CLAUDE_47,
            };
            let boundaries = (0..=text.len()).filter(|&end| text.is_char_boundary(end));
            for prefix in boundaries.map(|end| &text[..end]) {
                let counts = super::super::byte_class::class_pair_counts(prefix);
                let expected: u64 = counts
                    .iter()
                    .enumerate()
                    .map(|(index, count)| {
                        count * u64::from(costs[index / CLASS_COUNT][index % CLASS_COUNT])
                    })
                    .sum();
                assert_eq!(text_cost_units(prefix, family), expected, "{prefix:?}");
            }
        }
    }

    #[test]
    fn cjk_costs_more_per_byte_than_english() {
        for family in ModelFamily::ALL {
            let english = estimate_text(
                &"the quick brown fox jumps over the lazy dog ".repeat(20),
                family,
            );
            let chinese = estimate_text(&"我们今天在公园里散步，天气很好。".repeat(20), family);
            assert!(
                english > 0 && chinese > english,
                "{family:?}: {english} vs {chinese}"
            );
        }
    }
}
