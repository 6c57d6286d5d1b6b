//! Imports go one way (issue 35 item 2): in every crate of the workspace, a top-level module
//! uses only the modules `docs/architecture.md` lists before it ("Imports go one way"), so
//! there is no import circle and no arrow up, and they cannot come back unnoticed.
//!
//! The test reads the code itself: every `crate::` path (in `use` lines, groups
//! `crate::{a, b::c}`, and paths written in place) and every `super::` path that climbs out of
//! its top-level module, in every `.rs` file of each crate, comments left out (a doc link
//! compiles to no dependency). Test modules count too: a test that needs an upper layer lives
//! in that layer. A failure names the file and the arrow; a module missing from the doc's list
//! (or listed and gone) fails too, so a new module is placed on purpose.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use ctxkit_tests::project_root;

/// The doc's order for each crate's source folder: `folder -> modules, bottom first`.
fn declared_orders(doc: &str) -> BTreeMap<String, Vec<String>> {
    let section = doc
        .split("## Imports go one way")
        .nth(1)
        .expect("docs/architecture.md has the section \"Imports go one way\"");
    let section = section.split("\n## ").next().unwrap_or(section);
    let mut orders = BTreeMap::new();
    for line in section.lines() {
        let Some(rest) = line.strip_prefix("- `") else {
            continue;
        };
        let Some((folder, modules)) = rest.split_once("`: ") else {
            continue;
        };
        let modules: Vec<String> = modules
            .split('→')
            .map(|name| {
                name.trim()
                    .trim_end_matches('.')
                    .trim_matches('`')
                    .to_owned()
            })
            .collect();
        orders.insert(folder.to_owned(), modules);
    }
    orders
}

/// Every `.rs` file under `dir`, with its module path inside the crate (`a/b.rs` and
/// `a/b/mod.rs` are `[a, b]`). `skip` names top-level entries that belong to another crate
/// root (the CLI binary's `main.rs` and `cli/` beside the library).
fn rust_files(dir: &Path, prefix: &[String], skip: &[&str], out: &mut Vec<(PathBuf, Vec<String>)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if prefix.is_empty() && skip.contains(&name.as_str()) {
            continue;
        }
        if path.is_dir() {
            let mut inner = prefix.to_vec();
            inner.push(name);
            rust_files(&path, &inner, skip, out);
        } else if let Some(stem) = name.strip_suffix(".rs") {
            let mut module = prefix.to_vec();
            if stem != "mod" && !(prefix.is_empty() && (stem == "lib" || stem == "main")) {
                module.push(stem.to_owned());
            }
            out.push((path, module));
        }
    }
}

/// `text` without its comments (line comments, doc comments, block comments); string
/// literals are kept as they are (a `//` inside one cuts the rest of that line, which only
/// hides paths, never invents one).
fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("/*") {
            rest = after.split_once("*/").map_or("", |(_, tail)| tail);
        } else if rest.starts_with("//") {
            rest = rest.find('\n').map_or("", |end| &rest[end..]);
        } else {
            let next = rest.chars().next().unwrap();
            out.push(next);
            rest = &rest[next.len_utf8()..];
        }
    }
    out
}

fn identifier(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    &text[..end]
}

/// The first identifier of each item of the group that opens `text` (`{a, b::c, d}`).
fn group_heads(text: &str) -> Vec<String> {
    let mut heads = Vec::new();
    let mut depth = 0;
    let mut at_item_start = true;
    for (index, c) in text.char_indices() {
        match c {
            '{' => {
                depth += 1;
                at_item_start = depth == 1;
            }
            '}' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            ',' if depth == 1 => at_item_start = true,
            c if at_item_start && depth == 1 && !c.is_whitespace() => {
                at_item_start = false;
                let head = identifier(&text[index..]);
                if !head.is_empty() {
                    heads.push(head.to_owned());
                }
            }
            _ => {}
        }
    }
    heads
}

/// The top-level modules `code` (of the file at `module`) refers to through `crate::` or
/// through `super::` paths that climb out of its own top-level module.
fn referenced_tops(code: &str, module: &[String]) -> BTreeSet<String> {
    let mut tops = BTreeSet::new();
    let bytes = code.as_bytes();
    for (index, _) in code.match_indices("crate::") {
        // `$crate::` is a macro's, `ctxkit_core::` another crate's.
        let before = index.checked_sub(1).map(|i| bytes[i]);
        if before.is_some_and(|b| b == b'$' || b == b'_' || b.is_ascii_alphanumeric()) {
            continue;
        }
        let rest = &code[index + "crate::".len()..];
        if rest.starts_with('{') {
            tops.extend(group_heads(rest));
        } else {
            tops.insert(identifier(rest).to_owned());
        }
    }
    for (index, _) in code.match_indices("super::") {
        let before = index.checked_sub(1).map(|i| bytes[i]);
        if before.is_some_and(|b| b == b':' || b == b'_' || b.is_ascii_alphanumeric()) {
            continue;
        }
        let mut rest = &code[index..];
        let mut climbs = 0;
        while let Some(after) = rest.strip_prefix("super::") {
            climbs += 1;
            rest = after;
        }
        // From a/b/c (a file module), super is a/b; climbing to the root leaves a top name.
        if climbs >= module.len() {
            if rest.starts_with('{') {
                tops.extend(group_heads(rest));
            } else {
                tops.insert(identifier(rest).to_owned());
            }
        }
    }
    tops
}

