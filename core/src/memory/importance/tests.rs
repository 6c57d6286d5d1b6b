use super::*;

/// What the standard library's parser gives: the reference [`importance_of_text`] matches.
fn by_float_parser(text: &str) -> Option<i32> {
    text.parse::<f64>()
        .ok()
        .filter(|number| number.is_finite())
        .map(|number| number.round().clamp(1.0, 10.0) as i32)
}

fn check(text: &str) {
    assert_eq!(importance_of_text(text), by_float_parser(text), "{text:?}");
}

/// `0.<digits>e<exponent>`, and the decimals just below and just above it.
fn around(digits: &str, exponent: i64) -> [String; 3] {
    let (head, last) = digits.split_at(digits.len() - 1);
    let below = format!("{head}{}", char::from(last.as_bytes()[0] - 1));
    [
        format!("0.{digits}e{exponent}"),
        format!("0.{below}999999e{exponent}"),
        format!("0.{digits}000001e{exponent}"),
    ]
}

#[test]
fn crafted_texts_read_as_the_float_parser_reads_them() {
    for text in [
        "7",
        "8.5",
        "1.5",
        "2.5",
        "0",
        "-0",
        "+3",
        "-3",
        ".5",
        "5.",
        "1.",
        ".",
        "",
        "-",
        "+",
        "e5",
        "1e",
        "1e+2",
        "1E-2",
        "1e-",
        "0.000",
        "00012.50",
        "000",
        "9.5",
        "9.49999",
        "10",
        "11",
        "0.9999",
        "1.4999",
        "1e308",
        "1e309",
        "-1e309",
        "1.7976931348623157e308",
        "1e-400",
        "-1e-400",
        "inf",
        "-inf",
        "+infinity",
        "Infinity",
        "NaN",
        "nan",
        "-nan",
        "1_0",
        "0x10",
        " 5",
        "5 ",
        "1..2",
        "1.2.3",
        "1e2e3",
        "--5",
        "+-5",
        "5e-1",
        "45e-1",
        "1e99999999999999999999999",
        "1e-99999999999999999999",
        "0e999999999999999999999",
        "-0.0e-5",
        "\u{663}",
        "7\u{301}",
        "1,5",
        "１",
    ] {
        check(text);
    }
    for (k, midpoint) in ROUNDS_UP.iter().enumerate() {
        let [at, below, above] = around(midpoint, 1);
        // The midpoints are where the float parser's rounding moves (not a vacuous check).
        let k = k + 1;
        let k_i32 = i32::try_from(k).unwrap_or_default();
        assert_eq!(by_float_parser(&at), Some(k_i32 + 1), "{at}");
        assert_eq!(by_float_parser(&above), Some(k_i32 + 1), "{above}");
        assert_eq!(by_float_parser(&below), Some(k_i32.max(1)), "{below}");
        for text in [at, below, above] {
            check(&text);
        }
        for nines in 14..20 {
            check(&format!("{k}.{}", "4".to_owned() + &"9".repeat(nines)));
        }
        check(&format!("{k}.5"));
        check(&format!("-{k}.5"));
    }
    let [at, below, _] = around(OVERFLOW, 309);
    assert_eq!(by_float_parser(&at), None, "{at}");
    assert_eq!(by_float_parser(&below), Some(10), "{below}");
    for text in around(OVERFLOW, 309) {
        check(&text);
        check(&format!("-{text}"));
    }
    assert_eq!(importance_of_text(&format!("0.{OVERFLOW}e309")), None);
    assert_eq!(importance_of_text("9.5"), Some(10));
}

/// A deterministic sequence of numbers (the core has no randomness; nor do its tests).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, bound: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % bound
    }
}

#[test]
fn generated_texts_read_as_the_float_parser_reads_them() {
    let mut next = Lcg(35);
    let alphabet = b"0123456789.eE+-01234567890000";
    for _ in 0..100_000 {
        let length = next.below(24) + 1;
        let text: String = (0..length)
            .map(|_| char::from(alphabet[next.below(alphabet.len() as u64) as usize]))
            .collect();
        check(&text);
    }
    // Decimals near each k + 0.5, where the rounding to a double decides.
    for _ in 0..100_000 {
        let k = next.below(12);
        let nines = next.below(20);
        let tail: String = (0..next.below(6))
            .map(|_| char::from(b'0' + next.below(10) as u8))
            .collect();
        check(&format!("{k}.4{}{tail}", "9".repeat(nines as usize)));
        check(&format!("{k}.5{}{tail}", "0".repeat(nines as usize)));
    }
}
