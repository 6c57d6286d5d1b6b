//! Stable 64-bit fingerprints of text (FNV-1a).
//!
//! Used where a name or a delimiter must differ when its input differs: the folder of a session
//! whose name had to be sanitized, the delimiter that fences a transcript. Guarantees: the same
//! text gives the same fingerprint on every platform, build and run (no random seed, unlike
//! `std`'s hasher). It is not cryptographic: nothing here defends against someone who searches
//! for collisions, only against accidental ones.

const FNV_OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// The FNV-1a fingerprint of `text`'s bytes.
///
/// ```
/// use ctxkit_core::text::fingerprint;
/// assert_eq!(fingerprint(""), 0xcbf2_9ce4_8422_2325);
/// assert_ne!(fingerprint("call_0"), fingerprint("call_1"));
/// ```
pub fn fingerprint(text: &str) -> u64 {
    text.bytes().fold(FNV_OFFSET_BASIS, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(FNV_PRIME)
    })
}

/// [`fingerprint`] as 16 lowercase hex digits.
///
/// ```
/// use ctxkit_core::text::fingerprint_hex;
/// assert_eq!(fingerprint_hex("a"), "af63dc4c8601ec8c");
/// ```
pub fn fingerprint_hex(text: &str) -> String {
    format!("{:016x}", fingerprint(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_published_fnv1a_test_vectors() {
        assert_eq!(fingerprint("a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fingerprint("foobar"), 0x8594_4171_f739_67e8);
    }
}
