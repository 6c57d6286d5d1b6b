//! Conversions between SQLite rows and the core's types, kept in one place so every query
//! reads a column the same way. A value the schema should have prevented (an unknown family
//! or method, a body that is not a message) is a [`crate::Error::CorruptRow`] naming the row.

use ctxkit_core::compaction::{Checkpoint, DroppedFacts, PinnedFact, SummaryMethod};
use ctxkit_core::memory::{entry_quarantine, MemoryScope, MemorySource};
use ctxkit_core::model::Entry;
use ctxkit_core::tokens::{ModelFamily, UsageAnchor};
use ctxkit_core::Message;
use rusqlite::Row;
use serde::{Deserialize, Serialize};

use super::memory_types::MemoryRecord;
use crate::error::{Error, Result};

/// The stored name of a family.
pub(crate) fn family_name(family: ModelFamily) -> &'static str {
    family.as_str()
}

/// A family from its stored name.
pub(crate) fn family_from_name(session: &str, name: &str) -> Result<ModelFamily> {
    ModelFamily::ALL
        .into_iter()
        .find(|family| family.as_str() == name)
        .ok_or_else(|| Error::CorruptRow {
            session: session.to_owned(),
            row: "sessions.family".to_owned(),
            problem: format!("unknown model family {name:?}"),
        })
}

/// A summary method from its stored name.
pub(crate) fn method_from_name(name: &str) -> Option<SummaryMethod> {
    [
        SummaryMethod::Llm,
        SummaryMethod::Extractive,
        SummaryMethod::Truncation,
    ]
    .into_iter()
    .find(|method| method.as_str() == name)
}

/// The columns [`checkpoint_of_row`] reads, in order.
pub(crate) const CHECKPOINT_COLUMNS: &str =
    "through_seq, method, summary, active_tasks, tokens, made_at_turn, facts";

/// What the `facts` column of a checkpoint holds.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct CheckpointFacts {
    pub pinned: Vec<PinnedFact>,
    pub dropped_facts: DroppedFacts,
}

impl CheckpointFacts {
    /// The facts of `checkpoint`, as the column stores them.
    pub(crate) fn json_of(checkpoint: &Checkpoint) -> String {
        serde_json::json!({
            "pinned": checkpoint.pinned,
            "dropped_facts": checkpoint.dropped_facts,
        })
        .to_string()
    }
}

/// A checkpoint from a row of [`CHECKPOINT_COLUMNS`].
pub(crate) fn checkpoint_of_row(row: &Row<'_>) -> rusqlite::Result<(Checkpoint, String)> {
    let method: String = row.get(1)?;
    let checkpoint = Checkpoint {
        through_seq: row.get(0)?,
        // Checked by the caller (with the session's name in the error): the CHECK constraint
        // makes an unknown method impossible short of editing the file by hand.
        method: method_from_name(&method).unwrap_or(SummaryMethod::Truncation),
        summary: row.get(2)?,
        active_tasks: row.get(3)?,
        tokens: row.get(4)?,
        made_at_turn: row.get(5)?,
        pinned: Vec::new(),
        dropped_facts: Default::default(),
    };
    let facts: String = row.get(6)?;
    // Unreadable facts (a hand-edited row) leave the checkpoint without them: the next one
    // then reads what its summary text lists.
    let facts: CheckpointFacts = serde_json::from_str(&facts).unwrap_or_default();
    let checkpoint = Checkpoint {
        pinned: facts.pinned,
        dropped_facts: facts.dropped_facts,
        ..checkpoint
    };
    Ok((checkpoint, method))
}

/// Checks the method read by [`checkpoint_of_row`].
pub(crate) fn checked_checkpoint(
    session: &str,
    (checkpoint, method): (Checkpoint, String),
) -> Result<Checkpoint> {
    if method_from_name(&method).is_none() {
        return Err(Error::CorruptRow {
            session: session.to_owned(),
            row: format!("checkpoint through seq {}", checkpoint.through_seq),
            problem: format!("unknown summary method {method:?}"),
        });
    }
    Ok(checkpoint)
}

/// The columns [`anchor_from_row`] reads, in order.
pub(crate) const ANCHOR_COLUMNS: &str =
    "checkpoint_through, last_seq, input_tokens, estimated_tokens";