/// The arrows of one crate: (file, from, to) for every reference between top-level modules.
fn arrows(src: &Path, skip: &[&str], tops: &BTreeSet<String>) -> Vec<(PathBuf, String, String)> {
    let mut files = Vec::new();
    rust_files(src, &[], skip, &mut files);
    let mut found = Vec::new();
    for (path, module) in files {
        let Some(from) = module.first() else {
            continue; // the crate root: it declares the modules and re-exports them
        };
        let code = without_comments(&std::fs::read_to_string(&path).unwrap());
        for to in referenced_tops(&code, &module) {
            if &to != from && tops.contains(&to) {
                found.push((path.clone(), from.clone(), to));
            }
        }
    }
    found
}

/// The top-level modules of a crate's source folder.
fn top_modules(src: &Path, skip: &[&str]) -> BTreeSet<String> {
    std::fs::read_dir(src)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| !skip.contains(&name.as_str()))
        .filter_map(|name| {
            let stem = name.strip_suffix(".rs").unwrap_or(&name).to_owned();
            let root = stem == "lib" || stem == "main";
            (!root && !name.starts_with('.') && (name.ends_with(".rs") || src.join(&name).is_dir()))
                .then_some(stem)
        })
        .filter(|stem| stem != "snapshots")
        .collect()
}

#[test]
fn every_crate_imports_one_way_with_no_circle() {
    let root = project_root();
    let doc = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let orders = declared_orders(&doc);
    for crate_src in [
        "core/src",
        "native/src",
        "wasm/src",
        "python/src",
        "lab/src",
    ] {
        assert!(orders.contains_key(crate_src), "the doc orders {crate_src}");
    }
    let mut problems = Vec::new();
    for (folder, order) in &orders {
        // native/src holds two crate roots: the library and the CLI binary (main.rs, cli/).
        let skip: &[&str] = if folder == "native/src" {
            &["main.rs", "cli"]
        } else {
            &[]
        };
        let src = root.join(folder);
        let tops = top_modules(&src, skip);
        let listed: BTreeSet<String> = order.iter().cloned().collect();
        for missing in tops.difference(&listed) {
            problems.push(format!(
                "{folder}: module `{missing}` is not in the doc's order"
            ));
        }
        for gone in listed.difference(&tops) {
            problems.push(format!(
                "{folder}: the doc lists `{gone}`, which is not a module"
            ));
        }
        let rank = |name: &str| order.iter().position(|m| m == name);
        for (path, from, to) in arrows(&src, skip, &tops) {
            if let (Some(from_rank), Some(to_rank)) = (rank(&from), rank(&to)) {
                if to_rank > from_rank {
                    let file = path.strip_prefix(&root).unwrap_or(&path).display();
                    problems.push(format!("{file}: an arrow up, {from} → {to}"));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_reader_finds_arrows_in_every_form_and_none_in_comments() {
    let code = without_comments(
        "use crate::{alpha::A, beta, gamma::{x, y}};\n\
         // use crate::commented;\n\
         /// [`crate::doc_link`]\n\
         /* crate::blocked */ let v = crate::delta::f();\n\
         macro_rules! m { () => { $crate::macro_only } }\n\
         use ctxkit_core::not_this_crate;\n\
         use super::super::epsilon::E;\n",
    );
    let module = ["inner".to_owned(), "leaf".to_owned()];
    let tops = referenced_tops(&code, &module);
    let expected: BTreeSet<String> = ["alpha", "beta", "gamma", "delta", "epsilon"]
        .into_iter()
        .map(str::to_owned)
        .collect();
    assert_eq!(tops, expected);
    // One `super::` from inner/leaf.rs stays inside `inner`: no arrow.
    assert!(referenced_tops("use super::sibling;", &module).is_empty());
}

#[test]
fn an_arrow_up_is_reported_with_its_file() {
    let dir = std::env::temp_dir().join(format!("ctxkit-module-graph-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("low")).unwrap();
    std::fs::write(dir.join("lib.rs"), "pub mod low; pub mod high;").unwrap();
    std::fs::write(dir.join("low/mod.rs"), "use crate::high::H;").unwrap();
    std::fs::write(dir.join("high.rs"), "use crate::low::L;").unwrap();
    let tops = top_modules(&dir, &[]);
    let found = arrows(&dir, &[], &tops);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(tops.len(), 2);
    let pairs: BTreeSet<(String, String)> = found
        .iter()
        .map(|(_, from, to)| (from.clone(), to.clone()))
        .collect();
    assert!(pairs.contains(&("low".to_owned(), "high".to_owned())));
    assert!(pairs.contains(&("high".to_owned(), "low".to_owned())));
    let orders = declared_orders(
        "## Imports go one way\n\n- `x/src`: `low` → `high`.\n\n## Next\n- `y`: `z`",
    );
    assert_eq!(orders.len(), 1);
    assert_eq!(orders["x/src"], ["low", "high"]);
}
