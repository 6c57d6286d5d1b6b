//! The byte classes the default estimator reads text through.
//!
//! Every byte of UTF-8 text falls in one of [`CLASS_COUNT`] classes: ASCII letters by case,
//! digits, kinds of whitespace and punctuation, and, for non-ASCII text, the *lead byte* of a
//! character grouped by the script it starts (accented Latin, Greek, Cyrillic and the other
//! 2-byte scripts, Indic and Thai, kana, Han, Hangul, 3-byte symbols, 4-byte emoji) plus one
//! class for continuation bytes. The estimator prices each pair of neighbouring classes, so the classes are chosen so
//! that BPE tokenizers behave alike within a class and differently across classes.
//!
//! Guarantees: the table covers all 256 byte values (invalid UTF-8 bytes land in a lead or
//! continuation class like any other), and every class index is below [`CLASS_COUNT`], so a
//! cost table of `CLASS_COUNT * CLASS_COUNT` entries can be indexed without a bounds failure.

/// A class of bytes that tokenizers treat alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum ByteClass {
    /// `a`–`z`.
    Lower = 0,
    /// `A`–`Z`.
    Upper = 1,
    /// `0`–`9`.
    Digit = 2,
    /// The space character.
    Space = 3,
    /// `\n` and `\r`.
    Newline = 4,
    /// Tab and the other ASCII control bytes.
    Control = 5,
    /// `"`, `'` and `` ` ``.
    Quote = 6,
    /// `(`, `[`, `{` and `<`.
    Open = 7,
    /// `)`, `]`, `}` and `>`.
    Close = 8,
    /// `.`, `!` and `?`: sentence ends, decimal points, file extensions.
    Period = 9,
    /// `,`.
    Comma = 10,
    /// `:` and `;`.
    Colon = 11,
    /// `-`: hyphens, options, rule lines.
    Dash = 12,
    /// `=`.
    Equals = 13,
    /// `_`: snake_case.
    Underscore = 14,
    /// `/`: paths and URLs.
    Slash = 15,
    /// `\\`: escapes in JSON strings.
    Backslash = 16,
    /// `#` and `*`: markdown headings and emphasis, comments, globs.
    Markup = 17,
    /// The other ASCII symbols: `+|&^%$@~`.
    Symbol = 18,
    /// Lead byte `C0`–`CD` of a 2-byte character: accented Latin, IPA, combining marks.
    Lead2Latin = 19,
    /// Lead byte `CE`–`CF`: Greek and Coptic.
    Lead2Greek = 20,
    /// Lead byte `D0`–`D7`: Cyrillic, Armenian, Hebrew.
    Lead2Cyrillic = 21,
    /// Lead byte `D8`–`DF`: Arabic, Syriac, Thaana, N'Ko.
    Lead2Arabic = 22,
    /// Lead byte `E2`: general punctuation, arrows, math, box drawing (U+2000–U+2FFF).
    LeadSymbol3 = 23,
    /// Lead byte `E3`: kana and CJK punctuation (U+3000–U+3FFF).
    LeadKana = 24,
    /// Lead byte `E4`–`E9`: CJK ideographs (U+4000–U+9FFF).
    LeadHan = 25,
    /// Lead byte `EA`–`ED`: mostly Hangul syllables (U+A000–U+DFFF).
    LeadHangul = 26,
    /// Lead byte `E0` (U+0800–U+0FFF): Devanagari and the other Indic scripts, Thai, Lao, Tibetan.
    LeadIndic = 27,
    /// Lead byte `E1` (U+1000–U+1FFF): Myanmar, Georgian, Hangul jamo, Ethiopic, Khmer, Vietnamese and Greek extended letters.
    LeadExtended = 28,
    /// Lead bytes `EE`–`EF`: private use, full-width forms, specials.
    Lead3Other = 29,
    /// Lead byte of a 4-byte character (`F0`–`FF`): emoji and rare scripts.
    Lead4 = 30,
    /// A UTF-8 continuation byte (`80`–`BF`).
    Continuation = 31,
}

/// How many byte classes there are (a power of two: the cost table's row stride).
pub const CLASS_COUNT: usize = 32;

