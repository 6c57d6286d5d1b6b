//! Layer 4, long-term memory and nudges.
//!
//! - [`render_precis`]: ranks memories into the bounded `MEMORY.md` precis that the system
//!   prompt shows (top 30, 5 KB, cut on UTF-8 boundaries, fenced as data).
//! - [`memory_extraction_request`] and [`parse_memory_drafts`]: ask a model for durable
//!   memories before a compaction drops the messages, and check its answer.
//! - [`quarantine_reason`]: whether a memory from outside (a tool's output, an extraction, a
//!   document) addresses the model, and so is kept out of the precis until approved.
//! - the rules every memory store applies ([`clamp_importance`], [`memory_content_hash`]).
//! - [`advance_nudges`]: the memory and stall reminders, which go into the view only and are
//!   never stored.

pub(crate) mod extraction;
mod importance;
pub(crate) mod nudge;
pub(crate) mod precis;
pub(crate) mod provenance;
pub(crate) mod rules;

pub use extraction::{
    memory_extraction_request, parse_memory_drafts, ExtractionOutcome, ExtractionRequest,
    MemoryDraft, RejectedDraft, CATEGORIES, DEFAULT_IMPORTANCE, EXTRACTION_OUTPUT_TOKENS,
    FALLBACK_CATEGORY, MAX_CONTENT_BYTES, MAX_DRAFTS, MAX_TITLE_CHARS,
};
pub use nudge::{advance_nudges, NudgeKind, NudgeOutcome, NudgePolicy, NudgeState};
pub use precis::{
    fence_as_data, render_precis, MemoryEntry, MemoryScope, MemorySource, PrecisOptions, DATA_NOTE,
    TRUNCATION_MARKER,
};
pub use provenance::{entry_quarantine, is_outside_text, quarantine_reason, source_label};
pub use rules::{
    clamp_importance, is_duplicate_content, memory_content_hash, normalize_memory_content,
    IMPORTANCE_MAX, IMPORTANCE_MIN,
};
