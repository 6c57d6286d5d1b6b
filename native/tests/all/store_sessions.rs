//! The session stores: SQLite on real files (schema version and migrations, file modes) and,
//! from the same test code, SQLite and PostgreSQL ([`common::backends`]): append-only logs
//! with optimistic concurrency, checkpoints that only move forward, loading only what a turn
//! needs, imports whole or not at all, corrupt rows named, and failed calls that change
//! nothing.

use std::os::unix::fs::PermissionsExt;

use crate::common::backends::Backend;
use ctxkit::core::compaction::{Checkpoint, DroppedFacts, FactKind, PinnedFact, SummaryMethod};
use ctxkit::core::memory::NudgeState;
use ctxkit::core::model::Entry;
use ctxkit::core::tokens::{ModelFamily, UsageAnchor};
use ctxkit::core::turn::Session;
use ctxkit::core::Message;
use ctxkit::store::{
    OffloadRecord, SessionImport, SessionStore, SqliteStore, POSTGRES_SCHEMA_VERSION,
    SCHEMA_VERSION,
};
use ctxkit::Error;

const FAMILY: ModelFamily = ModelFamily::OpenAi;

fn entries(first_seq: u64, count: usize) -> Vec<Entry> {
    let messages = (0..count).map(|i| {
        let seq = first_seq + i as u64;
        if seq.is_multiple_of(3) {
            Message::tool_result(
                format!("c{seq}"),
                format!("result {seq}"),
                seq.is_multiple_of(2),
            )
        } else {
            Message::user(format!("message {seq}"))
        }
    });
    Entry::number(messages, first_seq, FAMILY)
}

fn checkpoint(through_seq: u64) -> Checkpoint {
    Checkpoint {
        through_seq,
        summary: format!("## Goal\nthrough {through_seq}"),
        method: SummaryMethod::Extractive,
        active_tasks: None,
        tokens: 20,
        made_at_turn: through_seq,
        // Stored as data beside the summary (and read back by every load below).
        pinned: vec![PinnedFact::new(
            FactKind::Path,
            format!("src/{through_seq}.rs"),
        )],
        dropped_facts: DroppedFacts {
            errors: 1,
            ..DroppedFacts::default()
        },
        compaction_block: None,
        restore: Some(format!(
            "[Restored after compaction]\n\n### `src/{through_seq}.rs`\n"
        )),
    }
}

#[test]
fn a_new_database_is_private_versioned_and_reopens() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/ctxkit.db");
    let mut store = SqliteStore::open(&path).unwrap();
    store.create_session("s", FAMILY, 10).unwrap();
    drop(store);
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let connection = rusqlite::Connection::open(&path).unwrap();
    let version: i64 = connection
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION);
    let journal: String = connection
        .query_row("PRAGMA journal_mode", [], |row| row.get(0))
        .unwrap();
    assert_eq!(journal, "wal");
    drop(connection);
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.list_sessions().unwrap().len(), 1);
}

#[test]
fn a_database_from_a_newer_ctxkit_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ctxkit.db");
    drop(SqliteStore::open(&path).unwrap());
    let connection = rusqlite::Connection::open(&path).unwrap();
    connection
        .execute_batch("PRAGMA user_version = 99")
        .unwrap();
    drop(connection);
    let error = SqliteStore::open(&path).unwrap_err();
    assert!(
        matches!(error, Error::SchemaTooNew { found: 99, .. }),
        "{error}"
    );
    assert!(error.to_string().contains("schema version 99"), "{error}");
}

#[test]
fn a_postgres_database_is_versioned_and_one_from_a_newer_ctxkit_is_refused() {
    for backend in Backend::all("postgres_versioned")
        .iter()
        .filter(|b| b.is_postgres())
    {
        let mut store = backend.postgres();
        assert_eq!(store.schema_version().unwrap(), POSTGRES_SCHEMA_VERSION);
        store.create_session("s", FAMILY, 10).unwrap();
        drop(store);
        // Opening again migrates nothing and keeps the data.
        let store = backend.postgres();
        assert_eq!(store.list_sessions().unwrap().len(), 1);
        drop(store);
        backend.execute_raw("UPDATE ctxkit_schema SET version = 99");
        let Backend::Postgres { url, schema } = backend else {
            unreachable!()
        };
        let options = ctxkit::store::PostgresOptions {
            schema: Some(schema.clone()),
            ..Default::default()
        };
        let error = ctxkit::store::PostgresStore::open_with(url, options).unwrap_err();
        assert!(
            matches!(error, Error::SchemaTooNew { found: 99, .. }),
            "{error}"
        );
        assert!(error.to_string().contains("schema version 99"), "{error}");
    }
}

