//! The README's command-line example runs as it is: each line of the `sh` block after
//! "**CLI.**" is run with the binary under test, in a fresh project folder, its transcript path
//! read from the repository; every command succeeds and the view is a request body.

use crate::common::project::{assert_ok, stdout, Project};

/// The lines of the README's CLI example.
fn cli_example() -> Vec<String> {
    let readme = std::fs::read_to_string(ctxkit_tests::project_root().join("README.md")).unwrap();
    let after = readme
        .split("**CLI.**")
        .nth(1)
        .expect("the README has a CLI example");
    let block = after
        .split("```sh\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the CLI example is an sh block");
    block.lines().map(str::to_owned).collect()
}

#[test]
fn the_readme_cli_example_runs() {
    let lines = cli_example();
    assert!(lines.len() >= 2, "{lines:?}");
    let root = ctxkit_tests::project_root();
    let project = Project::new();
    let mut last = None;
    for line in &lines {
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(words.first(), Some(&"ctxkit"), "{line}");
        // A path of the repository (the example's transcript) is read from the checkout.
        let args: Vec<String> = words[1..]
            .iter()
            .map(|word| {
                let path = root.join(word);
                if word.contains('/') && path.is_file() {
                    path.display().to_string()
                } else {
                    (*word).to_owned()
                }
            })
            .collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = project.run(&args);
        assert_ok(&output, line);
        last = Some(output);
    }
    let view: serde_json::Value = serde_json::from_str(&stdout(&last.unwrap())).unwrap();
    assert!(
        view["messages"].as_array().is_some_and(|m| !m.is_empty()),
        "{view}"
    );
}
