//! The plain data of memories as the store takes and returns them.
//!
//! [`MemoryRecord`] is a stored memory with its bookkeeping (scope, source, timestamps,
//! expiry, use count, soft deletion, approval); [`MemoryRecord::to_entry`] gives the core's
//! [`MemoryEntry`] that the precis ranks, and [`MemoryRecord::quarantine`] says why the core
//! keeps it out of the precis, if it does. Importance is clamped to 1–10 by the store
//! ([`ctxkit_core::memory::clamp_importance`]); it is never rejected.

use ctxkit_core::memory::{MemoryDraft, MemoryEntry, MemoryScope, MemorySource};
use serde::{Deserialize, Serialize};

/// A memory to add.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NewMemory {
    /// A short name.
    pub title: String,
    /// What to remember (required, not blank).
    pub content: String,
    /// A free category (`preference`, `convention`...).
    pub category: String,
    /// 1 to 10 (clamped). Default 5.
    pub importance: i64,
    /// Free tags.
    pub tags: Vec<String>,
    /// This project or every project. Default project.
    pub scope: MemoryScope,
    /// Where it came from (the user, the agent, a tool's output, an extraction, a document).
    /// Default agent. Text from outside that addresses the model is quarantined
    /// ([`ctxkit_core::memory::entry_quarantine`]).
    pub source: MemorySource,
    /// When it stops applying (unix seconds); `None`: never.
    pub expires_at: Option<i64>,
}

impl NewMemory {
    /// A memory the core's extraction accepted (source `extracted`, project scope).
    pub fn extracted(draft: &MemoryDraft) -> Self {
        NewMemory {
            title: draft.title.clone(),
            content: draft.content.clone(),
            category: draft.category.clone(),
            importance: i64::from(draft.importance),
            source: MemorySource::Extracted,
            ..NewMemory::default()
        }
    }
}

impl Default for NewMemory {
    fn default() -> Self {
        NewMemory {
            title: String::new(),
            content: String::new(),
            category: String::new(),
            importance: 5,
            tags: Vec::new(),
            scope: MemoryScope::Project,
            source: MemorySource::Agent,
            expires_at: None,
        }
    }
}

/// A stored memory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryRecord {
    /// The store's id.
    pub id: i64,
    /// The project it belongs to (`None` for global memories).
    pub project: Option<String>,
    /// A short name.
    pub title: String,
    /// What to remember.
    pub content: String,
    /// Its category.
    pub category: String,
    /// 1 to 10.
    pub importance: i32,
    /// Free tags.
    pub tags: Vec<String>,
    /// Project or global.
    pub scope: MemoryScope,
    /// Where it came from: user, agent, tool, extracted or document.
    pub source: MemorySource,
    /// When it was added (unix seconds).
    pub created_at: i64,
    /// When it last changed (unix seconds).
    pub updated_at: i64,
    /// When it stops applying.
    pub expires_at: Option<i64>,
    /// How many searches returned it.
    pub use_count: i64,
    /// When it was soft-deleted (`None`: live unless expired).
    pub disabled_at: Option<i64>,
    /// When a person approved it for the precis (`ctxkit memory approve`), if ever.
    pub approved_at: Option<i64>,
    /// Why it is quarantined (kept out of the precis and the system prompt until approved):
    /// text from outside that addresses the model. `None` when it is shown. Judged by the
    /// core on every read, never stored.
    pub quarantine: Option<String>,
}

impl MemoryRecord {
    /// The core's view of it, for the precis.
    pub fn to_entry(&self) -> MemoryEntry {
        MemoryEntry {
            id: self.id.to_string(),
            title: self.title.clone(),
            content: self.content.clone(),
            category: self.category.clone(),
            importance: self.importance,
            source: self.source,
            scope: self.scope,
            updated_at: self.updated_at,
            tags: self.tags.clone(),
            approved: self.approved_at.is_some(),
        }
    }

    /// True when it is neither disabled nor expired at `now`.
    pub fn is_live(&self, now: i64) -> bool {
        self.disabled_at.is_none() && self.expires_at.is_none_or(|at| at > now)
    }
}

/// The result of adding a memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AddedMemory {
    /// Stored as a new memory.
    Added(MemoryRecord),
    /// A live memory already says the same; it is returned unchanged.
    Duplicate(MemoryRecord),
}

impl AddedMemory {
    /// The memory, new or existing.
    pub fn record(&self) -> &MemoryRecord {
        match self {
            AddedMemory::Added(record) | AddedMemory::Duplicate(record) => record,
        }
    }
}

/// Changes to a memory; `None` leaves a field as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MemoryUpdate {
    /// New title.
    pub title: Option<String>,
    /// New content (not blank).
    pub content: Option<String>,
    /// New category.
    pub category: Option<String>,
    /// New importance (clamped).
    pub importance: Option<i64>,
    /// New tags.
    pub tags: Option<Vec<String>>,
    /// New expiry: `Some(None)` removes it.
    pub expires_at: Option<Option<i64>>,
}

/// A full-text search.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MemoryQuery {
    /// The user's words, taken literally (no FTS syntax).
    pub text: String,
    /// At most this many results. Default 20.
    pub limit: usize,
}

impl Default for MemoryQuery {
    fn default() -> Self {
        MemoryQuery {
            text: String::new(),
            limit: 20,
        }
    }
}

impl MemoryQuery {
    /// A query for `text` with the default limit.
    pub fn new(text: impl Into<String>) -> Self {
        MemoryQuery {
            text: text.into(),
            ..MemoryQuery::default()
        }
    }
}

/// Which memories to list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MemoryFilter {
    /// Include soft-deleted memories.
    pub include_disabled: bool,
    /// Include expired memories.
    pub include_expired: bool,
    /// At most this many. Default 1,000.
    pub limit: usize,
}

impl Default for MemoryFilter {
    fn default() -> Self {
        MemoryFilter {
            include_disabled: false,
            include_expired: false,
            limit: 1_000,
        }
    }
}

/// The most memories one search or listing returns (a larger limit is cut to it).
pub(crate) const MAX_RESULTS: usize = 10_000;

/// `limit` as a query's `LIMIT`: at least 1, at most [`MAX_RESULTS`].
pub(crate) fn result_limit(limit: usize) -> i64 {
    i64::try_from(limit.clamp(1, MAX_RESULTS)).unwrap_or(1)
}

/// Fails when `content` (the value of `field`) is blank: a memory needs content.
pub(crate) fn checked_content(field: &str, content: &str) -> crate::error::Result<()> {
    if content.trim().is_empty() {
        return Err(crate::error::Error::invalid(
            field,
            "empty: a memory needs content",
        ));
    }
    Ok(())
}
