//! The docs a newcomer reads stay what they promise: the README is a quick start (at most about
//! 8 KB; the two commands, and only those, in its "Two commands" section), its npm and Python
//! examples are the ones the packages' own tests run, the measurement reports say they are
//! generated and by what, and every link of every Markdown file leads to a file of the
//! repository (none outside it). The README's Rust example is a doctest (`tests/src/lib.rs`),
//! its CLI example a test of the native suite (`native/tests/all/readme_cli.rs`).

use std::path::{Path, PathBuf};

use ctxkit_tests::project_root;

fn read(path: &str) -> String {
    std::fs::read_to_string(project_root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The section of `doc` under `heading`, to the next heading of its level.
fn section<'d>(doc: &'d str, heading: &str) -> &'d str {
    let start = doc
        .find(heading)
        .unwrap_or_else(|| panic!("no section {heading}"));
    let rest = doc.get(start + heading.len()..).unwrap_or_default();
    rest.find("\n## ")
        .map_or(rest, |end| rest.get(..end).unwrap_or(rest))
}

/// The code blocks of `text` in `language`, in order.
fn code_blocks(text: &str, language: &str) -> Vec<String> {
    let fence = format!("```{language}\n");
    text.split(&fence)
        .skip(1)
        .filter_map(|rest| rest.split("```").next())
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_readme_is_a_quick_start() {
    let readme = read("README.md");
    assert!(
        readme.len() <= 8_500,
        "README.md is {} bytes: a quick start is about 8 KB at most (the reference is docs/cli.md \
         and docs/formats.md)",
        readme.len()
    );
    let install = readme.find("## Install from the repository").unwrap();
    let commands = readme.find("## Two commands").unwrap();
    let examples = readme.find("## One example per entry").unwrap();
    assert!(install < commands && commands < examples);
    let blocks = code_blocks(section(&readme, "## Two commands"), "sh");
    assert_eq!(
        blocks,
        [
            "cargo run --release -p ctxkit -- replay\n",
            "./scripts/test.sh\n"
        ],
        "the two commands, and no other, in the README's \"Two commands\""
    );
    for entry in ["**CLI.**", "**npm**", "**Python**", "**Rust**"] {
        assert!(readme.contains(entry), "an example for {entry}");
    }
}

#[test]
fn the_readme_examples_are_the_ones_the_packages_run() {
    let readme = read("README.md");
    // pkg/test/readme.test.mjs runs the Node block of pkg/README.md.
    let package = read("pkg/README.md");
    let node = code_blocks(section(&package, "## Node"), "js");
    assert_eq!(
        code_blocks(&readme, "js"),
        node.get(..1).unwrap_or_default()
    );
    // python/tests/test_readme.py runs python/examples/quickstart.py.
    assert_eq!(
        code_blocks(&readme, "python"),
        [read("python/examples/quickstart.py")]
    );
    assert_eq!(
        code_blocks(&readme, "rust").len(),
        1,
        "one Rust example, a doctest"
    );
}

#[test]
fn the_reports_say_they_are_generated_and_by_what() {
    let folder = project_root().join("docs/reports");
    let mut reports = 0;
    for entry in std::fs::read_dir(&folder).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let top: String = text.lines().take(12).collect::<Vec<_>>().join("\n");
        assert!(
            top.contains("> A generated report: `"),
            "{} says at its top that it is generated, and by which command",
            path.display()
        );
        reports += 1;
    }
    assert!(reports >= 3, "{reports} reports");
}

/// Every Markdown file of the repository that a reader follows links in.
fn markdown_files() -> Vec<PathBuf> {
    let root = project_root();
    let mut files = vec![
        root.join("README.md"),
        root.join("pkg/README.md"),
        root.join("python/README.md"),
    ];
    let mut folders = vec![root.join("docs")];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    files
}

/// The targets of the Markdown links `[text](target)` of `text`, outside code blocks.
fn link_targets(text: &str) -> Vec<String> {
    let prose: String = text.split("```").step_by(2).collect::<Vec<_>>().join("\n");
    prose
        .split("](")
        .skip(1)
        .filter_map(|rest| rest.split(')').next())
        .filter(|target| !target.contains(char::is_whitespace))
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_link_leads_to_a_file_of_the_repository() {
    for file in markdown_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        let folder = file.parent().unwrap_or(Path::new("."));
        for target in link_targets(&text) {
            assert!(
                !target.contains("://") && !target.starts_with("mailto:"),
                "{}: {target} links outside the repository",
                file.display()
            );
            let path = target.split('#').next().unwrap_or_default();
            if path.is_empty() {
                continue;
            }
            assert!(
                folder.join(path).exists(),
                "{}: {target} is not a file of the repository",
                file.display()
            );
        }
    }
}
