//! The history tools' integer arguments given as text (`"12"`, `"-3"`) read and shown as
//! `str::parse::<i128>` and `i128`'s `Display` do, without their 128-bit multiplication and
//! division.
//!
//! Why: those were the only 128-bit integer parsing and printing in the core, and they linked
//! the standard library's `u128` printing and the 128-bit division and overflow-checked
//! multiplication routines into the npm package's .wasm (docs/performance.md, "Size"). Here a
//! number is built with shifts and additions and printed in 32-bit pieces.
//!
//! Guarantees: [`parse_i128`] is `text.parse::<i128>().ok()` and [`show_i128`] is
//! `value.to_string()`, for every input (the tests compare them); neither panics.

/// `text` as an `i128`, as `text.parse::<i128>().ok()` reads it: an optional `+` or `-` and
/// ASCII digits, `None` when empty, not digits or out of range.
pub(super) fn parse_i128(text: &str) -> Option<i128> {
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, text.get(1..)?),
        Some(b'+') => (false, text.get(1..)?),
        _ => (false, text),
    };
    if digits.is_empty() {
        return None;
    }
    // Built towards its sign, as the standard library does, so i128::MIN is reached.
    let mut value: i128 = 0;
    for byte in digits.bytes() {
        let digit = i128::from(byte.checked_sub(b'0').filter(|digit| *digit < 10)?);
        if !(i128::MIN / 10..=i128::MAX / 10).contains(&value) {
            return None;
        }
        // value * 10, which the bound above keeps in range.
        let tens = (value << 3) + (value << 1);
        value = if negative {
            tens.checked_sub(digit)?
        } else {
            tens.checked_add(digit)?
        };
    }
    Some(value)
}

/// `value` in decimal, as `value.to_string()` writes it.
pub(super) fn show_i128(value: i128) -> String {
    if let Ok(small) = i64::try_from(value) {
        return small.to_string();
    }
    // The magnitude in four 32-bit limbs, most significant first, divided by 10^9 until none is
    // left: each remainder is the next nine digits from the right.
    let magnitude = value.unsigned_abs();
    let mut limbs = [96, 64, 32, 0].map(|shift| (magnitude >> shift) as u32);
    let mut groups = Vec::new();
    while limbs.iter().any(|limb| *limb != 0) {
        let mut remainder = 0_u64;
        for limb in &mut limbs {
            let current = (remainder << 32) | u64::from(*limb);
            // current < 10^9 * 2^32, so the quotient fits in 32 bits.
            *limb = u32::try_from(current / 1_000_000_000).unwrap_or(u32::MAX);
            remainder = current % 1_000_000_000;
        }
        groups.push(remainder);
    }
    let mut text = String::from(if value < 0 { "-" } else { "" });
    for (index, group) in groups.iter().rev().enumerate() {
        if index == 0 {
            text.push_str(&group.to_string());
        } else {
            text.push_str(&format!("{group:09}"));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_shows_as_the_standard_library() {
        let mut texts: Vec<String> = [
            "0",
            "-0",
            "+0",
            "7",
            "+7",
            "-7",
            "",
            "-",
            "+",
            "--1",
            "+-1",
            " 1",
            "1 ",
            "1.0",
            "1e3",
            "0x10",
            "١",
            "00012",
            "-00012",
            "170141183460469231731687303715884105727",
            "170141183460469231731687303715884105728",
            "-170141183460469231731687303715884105728",
            "-170141183460469231731687303715884105729",
            "999999999999999999999999999999999999999999",
            "9223372036854775807",
            "9223372036854775808",
            "-9223372036854775809",
            "18446744073709551616",
        ]
        .map(str::to_owned)
        .to_vec();
        let mut state = 35_u64;
        for _ in 0..20_000 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let digits = (state >> 58) as usize + 1;
            let mut text = String::from(["", "-", "+"][(state % 3) as usize]);
            let mut digit_state = state;
            for _ in 0..digits {
                digit_state = digit_state
                    .wrapping_mul(2_862_933_555_777_941_757)
                    .wrapping_add(3);
                text.push(char::from(b'0' + (digit_state >> 60) as u8 % 10));
            }
            texts.push(text);
        }
        for text in &texts {
            assert_eq!(parse_i128(text), text.parse::<i128>().ok(), "{text:?}");
        }
        let mut values = vec![0, 1, -1, i128::MAX, i128::MIN, i128::MIN + 1];
        for power in 0..39 {
            let ten = 10_i128.pow(power);
            values.extend([ten, ten - 1, ten + 1, -ten, -ten + 1, -ten - 1]);
        }
        for shift in 0..127 {
            values.extend([1_i128 << shift, (1_i128 << shift) - 1, -(1_i128 << shift)]);
        }
        values.extend(texts.iter().filter_map(|text| text.parse::<i128>().ok()));
        for value in values {
            assert_eq!(show_i128(value), value.to_string(), "{value}");
        }
    }
}
