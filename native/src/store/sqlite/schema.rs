//! The SQLite schema, as an ordered list of migrations.
//!
//! The database's version is `PRAGMA user_version`: the number of the newest migration
//! applied. Each migration has its own number, and the numbers may have gaps: a number is
//! reserved by the branch that writes its migration, so two branches can each add one
//! without renumbering the other's (3 is the history index, 4 memory provenance, written on
//! two branches at once; 5 the offloaded outputs' text). Opening a database applies, in number order, every migration numbered
//! above its version, and any migration numbered below it whose `present` probe finds it
//! missing (one that arrived, through a merge, after the database was migrated past its
//! number); each runs in its own `BEGIN IMMEDIATE` transaction that re-reads the version
//! first, so two processes opening a new file at once cannot apply one twice. A database
//! newer than this build is refused, never written, and so is one whose `user_version` says
//! no migration ran while it already has tables. Migrations are only ever added to
//! [`MIGRATIONS`]; a released one is never edited. A migration is SQL, and may have a Rust
//! step run after it in the same transaction (to fill a new index with text only the core
//! knows how to compute).

use std::path::Path;

use rusqlite::{Connection, Transaction, TransactionBehavior};

use crate::store::sqlite::search_index::{index_existing_messages, move_search_texts};

use crate::error::{Context, Error, Result};

