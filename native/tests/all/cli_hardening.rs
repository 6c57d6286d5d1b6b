//! Regression tests of the CLI against a hostile probe: memory searches bounded, a failed
//! multi-session import storing nothing, and input or names that used to confuse the CLI (a
//! UTF-8 BOM, a reset `user_version`, a `--db` that is no regular file, control characters in
//! session names).

use crate::common::project::{assert_ok, stderr, stdout, Project};

/// The first `count` conversations of the tau-bench corpus file, then its second one again.
fn tau_bench_with_a_repeated_entry(count: usize) -> Vec<u8> {
    let path = ctxkit_tests::corpus_dir().join("tau-bench/gpt-4o-airline.json");
    let all: Vec<serde_json::Value> =
        serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let mut picked: Vec<serde_json::Value> = all.into_iter().take(count).collect();
    picked.push(picked[1].clone());
    serde_json::to_vec(&picked).unwrap()
}

#[test]
fn a_memory_search_past_its_bounds_is_refused_with_the_limit_and_the_size() {
    let project = Project::new();
    assert_ok(
        &project.run(&["memory", "add", &"a".repeat(2_000)]),
        "memory add",
    );
    let long = "a".repeat(1_000);
    let output = project.run(&["memory", "search", &long]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(
        message.contains("1000 characters") && message.contains("at most 128"),
        "{message}"
    );
    assert_eq!(message.trim_end().lines().count(), 1, "{message}");

    let many: Vec<String> = (0..17).map(|i| format!("t{i:02}")).collect();
    let output = project.run(&["memory", "search", &many.join(" ")]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(
        message.contains("17 terms") && message.contains("at most 16"),
        "{message}"
    );

    // At the bounds, a search still runs and finds the memory.
    let at_limit = project.run(&["memory", "search", &"a".repeat(128), "--json"]);
    assert_ok(&at_limit, "a query at the bound");
    let found: serde_json::Value = serde_json::from_slice(&at_limit.stdout).unwrap();
    assert_eq!(found.as_array().map(Vec::len), Some(1));
}

#[test]
fn the_worst_search_within_the_bounds_takes_bounded_time() {
    // 120 KB of one letter: every trigram of the query is at every position of the memory, the
    // worst case for a trigram phrase query.
    let project = Project::new();
    assert_ok(
        &project.run(&["memory", "add", &"a".repeat(120_000)]),
        "memory add",
    );
    // The most distinct terms of a's that fit in 128 characters: 3 to 14 letters long.
    let distinct: Vec<String> = (3..=14).map(|n| "a".repeat(n)).collect();
    for query in [
        "a".repeat(128),
        distinct.join(" "),
        vec!["aaa"; 16].join(" "),
    ] {
        let started = std::time::Instant::now();
        assert_ok(&project.run(&["memory", "search", &query]), &query);
        let took = started.elapsed();
        // Unbounded, an 8,000-character query took over a minute; this is many times what
        // the bounded worst case takes even on a slow, shared machine.
        assert!(took.as_secs() < 20, "{query:?} took {took:?}");
    }
}

#[test]
fn a_multi_session_import_with_a_repeated_label_stores_nothing() {
    let project = Project::new();
    let file = project.file("dup.json", &tau_bench_with_a_repeated_entry(3));
    let output = project.run(&["import", file.to_str().unwrap()]);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{message}");
    assert!(message.contains("\"dup/task-1-trial-0\""), "{message}");
    assert!(message.contains("nothing was imported"), "{message}");
    assert_eq!(message.trim_end().lines().count(), 1, "{message}");
    assert_eq!(project.dump(), "", "no session stored");

    // A clash with a session already stored changes nothing either.
    let single = project.file("s.jsonl", b"{\"role\":\"user\",\"content\":\"hi\"}\n");
    assert_ok(
        &project.run(&[
            "import",
            single.to_str().unwrap(),
            "--session",
            "many/task-2-trial-0",
        ]),
        "import one",
    );
    let before = project.dump();
    let path = ctxkit_tests::corpus_dir().join("tau-bench/gpt-4o-airline.json");
    let output = project.run(&["import", path.to_str().unwrap(), "--session", "many"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert_eq!(project.dump(), before);
}

#[test]
fn a_utf8_bom_at_the_start_of_an_input_file_is_accepted() {
    let project = Project::new();
    let json = project.file(
        "bom.json",
        "\u{feff}[{\"role\":\"user\",\"content\":\"hello\"}]".as_bytes(),
    );
    let jsonl = project.file(
        "bom.jsonl",
        "\u{feff}{\"role\":\"user\",\"content\":\"again\"}\n".as_bytes(),
    );
    assert_ok(
        &project.run(&["import", json.to_str().unwrap(), "--session", "s"]),
        "import with a BOM",
    );
    assert_ok(
        &project.run(&["append", "s", jsonl.to_str().unwrap()]),
        "append with a BOM",
    );
    let tokens = project.run(&["tokens", json.to_str().unwrap(), "--json"]);
    assert_ok(&tokens, "tokens with a BOM");
    let tokens: serde_json::Value = serde_json::from_slice(&tokens.stdout).unwrap();
    assert_eq!(tokens["kind"], "1 messages");
    assert_ok(
        &project.run(&["validate", json.to_str().unwrap(), "--provider", "openai"]),
        "validate with a BOM",
    );
    let stats = project.run(&["stats", "s", "--json"]);
    let stats: serde_json::Value = serde_json::from_slice(&stats.stdout).unwrap();
    assert_eq!(stats["messages"], 2);
    // Only a leading BOM is dropped: one later in the text is content.
    let inner = project.file("inner.jsonl", "\u{feff}\u{feff}{}".as_bytes());
    let output = project.run(&["append", "s", inner.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
}

#[test]
fn a_reset_user_version_is_named_in_one_short_line() {
    let project = Project::new();
    let file = project.file("s.jsonl", b"{\"role\":\"user\",\"content\":\"hi\"}\n");
    assert_ok(
        &project.run(&["import", file.to_str().unwrap(), "--session", "s"]),
        "import",
    );
    rusqlite::Connection::open(project.db())
        .unwrap()
        .pragma_update(None, "user_version", 0)
        .unwrap();
    for args in [vec!["sessions"], vec!["memory", "add", "x"]] {
        let output = project.run(&args);
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {message}");
        assert_eq!(message.trim_end().lines().count(), 1, "{message}");
        assert!(
            message.len() < 400,
            "{} characters: {message}",
            message.len()
        );
        assert!(!message.contains("CREATE"), "{message}");
        assert!(
            message.contains("schema version 0") && message.contains("user_version"),
            "{message}"
        );
    }
}

#[test]
fn a_db_that_is_not_a_regular_file_is_refused_and_nothing_is_created_beside_it() {
    let project = Project::new();
    let journal = std::path::Path::new("/dev/null-journal");
    let journal_existed = journal.exists();
    for db in ["/dev/null", "/tmp"] {
        let output = project.run(&["--db", db, "sessions"]);
        if !journal_existed && journal.exists() {
            let _ = std::fs::remove_file(journal);
            panic!("--db {db} left {} behind", journal.display());
        }
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "--db {db}: {message}");
        assert!(
            message.contains(db) && message.contains("not a regular file"),
            "--db {db}: {message}"
        );
        let output = project.run(&["--db", db, "memory", "add", "x"]);
        assert_eq!(output.status.code(), Some(2), "--db {db}: {message}");
    }
    assert!(!project.path().join(".ctxkit").exists());
}

#[test]
fn control_characters_in_session_names_cannot_forge_lines() {
    let project = Project::new();
    let file = project.file("s.jsonl", b"{\"role\":\"user\",\"content\":\"hi\"}\n");
    let forged = "evil\nfake                               99 messages";
    let bidi = "abc\u{202e}fed\u{2066}x\u{2069}";
    for name in [forged, bidi] {
        assert_ok(
            &project.run(&["append", name, file.to_str().unwrap(), "--create"]),
            "append",
        );
    }
    let listing = stdout(&project.run(&["sessions"]));
    assert_eq!(listing.lines().count(), 2, "{listing}");
    assert!(listing.contains("evil\\nfake"), "{listing}");
    assert!(
        listing.contains("abc\\u{202e}fed\\u{2066}x\\u{2069}"),
        "{listing}"
    );
    assert!(!listing.contains('\u{202e}'), "{listing}");
    let stats = stdout(&project.run(&["stats", forged]));
    assert!(stats.starts_with("evil\\nfake "), "{stats}");
    // JSON output keeps the name as it is (escaped the JSON way).
    let json = project.run(&["sessions", "--json"]);
    let json: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let names: Vec<&str> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&forged) && names.contains(&bidi),
        "{names:?}"
    );
}

#[test]
fn a_window_too_small_for_any_view_exits_2_naming_the_numbers() {
    let project = Project::new();
    let input = project.file(
        "in.json",
        br#"[{"role":"user","content":"fix the failing test"}]"#,
    );
    assert_ok(
        &project.run(&["import", input.to_str().unwrap(), "--session", "s"]),
        "import",
    );
    // No window at all: the reserves (0 of 0) already leave nothing, named before planning.
    let output = project.run(&["view", "s", "--window", "0"]);
    assert_eq!(
        output.status.code(),
        Some(2),
        "--window 0: {}",
        stderr(&output)
    );
    assert_eq!(stdout(&output), "", "--window 0: no view is printed");
    assert!(
        stderr(&output).contains("budget too small: budget.context_window is 0 tokens, but budget.output_reserve (0) + budget.tool_schema_tokens (0) + budget.safety_margin (0) = 0 leave no room for a view"),
        "--window 0: {}",
        stderr(&output)
    );
    for window in ["1", "10", "100"] {
        let output = project.run(&["view", "s", "--window", window]);
        assert_eq!(
            output.status.code(),
            Some(2),
            "--window {window}: {}",
            stderr(&output)
        );
        assert_eq!(stdout(&output), "", "--window {window}: no view is printed");
        let message = stderr(&output);
        assert!(
            message.contains(&format!(
                "budget too small: a window of {window} tokens leaves "
            )) && message.contains("but the system prompt needs ")
                && message.contains(" and the last user message "),
            "--window {window}: {message}"
        );
        assert_eq!(message.trim_end().lines().count(), 1, "{message}");
    }
    // A window that holds the system prompt and the message prints them.
    let output = project.run(&["view", "s", "--window", "2000"]);
    assert_ok(&output, "view --window 2000");
    assert!(stdout(&output).contains("fix the failing test"));
}
