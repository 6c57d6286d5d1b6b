//! How the stores write the core's types into columns and read them back, shared by both
//! backends so a column means the same on SQLite and PostgreSQL: names of families, methods,
//! scopes and sources; a message's JSON body; a checkpoint's `facts`. A value the schema should
//! have prevented (an unknown family or method, a body that is not a message) is a
//! [`crate::Error::CorruptRow`] naming the row.

use ctxkit_core::compaction::{Checkpoint, DroppedFacts, PinnedFact, SummaryMethod};
use ctxkit_core::memory::{entry_quarantine, MemoryScope, MemorySource};
use ctxkit_core::model::Entry;
use ctxkit_core::prompt::FrozenParts;
use ctxkit_core::tokens::ModelFamily;
use ctxkit_core::Message;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::store::memory_types::MemoryRecord;

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

/// The columns a checkpoint is read from, in the order [`CheckpointColumns`] lists them.
pub(crate) const CHECKPOINT_COLUMNS: &str =
    "through_seq, method, summary, active_tasks, tokens, made_at_turn, facts, compaction_block, \
     restore";

/// A checkpoint's columns as a backend read them (its stored text decoded).
#[derive(Debug)]
pub(crate) struct CheckpointColumns {
    pub through_seq: u64,
    pub method: String,
    pub summary: String,
    pub active_tasks: Option<String>,
    pub tokens: u64,
    pub made_at_turn: u64,
    pub facts: String,
    pub compaction_block: Option<String>,
    pub restore: Option<String>,
}

/// The checkpoint `columns` hold. An unknown method (which the schema's CHECK prevents short
/// of editing the database by hand) is a [`Error::CorruptRow`]; unreadable facts (a hand-edited
/// row) leave the checkpoint without them: the next one then reads what its summary lists.
pub(crate) fn checkpoint_from_columns(
    session: &str,
    columns: CheckpointColumns,
) -> Result<Checkpoint> {
    let Some(method) = method_from_name(&columns.method) else {
        return Err(Error::CorruptRow {
            session: session.to_owned(),
            row: format!("checkpoint through seq {}", columns.through_seq),
            problem: format!("unknown summary method {:?}", columns.method),
        });
    };
    let facts: CheckpointFacts = serde_json::from_str(&columns.facts).unwrap_or_default();
    Ok(Checkpoint {
        through_seq: columns.through_seq,
        method,
        summary: columns.summary,
        active_tasks: columns.active_tasks,
        tokens: columns.tokens,
        made_at_turn: columns.made_at_turn,
        pinned: facts.pinned,
        dropped_facts: facts.dropped_facts,
        compaction_block: columns.compaction_block,
        restore: columns.restore,
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

/// A memory's `tags` column: a JSON array of strings.
pub(crate) fn tags_json(tags: &[String]) -> String {
    serde_json::to_string(tags).unwrap_or_else(|_| "[]".to_owned())
}

/// The tags a `tags` column holds (unreadable JSON, which only a hand edit makes, reads as
/// none rather than failing a whole listing).
pub(crate) fn tags_from_json(json: &str) -> Vec<String> {
    serde_json::from_str(json).unwrap_or_default()
}

/// The scope a stored name stands for (anything but `global` reads as a project's).
pub(crate) fn scope_from_name(name: &str) -> MemoryScope {
    if name == "global" {
        MemoryScope::Global
    } else {
        MemoryScope::Project
    }
}

/// `record` as a store returns it: its quarantine judged by the core on every read, so a
/// memory is held back by the rules of this build (never stored).
pub(crate) fn judged(record: MemoryRecord) -> MemoryRecord {
    let quarantine = entry_quarantine(&record.to_entry());
    MemoryRecord {
        quarantine,
        ..record
    }
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

/// The `parts` column of a session's frozen prompt: the core's [`FrozenParts`] as JSON (its
/// strings escaped by JSON, so every text comes back byte for byte).
pub(crate) fn frozen_parts_json(session: &str, parts: &FrozenParts) -> Result<String> {
    serde_json::to_string(parts).map_err(|error| {
        Error::invalid(
            format!("session {session:?}, frozen prompt"),
            format!("cannot be serialized: {error}"),
        )
    })
}

/// The frozen prompt parts a `parts` column holds.
pub(crate) fn frozen_parts_from_json(session: &str, json: &str) -> Result<FrozenParts> {
    serde_json::from_str(json).map_err(|error| Error::CorruptRow {
        session: session.to_owned(),
        row: "frozen prompt".to_owned(),
        problem: format!("the stored parts are not the core's FrozenParts: {error}"),
    })
}
