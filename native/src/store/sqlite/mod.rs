//! [`SqliteStore`]: the embedded store, one SQLite file (rusqlite, SQLite bundled).
//!
//! Settings, applied on every open: a busy timeout (default 5 s: another process writing makes
//! this one wait, not fail), `journal_mode = WAL` (readers never block the writer),
//! `synchronous = NORMAL` (see below), `foreign_keys = ON`, then the migrations
//! ([`schema`]). The file is created with mode 0600 (its folders 0700), whatever the
//! umask: it holds conversations and memories. `path` must be a regular file or not exist yet.
//! [`SqliteStore::open_read_only`] (in [`read_only`]) is the open for commands that only
//! read. A database under the working directory is opened through its held folder instead
//! ([`SqliteStore::open_in`], [`SqliteStore::open_read_only_in`]): its database, `-wal` and
//! `-shm` are checked to be that folder's before anything is written ([`crate::db_folder`]).
//!
//! Durability: every write is one transaction (`BEGIN IMMEDIATE`, so two writers queue instead
//! of failing halfway). In WAL mode with `synchronous = NORMAL` a commit is atomic and
//! survives a crash or kill of the process, without an fsync; the WAL is fsynced when it is
//! checkpointed, which [`crate::store::SessionStore::sync`] does (the engine calls it once per turn) and
//! SQLite does by itself every [`SqliteOptions::wal_autocheckpoint_pages`]. So a power loss
//! or OS crash can drop the commits since the last checkpoint (whole transactions, never part
//! of one, and never corrupting the file). `synchronous = FULL`
//! ([`SqliteOptions::full_sync`]) closes that window at the cost of an fsync per append.
//! SQL is static text with bound parameters (the pragmas above take numbers this code sets).
//!
//! Imports go one way: the leaves (`rows`, `search_index`, `file_stamp`) know nothing of the
//! backend; `schema` and `queries` build on them; this file (the store type and its open) on
//! `schema`; the trait implementations (`sessions`, `history`, `memory`, `read_only`) on all
//! of them. Nothing below imports what is above it.

mod file_stamp;
mod history;
mod memory;
mod queries;
mod read_only;
mod reads;
mod rows;
mod schema;
mod search_index;
mod sessions;

pub use schema::SCHEMA_VERSION;

use std::fs::OpenOptions;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags, Transaction, TransactionBehavior, MAIN_DB};

use crate::db_folder::{DatabaseFolder, OpenFiles, OpenLock};
use crate::error::{Context, Error, Result};
use crate::files::{create_private_dir, create_private_file};
use file_stamp::FileStamp;
use schema::migrate;
use search_index::{fill_offload_texts, register_search_function};

/// How to open a database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SqliteOptions {
    /// How long to wait for another writer before failing. Default 5 s.
    pub busy_timeout: Duration,
    /// `synchronous = FULL` instead of `NORMAL`: an fsync per commit. Default false.
    pub full_sync: bool,
    /// SQLite checkpoints the WAL by itself once it holds this many pages (4 KiB each).
    /// Default 10,000 (about 40 MB): checkpoints are what fsync under `NORMAL`, so appends
    /// leave them to [`crate::store::SessionStore::sync`], which the engine calls once per turn; this is
    /// the backstop for writers that never call it.
    pub wal_autocheckpoint_pages: u32,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        SqliteOptions {
            busy_timeout: Duration::from_secs(5),
            full_sync: false,
            wal_autocheckpoint_pages: 10_000,
        }
    }
}

/// After a checkpoint, the WAL file is truncated to at most this many bytes.
const WAL_SIZE_LIMIT_BYTES: i64 = 64 << 20;

/// The SQLite store (see the module doc).
#[derive(Debug)]
pub struct SqliteStore {
    pub(crate) connection: Connection,
    path: PathBuf,
    /// Set when the database is read without locks (a read-only open of a database at rest):
    /// what the file looked like before the open.
    pub(super) snapshot: Option<FileStamp>,
    /// The database's folder, held open, when it lies under the working directory: its files
    /// were checked to be that folder's ([`crate::db_folder`]), and the read-only checks
    /// look at them through it.
    pub(super) folder: Option<DatabaseFolder>,
}

