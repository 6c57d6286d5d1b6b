//! The built-in session `ctxkit replay` plays when given no file.
//!
//! A realistic coding task, generated deterministically (no randomness, no clock, no network):
//! an agent adds a `--json` flag to a small Rust todo CLI. It reads files (some in parallel),
//! runs a test suite whose log is big enough to be offloaded, hits a failing build, edits
//! code, and answers a user who writes partly in Chinese. Its outputs are long enough that a
//! small window compacts more than once. The content is written for this program; the same
//! generator always produces the same messages.

use ctxkit_core::{Message, ToolCall};

/// One agent step: optionally a user message, then the assistant's reply and the results of
/// the tools it called.
#[derive(Debug, Clone, PartialEq)]
pub struct DemoTurn {
    /// What the user said before this step, if anything.
    pub user: Option<Message>,
    /// The model's reply (text and tool calls).
    pub assistant: Message,
    /// The tool results, in call order.
    pub results: Vec<Message>,
}

/// The built-in session, turn by turn.
pub fn demo_session() -> Vec<DemoTurn> {
    let mut builder = Builder::default();
    json_flag_first_look(&mut builder);
    json_flag_changes(&mut builder);
    readme_in_both_languages(&mut builder);
    csv_format(&mut builder);
    builder.turns
}

