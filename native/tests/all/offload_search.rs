//! `search_history` sees offloaded outputs (issue 25, item 3): a word that only an offloaded
//! output holds (the log keeps its short reference) is found, on SQLite and PostgreSQL, and
//! the hit points to `read_offload` with the output's path and the match's line, so the model
//! pages straight to it. Another session's output is never found; a NUL in an output is
//! searched as a NUL. End to end: `ctxkit append` offloads a big output and `ctxkit history
//! search` shows the hit, whose `read_offload` call pages to the line. A SQLite database from
//! before the store kept the outputs' text (schema 4) gains it for its existing offloads, read
//! from their files when an engine opens it; a PostgreSQL database at schema 2 gains keys made
//! from the outputs it stored. A replayed session (played on a scratch store, then adopted)
//! keeps its outputs searchable.

use crate::common::backends::{fresh_database, postgres_url, Backend};
use crate::common::project::{assert_ok, stdout, Project};
use ctxkit::core::model::Entry;
use ctxkit::core::recall::{render_search, SearchRequest};
use ctxkit::core::tokens::ModelFamily;
use ctxkit::core::{Message, ToolCall};
use ctxkit::store::{
    HistoryStore, OffloadRecord, PostgresStore, SessionStore, POSTGRES_SCHEMA_VERSION,
};
use ctxkit::{Engine, EngineConfig};

const FAMILY: ModelFamily = ModelFamily::OpenAi;
const PATH: &str = ".ctxkit/tool_results/s/0000000003-c1.txt";

/// The output: the unique word on line 1,234, a NUL after it.
fn output() -> String {
    format!(
        "{}thread 'main' panicked: the Quokka migration failed\0 here\n{}",
        "compiling...\n".repeat(1_233),
        "done\n".repeat(20)
    )
}