impl Drop for SqliteStore {
    /// A database under the working directory is checkpointed through the connection before
    /// it closes: SQLite's own checkpoint at close first looks at the database by its path and
    /// skips the checkpoint when that path leads to another file (a `.ctxkit` swapped for a
    /// link at that moment), which would leave committed frames only in the `-wal` (see
    /// [`crate::db_folder`] for why that matters). This one goes through the open files.
    fn drop(&mut self) {
        let writable = self
            .connection
            .is_readonly(MAIN_DB)
            .is_ok_and(|read_only| !read_only);
        if self.folder.is_some() && writable {
            let _ = self
                .connection
                .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |row| {
                    row.get::<_, i64>(0)
                });
        }
    }
}

/// Closes a connection whose files were not the checked folder's without writing anything:
/// no checkpoint, so nothing of another folder's `-wal` reaches the database and no `-wal` or
/// `-shm` is removed by its path (which may lead elsewhere again by then).
pub(super) fn abandon(connection: Connection) {
    let _ = connection.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true);
    drop(connection);
}

/// Whether `path` holds a database to open: `false` when nothing is there yet, `true` for a
/// regular file (or a symlink to one). Anything else (a folder, `/dev/null`, a FIFO) is
/// refused: SQLite would make a journal beside it, or block, or fail later and less clearly.
pub(super) fn existing_database(path: &Path) -> Result<bool> {
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(error) => return Err(Error::io("inspect", path, error)),
    };
    if meta.is_file() {
        return Ok(true);
    }
    let kind = meta.file_type();
    let what = if kind.is_dir() {
        "a folder"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a file"
    };
    Err(Error::invalid(
        "database",
        format!(
            "{}: not a regular file ({what}); the database must be a regular file, or a path \
             where one can be created",
            path.display()
        ),
    ))
}