/// The first request, and the reading and baseline test run before any change.
fn json_flag_first_look(builder: &mut Builder) {
    builder.user(
        "我们的 todo CLI 需要一个 JSON 输出选项。Please add a `--json` flag to `todo list` that prints \
         the items as a JSON array, keep the plain text output as the default, add tests, and update \
         the README (中文部分也要更新).",
    );
    builder.step(
        "I'll start by reading the CLI entry point, the argument parser and the storage module together.",
        &[
            ("read_file", r###"{"path":"src/main.rs"}"###, rust_file("main", 150)),
            ("read_file", r###"{"path":"src/cli.rs"}"###, rust_file("cli", 180)),
            ("read_file", r###"{"path":"src/store.rs"}"###, rust_file("store", 200)),
        ],
    );
    builder.step(
        "Let me see the project layout and the existing tests before changing anything.",
        &[
            (
                "bash",
                r###"{"command":"ls -R src tests"}"###,
                tree_listing(),
            ),
            (
                "read_file",
                r###"{"path":"tests/cli.rs"}"###,
                rust_file("cli_tests", 260),
            ),
        ],
    );
    builder.step(
        "Running the test suite first to know the baseline.",
        &[(
            "bash",
            r###"{"command":"cargo test 2>&1"}"###,
            test_log(48, None),
        )],
    );
}

/// The `--json` flag made: edits, a failing build and its fix, tests, a passing run.
fn json_flag_changes(builder: &mut Builder) {
    builder.step(
        "All 48 tests pass. The list command formats items in `cli.rs`; I'll add the flag to the `List` subcommand and a `Format` enum instead of a bool, because a CSV format was requested in an older issue.",
        &[("edit_file", r###"{"path":"src/cli.rs","old":"List {","new":"List {\n        /// Print items as a JSON array.\n        #[arg(long)]\n        json: bool,"}"###, "Edited src/cli.rs: 1 replacement.".to_owned())],
    );
    builder.step(
        "Now the serializer: the `Item` type needs `Serialize`.",
        &[("edit_file", r###"{"path":"src/store.rs","old":"#[derive(Debug, Clone)]\npub struct Item","new":"#[derive(Debug, Clone, serde::Serialize)]\npub struct Item"}"###, "Edited src/store.rs: 1 replacement.".to_owned())],
    );
    builder.step(
        "Building to check the change compiles.",
        &[(
            "bash",
            r###"{"command":"cargo build 2>&1"}"###,
            build_error(),
        )],
    );
    builder.set_error();
    builder.step(
        "The build fails: `serde` is not a dependency yet. The fix is to add it with the derive feature rather than hand-writing the JSON.",
        &[("bash", r###"{"command":"cargo add serde --features derive && cargo add serde_json"}"###, "    Updating crates.io index\n      Adding serde v1.0.228 to dependencies\n             Features:\n             + derive\n      Adding serde_json v1.0.145 to dependencies".to_owned())],
    );
    builder.step(
        "Wiring the flag into the list command.",
        &[("edit_file", r###"{"path":"src/main.rs","old":"Command::List => print_items(&items),","new":"Command::List { json } => if json { println!(\"{}\", serde_json::to_string_pretty(&items)?) } else { print_items(&items) },"}"###, "Edited src/main.rs: 1 replacement.".to_owned())],
    );
    builder.step(
        "Adding tests for both output formats, in parallel with re-reading the test helpers.",
        &[
            (
                "write_file",
                r###"{"path":"tests/json_output.rs","content":"// tests for --json"}"###,
                "Wrote tests/json_output.rs (3,412 bytes).".to_owned(),
            ),
            (
                "read_file",
                r###"{"path":"tests/common/mod.rs"}"###,
                rust_file("common", 140),
            ),
        ],
    );
    builder.step(
        "Running the whole suite again.",
        &[(
            "bash",
            r###"{"command":"cargo test 2>&1"}"###,
            test_log(52, Some("json_output::empty_list_prints_empty_array")),
        )],
    );
    builder.set_error();
    builder.step(
        "One failure: an empty list prints nothing instead of `[]`, because `print_items` returns early on an empty list before the format is checked. I'll move the check.",
        &[("read_file", r###"{"path":"src/main.rs","offset":40,"limit":60}"###, rust_file("main_excerpt", 60))],
    );
    builder.step(
        "Moving the empty-list check below the format match.",
        &[(
            "edit_file",
            r###"{"path":"src/main.rs","old":"if items.is_empty() { return Ok(()); }","new":""}"###,
            "Edited src/main.rs: 1 replacement.".to_owned(),
        )],
    );
    builder.step(
        "Re-running the suite.",
        &[(
            "bash",
            r###"{"command":"cargo test 2>&1"}"###,
            test_log(52, None),
        )],
    );
}

/// The second request: both READMEs document the flag.
fn readme_in_both_languages(builder: &mut Builder) {
    builder.user("Looks good. 另外，README 的中文部分也请说明 `--json` 的输出格式，并给一个例子。");
    builder.step(
        "Reading both README sections.",
        &[
            ("read_file", r###"{"path":"README.md"}"###, readme(false)),
            (
                "read_file",
                r###"{"path":"README.zh-CN.md"}"###,
                readme(true),
            ),
        ],
    );
    builder.step(
        "Updating the English README with a `--json` example.",
        &[("edit_file", r###"{"path":"README.md","old":"## Usage","new":"## Usage\n\n`todo list --json` prints the items as a JSON array."}"###, "Edited README.md: 1 replacement.".to_owned())],
    );
    builder.step(
        "更新中文 README：说明 `--json` 输出 JSON 数组，并附上示例。",
        &[("edit_file", r###"{"path":"README.zh-CN.md","old":"## 用法","new":"## 用法\n\n`todo list --json` 以 JSON 数组输出所有待办事项，例如：`[{\"id\":1,\"title\":\"买牛奶\",\"done\":false}]`。"}"###, "Edited README.zh-CN.md: 1 replacement.".to_owned())],
    );
    builder.step(
        "Final check: formatting, lints and the full suite.",
        &[
            (
                "bash",
                r###"{"command":"cargo fmt --check && cargo clippy -- -D warnings 2>&1"}"###,
                clippy_log(),
            ),
            (
                "bash",
                r###"{"command":"cargo test 2>&1"}"###,
                test_log(52, None),
            ),
        ],
    );
    builder.step_text(
        "Done. `todo list --json` prints the items as a JSON array (an empty list prints `[]`), plain text stays the default, four new tests cover both formats, and both READMEs document the flag with an example. 中文 README 已更新。",
    );
}

/// The third request: `--format csv`, with `--json` its alias.
fn csv_format(builder: &mut Builder) {
    builder.user("Thanks! One more: add `--format csv` as well, reusing the Format enum, and make `--json` an alias of `--format json`.");
    builder.step(
        "Reading the argument parser again and the output module, which will hold the CSV writer.",
        &[
            (
                "read_file",
                r###"{"path":"src/cli.rs"}"###,
                rust_file("cli", 190),
            ),
            (
                "read_file",
                r###"{"path":"src/format.rs"}"###,
                rust_file("format", 210),
            ),
        ],
    );
    builder.step(
        "Adding `--format <text|json|csv>` with `--json` kept as an alias, because scripts already use `--json`.",
        &[("edit_file", r###"{"path":"src/cli.rs","old":"json: bool,","new":"#[arg(long, value_enum, default_value = \"text\")]\n        format: Format,\n        #[arg(long, conflicts_with = \"format\")]\n        json: bool,"}"###, "Edited src/cli.rs: 1 replacement.".to_owned())],
    );
    builder.step(
        "Writing the CSV output: a header row, then one row per item.",
        &[("edit_file", r###"{"path":"src/format.rs","old":"pub fn text(","new":"pub fn csv(items: &[Item]) -> String {\n    let mut out = String::from(\"id,title,done\\n\");\n    for item in items { out.push_str(&format!(\"{},{},{}\\n\", item.id, item.title, item.done)); }\n    out\n}\n\npub fn text("}"###, "Edited src/format.rs: 1 replacement.".to_owned())],
    );
    builder.step(
        "Running the suite with two new CSV tests.",
        &[(
            "bash",
            r###"{"command":"cargo test 2>&1"}"###,
            test_log(56, Some("csv::quotes_commas_in_titles")),
        )],
    );
    builder.set_error();
    builder.step(
        "A title containing a comma breaks the row. The fix is to quote fields per RFC 4180 instead of joining them raw.",
        &[("read_file", r###"{"path":"src/format.rs","offset":1,"limit":80}"###, rust_file("format_excerpt", 80))],
    );
    builder.step(
        "Quoting every field that holds a comma, a quote or a newline.",
        &[(
            "edit_file",
            r###"{"path":"src/format.rs","old":"item.title,","new":"quote(&item.title),"}"###,
            "Edited src/format.rs: 1 replacement.".to_owned(),
        )],
    );
    builder.step(
        "Running everything once more, then trying the command by hand.",
        &[
            (
                "bash",
                r###"{"command":"cargo test 2>&1"}"###,
                test_log(56, None),
            ),
            (
                "bash",
                r###"{"command":"cargo run -q -- list --format csv"}"###,
                "id,title,done\n1,\"buy milk, eggs\",false\n2,买牛奶,true\n3,write report,false\n"
                    .to_owned(),
            ),
        ],
    );
    builder.step_text(
        "`todo list --format csv` now writes RFC 4180 rows (titles with commas are quoted), `--json` is an alias of `--format json`, and the 56 tests pass.",
    );
}

#[derive(Default)]
struct Builder {
    turns: Vec<DemoTurn>,
    pending_user: Option<Message>,
    next_call: usize,
}

impl Builder {
    fn user(&mut self, text: &str) {
        self.pending_user = Some(Message::user(text));
    }

    fn step(&mut self, text: &str, calls: &[(&str, &str, String)]) {
        let mut tool_calls = Vec::new();
        let mut results = Vec::new();
        for (name, arguments, output) in calls {
            self.next_call += 1;
            let id = format!("call_{:03}", self.next_call);
            tool_calls.push(ToolCall::new(id.clone(), *name, *arguments));
            let mut result = Message::tool_result(id, output.clone(), false);
            result.name = Some((*name).to_owned());
            results.push(result);
        }
        self.turns.push(DemoTurn {
            user: self.pending_user.take(),
            assistant: Message::assistant(text, tool_calls),
            results,
        });
    }

    fn step_text(&mut self, text: &str) {
        self.step(text, &[]);
    }

    /// Marks the last step's results as failed.
    fn set_error(&mut self) {
        if let Some(turn) = self.turns.last_mut() {
            for result in &mut turn.results {
                result.is_error = true;
            }
        }
    }
}

/// A Rust source file of `lines` lines, shaped like real code (functions, comments, matches),
/// as a `read_file` tool returns it (with line numbers).
fn rust_file(module: &str, lines: usize) -> String {
    let mut source = vec![
        format!("//! The `{module}` module of the todo CLI."),
        String::new(),
        "use std::collections::BTreeMap;".to_owned(),
        "use std::path::{Path, PathBuf};".to_owned(),
    ];
    let mut index = 0;
    while source.len() < lines {
        index += 1;
        source.extend([
            String::new(),
            format!("/// Handles case {index} of `{module}`: validates the input, then applies it."),
            format!("pub fn {module}_step_{index}(items: &mut Vec<Item>, input: &str) -> Result<usize, Error> {{"),
            "    let trimmed = input.trim();".to_owned(),
            format!("    if trimmed.is_empty() {{ return Err(Error::Empty {{ step: {index} }}); }}"),
            "    match items.iter().position(|item| item.title == trimmed) {".to_owned(),
            "        Some(found) => { items[found].done = !items[found].done; Ok(found) }".to_owned(),
            format!("        None => {{ items.push(Item::new({index}, trimmed)); Ok(items.len() - 1) }}"),
            "    }".to_owned(),
            "}".to_owned(),
        ]);
    }
    source
        .iter()
        .enumerate()
        .map(|(number, text)| format!("{:>6}\t{text}\n", number + 1))
        .collect()
}

fn tree_listing() -> String {
    let mut out = String::from("src:\ncli.rs\nmain.rs\nstore.rs\nformat.rs\n\ntests:\ncli.rs\ncommon\n\ntests/common:\nmod.rs\n");
    for index in 0..40 {
        out.push_str(&format!("tests/fixtures/list_{index:02}.txt\n"));
    }
    out
}

/// A `cargo test` log with `tests` tests, one of them failing when `failing` is given. Big
/// (about 14 KB): each test prints a line, and the harness prints its summaries.
fn test_log(tests: usize, failing: Option<&str>) -> String {
    let mut out = String::from("   Compiling todo v0.3.0 (/home/dev/todo)\n    Finished `test` profile [unoptimized + debuginfo] target(s) in 4.21s\n     Running unittests src/main.rs (target/debug/deps/todo-5f1c2a9e0b7d3c41)\n\n");
    out.push_str(&format!("running {tests} tests\n"));
    for index in 0..tests {
        let name = format!(
            "store::tests::case_{index:02}_adds_toggles_and_lists_items_in_insertion_order"
        );
        let result = match failing {
            Some(failed) if index == tests - 1 => format!("test {failed} ... FAILED"),
            _ => format!("test {name} ... ok"),
        };
        out.push_str(&result);
        out.push('\n');
        out.push_str(&format!("    [{index:02}] setup: created temp store /tmp/todo-test-{index:04}/items.json with 12 items, 3 done\n"));
        out.push_str(&format!("    [{index:02}] assert: listing matches fixture tests/fixtures/list_{:02}.txt (12 lines)\n", index % 40));
    }
    match failing {
        Some(failed) => {
            out.push_str(&format!(
                "\nfailures:\n\n---- {failed} stdout ----\nthread '{failed}' panicked at tests/json_output.rs:31:5:\nassertion `left == right` failed\n  left: \"\"\n right: \"[]\"\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n\nfailures:\n    {failed}\n\ntest result: FAILED. {} passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.31s\n\nerror: test failed, to rerun pass `--test json_output`\n",
                tests - 1
            ));
        }
        None => out.push_str(&format!("\ntest result: ok. {tests} passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.29s\n")),
    }
    out
}

fn build_error() -> String {
    "   Compiling todo v0.3.0 (/home/dev/todo)\nerror[E0433]: failed to resolve: use of undeclared crate or module `serde`\n --> src/store.rs:12:24\n   |\n12 | #[derive(Debug, Clone, serde::Serialize)]\n   |                        ^^^^^ use of undeclared crate or module `serde`\n\nerror: could not compile `todo` (bin \"todo\") due to 1 previous error\n".to_owned()
}

fn clippy_log() -> String {
    "    Checking todo v0.3.0 (/home/dev/todo)\n    Finished `dev` profile [unoptimized + debuginfo] target(s) in 2.02s\n".to_owned()
}

fn readme(chinese: bool) -> String {
    let mut out = String::new();
    for section in 0..24 {
        if chinese {
            out.push_str(&format!("## 第 {section} 节\n\n`todo` 是一个简单的命令行待办事项工具。它把数据保存在 `~/.todo/items.json` 中，支持添加、完成和列出事项。第 {section} 节介绍相关的选项和示例。\n\n"));
        } else {
            out.push_str(&format!("## Section {section}\n\n`todo` is a small command-line todo list. It keeps its data in `~/.todo/items.json` and can add, complete and list items. Section {section} describes the related options with an example.\n\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_demo_is_deterministic_and_has_what_replay_shows() {
        let turns = demo_session();
        assert_eq!(turns, demo_session());
        let results: Vec<&Message> = turns.iter().flat_map(|t| &t.results).collect();
        assert!(
            turns.iter().any(|t| t.assistant.tool_calls.len() > 1),
            "parallel calls"
        );
        assert!(results.iter().any(|r| r.is_error), "a failing command");
        assert!(
            results
                .iter()
                .any(|r| r.text_content().len() > 10_000 && r.name.as_deref() == Some("bash")),
            "an output to offload"
        );
        assert!(
            turns
                .iter()
                .filter_map(|t| t.user.as_ref())
                .any(|u| u.text_content().contains("中文")),
            "CJK text"
        );
    }
}