#[test]
fn appends_continue_the_log_and_a_second_writer_gets_a_conflict() {
    for backend in Backend::all("appends_continue_the_log_and_a_second_writer_gets_a_conflict") {
        let mut first = backend.open();
        let mut second = backend.open();
        first.create_session("s", FAMILY, 1).unwrap();
        first.append("s", &entries(1, 5), &[], 2).unwrap();

        // Both think seq 6 is next; the second to write loses and writes nothing.
        first.append("s", &entries(6, 1), &[], 3).unwrap();
        let error = second.append("s", &entries(6, 2), &[], 3).unwrap_err();
        assert!(
            matches!(
                error,
                Error::SeqConflict {
                    first_seq: 6,
                    log_ends_at: 6,
                    ..
                }
            ),
            "{error}"
        );
        // The message says what happened: the log already holds the seq this append started at.
        assert_eq!(
            error.to_string(),
            "session \"s\": this append was numbered from seq 6, but another writer appended \
             first and the log now ends at seq 6; nothing was written"
        );
        let gap = second.append("s", &entries(9, 1), &[], 3).unwrap_err();
        assert!(gap.to_string().contains("expected seq 7"), "{gap}");
        let exported = second.export_session("s").unwrap();
        assert_eq!(exported.entries, entries(1, 6));

        // is_error survives the round trip.
        assert!(exported.entries[5].message.is_error);
        let info = second.session_info("s").unwrap();
        assert_eq!((info.messages, info.last_seq), (6, 6));
        assert_eq!(
            info.total_tokens,
            exported.entries.iter().map(|e| e.tokens).sum::<u64>()
        );
    }
}

#[test]
fn checkpoints_only_move_forward_and_failed_calls_change_nothing() {
    for backend in Backend::all("checkpoints_only_move_forward_and_failed_calls_change_nothing") {
        let mut store = backend.open();
        store.create_session("s", FAMILY, 1).unwrap();
        store.append("s", &entries(1, 20), &[], 1).unwrap();
        store.add_checkpoint("s", &checkpoint(10), 2).unwrap();
        let before = store.export_session("s").unwrap();

        for bad in [checkpoint(10), checkpoint(5), checkpoint(21)] {
            let error = store.add_checkpoint("s", &bad, 3).unwrap_err();
            assert!(
                error.to_string().contains("checkpoint.through_seq"),
                "{error}"
            );
        }
        // A turn whose checkpoint is refused stores no nudge state either.
        let nudge = NudgeState {
            turn: 7,
            last_seq: Some(20),
            turns_without_progress: 1,
        };
        assert!(store
            .finish_turn("s", &turn_changes(Some(checkpoint(3)), nudge), &[], "", 4)
            .is_err());
        // An offload record for a message not in the batch refuses the whole append.
        let stray = OffloadRecord {
            seq: 99,
            tool_call_id: None,
            relative_path: "x".into(),
            bytes: 1,
            lines: 1,
            is_error: false,
            content: None,
        };
        assert!(store.append("s", &entries(21, 1), &[stray], 5).is_err());
        assert_eq!(store.export_session("s").unwrap(), before);
        assert!(matches!(
            store.append("nope", &entries(1, 1), &[], 1).unwrap_err(),
            Error::NoSuchSession(name) if name == "nope"
        ));

        store
            .finish_turn("s", &turn_changes(None, nudge), &[], "", 6)
            .unwrap();
        assert_eq!(store.export_session("s").unwrap().nudge_state, nudge);
    }
}

#[test]
fn loading_for_a_turn_reads_the_tail_only() {
    for backend in Backend::all("loading_for_a_turn_reads_the_tail_only") {
        let mut store = backend.open();
        store.create_session("s", FAMILY, 1).unwrap();
        store.append("s", &entries(1, 100), &[], 1).unwrap();
        store.add_checkpoint("s", &checkpoint(40), 2).unwrap();
        store.add_checkpoint("s", &checkpoint(90), 2).unwrap();
        let anchor = UsageAnchor {
            checkpoint_through: Some(90),
            last_seq: Some(100),
            input_tokens: 1_000,
            estimated_tokens: 900,
        };
        store.record_usage("s", &anchor, 3).unwrap();

        let turn = store.load_for_turn("s").unwrap();
        assert_eq!(turn.entries, entries(91, 10));
        assert_eq!(turn.checkpoints, vec![checkpoint(90)]);
        assert_eq!(turn.usage_anchor, Some(anchor));
        assert_eq!(turn.next_seq(), 101);

        // Nudges count from where the previous turn stopped, if that is before the checkpoint.
        let nudge = NudgeState {
            turn: 3,
            last_seq: Some(85),
            turns_without_progress: 0,
        };
        store
            .finish_turn("s", &turn_changes(None, nudge), &[], "", 4)
            .unwrap();
        assert_eq!(store.load_for_turn("s").unwrap().entries, entries(86, 15));

        let all = store.export_session("s").unwrap();
        assert_eq!(all.entries.len(), 100);
        assert_eq!(all.checkpoints, vec![checkpoint(40), checkpoint(90)]);
        let info = store.session_info("s").unwrap();
        assert_eq!(info.checkpoints, 2);
        assert_eq!(
            info.latest_checkpoint,
            Some((90, SummaryMethod::Extractive))
        );
        assert_eq!(info.turns, 3);
    }
}

