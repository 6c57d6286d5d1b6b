//! The measurement stays out of the product: neither `ctxkit-core` nor `ctxkit-wasm` (the npm
//! package) depends on `ctxkit-lab`, directly or through another workspace crate, with any kind
//! of dependency (normal, build or dev). Read from `cargo metadata` (the manifests as cargo
//! reads them, what `cargo tree -p ctxkit-wasm` walks); a crate outside the workspace cannot
//! depend on `ctxkit-lab`, so the workspace's own packages are the whole graph to walk. The
//! walk is checked on the crates that must reach the lab too (the CLI and Python), so a
//! metadata the test misreads fails rather than passes.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use ctxkit_tests::project_root;
use serde_json::Value;

/// Each workspace package's name, with the names of the workspace packages it depends on.
fn workspace_graph() -> BTreeMap<String, BTreeSet<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = Command::new(cargo)
        .current_dir(project_root())
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .output()
        .expect("cargo metadata runs");
    assert!(
        output.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: Value = serde_json::from_slice(&output.stdout).expect("cargo metadata's JSON");
    let packages = metadata["packages"].as_array().expect("a package list");
    let names: BTreeSet<String> = packages
        .iter()
        .map(|package| package["name"].as_str().expect("a name").to_owned())
        .collect();
    packages
        .iter()
        .map(|package| {
            let depends_on = package["dependencies"]
                .as_array()
                .expect("a dependency list")
                .iter()
                .map(|dependency| dependency["name"].as_str().expect("a name").to_owned())
                .filter(|name| names.contains(name))
                .collect();
            (package["name"].as_str().unwrap().to_owned(), depends_on)
        })
        .collect()
}

/// Every package `from` depends on, directly or not.
fn reached(graph: &BTreeMap<String, BTreeSet<String>>, from: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut next = vec![from.to_owned()];
    while let Some(name) = next.pop() {
        for dependency in graph.get(&name).into_iter().flatten() {
            if seen.insert(dependency.clone()) {
                next.push(dependency.clone());
            }
        }
    }
    seen
}

#[test]
fn neither_the_core_nor_the_wasm_crate_depends_on_the_lab() {
    let graph = workspace_graph();
    for package in ["ctxkit-core", "ctxkit-wasm", "ctxkit-lab"] {
        assert!(graph.contains_key(package), "{package} is in the workspace");
    }
    for package in ["ctxkit-core", "ctxkit-wasm"] {
        let reached = reached(&graph, package);
        assert!(
            !reached.contains("ctxkit-lab"),
            "{package} depends on ctxkit-lab (it reaches {reached:?})"
        );
    }
    // The walk finds the lab where it is: the CLI's and Python's crates call it.
    for package in ["ctxkit", "ctxkit-python"] {
        assert!(
            reached(&graph, package).contains("ctxkit-lab"),
            "{package} reaches ctxkit-lab"
        );
    }
    // And the lab itself stands on the core alone among the workspace's crates.
    assert_eq!(
        reached(&graph, "ctxkit-lab"),
        BTreeSet::from(["ctxkit-core".to_owned()])
    );
}

#[test]
fn the_walk_follows_indirect_dependencies() {
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec![]),
        ("d", vec!["a"]),
    ]
    .into_iter()
    .map(|(name, deps)| {
        (
            name.to_owned(),
            deps.into_iter().map(str::to_owned).collect(),
        )
    })
    .collect();
    assert!(reached(&graph, "d").contains("c"));
    assert!(!reached(&graph, "c").contains("a"));
}
