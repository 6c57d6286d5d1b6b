//! A memory's importance given as text (`"7"`, `" 8.5 "`), rounded and clamped to 1..=10
//! exactly as `text.parse::<f64>()` followed by `round` and `clamp` gives it, without the
//! standard library's float parser.
//!
//! Why: the extraction answer's importance was the one float the core parsed from text, and
//! `str::parse::<f64>` links the standard library's correctly rounded parser with its table of
//! 128-bit powers of five into the npm package's .wasm: 12.4 KB of the gzipped module
//! (docs/performance.md, "Size"). The rounded and clamped value depends on the decimal only
//! through comparisons with ten exact numbers (below), which are made here on its digits.
//!
//! Guarantees: [`importance_of_text`] is `text.parse::<f64>().ok()` kept when finite, then
//! `round().clamp(1.0, 10.0) as i32`, for every text (the tests compare the two on crafted and
//! random texts); it never panics.
//!
//! The comparisons: the parsed double is the decimal rounded to the nearest double, ties to
//! the even one. So `round(parse(d)) > k` exactly when `parse(d) >= k + 0.5`, that is when `d`
//! is at least the midpoint between `k + 0.5` and the double below it (a midpoint rounds to
//! `k + 0.5`, whose last mantissa bit is 0). `parse(d)` is infinite exactly when `|d|` is at
//! least the midpoint between `f64::MAX` and 2^1024 (`f64::MAX` is odd, so the midpoint rounds
//! up).

/// The midpoints `k + 0.5 - ulp/2` for k = 1..=9, as `0.DIGITS × 10^1`: a decimal at least the
/// k-th rounds to at least `k + 1`.
const ROUNDS_UP: [&str; 9] = [
    "149999999999999988897769753748434595763683319091796875",
    "24999999999999997779553950749686919152736663818359375",
    "34999999999999997779553950749686919152736663818359375",
    "4499999999999999555910790149937383830547332763671875",
    "5499999999999999555910790149937383830547332763671875",
    "6499999999999999555910790149937383830547332763671875",
    "7499999999999999555910790149937383830547332763671875",
    "849999999999999911182158029987476766109466552734375",
    "949999999999999911182158029987476766109466552734375",
];

/// 2^1024 - 2^970 (the midpoint between `f64::MAX` and 2^1024) as `0.DIGITS × 10^309`.
const OVERFLOW: &str = "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792";

/// The importance `text` gives, as `parse::<f64>`, `round` and `clamp(1.0, 10.0)` give it;
/// `None` when `text` is not a finite number in Rust's float syntax (no surrounding space).
pub(super) fn importance_of_text(text: &str) -> Option<i32> {
    let (negative, unsigned) = match text.as_bytes().first() {
        Some(b'-') => (true, text.get(1..)?),
        Some(b'+') => (false, text.get(1..)?),
        _ => (false, text),
    };
    let decimal = Decimal::parse(unsigned)?;
    if decimal.at_least(OVERFLOW, 309) {
        return None;
    }
    if negative {
        return Some(1);
    }
    let above = ROUNDS_UP
        .iter()
        .take_while(|midpoint| decimal.at_least(midpoint, 1))
        .count();
    // At most 9, so the conversion cannot fail.
    Some(i32::try_from(above).unwrap_or(9) + 1)
}

/// A non-negative decimal `0.DIGITS × 10^exponent`, its digits without leading or trailing
/// zeros (none for zero).
struct Decimal {
    digits: Vec<u8>,
    exponent: i64,
}

impl Decimal {
    /// `Digit+ | Digit+ '.' Digit* | Digit* '.' Digit+`, then optionally `e` or `E`, a sign and
    /// `Digit+` (Rust's float syntax without its sign); `None` otherwise, and for `inf`,
    /// `infinity` and `nan`.
    fn parse(text: &str) -> Option<Decimal> {
        let (mantissa, exponent) = match text.find(['e', 'E']) {
            Some(at) => (text.get(..at)?, Some(text.get(at + 1..)?)),
            None => (text, None),
        };
        let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let all_digits = |part: &str| part.bytes().all(|byte| byte.is_ascii_digit());
        if whole.len() + fraction.len() == 0 || !all_digits(whole) || !all_digits(fraction) {
            return None;
        }
        let exponent = match exponent {
            Some(exponent) => parse_exponent(exponent)?,
            None => 0,
        };
        let digits: Vec<u8> = whole.bytes().chain(fraction.bytes()).collect();
        let leading = digits.iter().take_while(|digit| **digit == b'0').count();
        let significant = digits.get(leading..).unwrap_or_default();
        let trailing = significant
            .iter()
            .rev()
            .take_while(|digit| **digit == b'0')
            .count();
        let significant = significant
            .get(..significant.len() - trailing)
            .unwrap_or_default();
        let whole_len = i64::try_from(whole.len()).unwrap_or(i64::MAX);
        let leading = i64::try_from(leading).unwrap_or(i64::MAX);
        Some(Decimal {
            digits: significant.to_vec(),
            exponent: whole_len.saturating_sub(leading).saturating_add(exponent),
        })
    }

    /// Whether this decimal is at least `0.<digits> × 10^exponent` (digits without leading or
    /// trailing zeros, so a longer list of digits with the same prefix is the larger number).
    fn at_least(&self, digits: &str, exponent: i64) -> bool {
        if self.digits.is_empty() {
            return false;
        }
        if self.exponent != exponent {
            return self.exponent > exponent;
        }
        self.digits.as_slice() >= digits.as_bytes()
    }
}

/// An exponent: an optional sign and at least one digit, saturated far beyond any double's.
fn parse_exponent(text: &str) -> Option<i64> {
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, text.get(1..)?),
        Some(b'+') => (false, text.get(1..)?),
        _ => (false, text),
    };
    if digits.is_empty() || !digits.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    let value = digits.bytes().fold(0_i64, |value, digit| {
        value
            .saturating_mul(10)
            .saturating_add(i64::from(digit - b'0'))
            .min(1 << 40)
    });
    Some(if negative { -value } else { value })
}

#[cfg(test)]
mod tests;
