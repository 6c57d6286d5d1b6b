//! The history tools through the native engine: `execute_tool` answers `search_history`,
//! `read_history` and `read_offload` calls from a session's complete log and its offload files
//! (a model's mistakes are `is_error` results, never escapes from the session's folder), and the
//! system prompt carries the history guidance once, and only once, the session has a
//! checkpoint. Every test runs on SQLite and on PostgreSQL ([`common::backends`]); with
//! PostgreSQL an output offloaded by one worker is paged by another whose machine has no file.

use crate::common;

use std::path::Path;

use crate::common::backends::Backend;
use ctxkit::clock::FixedClock;
use ctxkit::core::recall::{history_tools, HISTORY_HEADING};
use ctxkit::core::{Message, ToolCall};
use ctxkit::{Engine, EngineConfig, Error, PromptConfig};

fn open_engine(backend: &Backend, dir: &Path, config: EngineConfig) -> Engine {
    Engine::with_store(backend.open(), dir, config)
        .unwrap()
        .with_clock(FixedClock(1_770_768_000))
}

fn call(name: &str, arguments: &str) -> ToolCall {
    ToolCall::new("call_h", name, arguments)
}

/// A session with a user request, a call and its 60 KB output (offloaded).
fn session_with_offload(engine: &mut Engine) -> String {
    engine.create_session("s1").unwrap();
    let output: String = (1..=3_000)
        .map(|n| format!("row {n:05} of the log\n"))
        .collect();
    engine
        .record(
            "s1",
            vec![
                Message::user("Find why 持久化层 drops rows in `store::flush`."),
                Message::assistant(
                    "",
                    vec![ToolCall::new(
                        "c1",
                        "bash",
                        r#"{"command":"cat logs/flush.log"}"#,
                    )],
                ),
                Message::tool_result("c1", output, false),
            ],
        )
        .unwrap();
    let offloads = engine.store().offloads("s1").unwrap();
    assert_eq!(offloads.len(), 1);
    offloads[0].relative_path.clone()
}

