//! The SQLite schema, as an ordered list of migrations.
//!
//! The database's version is `PRAGMA user_version`: the number of migrations applied. Opening
//! a database applies the missing ones in order, each in its own `BEGIN IMMEDIATE`
//! transaction that re-reads the version first, so two processes opening a new file at once
//! cannot apply one twice. A database newer than this build is refused, never written, and so
//! is one whose `user_version` says no migration ran while it already has tables.
//! Migrations are only ever appended to [`MIGRATIONS`]; a released one is never edited.

use std::path::Path;

use rusqlite::{Connection, TransactionBehavior};

use crate::error::{Context, Error, Result};

/// Each entry turns version `i` into version `i + 1`.
const MIGRATIONS: &[&str] = &[
    // 1: sessions, the log, checkpoints, usage anchors, offloads, memories with FTS5.
    r#"
    CREATE TABLE sessions (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        family TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        -- Kept with every append, in the same transaction: the log's end, for optimistic
        -- concurrency and for stats without scanning the log.
        last_seq INTEGER NOT NULL DEFAULT 0,
        message_count INTEGER NOT NULL DEFAULT 0,
        total_tokens INTEGER NOT NULL DEFAULT 0,
        -- The nudge state (core::nudge::NudgeState).
        nudge_turn INTEGER NOT NULL DEFAULT 0,
        nudge_last_seq INTEGER,
        nudge_turns_without_progress INTEGER NOT NULL DEFAULT 0
    );

    -- The append-only log. `body` is the ctxkit serde form of core::Message (JSON);
    -- `tokens` its estimate for the session's family, computed once at append time.
    CREATE TABLE messages (
        id INTEGER PRIMARY KEY,
        session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL CHECK (seq > 0),
        role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
        body TEXT NOT NULL,
        tokens INTEGER NOT NULL,
        is_error INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL,
        UNIQUE (session_id, seq)
    );

    CREATE TABLE checkpoints (
        session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        through_seq INTEGER NOT NULL,
        method TEXT NOT NULL CHECK (method IN ('llm', 'extractive', 'truncation')),
        summary TEXT NOT NULL,
        active_tasks TEXT,
        tokens INTEGER NOT NULL,
        made_at_turn INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (session_id, through_seq)
    );

    CREATE TABLE usage_anchors (
        id INTEGER PRIMARY KEY,
        session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        checkpoint_through INTEGER,
        last_seq INTEGER,
        input_tokens INTEGER NOT NULL,
        estimated_tokens INTEGER NOT NULL,
        recorded_at INTEGER NOT NULL
    );
    CREATE INDEX usage_anchors_by_session ON usage_anchors (session_id, id);

    CREATE TABLE offloads (
        session_id INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        tool_call_id TEXT,
        relative_path TEXT NOT NULL,
        bytes INTEGER NOT NULL,
        lines INTEGER NOT NULL,
        is_error INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (session_id, seq),
        FOREIGN KEY (session_id, seq) REFERENCES messages (session_id, seq) ON DELETE CASCADE
    );

    CREATE TABLE memories (
        id INTEGER PRIMARY KEY,
        -- The working directory of a project-scoped memory; NULL for a global one.
        project TEXT,
        scope TEXT NOT NULL CHECK (scope IN ('project', 'global')),
        source TEXT NOT NULL CHECK (source IN ('user', 'agent', 'extracted')),
        title TEXT NOT NULL,
        content TEXT NOT NULL,
        category TEXT NOT NULL DEFAULT '',
        -- A JSON array of strings.
        tags TEXT NOT NULL DEFAULT '[]',
        importance INTEGER NOT NULL CHECK (importance BETWEEN 1 AND 10),
        -- core::memory_rules::memory_content_hash of the content.
        content_hash TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        expires_at INTEGER,
        use_count INTEGER NOT NULL DEFAULT 0,
        disabled_at INTEGER,
        CHECK ((scope = 'global') = (project IS NULL))
    );
    CREATE INDEX memories_by_hash ON memories (content_hash);
    CREATE INDEX memories_by_project ON memories (project, updated_at);

    -- Trigram full-text index (finds CJK substrings), kept in step by triggers.
    CREATE VIRTUAL TABLE memories_fts USING fts5 (
        title, content, category, tags,
        content = 'memories', content_rowid = 'id', tokenize = 'trigram'
    );
    CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
        INSERT INTO memories_fts (rowid, title, content, category, tags)
        VALUES (new.id, new.title, new.content, new.category, new.tags);
    END;
    CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
        INSERT INTO memories_fts (memories_fts, rowid, title, content, category, tags)
        VALUES ('delete', old.id, old.title, old.content, old.category, old.tags);
    END;
    CREATE TRIGGER memories_fts_update AFTER UPDATE OF title, content, category, tags ON memories
    BEGIN
        INSERT INTO memories_fts (memories_fts, rowid, title, content, category, tags)
        VALUES ('delete', old.id, old.title, old.content, old.category, old.tags);
        INSERT INTO memories_fts (rowid, title, content, category, tags)
        VALUES (new.id, new.title, new.content, new.category, new.tags);
    END;
    "#,
    // 2: a checkpoint's pinned facts and the counts of facts caps dropped, as JSON
    // (core::compaction::Checkpoint's `pinned` and `dropped_facts`), so the next checkpoint
    // carries them without reading them back out of summary text.
    r#"
    ALTER TABLE checkpoints ADD COLUMN facts TEXT NOT NULL DEFAULT '{}';
    "#,
];

