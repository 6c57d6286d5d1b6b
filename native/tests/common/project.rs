//! A project folder to run the real `ctxkit` binary in, for the end-to-end tests of the CLI:
//! with the default SQLite database, or ([`Project::all`]) also with a fresh PostgreSQL
//! database through `CTXKIT_DATABASE_URL`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use ctxkit::store::{PostgresStore, SqliteStore, Store};

use super::backends::{fresh_database, postgres_url};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_ctxkit");

/// A temporary working directory; the database is the default `.ctxkit/ctxkit.db` in it.
pub struct Project {
    dir: tempfile::TempDir,
    /// The PostgreSQL database the commands use (`CTXKIT_DATABASE_URL`), if not SQLite.
    database: Option<String>,
}

impl Project {
    /// A new, empty project.
    pub fn new() -> Project {
        Project {
            dir: tempfile::tempdir().unwrap(),
            database: None,
        }
    }

    /// A new project on SQLite, and one on a fresh PostgreSQL database when a server is there
    /// (see [`super::backends`]).
    pub fn all(test: &str) -> Vec<Project> {
        let mut projects = vec![Project::new()];
        if let Some(url) = postgres_url(test) {
            projects.push(Project {
                dir: tempfile::tempdir().unwrap(),
                database: Some(fresh_database(&url, test)),
            });
        }
        projects
    }

    /// The PostgreSQL database's URL, when the project uses one.
    pub fn database_url(&self) -> Option<&str> {
        self.database.as_deref()
    }

    /// A store on the project's database.
    pub fn store(&self) -> Box<dyn Store> {
        match &self.database {
            Some(url) => Box::new(PostgresStore::open(url).unwrap()),
            None => Box::new(SqliteStore::open(self.db()).unwrap()),
        }
    }

    /// The working directory.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The default database.
    pub fn db(&self) -> PathBuf {
        self.path().join(".ctxkit").join("ctxkit.db")
    }

    /// Writes `bytes` to `name` in the project; returns its path.
    pub fn file(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }

    /// The binary with `args`, in the project, colours off.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(BIN);
        command
            .args(args)
            .current_dir(self.path())
            .env("NO_COLOR", "1");
        match &self.database {
            Some(url) => command.env("CTXKIT_DATABASE_URL", url),
            None => command.env_remove("CTXKIT_DATABASE_URL"),
        };
        command
    }

    /// Runs the binary to the end.
    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    /// Runs the binary under `umask` (through `sh`, which sets it before exec).
    pub fn run_with_umask(&self, umask: &str, args: &[&str]) -> Output {
        Command::new("sh")
            .arg("-c")
            .arg(format!("umask {umask} && exec \"$0\" \"$@\""))
            .arg(BIN)
            .args(args)
            .current_dir(self.path())
            .env("NO_COLOR", "1")
            .output()
            .unwrap()
    }

    /// Runs the binary with its standard output a pipe whose reading end is closed before the
    /// binary starts (as `ctxkit ... | head -c0` would be): its first write fails with EPIPE.
    pub fn run_with_closed_stdout(&self, args: &[&str]) -> Output {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        self.command(args)
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .unwrap()
    }

    /// Everything stored: every session exported, in order (empty when there is no database).
    pub fn dump(&self) -> String {
        if self.database.is_none() && !self.db().exists() {
            return String::new();
        }
        let store = self.store();
        store
            .list_sessions()
            .unwrap()
            .iter()
            .map(|info| {
                format!(
                    "{}\n{:?}\n",
                    info.name,
                    store.export_session(&info.name).unwrap()
                )
            })
            .collect()
    }
}

/// Standard output as text.
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Standard error as text.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Fails the test, showing both outputs, unless the command succeeded.
pub fn assert_ok(output: &Output, what: &str) {
    assert!(
        output.status.success(),
        "{what}: {:?}\nstdout: {}\nstderr: {}",
        output.status,
        stdout(output),
        stderr(output)
    );
}

/// The permission bits of `path` (not following a symlink).
pub fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::symlink_metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o7777
}