/// One schema change.
struct Migration {
    /// Its number: the database's `user_version` once it and every one before it ran.
    number: i64,
    /// The SQL.
    sql: &'static str,
    /// A query that returns a row when the migration's change is in the database, for
    /// migrations that may arrive after a database passed their number; `None` for those
    /// that always ran in order.
    present: Option<&'static str>,
    /// Run after the SQL, in the same transaction.
    backfill: Option<fn(&Transaction<'_>, &Path) -> Result<()>>,
}

/// Every migration, in number order (gaps allowed, see the module doc).
const MIGRATIONS: &[Migration] = &[
    // 1: sessions, the log, checkpoints, usage anchors, offloads, memories with FTS5.
    Migration {
        number: 1,
        present: None,
        backfill: None,
        sql: r#"
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
    },
    // 2: a checkpoint's pinned facts and the counts of facts caps dropped, as JSON
    // (core::compaction::Checkpoint's `pinned` and `dropped_facts`), so the next checkpoint
    // carries them without reading them back out of summary text.
    Migration {
        number: 2,
        present: None,
        backfill: None,
        sql: r#"
    ALTER TABLE checkpoints ADD COLUMN facts TEXT NOT NULL DEFAULT '{}';
    "#,
    },
    // 3: a trigram FTS5 index over each message's searchable text (the core's
    // `recall::searchable_text`: its text, tool calls decoded, tool results), for the history
    // tools. The text is computed in Rust, so rows are written by the store in the transaction
    // of each append and import, not by a trigger; existing messages are indexed here. The
    // rowid is the message's `messages.id`.
    // Its probe also takes migration 10's table for its own: 10 moves the texts out of
    // `messages_fts` and drops it, which must not make this one due again.
    Migration {
        number: 3,
        present: Some(
            "SELECT 1 FROM sqlite_schema WHERE name IN ('messages_fts', 'message_texts')",
        ),
        backfill: Some(index_existing_messages),
        sql: r#"
    CREATE VIRTUAL TABLE messages_fts USING fts5 (text, tokenize = 'trigram');
    CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
        DELETE FROM messages_fts WHERE rowid = old.id;
    END;
    "#,
    },
    // 4: memory provenance. `provenance` is where the memory came from (the `source` column's
    // CHECK predates `tool` and `document`, which it stores as `extracted`; NULL on older rows:
    // `source` says it); `approved_at` is when a person approved a quarantined memory
    // (core::memory::entry_quarantine) for the precis.
    Migration {
        number: 4,
        present: Some("SELECT 1 FROM pragma_table_info('memories') WHERE name = 'approved_at'"),
        backfill: None,
        sql: r#"
    ALTER TABLE memories ADD COLUMN provenance TEXT
        CHECK (provenance IN ('user', 'agent', 'tool', 'extracted', 'document'));
    ALTER TABLE memories ADD COLUMN approved_at INTEGER;
    "#,
    },
    // 5: each offloaded output's full text, for the history search (the log holds only its
    // reference). Written with the offload's row, in the append's transaction; NULL on a row
    // written before this migration (or without the text), which
    // `SqliteStore::index_offload_files` fills from the file when an engine opens the
    // database with its working directory (the migration cannot: it does not know where the
    // files are). The partial index finds those rows without reading the others.
    Migration {
        number: 5,
        present: Some("SELECT 1 FROM pragma_table_info('offloads') WHERE name = 'search_text'"),
        backfill: None,
        sql: r#"
    ALTER TABLE offloads ADD COLUMN search_text TEXT;
    CREATE INDEX offloads_unindexed ON offloads (session_id, seq) WHERE search_text IS NULL;
    "#,
    },
    // 6: Anthropic-bound state beside a checkpoint (issue 21): the signed `compaction` block
    // Anthropic's server compaction answered with, as JSON text byte for byte
    // (core::compaction::Checkpoint's `compaction_block`); NULL for every other checkpoint.
    Migration {
        number: 6,
        present: Some(
            "SELECT 1 FROM pragma_table_info('checkpoints') WHERE name = 'compaction_block'",
        ),
        backfill: None,
        sql: r#"
    ALTER TABLE checkpoints ADD COLUMN compaction_block TEXT;
    "#,
    },
    // 7: the frozen prefix (issue 21): the system prompt's parts that change between
    // compactions (core::prompt::FrozenParts: the date, AGENTS.md, the memory precis, and the
    // checkpoint they were frozen at), one row per session, as JSON, so they come back byte for
    // byte. A session without a row (one from before this migration) freezes at its next turn.
    Migration {
        number: 7,
        present: Some("SELECT 1 FROM sqlite_schema WHERE name = 'frozen_prompts'"),
        backfill: None,
        sql: r#"
    CREATE TABLE frozen_prompts (
        session_id INTEGER PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
        parts TEXT NOT NULL
    );
    "#,
    },
    // 8: the restore block kept with a checkpoint (issue 20 item 3): the latest content of the
    // files read before it, rendered when the checkpoint was made
    // (core::compaction::Checkpoint's `restore`), so every view from it sends the same text
    // byte for byte; NULL when there was nothing to restore (and on older checkpoints).
    Migration {
        number: 8,
        present: Some("SELECT 1 FROM pragma_table_info('checkpoints') WHERE name = 'restore'"),
        backfill: None,
        sql: r#"
    ALTER TABLE checkpoints ADD COLUMN restore TEXT;
    "#,
    },
    // 9: appends that can be retried (issue 34 item 4): each keyed append's idempotency key
    // with the seqs of its batch, written in the append's transaction (store/append_key.rs).
    Migration {
        number: 9,
        present: Some("SELECT 1 FROM sqlite_schema WHERE name = 'append_keys'"),
        backfill: None,
        sql: r#"
    CREATE TABLE IF NOT EXISTS append_keys (
        session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        key TEXT NOT NULL,
        first_seq INTEGER NOT NULL,
        last_seq INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (session_id, key)
    ) WITHOUT ROWID;
    "#,
    },
    // 10: the history search's text without the trigram index (issue 36 item 2): the search
    // scans a session's own rows with the core's case fold and never used `messages_fts`'s
    // MATCH (see history.rs), so its trigram postings, most of the database, are dropped; each
    // message's searchable text moves to a plain table, rowid the message's `messages.id`.
    Migration {
        number: 10,
        present: Some("SELECT 1 FROM sqlite_schema WHERE name = 'message_texts'"),
        backfill: Some(move_search_texts),
        sql: r#"
    CREATE TABLE IF NOT EXISTS message_texts (
        id INTEGER PRIMARY KEY,
        text TEXT NOT NULL
    );
    CREATE TRIGGER IF NOT EXISTS message_texts_delete AFTER DELETE ON messages BEGIN
        DELETE FROM message_texts WHERE id = old.id;
    END;
    "#,
    },
];

/// The schema version this build writes: the newest migration's number.
pub const SCHEMA_VERSION: i64 = 10;

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

/// Whether `migration` still has to run on a database at `version`: it is numbered above the
/// version, or below it with a `present` probe that finds it missing.
fn is_due(connection: &Connection, migration: &Migration, version: i64) -> rusqlite::Result<bool> {
    if migration.number > version {
        return Ok(true);
    }
    match migration.present {
        None => Ok(false),
        Some(probe) => Ok(connection.prepare(probe)?.query([])?.next()?.is_none()),
    }
}

/// Whether the database at `version` still needs any migration (a read-only open cannot run
/// them).
pub(crate) fn needs_migration(connection: &Connection, version: i64) -> rusqlite::Result<bool> {
    for migration in MIGRATIONS {
        if is_due(connection, migration, version)? {
            return Ok(true);
        }
    }
    Ok(false)
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
        let mut due = None;
        for migration in MIGRATIONS {
            if is_due(&transaction, migration, version).context(|| {
                format!(
                    "migrating {}: checking migration {}",
                    path.display(),
                    migration.number
                )
            })? {
                due = Some(migration);
                break;
            }
        }
        let Some(migration) = due else {
            return Ok(());
        };
        let number = migration.number;
        transaction.execute_batch(migration.sql).context(|| {
            format!(
                "migrating {} from schema version {version} with migration {number}",
                path.display(),
            )
        })?;
        if let Some(backfill) = migration.backfill {
            backfill(&transaction, path)?;
        }
        // PRAGMA takes no parameters; the value is a number this code has.
        transaction
            .execute_batch(&format!("PRAGMA user_version = {}", version.max(number)))
            .context(|| format!("migrating {}: setting user_version", path.display()))?;
        transaction
            .commit()
            .context(|| format!("migrating {}: committing", path.display()))?;
    }
}

#[cfg(test)]
#[path = "schema_tests.rs"]
mod tests;
