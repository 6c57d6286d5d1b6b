//! The PostgreSQL schema, as an ordered list of migrations.
//!
//! The schema's version is the one row of `ctxkit_schema`: the number of the newest migration
//! applied. Opening a store runs, in one transaction, every migration numbered above it, under
//! a transaction-scoped advisory lock, so workers opening a new database at once apply each
//! migration exactly once (the others wait, then find nothing to do). A database newer than
//! this build is refused ([`crate::Error::SchemaTooNew`]), never written. Migrations are only
//! ever added to [`MIGRATIONS`]; a released one is never edited.
//!
//! The tables are SQLite's ([`crate::store::sqlite`]'s schema) in PostgreSQL's types, with what
//! a fleet needs besides: each message's search key (of the core's
//! [`ctxkit_core::recall::searchable_text`], written by the append) and each memory's under
//! trigram GIN indexes (`pg_trgm`), and each offloaded output's full text, so that any worker
//! can page an output another one wrote, with its search key under a trigram index too
//! (migration 3), so the history search finds text only an offloaded output holds. Free text is
//! stored through the reversible escape of [`super::text`] (migration 2).

use postgres::{Client, Transaction};

use crate::error::{Error, Result};
use crate::store::postgres::kept::migration_8_sql;
use crate::store::postgres::search_keys::{fill_offload_keys, fill_search_keys};

/// The advisory lock key migrations hold (an arbitrary constant: "ctxkit" in ASCII).
const MIGRATION_LOCK: i64 = 0x0000_6374_786b_6974;