#[test]
fn search_and_read_answer_from_the_log() {
    for backend in Backend::all("search_and_read_answer_from_the_log") {
        let dir = tempfile::tempdir().unwrap();
        let mut engine = open_engine(&backend, dir.path(), EngineConfig::default());
        session_with_offload(&mut engine);
        let found = engine
            .execute_tool("s1", &call("search_history", r#"{"query":"STORE::FLUSH"}"#))
            .unwrap();
        assert_eq!(found.tool_call_id.as_deref(), Some("call_h"));
        assert!(!found.is_error);
        let text = found.text_content();
        assert!(
            text.starts_with("[ctxkit: history search] \"STORE::FLUSH\""),
            "{text}"
        );
        assert!(
            text.contains("\n#1 user:\n  Find why 持久化层 drops rows in `store::flush`."),
            "{text}"
        );
        let found = engine
            .execute_tool(
                "s1",
                &call("search_history", r#"{"query":"logs/flush.log"}"#),
            )
            .unwrap();
        assert!(found
            .text_content()
            .contains("#2 assistant:\n  tool call: bash\n  {\"command\":\"cat logs/flush.log\"}"));
        let read = engine
            .execute_tool("s1", &call("read_history", r#"{"from":1,"to":3}"#))
            .unwrap();
        let text = read.text_content();
        assert!(
            text.starts_with("[ctxkit: history read] seq 1 to 3 (the log has seq 1 to 3)"),
            "{text}"
        );
        assert!(
            text.contains("#3 tool (bash): [ctxkit: tool output offloaded]"),
            "{text}"
        );
        assert!(
            text.ends_with("This is the end of the log (seq 3)."),
            "{text}"
        );
        // The lookups' own results, recorded, are not found by later searches.
        engine.record("s1", vec![found.clone()]).unwrap();
        let again = engine
            .execute_tool(
                "s1",
                &call("search_history", r#"{"query":"logs/flush.log"}"#),
            )
            .unwrap();
        assert!(
            again.text_content().contains("1 hit,"),
            "{}",
            again.text_content()
        );
    }
}

#[test]
fn read_offload_pages_only_the_sessions_offload_files() {
    for backend in Backend::all("read_offload_pages_only_the_sessions_offload_files") {
        let dir = tempfile::tempdir().unwrap();
        let mut engine = open_engine(&backend, dir.path(), EngineConfig::default());
        let path = session_with_offload(&mut engine);
        let arguments = format!(r#"{{"path":"{path}","offset":2999,"limit":5}}"#);
        let page = engine
            .execute_tool("s1", &call("read_offload", &arguments))
            .unwrap();
        assert!(!page.is_error, "{}", page.text_content());
        let text = page.text_content();
        assert!(text.contains("lines 2999 to 3000 of 3000"), "{text}");
        assert!(text.contains("  2999\trow 02999 of the log\n  3000\trow 03000 of the log\n"));
        assert!(text.ends_with("This is the end of the file."));

        // Outside the session's folder, or not an offload file: an error result, nothing read.
        std::fs::write(dir.path().join("secret.txt"), "secret").unwrap();
        let folder = Path::new(&path).parent().unwrap();
        let link = folder.join("0000000099-link.txt");
        std::os::unix::fs::symlink(dir.path().join("secret.txt"), dir.path().join(&link)).unwrap();
        for bad in [
            "secret.txt".to_owned(),
            dir.path().join(&path).display().to_string(),
            format!("{path}/../../../secret.txt"),
            path.replace("/s1/", "/s2/"),
            link.display().to_string(),
            folder.join("0000000098-missing.txt").display().to_string(),
        ] {
            let arguments = serde_json::json!({ "path": bad }).to_string();
            let result = engine
                .execute_tool("s1", &call("read_offload", &arguments))
                .unwrap();
            assert!(result.is_error, "{bad}: {}", result.text_content());
            assert!(
                result.text_content().starts_with("read_offload.path: "),
                "{bad}"
            );
            assert!(!result.text_content().contains("secret\n"), "{bad}");
        }
    }
}

#[test]
fn mistakes_are_error_results_and_unknown_tools_or_sessions_are_errors() {
    for backend in
        Backend::all("mistakes_are_error_results_and_unknown_tools_or_sessions_are_errors")
    {
        let dir = tempfile::tempdir().unwrap();
        let mut engine = open_engine(&backend, dir.path(), EngineConfig::default());
        session_with_offload(&mut engine);
        for (name, arguments, expected) in [
            (
                "search_history",
                "{}",
                "search_history.query: missing: a string is required",
            ),
            (
                "search_history",
                r#"{"query":"  "}"#,
                "search_history.query: empty",
            ),
            (
                "read_history",
                r#"{"from":5,"to":2}"#,
                "read_history.to: 2 is before from (5)",
            ),
            (
                "read_history",
                "not json",
                "read_history.arguments: not valid JSON",
            ),
        ] {
            let result = engine.execute_tool("s1", &call(name, arguments)).unwrap();
            assert!(result.is_error);
            assert!(
                result.text_content().starts_with(expected),
                "{}",
                result.text_content()
            );
        }
        assert!(matches!(
            engine.execute_tool("s1", &call("bash", "{}")),
            Err(Error::Core { .. })
        ));
        assert!(matches!(
            engine.execute_tool("nope", &call("search_history", r#"{"query":"x"}"#)),
            Err(Error::NoSuchSession(_))
        ));
        assert!(matches!(
            engine.execute_tool("nope", &call("search_history", "{}")),
            Err(Error::NoSuchSession(_))
        ));
        assert_eq!(engine.history_tools(), history_tools());
    }
}

#[test]
fn the_prompt_carries_the_guidance_once_the_session_has_a_checkpoint() {
    for backend in Backend::all("the_prompt_carries_the_guidance_once_the_session_has_a_checkpoint")
    {
        let dir = tempfile::tempdir().unwrap();
        let mut engine = open_engine(&backend, dir.path(), common::small_window_config());
        engine.create_session("s").unwrap();
        engine.record("s", common::turn_messages(0)).unwrap();
        let first = engine.prepare_turn("s").unwrap();
        assert!(!first.system_prompt().contains(HISTORY_HEADING));
        let compacted = common::run_until_compaction(&mut engine, "s");
        // The view after the new checkpoint has it (the refreshed prompt, which the next turns
        // keep byte for byte).
        assert!(
            compacted.system_prompt().contains(HISTORY_HEADING),
            "{}",
            compacted.system_prompt()
        );
        engine.record("s", common::turn_messages(500)).unwrap();
        let next = engine.prepare_turn("s").unwrap();
        assert_eq!(next.system_prompt(), compacted.system_prompt());
        assert!(next.stats.fits);
        // An agent without the tools turns it off.
        let mut config = common::small_window_config();
        config.prompt = PromptConfig {
            history_guidance: false,
            ..config.prompt
        };
        let mut quiet = open_engine(&backend, dir.path(), config);
        let view = quiet.prepare_turn("s").unwrap();
        assert!(!view.system_prompt().contains(HISTORY_HEADING));
    }
}

#[test]
fn with_postgres_an_output_offloaded_on_one_machine_is_paged_on_another() {
    for backend in Backend::all("offload_on_another_machine")
        .into_iter()
        .filter(Backend::is_postgres)
    {
        let here = tempfile::tempdir().unwrap();
        let mut writer = open_engine(&backend, here.path(), EngineConfig::default());
        let path = session_with_offload(&mut writer);
        assert!(here.path().join(&path).is_file());
        // Another worker: the same database, a working directory without the file.
        let there = tempfile::tempdir().unwrap();
        let reader = open_engine(&backend, there.path(), EngineConfig::default());
        assert!(!there.path().join(&path).exists());
        let arguments = format!(r#"{{"path":"{path}","offset":2999,"limit":5}}"#);
        let page = reader
            .execute_tool("s1", &call("read_offload", &arguments))
            .unwrap();
        assert!(!page.is_error, "{}", page.text_content());
        let text = page.text_content();
        assert!(text.contains("lines 2999 to 3000 of 3000"), "{text}");
        assert!(text.contains("  3000\trow 03000 of the log\n"), "{text}");
        let seq = reader.store().offloads("s1").unwrap()[0].seq;
        let page = reader.read_offload("s1", seq, 10, 2).unwrap();
        assert_eq!(page.text, "row 00011 of the log\nrow 00012 of the log\n");
        assert!(page.more);
        // A path that was never offloaded is still an error result, not a read.
        let missing = path.replace("-c1.txt", "-c9.txt");
        let arguments = serde_json::json!({ "path": missing }).to_string();
        let result = reader
            .execute_tool("s1", &call("read_offload", &arguments))
            .unwrap();
        assert!(result.is_error, "{}", result.text_content());
    }
}