impl ByteClass {
    /// Every class, in index order.
    pub const ALL: [ByteClass; CLASS_COUNT] = [
        ByteClass::Lower,
        ByteClass::Upper,
        ByteClass::Digit,
        ByteClass::Space,
        ByteClass::Newline,
        ByteClass::Control,
        ByteClass::Quote,
        ByteClass::Open,
        ByteClass::Close,
        ByteClass::Period,
        ByteClass::Comma,
        ByteClass::Colon,
        ByteClass::Dash,
        ByteClass::Equals,
        ByteClass::Underscore,
        ByteClass::Slash,
        ByteClass::Backslash,
        ByteClass::Markup,
        ByteClass::Symbol,
        ByteClass::Lead2Latin,
        ByteClass::Lead2Greek,
        ByteClass::Lead2Cyrillic,
        ByteClass::Lead2Arabic,
        ByteClass::LeadSymbol3,
        ByteClass::LeadKana,
        ByteClass::LeadHan,
        ByteClass::LeadHangul,
        ByteClass::LeadIndic,
        ByteClass::LeadExtended,
        ByteClass::Lead3Other,
        ByteClass::Lead4,
        ByteClass::Continuation,
    ];

    /// The class of one byte.
    pub const fn of(byte: u8) -> ByteClass {
        match byte {
            b'a'..=b'z' => ByteClass::Lower,
            b'A'..=b'Z' => ByteClass::Upper,
            b'0'..=b'9' => ByteClass::Digit,
            b' ' => ByteClass::Space,
            b'\n' | b'\r' => ByteClass::Newline,
            b'"' | b'\'' | b'`' => ByteClass::Quote,
            b'(' | b'[' | b'{' | b'<' => ByteClass::Open,
            b')' | b']' | b'}' | b'>' => ByteClass::Close,
            b'.' | b'!' | b'?' => ByteClass::Period,
            b',' => ByteClass::Comma,
            b':' | b';' => ByteClass::Colon,
            b'-' => ByteClass::Dash,
            b'=' => ByteClass::Equals,
            b'_' => ByteClass::Underscore,
            b'/' => ByteClass::Slash,
            b'\\' => ByteClass::Backslash,
            b'#' | b'*' => ByteClass::Markup,
            0x21..=0x7e => ByteClass::Symbol,
            0x00..=0x7f => ByteClass::Control,
            0x80..=0xbf => ByteClass::Continuation,
            0xc0..=0xcd => ByteClass::Lead2Latin,
            0xce..=0xcf => ByteClass::Lead2Greek,
            0xd0..=0xd7 => ByteClass::Lead2Cyrillic,
            0xd8..=0xdf => ByteClass::Lead2Arabic,
            0xe0 => ByteClass::LeadIndic,
            0xe1 => ByteClass::LeadExtended,
            0xe2 => ByteClass::LeadSymbol3,
            0xe3 => ByteClass::LeadKana,
            0xe4..=0xe9 => ByteClass::LeadHan,
            0xea..=0xed => ByteClass::LeadHangul,
            0xee..=0xef => ByteClass::Lead3Other,
            0xf0..=0xff => ByteClass::Lead4,
        }
    }

    /// The class's index, below [`CLASS_COUNT`].
    pub const fn index(self) -> usize {
        self as usize
    }

    /// A short lowercase name, for reports.
    pub const fn name(self) -> &'static str {
        match self {
            ByteClass::Lower => "lower",
            ByteClass::Upper => "upper",
            ByteClass::Digit => "digit",
            ByteClass::Space => "space",
            ByteClass::Newline => "newline",
            ByteClass::Control => "control",
            ByteClass::Quote => "quote",
            ByteClass::Open => "open",
            ByteClass::Close => "close",
            ByteClass::Period => "period",
            ByteClass::Comma => "comma",
            ByteClass::Colon => "colon",
            ByteClass::Dash => "dash",
            ByteClass::Equals => "equals",
            ByteClass::Underscore => "underscore",
            ByteClass::Slash => "slash",
            ByteClass::Backslash => "backslash",
            ByteClass::Markup => "markup",
            ByteClass::Symbol => "symbol",
            ByteClass::Lead2Latin => "lead2_latin",
            ByteClass::Lead2Greek => "lead2_greek",
            ByteClass::Lead2Cyrillic => "lead2_cyrillic",
            ByteClass::Lead2Arabic => "lead2_arabic",
            ByteClass::LeadSymbol3 => "lead_symbol3",
            ByteClass::LeadKana => "lead_kana",
            ByteClass::LeadHan => "lead_han",
            ByteClass::LeadHangul => "lead_hangul",
            ByteClass::LeadIndic => "lead_indic",
            ByteClass::LeadExtended => "lead_extended",
            ByteClass::Lead3Other => "lead3_other",
            ByteClass::Lead4 => "lead4",
            ByteClass::Continuation => "continuation",
        }
    }

    /// A name of at most five characters, for the columns of the generated tables.
    pub const fn short_name(self) -> &'static str {
        match self {
            ByteClass::Lower => "lower",
            ByteClass::Upper => "upper",
            ByteClass::Digit => "digit",
            ByteClass::Space => "space",
            ByteClass::Newline => "nl",
            ByteClass::Control => "ctrl",
            ByteClass::Quote => "quote",
            ByteClass::Open => "open",
            ByteClass::Close => "close",
            ByteClass::Period => "prd",
            ByteClass::Comma => "comma",
            ByteClass::Colon => "colon",
            ByteClass::Dash => "dash",
            ByteClass::Equals => "eq",
            ByteClass::Underscore => "under",
            ByteClass::Slash => "slash",
            ByteClass::Backslash => "bslsh",
            ByteClass::Markup => "markup",
            ByteClass::Symbol => "sym",
            ByteClass::Lead2Latin => "l2lat",
            ByteClass::Lead2Greek => "l2grk",
            ByteClass::Lead2Cyrillic => "l2cyr",
            ByteClass::Lead2Arabic => "l2ara",
            ByteClass::LeadSymbol3 => "l3sym",
            ByteClass::LeadKana => "kana",
            ByteClass::LeadHan => "han",
            ByteClass::LeadHangul => "hangl",
            ByteClass::LeadIndic => "indic",
            ByteClass::LeadExtended => "l3ext",
            ByteClass::Lead3Other => "l3oth",
            ByteClass::Lead4 => "lead4",
            ByteClass::Continuation => "cont",
        }
    }
}