#[test]
fn import_is_all_or_nothing_and_names_are_unique() {
    for backend in Backend::all("import_is_all_or_nothing_and_names_are_unique") {
        let mut store = backend.open();
        store
            .import_session("a", FAMILY, &entries(1, 10), 1)
            .unwrap();
        assert!(matches!(
            store.import_session("a", FAMILY, &entries(1, 3), 2).unwrap_err(),
            Error::SessionExists(name) if name == "a"
        ));
        // Seqs that do not start at 1: nothing is created.
        assert!(store
            .import_session("b", FAMILY, &entries(5, 3), 2)
            .is_err());
        assert!(matches!(
            store.session_info("b").unwrap_err(),
            Error::NoSuchSession(_)
        ));
        assert!(store.create_session("  ", FAMILY, 1).is_err());
        assert_eq!(store.list_sessions().unwrap().len(), 1);
        assert_eq!(store.export_session("a").unwrap().entries, entries(1, 10));
    }
}

#[test]
fn sessions_import_whole_in_one_transaction_or_not_at_all() {
    for backend in Backend::all("sessions_import_whole_in_one_transaction_or_not_at_all") {
        let mut store = backend.open();
        let mut whole = Session::new(FAMILY);
        whole.entries = entries(1, 6);
        whole.add_checkpoint(checkpoint(3)).unwrap();
        whole.nudge_state = NudgeState {
            turn: 4,
            last_seq: Some(6),
            turns_without_progress: 1,
        };
        let anchor = UsageAnchor {
            checkpoint_through: Some(3),
            last_seq: Some(6),
            input_tokens: 900,
            estimated_tokens: 800,
        };
        whole.usage_anchor = Some(anchor);
        let offload = OffloadRecord {
            seq: 3,
            tool_call_id: Some("c3".into()),
            relative_path: ".ctxkit/tool_results/w/0000000003-c3.txt".into(),
            bytes: 20_000,
            lines: 100,
            is_error: false,
            content: None,
        };
        let mut plain = Session::new(FAMILY);
        plain.entries = entries(1, 2);
        let import = |name, session, offloads| SessionImport {
            name,
            session,
            offloads,
        };
        // A name given twice: the first session is not kept either.
        let twice = [import("w", &whole, &[][..]), import("w", &plain, &[][..])];
        let error = store.import_sessions(&twice, &[], "/p", 1).unwrap_err();
        assert!(
            matches!(&error, Error::SessionExists(name) if name == "w"),
            "{error}"
        );
        assert_eq!(store.list_sessions().unwrap(), vec![]);

        let both = [
            import("w", &whole, std::slice::from_ref(&offload)),
            import("p", &plain, &[][..]),
        ];
        store.import_sessions(&both, &[], "/p", 2).unwrap();
        assert_eq!(store.export_session("w").unwrap(), whole);
        assert_eq!(store.export_session("p").unwrap().entries, entries(1, 2));
        assert_eq!(store.offloads("w").unwrap(), vec![offload]);
        let info = store.session_info("w").unwrap();
        assert_eq!((info.turns, info.usage_anchor), (4, Some(anchor)));
    }
}

#[test]
fn a_corrupt_row_is_named() {
    for backend in Backend::all("a_corrupt_row_is_named") {
        let mut store = backend.open();
        store
            .import_session("s", FAMILY, &entries(1, 3), 1)
            .unwrap();
        backend.execute_raw("UPDATE messages SET body = '{\"role\": 7}' WHERE seq = 2");
        let error = store.load_for_turn("s").unwrap_err();
        assert_eq!(
            error.to_string().split(':').next(),
            Some("session \"s\", message seq 2")
        );
    }
}

/// What a turn changed: `checkpoint` (if any) and the nudge state, no memories.
fn turn_changes(
    checkpoint: Option<ctxkit::core::Checkpoint>,
    nudge_state: ctxkit::core::memory::NudgeState,
) -> ctxkit::core::TurnChanges {
    ctxkit::core::TurnChanges {
        checkpoint,
        nudge_state,
        memories: Vec::new(),
    }
}
