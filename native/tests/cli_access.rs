//! Who can read and write what ctxkit keeps: the folders it creates are 0700 and its files
//! 0600 whatever the umask, and `.ctxkit/` always holds its `.gitignore`.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use common::project::{assert_ok, mode, Project};

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// A project holding session `s` (two messages) and one memory.
fn project_with_a_session() -> Project {
    let project = Project::new();
    let file = project.file(
        "s.jsonl",
        b"{\"role\":\"user\",\"content\":\"hello\"}\n{\"role\":\"assistant\",\"content\":\"hi\"}\n",
    );
    assert_ok(
        &project.run(&["import", file.to_str().unwrap(), "--session", "s"]),
        "import",
    );
    assert_ok(
        &project.run(&["memory", "add", "the tests use tempfile"]),
        "memory add",
    );
    project
}

#[test]
fn a_bare_import_makes_a_private_ctxkit_folder_with_its_gitignore() {
    let project = project_with_a_session();
    let dir = project.path().join(".ctxkit");
    assert_eq!(mode(&dir), 0o700, ".ctxkit");
    assert_eq!(mode(&project.db()), 0o600, "the database");
    let gitignore = dir.join(".gitignore");
    assert_eq!(
        std::fs::read_to_string(&gitignore).unwrap(),
        ctxkit::files::GITIGNORE_CONTENT
    );
    assert_eq!(mode(&gitignore), 0o600);
}

#[test]
fn folders_are_0700_and_files_0600_whatever_the_umask() {
    let big = serde_json::json!([
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "bash", "arguments": "{}"}]},
        {"role": "tool", "tool_call_id": "c1", "content": "output line\n".repeat(2_000)}
    ]);
    for umask in ["000", "022", "077", "277"] {
        let project = Project::new();
        let file = project.file("big.json", big.to_string().as_bytes());
        let file = file.to_str().unwrap();
        let run = |args: &[&str]| {
            let output = project.run_with_umask(umask, args);
            assert_ok(&output, &format!("umask {umask}: {args:?}"));
        };
        run(&["append", "s", file, "--create"]);
        run(&["memory", "add", "remember this"]);
        run(&["import", file, "--session", "u", "--db", "sub/dir/x.db"]);
        let root = project.path();
        for folder in [
            ".ctxkit",
            ".ctxkit/tool_results",
            ".ctxkit/tool_results/s",
            "sub",
            "sub/dir",
        ] {
            assert_eq!(mode(&root.join(folder)), 0o700, "umask {umask}: {folder}");
        }
        let offloaded = std::fs::read_dir(root.join(".ctxkit/tool_results/s"))
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .collect::<Vec<_>>();
        assert_eq!(offloaded.len(), 1, "umask {umask}");
        for file in offloaded.iter().map(PathBuf::as_path).chain([
            root.join(".ctxkit/ctxkit.db").as_path(),
            root.join(".ctxkit/.gitignore").as_path(),
            root.join(".ctxkit/MEMORY.md").as_path(),
            root.join("sub/dir/x.db").as_path(),
        ]) {
            assert_eq!(mode(file), 0o600, "umask {umask}: {}", file.display());
        }
        // ctxkit made `sub/`, not `sub/.ctxkit`: a gitignore only goes into `.ctxkit/`.
        assert!(!root.join("sub/dir/.gitignore").exists());
    }
}

#[test]
fn a_folder_that_already_exists_keeps_its_mode() {
    let project = Project::new();
    let shared = project.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    set_mode(&shared, 0o755);
    let file = project.file("s.jsonl", b"{\"role\":\"user\",\"content\":\"hi\"}\n");
    assert_ok(
        &project.run_with_umask(
            "000",
            &["import", file.to_str().unwrap(), "--db", "shared/x.db"],
        ),
        "import",
    );
    assert_eq!(mode(&shared), 0o755);
    assert_eq!(mode(&shared.join("x.db")), 0o600);
}