/// A step of a migration that SQL cannot take (the core's rules, in Rust), run after its SQL
/// in the same transaction; `&str` is the server, for messages.
type Step = fn(&mut Transaction<'_>, &str) -> Result<()>;

/// Every migration, in number order: its number, its SQL, and a step of ctxkit's own after it.
const MIGRATIONS: &[(i32, &str, Option<Step>)] = &[
    (
        1,
        r#"
    -- In public, where every schema's search path finds it (see PostgresOptions::schema).
    CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public;

    CREATE TABLE sessions (
        id BIGSERIAL PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        family TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        -- Kept with every append, in the same transaction (under the row's lock): the log's
        -- end, for optimistic concurrency and for stats without scanning the log.
        last_seq BIGINT NOT NULL DEFAULT 0,
        message_count BIGINT NOT NULL DEFAULT 0,
        total_tokens BIGINT NOT NULL DEFAULT 0,
        nudge_turn BIGINT NOT NULL DEFAULT 0,
        nudge_last_seq BIGINT,
        nudge_turns_without_progress BIGINT NOT NULL DEFAULT 0
    );

    -- The append-only log: `body` is the ctxkit serde form of a core Message (JSON),
    -- `search_text` the core's searchable text of it (empty when it has none).
    CREATE TABLE messages (
        session_id BIGINT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        seq BIGINT NOT NULL CHECK (seq > 0),
        role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
        body TEXT NOT NULL,
        tokens BIGINT NOT NULL,
        is_error BOOLEAN NOT NULL DEFAULT false,
        search_text TEXT NOT NULL DEFAULT '',
        created_at BIGINT NOT NULL,
        PRIMARY KEY (session_id, seq)
    );
    CREATE INDEX messages_search ON messages USING gin (search_text gin_trgm_ops);
    CREATE INDEX messages_assistant ON messages (session_id, seq) WHERE role = 'assistant';

    CREATE TABLE checkpoints (
        session_id BIGINT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        through_seq BIGINT NOT NULL,
        method TEXT NOT NULL CHECK (method IN ('llm', 'extractive', 'truncation')),
        summary TEXT NOT NULL,
        active_tasks TEXT,
        tokens BIGINT NOT NULL,
        made_at_turn BIGINT NOT NULL,
        -- The pinned facts and dropped-fact counts, as JSON (see the SQLite schema's 2).
        facts TEXT NOT NULL DEFAULT '{}',
        created_at BIGINT NOT NULL,
        PRIMARY KEY (session_id, through_seq)
    );

    CREATE TABLE usage_anchors (
        id BIGSERIAL PRIMARY KEY,
        session_id BIGINT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        checkpoint_through BIGINT,
        last_seq BIGINT,
        input_tokens BIGINT NOT NULL,
        estimated_tokens BIGINT NOT NULL,
        recorded_at BIGINT NOT NULL
    );
    CREATE INDEX usage_anchors_by_session ON usage_anchors (session_id, id);

    -- `content` is the offloaded output's full text (the file's contents), so a worker on
    -- another machine can page it.
    CREATE TABLE offloads (
        session_id BIGINT NOT NULL,
        seq BIGINT NOT NULL,
        tool_call_id TEXT,
        relative_path TEXT NOT NULL,
        bytes BIGINT NOT NULL,
        lines BIGINT NOT NULL,
        is_error BOOLEAN NOT NULL,
        content TEXT,
        created_at BIGINT NOT NULL,
        PRIMARY KEY (session_id, seq),
        FOREIGN KEY (session_id, seq) REFERENCES messages (session_id, seq) ON DELETE CASCADE
    );
    CREATE INDEX offloads_by_path ON offloads (session_id, relative_path);

    CREATE TABLE memories (
        id BIGSERIAL PRIMARY KEY,
        -- The working directory of a project-scoped memory; NULL for a global one.
        project TEXT,
        scope TEXT NOT NULL CHECK (scope IN ('project', 'global')),
        source TEXT NOT NULL
            CHECK (source IN ('user', 'agent', 'tool', 'extracted', 'document')),
        title TEXT NOT NULL,
        content TEXT NOT NULL,
        category TEXT NOT NULL DEFAULT '',
        -- A JSON array of strings.
        tags TEXT NOT NULL DEFAULT '[]',
        importance INTEGER NOT NULL CHECK (importance BETWEEN 1 AND 10),
        content_hash TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        expires_at BIGINT,
        use_count BIGINT NOT NULL DEFAULT 0,
        disabled_at BIGINT,
        approved_at BIGINT,
        -- What a search looks in: every field, one per line (a term has no whitespace, so it
        -- matches within one field).
        search_text TEXT GENERATED ALWAYS AS
            (title || E'\n' || content || E'\n' || category || E'\n' || tags) STORED,
        CHECK ((scope = 'global') = (project IS NULL))
    );
    CREATE INDEX memories_by_hash ON memories (content_hash);
    CREATE INDEX memories_by_project ON memories (project, updated_at);
    CREATE INDEX memories_search ON memories USING gin (search_text gin_trgm_ops);
    "#,
        None,
    ),
    (
        2,
        r#"
    -- No character lost (issue 23): free text is written through a reversible escape
    -- (postgres/text.rs: U+FFFD doubled, NUL as U+FFFD then '0'), since text cannot hold NUL.
    -- Rows written before hold no NUL (it was stored as a lone U+FFFD, and stays one): doubling
    -- their U+FFFD makes each read back as it was stored.
    UPDATE sessions SET name = replace(name, U&'\FFFD', U&'\FFFD\FFFD')
        WHERE strpos(name, U&'\FFFD') > 0;
    UPDATE checkpoints SET summary = replace(summary, U&'\FFFD', U&'\FFFD\FFFD'),
            active_tasks = replace(active_tasks, U&'\FFFD', U&'\FFFD\FFFD')
        WHERE strpos(summary, U&'\FFFD') > 0 OR strpos(active_tasks, U&'\FFFD') > 0;
    UPDATE offloads SET tool_call_id = replace(tool_call_id, U&'\FFFD', U&'\FFFD\FFFD'),
            relative_path = replace(relative_path, U&'\FFFD', U&'\FFFD\FFFD'),
            content = replace(content, U&'\FFFD', U&'\FFFD\FFFD')
        WHERE strpos(tool_call_id, U&'\FFFD') > 0 OR strpos(relative_path, U&'\FFFD') > 0
            OR strpos(content, U&'\FFFD') > 0;
    UPDATE memories SET project = replace(project, U&'\FFFD', U&'\FFFD\FFFD'),
            title = replace(title, U&'\FFFD', U&'\FFFD\FFFD'),
            content = replace(content, U&'\FFFD', U&'\FFFD\FFFD'),
            category = replace(category, U&'\FFFD', U&'\FFFD\FFFD')
        WHERE strpos(project, U&'\FFFD') > 0 OR strpos(title, U&'\FFFD') > 0
            OR strpos(content, U&'\FFFD') > 0 OR strpos(category, U&'\FFFD') > 0;

    -- Searches look in search keys (the core's case fold, NUL as N), matched with LIKE:
    -- messages.search_text and memories.search_text hold keys from now on, and
    -- memories.search_title the title's (what ranks a hit), written by ctxkit, so the memory's
    -- column is no longer generated. The step after this fills them, then indexes them.
    DROP INDEX messages_search;
    DROP INDEX memories_search;
    ALTER TABLE memories ALTER COLUMN search_text DROP EXPRESSION;
    ALTER TABLE memories ADD COLUMN search_title TEXT NOT NULL DEFAULT '';
    -- Room on each page for a memory's next row version (a search counting a use), so the
    -- update stays on its page and touches no index (a HOT update), as SQLite's in place.
    ALTER TABLE memories SET (fillfactor = 70);
    "#,
        Some(fill_search_keys),
    ),
    (
        3,
        r#"
    -- The history search looks in offloaded outputs too (issue 25): each output's search key
    -- (the core's case fold of its text, NUL as N, as the messages'), written by the append
    -- with the offload's row. The step after this fills the rows before it from their stored
    -- text, then indexes the keys.
    ALTER TABLE offloads ADD COLUMN search_text TEXT NOT NULL DEFAULT '';
    "#,
        Some(fill_offload_keys),
    ),
    (
        4,
        r#"
    -- Anthropic-bound state beside a checkpoint (issue 21): the signed compaction block
    -- Anthropic's server compaction answered with, as JSON text (through the escape of
    -- postgres/text.rs, so it comes back byte for byte); NULL for every other checkpoint.
    ALTER TABLE checkpoints ADD COLUMN IF NOT EXISTS compaction_block TEXT;
    "#,
        None,
    ),
    (
        5,
        r#"
    -- The frozen prefix (issue 21): the system prompt's parts that change between
    -- compactions (core::prompt::FrozenParts: the date, AGENTS.md, the memory precis, and the
    -- checkpoint they were frozen at), one row per session, as JSON (NUL escaped as the other
    -- texts), so they come back byte for byte. A session without a row freezes at its next turn.
    CREATE TABLE IF NOT EXISTS frozen_prompts (
        session_id BIGINT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
        parts TEXT NOT NULL
    );
    "#,
        None,
    ),
    (
        6,
        r#"
    -- Searches as fast as SQLite's (issue 23): a history search reads each message's search
    -- key (and returns its body), which PostgreSQL keeps compressed once it passes about 2 KB;
    -- with the default pglz, decompressing it cost about two thirds of a scan of the newest
    -- messages. lz4 decompresses several times faster. Only values written from now on use
    -- it (the rows before keep pglz and read back the same); a server built without lz4 (or
    -- older than PostgreSQL 14, which has no per-column setting) keeps pglz.
    DO $$
    BEGIN
        EXECUTE 'ALTER TABLE messages ALTER COLUMN body SET COMPRESSION lz4, ' ||
            'ALTER COLUMN search_text SET COMPRESSION lz4';
        EXECUTE 'ALTER TABLE offloads ALTER COLUMN content SET COMPRESSION lz4, ' ||
            'ALTER COLUMN search_text SET COMPRESSION lz4';
    EXCEPTION WHEN feature_not_supported OR syntax_error THEN
        NULL;
    END
    $$;
    "#,
        None,
    ),
    (
        7,
        r#"
    -- The restore block kept with a checkpoint (issue 20 item 3): the latest content of the
    -- files read before it, rendered when the checkpoint was made (through the escape of
    -- postgres/text.rs, so it comes back byte for byte); NULL when there was nothing to restore.
    ALTER TABLE checkpoints ADD COLUMN IF NOT EXISTS restore TEXT;
    "#,
        None,
    ),
    (
        8,
        r#"
    -- Searches that plan nothing (issue 23 item 6): PL/pgSQL functions whose statements keep
    -- their generic plans for the server connection's life (ctxkit_search_memories,
    -- ctxkit_history_newest, ctxkit_call_candidates), made by this migration's step from
    -- postgres/kept.rs.
    "#,
        Some(create_kept_functions),
    ),
    (
        9,
        r#"
    -- Appends that can be retried (issue 34 item 4): each keyed append's idempotency key with
    -- the seqs of its batch, written in the append's transaction under the session's row lock
    -- (store/append_key.rs).
    CREATE TABLE IF NOT EXISTS append_keys (
        session_id BIGINT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        key TEXT NOT NULL,
        first_seq BIGINT NOT NULL,
        last_seq BIGINT NOT NULL,
        created_at BIGINT NOT NULL,
        PRIMARY KEY (session_id, key)
    );
    "#,
        None,
    ),
];

/// The schema version this build writes: the newest migration's number.
pub const POSTGRES_SCHEMA_VERSION: i32 = 9;

/// Brings the schema (the first of the connection's search path) to
/// [`POSTGRES_SCHEMA_VERSION`], in one transaction.
/// `local_setup` (the schema's `SET LOCAL search_path`) runs first in that transaction.
pub(super) fn migrate(client: &mut Client, target: &str, local_setup: Option<&str>) -> Result<()> {
    let failed = |what: &str| {
        let what = what.to_owned();
        move |e| Error::postgres(target, format!("migrating: {what}"), e)
    };
    let mut tx = client.transaction().map_err(failed("starting"))?;
    if let Some(setup) = local_setup {
        tx.batch_execute(setup)
            .map_err(failed("setting the schema"))?;
    }
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .map_err(failed("taking the migration lock"))?;
    tx.batch_execute("CREATE TABLE IF NOT EXISTS ctxkit_schema (version INTEGER NOT NULL)")
        .map_err(failed("creating ctxkit_schema"))?;
    let version: i32 = match tx
        .query_opt("SELECT version FROM ctxkit_schema", &[])
        .map_err(failed("reading the schema version"))?
    {
        Some(row) => row
            .try_get(0)
            .map_err(failed("reading the schema version"))?,
        None => {
            tx.execute("INSERT INTO ctxkit_schema (version) VALUES (0)", &[])
                .map_err(failed("recording the schema version"))?;
            0
        }
    };
    if version > POSTGRES_SCHEMA_VERSION {
        return Err(Error::SchemaTooNew {
            path: target.into(),
            found: i64::from(version),
            supported: i64::from(POSTGRES_SCHEMA_VERSION),
        });
    }
    if version < POSTGRES_SCHEMA_VERSION {
        ensure_trigram_extension(&mut tx, target)?;
    }
    for (number, sql, step) in MIGRATIONS.iter().filter(|(n, _, _)| *n > version) {
        tx.batch_execute(sql)
            .map_err(failed(&format!("applying migration {number}")))?;
        if let Some(step) = step {
            step(&mut tx, target)?;
        }
        tx.execute("UPDATE ctxkit_schema SET version = $1", &[number])
            .map_err(failed("recording the schema version"))?;
    }
    tx.commit().map_err(failed("committing"))
}

/// Migration 8's step: creates the functions that keep the searches' plans
/// ([`super::kept`]) in the schema being migrated (their search path is this transaction's).
fn create_kept_functions(tx: &mut Transaction<'_>, target: &str) -> Result<()> {
    tx.batch_execute(&migration_8_sql()).map_err(|e| {
        let what = "migrating: creating the functions that keep the searches' plans";
        Error::postgres(target, what.to_owned(), e)
    })
}

/// Installs `pg_trgm` (the search indexes' operator class) when the database lacks it, as
/// its own step, so that a server without the extension, or a role that may not install it,
/// is told so by name (migration 1 installs it too, a no-op after this).
fn ensure_trigram_extension(tx: &mut Transaction<'_>, target: &str) -> Result<()> {
    let what = "installing the pg_trgm extension the search indexes need (or have the \
                database's owner run CREATE EXTENSION pg_trgm)";
    let failed = |e| Error::postgres(target, format!("migrating: {what}"), e);
    let installed = tx
        .query_opt("SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'", &[])
        .map_err(failed)?;
    if installed.is_none() {
        tx.batch_execute("CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public")
            .map_err(failed)?;
    }
    Ok(())
}

/// For a read-only open: fails unless the schema is at [`POSTGRES_SCHEMA_VERSION`] (a read-only
/// open cannot migrate it), read in one transaction after `local_setup`.
pub(super) fn check_version(
    client: &mut Client,
    target: &str,
    local_setup: Option<&str>,
) -> Result<()> {
    let failed = |e| Error::postgres(target, "reading the schema version".to_owned(), e);
    let mut tx = client.transaction().map_err(failed)?;
    if let Some(setup) = local_setup {
        tx.batch_execute(setup).map_err(failed)?;
    }
    let found: i32 = match tx.query_opt("SELECT version FROM ctxkit_schema", &[]) {
        Ok(Some(row)) => row
            .try_get(0)
            .map_err(|e| Error::postgres(target, "reading the schema version".to_owned(), e))?,
        Ok(None) => 0,
        // No table: nothing was ever migrated.
        Err(error) if error.code() == Some(&postgres::error::SqlState::UNDEFINED_TABLE) => 0,
        Err(error) => {
            return Err(Error::postgres(
                target,
                "reading the schema version".to_owned(),
                error,
            ))
        }
    };
    if found > POSTGRES_SCHEMA_VERSION {
        return Err(Error::SchemaTooNew {
            path: target.into(),
            found: i64::from(found),
            supported: i64::from(POSTGRES_SCHEMA_VERSION),
        });
    }
    if found < POSTGRES_SCHEMA_VERSION {
        return Err(Error::NeedsMigration {
            path: target.into(),
            found: i64::from(found),
            supported: i64::from(POSTGRES_SCHEMA_VERSION),
        });
    }
    Ok(())
}
