//! The one error type of the native shell.
//!
//! Every fallible public function returns [`Error`]. Each variant names what is at fault: the
//! session, the file, the memory id or the field, so a program (or the CLI) can show the
//! message to a person as it is. Failed calls change nothing already stored: writes run in
//! transactions, and an error is returned only after the transaction rolled back.
//!
//! Summarizer and offload failures inside a turn are not errors: they fall back (extractive
//! summary, output kept in the view) and are reported as [`crate::Event::Warning`]s.

use std::path::{Path, PathBuf};

use ctxkit_core::CoreError;

/// Why a call of the native shell failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The core refused an input (the message names the field).
    #[error("{context}: {source}")]
    Core {
        /// What was being done, naming the session when there is one.
        context: String,
        /// The core's error.
        source: CoreError,
    },
    /// SQLite failed. The message is SQLite's, without the SQL text it failed on.
    #[error("{context}: {}", sqlite_message(.source))]
    Database {
        /// What was being done, naming the session or memory.
        context: String,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// PostgreSQL failed, or could not be reached ([`crate::store::PostgresStore`]). The
    /// message names the server and database; [`Error::is_retryable`] says whether trying the
    /// call again may succeed (a lost connection: the next call connects again).
    #[error("{context}: PostgreSQL at {target}: {}", postgres_message(.source))]
    Postgres {
        /// The server and database (`host:port/database`).
        target: String,
        /// What was being done, naming the session or memory.
        context: String,
        /// The client's error.
        source: postgres::Error,
    },
    /// A file or folder could not be read or written.
    #[error("could not {action} {}: {source}", path.display())]
    Io {
        /// What was being done (`create folder`, `write`...).
        action: &'static str,
        /// The file or folder at fault.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A symbolic link stands where ctxkit would open a folder or file under the working
    /// directory: it is refused, so nothing ctxkit writes can be led elsewhere by it.
    #[error("{}: a symbolic link; ctxkit opens nothing through symbolic links under the working directory (they could lead its files elsewhere): replace it with a real folder or file", path.display())]
    Symlink {
        /// The link.
        path: PathBuf,
    },
    /// The folder of a database under the working directory was not the one ctxkit held open
    /// when SQLite opened the database, its `-wal` or its `-shm` (a `.ctxkit` swapped for a
    /// link meanwhile, see [`crate::db_folder`]): the open is refused before anything is
    /// written, and nothing is checkpointed or removed when the connection closes.
    #[error("{}: the database's folder changed while SQLite opened its files (the database, its -wal or -shm is not the one in the folder ctxkit checked: was the folder swapped for a link?); nothing was written", path.display())]
    FolderChanged {
        /// The database file, as its folder was named when it was checked.
        path: PathBuf,
    },
    /// No session has this name.
    #[error("no session named {0:?}")]
    NoSuchSession(String),
    /// A session with this name already exists.
    #[error("a session named {0:?} already exists")]
    SessionExists(String),
    /// Another writer appended to the session after this one read where its log ends;
    /// nothing was written. Read the log's end again, renumber and retry.
    #[error("session {session:?}: this append was numbered from seq {first_seq}, but another writer appended first and the log now ends at seq {log_ends_at}; nothing was written")]
    SeqConflict {
        /// The session.
        session: String,
        /// The seq the append started at (the log's end as this writer read it, plus one).
        first_seq: u64,
        /// Where the log really ends.
        log_ends_at: u64,
    },
    /// A stored row could not be read back.
    #[error("session {session:?}, {row}: {problem}")]
    CorruptRow {
        /// The session.
        session: String,
        /// Which row (`message seq 17`, `checkpoint through 40`).
        row: String,
        /// What is wrong with it.
        problem: String,
    },
    /// The database was written by a newer ctxkit.
    #[error("database {}: schema version {found} is newer than this ctxkit supports ({supported}); upgrade ctxkit", path.display())]
    SchemaTooNew {
        /// The database file.
        path: PathBuf,
        /// Its schema version.
        found: i64,
        /// The newest version this build knows.
        supported: i64,
    },
    /// The database's schema cannot be used as it is: its `user_version` says one thing and
    /// its tables another, or a migration failed.
    #[error("database {}: {problem}", path.display())]
    Schema {
        /// The database file.
        path: PathBuf,
        /// What is wrong, in one line.
        problem: String,
    },
    /// The database is older than this build and was opened read-only, so it cannot be
    /// migrated.
    #[error("database {}: schema version {found}, older than this ctxkit's {supported}; it needs a migration, which a read-only open does not do (a command that writes migrates it, with write access to the file)", path.display())]
    NeedsMigration {
        /// The database file.
        path: PathBuf,
        /// Its schema version.
        found: i64,
        /// The version this build needs.
        supported: i64,
    },
    /// A database read without locks (a read-only open, see
    /// [`crate::store::SqliteStore::open_read_only`]) was written meanwhile: what was read may
    /// mix the old and the new. Open it again and read again.
    #[error("database {}: written by another process during a read-only read; read it again", path.display())]
    DatabaseChanged {
        /// The database file.
        path: PathBuf,
    },
    /// No live memory has this id.
    #[error("no memory with id {0}")]
    NoSuchMemory(i64),
    /// An argument is invalid.
    #[error("{field}: {problem}")]
    InvalidInput {
        /// The field at fault.
        field: String,
        /// What is wrong.
        problem: String,
    },
    /// A summarizer call failed (only returned by direct summarizer calls; a turn falls back).
    #[error(transparent)]
    Summarizer(#[from] crate::llm::SummarizerError),
}

/// SQLite's message for `error`, without the SQL it quotes: a migration's error would
/// otherwise carry the whole migration, thousands of characters.
fn sqlite_message(error: &rusqlite::Error) -> String {
    match error {
        rusqlite::Error::SqlInputError { msg, .. } => msg.clone(),
        other => other.to_string(),
    }
}

/// What a PostgreSQL failure is: it decides the advice its message ends with and whether
/// [`Error::is_retryable`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PostgresFailure {
    /// An open connection broke, or the server is going away: the next call connects again.
    Lost,
    /// No connection could be made (nothing answered, the server is starting, it has no free
    /// connection slot): a later call may connect.
    Unreachable,
    /// The setup is wrong and stays wrong, however often the call is tried: credentials, the
    /// database, TLS, a missing extension. The text says what to check.
    Setup(&'static str),
    /// The server refused a statement (a retryable one only for a serialization failure or a
    /// deadlock).
    Statement,
}

/// The Display texts of tokio-postgres's error kinds that mean the connection's setup is wrong
/// (the kinds themselves are private; these texts are pinned with the crate by Cargo.lock and
/// checked by native/tests/all/pg_errors.rs), with what to check.
const SETUP_KINDS: [(&str, &str); 3] = [
    (
        "invalid configuration",
        "the URL leaves out what the connection needs (named before this)",
    ),
    (
        "authentication error",
        "the server refused the credentials: check the URL's user and password",
    ),
    (
        "invalid connection string",
        "the URL cannot be read: check its syntax",
    ),
];

/// The advice for a refused TLS handshake.
const TLS_ADVICE: &str =
    "TLS was refused: check sslmode, sslrootcert and the URL's host against the server's certificate";

/// What kind of failure `error` is (see [`PostgresFailure`]).
fn postgres_failure(error: &postgres::Error) -> PostgresFailure {
    if error.is_closed() {
        return PostgresFailure::Lost;
    }
    if let Some(db) = error.as_db_error() {
        return match db.code().code() {
            // admin_shutdown, crash_shutdown: the server is going away.
            "57P01" | "57P02" => PostgresFailure::Lost,
            // cannot_connect_now (starting up), too_many_connections.
            "57P03" | "53300" => PostgresFailure::Unreachable,
            // invalid_authorization_specification (no such role, pg_hba.conf refuses it),
            // invalid_password.
            "28000" | "28P01" => PostgresFailure::Setup(
                "the server refused this user: check the URL's user, password and sslmode",
            ),
            // invalid_catalog_name.
            "3D000" => PostgresFailure::Setup(
                "no such database: create it, or correct the URL's database name",
            ),
            // undefined_file: an extension the server does not have (pg_trgm is in
            // PostgreSQL's contrib package).
            "58P01" => PostgresFailure::Setup(
                "the server lacks an extension ctxkit needs: install PostgreSQL's contrib \
                 package (pg_trgm) on the server",
            ),
            _ => PostgresFailure::Statement,
        };
    }
    let text = error.to_string();
    if text.starts_with("error performing TLS handshake") {
        // A handshake cut by the network or a restarting server is not the setup's fault.
        return if cut_off(error) {
            PostgresFailure::Lost
        } else {
            PostgresFailure::Setup(TLS_ADVICE)
        };
    }
    if let Some((_, advice)) = SETUP_KINDS.iter().find(|(kind, _)| text.starts_with(kind)) {
        return PostgresFailure::Setup(advice);
    }
    if text.starts_with("error connecting to server") && names_no_such_host(error) {
        return PostgresFailure::Setup("the URL's host name does not resolve: check it");
    }
    if text.starts_with("error connecting to server") || text.starts_with("timeout waiting") {
        return PostgresFailure::Unreachable;
    }
    PostgresFailure::Lost
}

/// Whether `error`'s causes say the host name does not exist (the resolver's "no such name"
/// answers, as glibc and macOS word them), as opposed to a resolver that could not answer now
/// ("Temporary failure in name resolution"), which a later call may get past.
fn names_no_such_host(error: &postgres::Error) -> bool {
    const NO_SUCH_NAME: [&str; 3] = [
        "Name or service not known",
        "No address associated with hostname",
        "nodename nor servname provided",
    ];
    let mut cause = std::error::Error::source(error);
    while let Some(current) = cause {
        let text = current.to_string();
        if NO_SUCH_NAME.iter().any(|answer| text.contains(answer)) {
            return true;
        }
        cause = current.source();
    }
    false
}

/// Whether an I/O error in `error`'s causes says the connection was cut (reset, closed early)
/// rather than refused by TLS itself.
fn cut_off(error: &postgres::Error) -> bool {
    let mut cause = std::error::Error::source(error);
    while let Some(current) = cause {
        if let Some(io) = current.downcast_ref::<std::io::Error>() {
            if matches!(
                io.kind(),
                std::io::ErrorKind::ConnectionReset
                    | std::io::ErrorKind::ConnectionAborted
                    | std::io::ErrorKind::BrokenPipe
                    | std::io::ErrorKind::UnexpectedEof
            ) {
                return true;
            }
        }
        cause = current.source();
    }
    false
}

/// PostgreSQL's message for `error`, on one line: the server's message, detail, hint and
/// SQLSTATE, or what happened to the connection; then what it means (see
/// [`PostgresFailure`]).
fn postgres_message(error: &postgres::Error) -> String {
    let mut message = match error.as_db_error() {
        Some(db) => {
            let mut message = format!("{} (SQLSTATE {})", db.message(), db.code().code());
            for extra in [db.detail(), db.hint()].into_iter().flatten() {
                message.push_str(&format!("; {extra}"));
            }
            message
        }
        None => {
            let mut message = error.to_string();
            if let Some(cause) = std::error::Error::source(error) {
                let cause = cause.to_string();
                if !message.contains(&cause) {
                    message.push_str(&format!(": {cause}"));
                }
            }
            message
        }
    };
    match postgres_failure(error) {
        PostgresFailure::Lost => message.push_str(
            "; the connection was lost (the server may be restarting): retry, the next call \
             connects again (a write whose commit was sent may be stored: an append retried \
             with the same idempotency key, `--key` or `--after`, is stored once)",
        ),
        PostgresFailure::Unreachable => message.push_str(
            "; no connection could be made (the server may be down, starting or full): retry later",
        ),
        PostgresFailure::Setup(advice) => {
            message.push_str(&format!("; {advice} (retrying cannot help)"))
        }
        PostgresFailure::Statement => {}
    }
    message.replace(['\r', '\n'], " ")
}

/// Shorthand for results of the native shell.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An [`Error::InvalidInput`].
    pub fn invalid(field: impl Into<String>, problem: impl Into<String>) -> Self {
        Error::InvalidInput {
            field: field.into(),
            problem: problem.into(),
        }
    }

    /// A [`Error::Postgres`].
    pub(crate) fn postgres(target: &str, context: String, source: postgres::Error) -> Self {
        Error::Postgres {
            target: target.to_owned(),
            context,
            source,
        }
    }

    /// Whether trying the call again may succeed: a race lost to another writer
    /// ([`Error::SeqConflict`]: read the log's end again first), a PostgreSQL connection that
    /// was lost or could not be made, a serialization failure or deadlock PostgreSQL resolved
    /// by failing this transaction. Every such call wrote nothing, except one whose connection
    /// was lost after its `COMMIT` was sent: that commit may have been stored. An append under
    /// an idempotency key ([`crate::store::SessionStore::append_keyed`]) is safe to retry
    /// either way: a batch already stored is returned, not stored again.
    pub fn is_retryable(&self) -> bool {
        match self {
            Error::SeqConflict { .. } => true,
            Error::Postgres { source, .. } => match postgres_failure(source) {
                PostgresFailure::Lost | PostgresFailure::Unreachable => true,
                PostgresFailure::Setup(_) => false,
                PostgresFailure::Statement => source
                    .as_db_error()
                    .is_some_and(|db| matches!(db.code().code(), "40001" | "40P01")),
            },
            _ => false,
        }
    }

    /// An [`Error::Io`].
    pub fn io(action: &'static str, path: &Path, source: std::io::Error) -> Self {
        Error::Io {
            action,
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Adds context to SQLite and core results.
pub(crate) trait Context<T> {
    /// Wraps the error with what was being done.
    fn context(self, context: impl FnOnce() -> String) -> Result<T>;
}

impl<T> Context<T> for std::result::Result<T, rusqlite::Error> {
    fn context(self, context: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|source| Error::Database {
            context: context(),
            source,
        })
    }
}

impl<T> Context<T> for std::result::Result<T, CoreError> {
    fn context(self, context: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|source| Error::Core {
            context: context(),
            source,
        })
    }
}