/// A usage anchor from a row of [`ANCHOR_COLUMNS`].
pub(crate) fn anchor_from_row(row: &Row<'_>) -> rusqlite::Result<UsageAnchor> {
    Ok(UsageAnchor {
        checkpoint_through: row.get(0)?,
        last_seq: row.get(1)?,
        input_tokens: row.get(2)?,
        estimated_tokens: row.get(3)?,
    })
}

/// An entry from its seq, JSON body and cached estimate.
pub(crate) fn entry_from_parts(session: &str, seq: u64, body: &str, tokens: u64) -> Result<Entry> {
    let message: Message = serde_json::from_str(body).map_err(|error| Error::CorruptRow {
        session: session.to_owned(),
        row: format!("message seq {seq}"),
        problem: format!("the stored body is not a ctxkit message: {error}"),
    })?;
    Ok(Entry {
        seq,
        message,
        tokens,
    })
}

/// The stored body of a message: its ctxkit serde form.
pub(crate) fn message_body(session: &str, entry: &Entry) -> Result<String> {
    serde_json::to_string(&entry.message).map_err(|error| {
        Error::invalid(
            format!("session {session:?}, message seq {}", entry.seq),
            format!("cannot be serialized: {error}"),
        )
    })
}

/// The stored name of a scope.
pub(crate) fn scope_name(scope: MemoryScope) -> &'static str {
    match scope {
        MemoryScope::Project => "project",
        MemoryScope::Global => "global",
    }
}

/// The name of a source in the `source` column, whose CHECK (migration 1) knows user, agent
/// and extracted: text from a tool or a document is stored there as `extracted` (what it is
/// closest to: not the user's or the agent's own words), and exactly in `provenance`.
pub(crate) fn source_name(source: MemorySource) -> &'static str {
    match source {
        MemorySource::User => "user",
        MemorySource::Agent => "agent",
        MemorySource::Extracted | MemorySource::Tool | MemorySource::Document => "extracted",
    }
}

/// The name of a source in the `provenance` column (migration 4).
pub(crate) fn provenance_name(source: MemorySource) -> &'static str {
    match source {
        MemorySource::User => "user",
        MemorySource::Agent => "agent",
        MemorySource::Extracted => "extracted",
        MemorySource::Tool => "tool",
        MemorySource::Document => "document",
    }
}

/// The source a stored name stands for (unknown names read as the default, agent).
pub(crate) fn source_from_name(name: &str) -> MemorySource {
    match name {
        "user" => MemorySource::User,
        "extracted" => MemorySource::Extracted,
        "tool" => MemorySource::Tool,
        "document" => MemorySource::Document,
        _ => MemorySource::Agent,
    }
}

/// The columns [`memory_from_row`] reads, in order, from a table aliased `m`.
pub(crate) const MEMORY_COLUMNS: &str = "m.id, m.project, m.title, m.content, m.category, \
    m.importance, m.tags, m.scope, m.source, m.created_at, m.updated_at, m.expires_at, \
    m.use_count, m.disabled_at, m.provenance, m.approved_at";

/// A memory from a row of [`MEMORY_COLUMNS`]. Unknown scope, source or tags (impossible
/// through the CHECK constraints and this code) read as the defaults rather than failing a
/// whole listing.
pub(crate) fn memory_from_row(row: &Row<'_>) -> rusqlite::Result<MemoryRecord> {
    let tags: String = row.get(6)?;
    let scope: String = row.get(7)?;
    let source: String = row.get(8)?;
    // Rows older than migration 4 have no provenance: their `source` says it.
    let provenance: Option<String> = row.get(14)?;
    let mut record = MemoryRecord {
        id: row.get(0)?,
        project: row.get(1)?,
        title: row.get(2)?,
        content: row.get(3)?,
        category: row.get(4)?,
        importance: row.get(5)?,
        tags: serde_json::from_str(&tags).unwrap_or_default(),
        scope: if scope == "global" {
            MemoryScope::Global
        } else {
            MemoryScope::Project
        },
        source: source_from_name(provenance.as_deref().unwrap_or(&source)),
        created_at: row.get(9)?,
        updated_at: row.get(10)?,
        expires_at: row.get(11)?,
        use_count: row.get(12)?,
        disabled_at: row.get(13)?,
        approved_at: row.get(15)?,
        quarantine: None,
    };
    // Judged on every read by the core, so a memory is held back by the rules of this build.
    record.quarantine = entry_quarantine(&record.to_entry());
    Ok(record)
}
