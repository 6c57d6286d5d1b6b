//! docs/architecture.md stays true: every row of its "where each decision lives" table names a
//! file of the repository that holds the named item, and the README and the core's crate doc
//! point at it.

use std::path::Path;

use ctxkit_tests::project_root;

/// The rows of the decision table: (decision, file, item).
fn decision_rows(doc: &str) -> Vec<(String, String, String)> {
    let table = doc
        .split("## Where each decision lives")
        .nth(1)
        .expect("docs/architecture.md has the decision table");
    table
        .lines()
        .filter(|line| line.starts_with("| ") && !line.starts_with("| decision"))
        .map(|line| {
            let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
            assert_eq!(cells.len(), 3, "a row has three cells: {line}");
            let unquote = |cell: &str| cell.trim_matches('`').to_owned();
            (cells[0].to_owned(), unquote(cells[1]), unquote(cells[2]))
        })
        .collect()
}

#[test]
fn every_decision_row_names_a_file_that_holds_it() {
    let root = project_root();
    let doc = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let rows = decision_rows(&doc);
    assert!(rows.len() >= 30, "the table has {} rows", rows.len());
    for (decision, file, item) in rows {
        let path = root.join(&file);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{decision}: {} cannot be read: {e}", path.display()));
        assert!(
            text.contains(&item),
            "{decision}: {file} does not hold `{item}`"
        );
    }
}

#[test]
fn the_readme_and_the_crate_doc_point_at_the_design() {
    let root = project_root();
    for file in ["README.md", "core/src/lib.rs"] {
        let text = std::fs::read_to_string(Path::new(&root).join(file)).unwrap();
        assert!(text.contains("docs/architecture.md"), "{file}");
    }
}
