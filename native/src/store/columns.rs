//! How the stores write the core's types into columns and read them back, shared by both
//! backends so a column means the same on SQLite and PostgreSQL: names of families, methods,
//! scopes and sources; a message's JSON body; a checkpoint's `facts`. A value the schema should
//! have prevented (an unknown family or method, a body that is not a message) is a
//! [`crate::Error::CorruptRow`] naming the row.

use ctxkit_core::compaction::{Checkpoint, DroppedFacts, PinnedFact, SummaryMethod};
use ctxkit_core::memory::{MemoryScope, MemorySource};
use ctxkit_core::model::Entry;
use ctxkit_core::tokens::ModelFamily;
use ctxkit_core::Message;
use serde::{Deserialize, Serialize};

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
