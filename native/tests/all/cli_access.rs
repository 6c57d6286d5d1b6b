//! Who can read and write what ctxkit keeps: the folders it creates are 0700 and its files
//! 0600 whatever the umask, `.ctxkit/` always holds its `.gitignore`, and the commands that
//! only read open the database read-only, so they work on a database this user cannot write
//! and never change one.
//!
//! Root bypasses file modes, so when the tests run as root the read-only cases run the binary
//! as `nobody` through `setpriv` (they are skipped, saying so, when `setpriv` is missing), and
//! one runs it, as root, on a read-only bind mount in a mount namespace of its own (skipped
//! where `unshare` cannot make one).

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::project::{assert_ok, mode, stderr, stdout, Project, BIN};

const NOBODY: u32 = 65_534;

/// The commands that only read, with a session `s` to read.
const READ_COMMANDS: [&[&str]; 11] = [
    &["sessions"],
    &["sessions", "--json"],
    &["stats", "s"],
    &["stats", "s", "--json"],
    &["view", "s"],
    &["memory", "list"],
    &["memory", "precis"],
    &["memory", "search", "tempfile"],
    &["history", "search", "s", "hello"],
    &["history", "search", "s", "hello", "--json"],
    &["history", "read", "s", "1"],
];

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

/// Everything in `dir`: names, sizes and modification times.
fn listing(dir: &Path) -> Vec<(PathBuf, u64, i64, i64)> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            let meta = entry.metadata().unwrap();
            (entry.path(), meta.len(), meta.mtime(), meta.mtime_nsec())
        })
        .collect();
    entries.sort();
    entries
}

/// Runs the binary with these arguments, in a project, as some user.
type Runner<'p> = Box<dyn Fn(&[&str]) -> Output + 'p>;

/// How to run the binary as a user who cannot write a file this process made: as `nobody`
/// when this process is root (`None` when `setpriv` is missing), else as this user.
fn unprivileged(project: &Project) -> Option<Runner<'_>> {
    let me = std::fs::metadata(project.db()).unwrap().uid();
    if me != 0 {
        return Some(Box::new(move |args: &[&str]| project.run(args)));
    }
    let setpriv = ["/usr/bin/setpriv", "/bin/setpriv"]
        .into_iter()
        .find(|path| Path::new(path).exists())?;
    Some(Box::new(move |args: &[&str]| {
        Command::new(setpriv)
            .args([
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                "--",
                BIN,
            ])
            .args(args)
            .current_dir(project.path())
            .env("NO_COLOR", "1")
            .output()
            .unwrap()
    }))
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