/// The schema version this build writes: the number of migrations.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Fails when the database at `path` cannot be brought to [`SCHEMA_VERSION`] by the
/// migrations: it is newer than this build, or its `user_version` is 0 (nothing applied) while
/// it already holds tables, so the first migration would fail on them (the version was reset,
/// or the file is some other program's database).
pub(crate) fn check_version(connection: &Connection, path: &Path, version: i64) -> Result<()> {
    if version > SCHEMA_VERSION {
        return Err(Error::SchemaTooNew {
            path: path.to_path_buf(),
            found: version,
            supported: SCHEMA_VERSION,
        });
    }
    if version == 0 {
        let tables: Vec<String> = connection
            .prepare(
                "SELECT name FROM sqlite_schema WHERE type = 'table' \
                 AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name LIMIT 4",
            )
            .and_then(|mut statement| statement.query_map([], |row| row.get(0))?.collect())
            .context(|| format!("{}: listing its tables", path.display()))?;
        if !tables.is_empty() {
            return Err(Error::Schema {
                path: path.to_path_buf(),
                problem: format!(
                    "schema version 0 (PRAGMA user_version), yet it already has tables ({}); \
                     its user_version was reset, or it is not a ctxkit database: not migrated",
                    tables.join(", ")
                ),
            });
        }
    }
    Ok(())
}

/// Brings the database at `path` (open on `connection`) to [`SCHEMA_VERSION`].
pub(crate) fn migrate(connection: &mut Connection, path: &Path) -> Result<()> {
    loop {
        let transaction = connection
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .context(|| format!("migrating {}: starting a transaction", path.display()))?;
        let version: i64 = transaction
            .query_row("PRAGMA user_version", [], |row| row.get(0))
            .context(|| format!("migrating {}: reading user_version", path.display()))?;
        check_version(&transaction, path, version)?;
        let Some(migration) = usize::try_from(version)
            .ok()
            .and_then(|index| MIGRATIONS.get(index))
        else {
            return Ok(());
        };
        transaction.execute_batch(migration).context(|| {
            format!(
                "migrating {} from schema version {version} to {}",
                path.display(),
                version + 1
            )
        })?;
        // PRAGMA takes no parameters; the value is a number this code computed.
        transaction
            .execute_batch(&format!("PRAGMA user_version = {}", version + 1))
            .context(|| format!("migrating {}: setting user_version", path.display()))?;
        transaction
            .commit()
            .context(|| format!("migrating {}: committing", path.display()))?;
    }
}