/// The class a text is assumed to follow: the estimator prices the first byte as if it came
/// after a line break, which is where most message texts start.
pub const START_CLASS: ByteClass = ByteClass::Newline;

/// `CLASS_OF[byte]` is `ByteClass::of(byte).index()` as a byte: one load in the hot loop.
// Evaluated at compile time: an index out of bounds fails the build, it cannot panic.
#[allow(clippy::indexing_slicing)]
pub(crate) const CLASS_OF: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut byte = 0usize;
    while byte < 256 {
        table[byte] = ByteClass::of(byte as u8) as u8;
        byte += 1;
    }
    table
};

/// Counts each pair of neighbouring classes in `text` (the first byte pairs with
/// [`START_CLASS`]): the features the cost tables were fitted on. Index `prev * CLASS_COUNT +
/// next`.
pub fn class_pair_counts(text: &str) -> Vec<u64> {
    let mut counts = vec![0u64; CLASS_COUNT * CLASS_COUNT];
    let mut prev = START_CLASS.index();
    for &byte in text.as_bytes() {
        let next = ByteClass::of(byte).index();
        if let Some(count) = counts.get_mut(prev * CLASS_COUNT + next) {
            *count = count.saturating_add(1);
        }
        prev = next;
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_cover_every_byte_and_match_their_index() {
        for (index, class) in ByteClass::ALL.iter().enumerate() {
            assert_eq!(class.index(), index);
        }
        for byte in 0..=255u8 {
            assert!(ByteClass::of(byte).index() < CLASS_COUNT);
            assert_eq!(
                CLASS_OF[byte as usize] as usize,
                ByteClass::of(byte).index()
            );
        }
    }

    #[test]
    fn scripts_land_in_their_lead_classes() {
        let lead = |text: &str| ByteClass::of(text.as_bytes()[0]);
        assert_eq!(lead("ж"), ByteClass::Lead2Cyrillic);
        assert_eq!(lead("ع"), ByteClass::Lead2Arabic);
        assert_eq!(lead("λ"), ByteClass::Lead2Greek);
        assert_eq!(lead("ह"), ByteClass::LeadIndic);
        assert_eq!(lead("ệ"), ByteClass::LeadExtended);
        assert_eq!(lead("，"), ByteClass::Lead3Other);
        assert_eq!(lead("ü"), ByteClass::Lead2Latin);
        assert_eq!(lead("中"), ByteClass::LeadHan);
        assert_eq!(lead("の"), ByteClass::LeadKana);
        assert_eq!(lead("한"), ByteClass::LeadHangul);
        assert_eq!(lead("→"), ByteClass::LeadSymbol3);
        assert_eq!(lead("ก"), ByteClass::LeadIndic);
        assert_eq!(lead("😀"), ByteClass::Lead4);
        assert_eq!(ByteClass::of("ж".as_bytes()[1]), ByteClass::Continuation);
    }

    #[test]
    fn pair_counts_sum_to_the_byte_count() {
        let counts = class_pair_counts("ab 中");
        assert_eq!(counts.iter().sum::<u64>(), 6);
        let lower_lower = ByteClass::Lower.index() * CLASS_COUNT + ByteClass::Lower.index();
        assert_eq!(counts[lower_lower], 1);
    }
}
