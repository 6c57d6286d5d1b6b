//! Text helpers every layer uses: UTF-8-safe cutting ([`head_bytes`], [`cut_middle`], …),
//! fences that keep untrusted text as data ([`tag_fence`], [`markdown_fence`]), a bounded
//! transcript of messages for prompts ([`render_transcript`]), a stable [`fingerprint`], and
//! the user's own words in a user message, harness blocks taken out ([`user_words`]).
//!
//! Guarantees: nothing here splits a UTF-8 character or panics on any input; a fence is
//! chosen so the text it wraps cannot close it.

pub(crate) mod cut;
pub(crate) mod fence;
pub(crate) mod fingerprint;
pub(crate) mod invisible;
pub(crate) mod transcript;
pub(crate) mod user_words;

pub use cut::{
    ceil_char_boundary, count_lines, cut_middle, floor_char_boundary, head_bytes, head_lines,
    single_line, tail_bytes, tail_lines,
};
pub use fence::{markdown_fence, tag_fence, TagFence};
pub use fingerprint::{fingerprint, fingerprint_hex};
pub use invisible::is_invisible;
pub use transcript::{render_transcript, TranscriptLimits, CUT_MARKER};
pub use user_words::{harness_working_directory, is_working_directory, user_words};
