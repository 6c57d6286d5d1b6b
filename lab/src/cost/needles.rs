//! Which of many needles occur in a few texts, in one pass over each text.
//!
//! A cost report's recall sample asks, of every fact missing from the last request, whether
//! the text new since holds it (`recall.rs`). One search per fact made a sample's work the
//! product of the facts and the new text, and both grow with the log. Here each needle of
//! eight bytes or more is found by its last eight bytes, read as one number: the numbers are
//! kept sorted behind a bit filter, every eight-byte window of a text is looked up, and a hit
//! is checked in full. Shorter needles (few: a fact is a path, a request or an error line) are
//! searched one by one.
//!
//! Guarantees: the answer is exactly `str::find`'s in the first text that holds the needle,
//! for each needle (a test compares the two); no allocation per window; no panics.

/// Bytes of a needle's end that it is looked up by.
const KEY_BYTES: usize = 8;
/// Bits of the filter in front of the sorted keys (a power of two).
const FILTER_BITS: usize = 1 << 16;

/// For each of `needles`, whether any of `texts` holds it.
pub(crate) fn occurring(needles: &[&str], texts: &[&str]) -> Vec<bool> {
    first_occurrences(needles, texts)
        .iter()
        .map(Option::is_some)
        .collect()
}

/// For each of `needles`, where it first occurs: the first text of `texts` that holds it and
/// the byte offset there of its first occurrence; `None` when none does.
pub(crate) fn first_occurrences(needles: &[&str], texts: &[&str]) -> Vec<Option<(usize, usize)>> {
    let mut found: Vec<Option<(usize, usize)>> = vec![None; needles.len()];
    let mut keys: Vec<(u64, usize)> = Vec::new();
    for (index, needle) in needles.iter().enumerate() {
        match key_at_end(needle.as_bytes()) {
            Some(key) => keys.push((key, index)),
            None => {
                if let Some(slot) = found.get_mut(index) {
                    *slot = texts
                        .iter()
                        .enumerate()
                        .find_map(|(at, text)| Some((at, text.find(needle)?)));
                }
            }
        }
    }
    if keys.is_empty() {
        return found;
    }
    keys.sort_unstable();
    let mut filter = vec![0u64; FILTER_BITS / 64];
    for &(key, _) in &keys {
        let bit = filter_bit(key);
        if let Some(word) = filter.get_mut(bit / 64) {
            *word |= 1 << (bit % 64);
        }
    }
    // Windows are visited in order, so a needle's first hit is its first occurrence.
    for (text_index, text) in texts.iter().enumerate() {
        let bytes = text.as_bytes();
        for (start, window) in bytes.windows(KEY_BYTES).enumerate() {
            let Some(key) = key_at_end(window) else {
                continue;
            };
            let bit = filter_bit(key);
            if filter
                .get(bit / 64)
                .is_none_or(|word| word & (1 << (bit % 64)) == 0)
            {
                continue;
            }
            let end = start + KEY_BYTES;
            let first = keys.partition_point(|&(k, _)| k < key);
            for &(candidate, index) in keys.get(first..).unwrap_or_default() {
                if candidate != key {
                    break;
                }
                let Some(needle) = needles.get(index) else {
                    continue;
                };
                if found.get(index).is_some_and(Option::is_some) {
                    continue;
                }
                if bytes
                    .get(..end)
                    .is_some_and(|head| head.ends_with(needle.as_bytes()))
                {
                    if let Some(slot) = found.get_mut(index) {
                        *slot = Some((text_index, end - needle.len()));
                    }
                }
            }
        }
    }
    found
}

/// The last [`KEY_BYTES`] bytes of `bytes` as a number, `None` when it is shorter.
fn key_at_end(bytes: &[u8]) -> Option<u64> {
    let tail = bytes.get(bytes.len().checked_sub(KEY_BYTES)?..)?;
    <[u8; KEY_BYTES]>::try_from(tail)
        .ok()
        .map(u64::from_le_bytes)
}

/// The filter bit of `key` (a multiplicative hash's top bits).
fn filter_bit(key: u64) -> usize {
    (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 48) as usize % FILTER_BITS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_what_one_search_per_needle_answers() {
        let texts = [
            "read src/module_3/file_45.rs:12:9 then src/a.rs",
            "error[E0308]: mismatched types at src/b.rs:1:2\nnaïve café 持久化会话",
            "",
        ];
        let needles = [
            "src/module_3/file_45.rs",
            "src/module_3/file_46.rs",
            "src/a.rs",
            "a.rs",
            "",
            "mismatched types at src/b.rs",
            "types at src/b.rs:1:3",
            "café 持久化",
            "持久化会话",
            "化会话!",
            "then src/a.rs and more",
            "src/module_3/file_45.rs",
        ];
        let found = first_occurrences(&needles, &texts);
        for (needle, found) in needles.iter().zip(found) {
            let expected = texts
                .iter()
                .enumerate()
                .find_map(|(at, text)| Some((at, text.find(needle)?)));
            assert_eq!(found, expected, "{needle:?}");
        }
        assert_eq!(occurring(&needles, &[]).iter().filter(|f| **f).count(), 0);
    }

    #[test]
    fn many_needles_that_share_their_ends() {
        let text: String = (0..300)
            .map(|i| format!("src/m_{}/f_{i}.rs ", i % 7))
            .collect();
        let needles: Vec<String> = (0..600).map(|i| format!("m_{}/f_{i}.rs", i % 7)).collect();
        let refs: Vec<&str> = needles.iter().map(String::as_str).collect();
        let found = occurring(&refs, &[&text]);
        for (needle, found) in refs.iter().zip(found) {
            assert_eq!(found, text.contains(needle), "{needle}");
        }
    }
}