#[test]
fn read_commands_on_a_missing_database_create_nothing() {
    let project = Project::new();
    let output = project.run(&["sessions"]);
    assert_ok(&output, "sessions");
    assert!(
        stdout(&output).starts_with("no sessions in "),
        "{}",
        stdout(&output)
    );
    for args in READ_COMMANDS {
        let output = project.run(args);
        assert!(!stderr(&output).contains("panicked"), "{args:?}");
        assert!(
            !project.path().join(".ctxkit").exists(),
            "{args:?} created .ctxkit"
        );
    }
    let output = project.run(&["stats", "s"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("no session named \"s\""));
}

#[test]
fn read_commands_leave_the_database_and_its_folder_untouched() {
    let project = project_with_a_session();
    let folder = project.path().join(".ctxkit");
    let before = listing(&folder);
    for args in READ_COMMANDS {
        assert_ok(&project.run(args), &format!("{args:?}"));
        assert_eq!(listing(&folder), before, "{args:?}");
    }
}

#[test]
fn read_commands_work_on_a_database_this_user_cannot_write() {
    let project = project_with_a_session();
    let dump = project.dump();
    let Some(run) = unprivileged(&project) else {
        eprintln!("skipped: running as root without setpriv, file modes cannot be tested");
        return;
    };
    let folder = project.path().join(".ctxkit");
    // Someone else's database in a folder this user cannot write either.
    set_mode(project.path(), 0o755);
    set_mode(&folder, 0o555);
    set_mode(&project.db(), 0o444);
    let before = listing(&folder);
    for args in READ_COMMANDS {
        let output = run(args);
        assert_ok(&output, &format!("{args:?} on a read-only database"));
        assert_eq!(listing(&folder), before, "{args:?}");
    }
    let stats = run(&["stats", "s", "--json"]);
    let stats: serde_json::Value = serde_json::from_slice(&stats.stdout).unwrap();
    assert_eq!(stats["messages"], 2);
    assert!(stdout(&run(&["memory", "list"])).contains("the tests use tempfile"));
    // A command that writes fails in one line and changes nothing.
    let file = project.file("more.jsonl", b"{\"role\":\"user\",\"content\":\"x\"}\n");
    set_mode(&file, 0o644);
    let output = run(&["append", "s", file.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert_eq!(stderr(&output).trim_end().lines().count(), 1);
    assert_eq!(listing(&folder), before);
    set_mode(&folder, 0o700);
    assert_eq!(project.dump(), dump);
}

#[test]
fn read_commands_work_on_the_users_own_0400_database_and_create_nothing_beside_it() {
    let project = project_with_a_session();
    let Some(run) = unprivileged(&project) else {
        eprintln!("skipped: running as root without setpriv, file modes cannot be tested");
        return;
    };
    let folder = project.path().join(".ctxkit");
    set_mode(project.path(), 0o755);
    if std::fs::metadata(&folder).unwrap().uid() == 0 {
        // The run is as `nobody`: its own database, in its own (writable) folder.
        for path in std::fs::read_dir(&folder).unwrap() {
            std::os::unix::fs::chown(path.unwrap().path(), Some(NOBODY), Some(NOBODY)).unwrap();
        }
        std::os::unix::fs::chown(&folder, Some(NOBODY), Some(NOBODY)).unwrap();
    }
    set_mode(&project.db(), 0o400);
    let before = listing(&folder);
    for args in READ_COMMANDS {
        assert_ok(&run(args), &format!("{args:?}"));
        // SQLite would leave -wal and -shm files here, which a later writer might not be
        // able to use.
        assert_eq!(listing(&folder), before, "{args:?}");
    }
}

#[test]
fn a_read_only_database_that_needs_a_migration_is_a_clear_error() {
    let project = Project::new();
    let folder = project.path().join(".ctxkit");
    std::fs::create_dir(&folder).unwrap();
    // An empty file: schema version 0, the version before the first migration.
    std::fs::write(project.db(), b"").unwrap();
    let Some(run) = unprivileged(&project) else {
        eprintln!("skipped: running as root without setpriv, file modes cannot be tested");
        return;
    };
    set_mode(project.path(), 0o755);
    set_mode(&folder, 0o555);
    set_mode(&project.db(), 0o444);
    let output = run(&["sessions"]);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{message}");
    assert_eq!(message.trim_end().lines().count(), 1, "{message}");
    assert!(
        message.contains("schema version 0") && message.contains("migrat"),
        "{message}"
    );
    assert_eq!(std::fs::metadata(project.db()).unwrap().len(), 0);
    set_mode(&folder, 0o700);
}

#[test]
fn read_commands_work_on_a_read_only_mount() {
    let project = project_with_a_session();
    let folder = project.path().join(".ctxkit");
    let folder = folder.to_str().unwrap();
    // A private mount namespace (root only) where the folder is bound read-only onto itself:
    // nothing, root included, can write there.
    let run = |args: &[&str]| {
        Command::new("unshare")
            .args(["-m", "sh", "-c"])
            .arg(
                "mount --bind -o ro \"$1\" \"$1\" && mount -o remount,bind,ro \"$1\" && \
                 shift && exec \"$@\"",
            )
            .args(["sh", folder, BIN])
            .args(args)
            .current_dir(project.path())
            .env("NO_COLOR", "1")
            .output()
    };
    let probe = run(&["--version"]);
    if !probe.as_ref().is_ok_and(|output| output.status.success()) {
        eprintln!("skipped: no read-only bind mount here (needs unshare and root)");
        return;
    }
    for args in READ_COMMANDS {
        let output = run(args).unwrap();
        assert_ok(&output, &format!("{args:?} on a read-only mount"));
    }
    let stats = run(&["stats", "s", "--json"]).unwrap();
    let stats: serde_json::Value = serde_json::from_slice(&stats.stdout).unwrap();
    assert_eq!(stats["messages"], 2);
    let output = run(&["memory", "add", "x"]).unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("Read-only file system"),
        "{}",
        stderr(&output)
    );
}