impl SqliteStore {
    /// Opens (creating it and its folder if needed) the database at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        SqliteStore::open_with(path, SqliteOptions::default())
    }

    /// Opens the database at `path` with `options`. Folders it creates are 0700 and the file
    /// it creates 0600, whatever the umask; a `.ctxkit` folder it creates gets its
    /// `.gitignore` ([`crate::files::create_private_dir`]).
    pub fn open_with(path: impl AsRef<Path>, options: SqliteOptions) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        if existing_database(&path)? {
            // SQLite would open a file it cannot write read-only and fail later, naming a
            // transaction; this names the file and the permission.
            OpenOptions::new()
                .append(true)
                .open(&path)
                .map_err(|e| Error::io("open for writing", &path, e))?;
        } else {
            if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                create_private_dir(parent)?;
            }
            // Created here first so that it (and SQLite's -wal and -shm files, which copy its
            // mode) is readable by its owner only.
            match create_private_file(&path) {
                Ok(_) => {}
                // Another process created it meanwhile: it is theirs to have set up.
                Err(Error::Io { source, .. })
                    if source.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(error) => return Err(error),
            }
        }
        let connection =
            Connection::open(&path).context(|| format!("opening {}", path.display()))?;
        SqliteStore::configure(connection, path, options, None)
    }

    /// Opens the database `folder` names (under the working directory, already made there by
    /// [`crate::files::prepare_database_inside`]) through its held folder, with `options`:
    /// SQLite is given the path through the folder's handle, creates nothing, and the
    /// database, `-wal` and `-shm` it opened are checked to be that folder's before anything
    /// is written ([`crate::db_folder`]); if they are not, [`Error::FolderChanged`].
    pub fn open_in(folder: DatabaseFolder, options: SqliteOptions) -> Result<Self> {
        let path = folder.path();
        let name = folder.file_name("");
        if folder.folder().file_identity(&name)?.is_none() {
            let error = std::io::Error::from(std::io::ErrorKind::NotFound);
            return Err(Error::io("open", &path, error));
        }
        // Named here rather than as a failed transaction later (see `open_with`).
        folder.folder().check_writable(&name)?;
        // Held until the files are checked (or the connection abandoned): see crate::db_folder.
        let lock = folder.lock_open(options.busy_timeout)?;
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let connection = Connection::open_with_flags(folder.sqlite_path(), flags)
            .context(|| format!("opening {}", path.display()))?;
        if let Err(error) = folder.check_open(OpenFiles::Database) {
            abandon(connection);
            return Err(error);
        }
        SqliteStore::configure(connection, path, options, Some((folder, lock)))
    }

    /// A store over `connection` as it is (no settings, no migrations).
    pub(super) fn from_parts(
        connection: Connection,
        path: PathBuf,
        snapshot: Option<FileStamp>,
        folder: Option<DatabaseFolder>,
    ) -> SqliteStore {
        SqliteStore {
            connection,
            path,
            snapshot,
            folder,
        }
    }

    /// An in-memory database (tests, dry runs); it has no WAL and disappears when dropped.
    pub fn open_in_memory() -> Result<Self> {
        let connection =
            Connection::open_in_memory().context(|| "opening an in-memory database".to_owned())?;
        SqliteStore::configure(
            connection,
            PathBuf::from(":memory:"),
            SqliteOptions::default(),
            None,
        )
    }

    /// Applies the settings and migrations. With `folder`, the database, `-wal` and `-shm` the
    /// first read opened are checked to be that folder's before anything else is done, and
    /// its open lock is released once they are (or once the connection is abandoned).
    fn configure(
        mut connection: Connection,
        path: PathBuf,
        options: SqliteOptions,
        folder: Option<(DatabaseFolder, OpenLock)>,
    ) -> Result<Self> {
        let at = path.display().to_string();
        connection
            .busy_timeout(options.busy_timeout)
            .context(|| format!("{at}: setting the busy timeout"))?;
        let switched = connection
            .query_row("PRAGMA journal_mode = WAL", [], |row| {
                row.get::<_, String>(0)
            })
            .context(|| format!("{at}: switching to WAL"));
        let folder = if let Some((folder, lock)) = folder {
            // A read opens the -wal and -shm (a database already in WAL mode may not have
            // needed them for the pragma); then all three are checked, before any write. On
            // any failure until then the connection is abandoned: its files may be another
            // folder's, so closing must neither checkpoint nor remove anything.
            let checked = switched.and_then(|mode| {
                connection
                    .query_row("SELECT count(*) FROM sqlite_master", [], |row| {
                        row.get::<_, i64>(0)
                    })
                    .context(|| format!("{at}: reading its schema"))?;
                folder.check_open(if mode.eq_ignore_ascii_case("wal") {
                    OpenFiles::WithWal
                } else {
                    OpenFiles::Database
                })
            });
            if let Err(error) = checked {
                abandon(connection);
                drop(lock);
                return Err(error);
            }
            drop(lock);
            Some(folder)
        } else {
            switched?;
            None
        };
        let synchronous = if options.full_sync { "FULL" } else { "NORMAL" };
        connection
            .pragma_update(None, "synchronous", synchronous)
            .context(|| format!("{at}: setting synchronous"))?;
        connection
            .pragma_update(None, "foreign_keys", "ON")
            .context(|| format!("{at}: enabling foreign keys"))?;
        connection
            .pragma_update(None, "wal_autocheckpoint", options.wal_autocheckpoint_pages)
            .context(|| format!("{at}: setting wal_autocheckpoint"))?;
        let _limit: i64 = connection
            .query_row(
                &format!("PRAGMA journal_size_limit = {WAL_SIZE_LIMIT_BYTES}"),
                [],
                |row| row.get(0),
            )
            .context(|| format!("{at}: setting journal_size_limit"))?;
        register_search_function(&connection)
            .context(|| format!("{at}: registering the search function"))?;
        migrate(&mut connection, &path)?;
        Ok(SqliteStore::from_parts(connection, path, None, folder))
    }

    /// Gives the history search the text of every offloaded output whose row has none yet
    /// (recorded before schema version 5, or without its text), in one transaction: `read`
    /// answers an output's text for its relative path, or `None` when its file cannot be read
    /// (that output is left as it is, and tried again by the next call). The store does not
    /// read the files itself (the offload folder's rules live above it):
    /// [`crate::Engine::open`] calls it with [`crate::offload::read_offload_text`] under its
    /// working directory. Returns how many outputs it indexed.
    pub fn index_offload_files(
        &mut self,
        read: &mut dyn FnMut(&str) -> Option<String>,
    ) -> Result<u64> {
        let at = self.path.display().to_string();
        // Most opens find nothing to do: a read through the partial index, no write lock.
        let pending: bool = self
            .connection
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM offloads WHERE search_text IS NULL)",
                [],
                |row| row.get(0),
            )
            .context(|| format!("{at}: looking for offloaded outputs to index"))?;
        if !pending {
            return Ok(0);
        }
        let transaction = self.write(|| format!("{at}: indexing offloaded outputs for search"))?;
        let filled = fill_offload_texts(&transaction, &at, read)?;
        transaction
            .commit()
            .context(|| format!("{at}: indexing offloaded outputs for search"))?;
        Ok(filled)
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A write transaction that takes the write lock at once (waiting up to the busy timeout).
    pub(crate) fn write(&mut self, what: impl Fn() -> String) -> Result<Transaction<'_>> {
        self.connection
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .context(what)
    }
}