/// A log whose tool result was offloaded: the message is the reference, without the word.
fn offloaded_log(path: &str) -> (Vec<Entry>, OffloadRecord) {
    let output = output();
    let reference = format!("[ctxkit: tool output offloaded]\nsaved in full to:\n{path}\n");
    let entries = Entry::number(
        [
            Message::user("run the migrations"),
            Message::assistant(
                "",
                vec![ToolCall::new("c1", "bash", r#"{"cmd":"migrate"}"#)],
            ),
            Message::tool_result("c1", reference, true),
            Message::user("what failed?"),
        ],
        1,
        FAMILY,
    );
    let record = OffloadRecord {
        seq: 3,
        tool_call_id: Some("c1".into()),
        relative_path: path.into(),
        bytes: output.len() as u64,
        lines: 1_254,
        is_error: true,
        content: Some(output),
    };
    (entries, record)
}

/// A hit: its seq, whether exact, and the offload's path and line when in an output.
type Hit = (u64, bool, Option<(String, u64)>);

/// Each hit of `query` in session `s`.
fn hits(store: &dyn HistoryStore, query: &str) -> Vec<Hit> {
    let request = SearchRequest::new(query, None).unwrap();
    let found = store.search_history("s", &request).unwrap();
    found
        .hits
        .iter()
        .map(|hit| {
            let offload = hit.offload.as_ref().map(|o| (o.path.clone(), o.line));
            (hit.item.seq, hit.exact, offload)
        })
        .collect()
}

#[test]
fn a_word_only_an_offloaded_output_holds_is_found_at_its_line() {
    for backend in Backend::all("offload_search_store") {
        let mut store = backend.open();
        for session in ["s", "other"] {
            store.create_session(session, FAMILY, 1).unwrap();
        }
        let (entries, record) = offloaded_log(PATH);
        store.append("s", &entries, &[record], 2).unwrap();
        // Another session's output holds the word too: never found from "s".
        let (entries, record) = offloaded_log(".ctxkit/tool_results/other/0000000003-c1.txt");
        let mut record = record;
        record.content = Some("quokka quokka\n".into());
        store.append("other", &entries, &[record], 2).unwrap();
        let store = store.as_ref();
        let at_line = Some((PATH.to_owned(), 1_234));
        let name = backend.name();
        assert_eq!(
            hits(store, "QUOKKA MIGRATION"),
            [(3, true, at_line.clone())],
            "{name}"
        );
        assert_eq!(
            hits(store, "failed\0 here"),
            [(3, true, at_line.clone())],
            "{name}: NUL"
        );
        assert_eq!(
            hits(store, "quokka done"),
            [(3, false, at_line)],
            "{name}: every word"
        );
        // The reference's own text is still found in the message, as a message hit.
        assert_eq!(hits(store, "saved in full"), [(3, true, None)], "{name}");
        assert!(hits(store, "quokka sandwich").is_empty(), "{name}");

        let request = SearchRequest::new("quokka migration", None).unwrap();
        let found = store.search_history("s", &request).unwrap();
        let text = render_search(&request, &found);
        assert!(
            text.contains(&format!(
                "#3 tool (bash) [error], in its offloaded output at line 1234: read_offload \
                 {{\"path\": \"{PATH}\", \"offset\": 1234}}:\n"
            )),
            "{name}: {text}"
        );
        assert!(
            text.contains("the Quokka migration failed"),
            "{name}: {text}"
        );
        assert!(
            !text.contains("No message of the log holds"),
            "{name}: {text}"
        );
    }
}

/// A JSONL batch whose tool result is over the offload threshold, the word on line 1,234.
fn big_batch() -> String {
    let output = output().replace('\0', "");
    [
        Message::user("run the migrations"),
        Message::assistant(
            "",
            vec![ToolCall::new("c1", "bash", r#"{"cmd":"migrate"}"#)],
        ),
        Message::tool_result("c1", output, true),
        Message::user("what failed?"),
    ]
    .iter()
    .map(|message| format!("{}\n", serde_json::to_string(message).unwrap()))
    .collect()
}

#[test]
fn history_search_shows_the_offload_hit_and_its_call_pages_to_the_line() {
    for project in Project::all("offload_search_cli") {
        let batch = project.file("batch.jsonl", big_batch().as_bytes());
        let append = project.run(&["append", "s", batch.to_str().unwrap(), "--create"]);
        assert_ok(&append, "append");
        let search = project.run(&["history", "search", "s", "quokka migration"]);
        assert_ok(&search, "history search");
        let text = stdout(&search);
        assert!(
            text.contains("in its offloaded output at line 1234: read_offload"),
            "{text}"
        );
        assert!(text.contains("the Quokka migration failed"), "{text}");
        // The call the hit gives, executed: the page starts at the match's line.
        let call = text
            .lines()
            .find_map(|line| line.split_once(": read_offload ").map(|(_, call)| call))
            .unwrap()
            .trim_end_matches(':');
        let arguments: serde_json::Value = serde_json::from_str(call).unwrap();
        let db = project
            .database_url()
            .map_or_else(|| project.db().display().to_string(), str::to_owned);
        let engine = Engine::open(&db, project.path(), EngineConfig::default()).unwrap();
        let page = engine
            .execute_tool(
                "s",
                &ToolCall::new("r1", "read_offload", arguments.to_string()),
            )
            .unwrap();
        let page = page.text_content();
        assert!(
            page.contains("  1234\tthread 'main' panicked: the Quokka migration failed"),
            "{page}"
        );
    }
}

#[test]
fn a_sqlite_database_from_schema_4_gains_the_text_of_its_offloads() {
    let project = Project::new();
    let batch = project.file("batch.jsonl", big_batch().as_bytes());
    assert_ok(
        &project.run(&["append", "s", batch.to_str().unwrap(), "--create"]),
        "append",
    );
    // The database as schema 4 left it: no text beside the offload's row.
    let connection = rusqlite::Connection::open(project.db()).unwrap();
    connection
        .execute_batch(
            "DROP INDEX offloads_unindexed; ALTER TABLE offloads DROP COLUMN search_text; \
             ALTER TABLE checkpoints DROP COLUMN compaction_block; DROP TABLE frozen_prompts; \
             ALTER TABLE checkpoints DROP COLUMN restore; \
             PRAGMA user_version = 4;",
        )
        .unwrap();
    drop(connection);
    let engine = Engine::open(project.db(), project.path(), EngineConfig::default()).unwrap();
    let request = SearchRequest::new("quokka migration", None).unwrap();
    let found = engine.search_history("s", &request).unwrap();
    assert_eq!(found.hits.len(), 1, "{found:?}");
    let offload = found.hits[0].offload.as_ref().expect("an offload hit");
    assert_eq!(offload.line, 1_234);
    assert!(offload.path.ends_with("0000000003-c1.txt"), "{offload:?}");
}

#[test]
fn offloaded_outputs_among_the_newest_and_the_older_messages_come_in_one_order() {
    // 1,300 messages, outputs offloaded at 5 seqs: 2 among the newest thousand (which
    // PostgreSQL scans by their keys), 3 beyond them (through its index).
    let offloaded = [10u64, 20, 30, 1_290, 1_296];
    let entries = Entry::number(
        (1..=1_300u64).map(|seq| {
            if offloaded.contains(&(seq + 1)) {
                Message::assistant("", vec![ToolCall::new(format!("c{seq}"), "bash", "{}")])
            } else if offloaded.contains(&seq) {
                Message::tool_result(format!("c{}", seq - 1), "[offloaded]", false)
            } else {
                Message::user(format!("filler {seq}"))
            }
        }),
        1,
        FAMILY,
    );
    let records: Vec<OffloadRecord> = offloaded
        .iter()
        .map(|&seq| OffloadRecord {
            seq,
            tool_call_id: Some(format!("c{}", seq - 1)),
            relative_path: format!("out/{seq}.txt"),
            bytes: 30,
            lines: 1,
            is_error: false,
            content: Some(format!("the wombat of output {seq}\n")),
        })
        .collect();
    for backend in Backend::all("offload_search_spans") {
        let mut store = backend.open();
        store.create_session("s", FAMILY, 1).unwrap();
        store.append("s", &entries, &records, 2).unwrap();
        let seqs: Vec<u64> = hits(store.as_ref(), "WOMBAT").iter().map(|h| h.0).collect();
        assert_eq!(seqs, [1_296, 1_290, 30, 20, 10], "{}", backend.name());
        let found = hits(store.as_ref(), "wombat of output 20");
        assert_eq!(found.len(), 1, "{}", backend.name());
        assert_eq!(found[0].0, 20, "{}", backend.name());
    }
}

#[test]
fn a_postgres_database_at_schema_2_gains_keys_for_its_offloads() {
    let Some(server) = postgres_url("offload_search_pg_migrate") else {
        return;
    };
    let url = fresh_database(&server, "offload_keys");
    {
        let mut store = PostgresStore::open(&url).unwrap();
        store.create_session("s", FAMILY, 1).unwrap();
        let (entries, record) = offloaded_log(PATH);
        store.append("s", &entries, &[record], 2).unwrap();
    }
    // The database as schema 2 left it: the output stored, no key.
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    client
        .batch_execute(
            "DROP INDEX offloads_search; ALTER TABLE offloads DROP COLUMN search_text; \
             ALTER TABLE checkpoints DROP COLUMN compaction_block; DROP TABLE frozen_prompts; \
             ALTER TABLE messages ALTER COLUMN body SET COMPRESSION default, \
             ALTER COLUMN search_text SET COMPRESSION default; \
             ALTER TABLE offloads ALTER COLUMN content SET COMPRESSION default; \
             ALTER TABLE checkpoints DROP COLUMN restore; \
             UPDATE ctxkit_schema SET version = 2;",
        )
        .unwrap();
    let store = PostgresStore::open(&url).unwrap();
    assert_eq!(store.schema_version().unwrap(), POSTGRES_SCHEMA_VERSION);
    let at_line = Some((PATH.to_owned(), 1_234));
    assert_eq!(
        hits(&store, "QUOKKA MIGRATION"),
        [(3, true, at_line.clone())]
    );
    assert_eq!(hits(&store, "failed\0 here"), [(3, true, at_line)], "NUL");
}

#[test]
fn a_replayed_sessions_offloaded_outputs_are_searchable() {
    // The replay plays on a scratch store, then adopts the session: each output's text goes
    // with its record.
    let project = Project::new();
    assert_ok(&project.run(&["replay"]), "replay");
    let search = project.run(&["history", "search", "replay-demo", "case_08_adds_toggles"]);
    assert_ok(&search, "history search");
    let text = stdout(&search);
    assert!(
        text.contains(", in its offloaded output at line "),
        "{text}"
    );
}
