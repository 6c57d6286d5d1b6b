//! Opening a database read-only: for the commands that only read, so they work on a database
//! this user cannot write (someone else's, a 0400 file, a read-only mount) and never change
//! one.
//!
//! What a read-only open guarantees: it creates nothing (no folder, no database, not even
//! SQLite's `-wal` and `-shm` files), migrates nothing and writes nothing (SQLite refuses any
//! write on the connection). A database at another schema version is an error
//! ([`Error::NeedsMigration`] when it is older, [`Error::SchemaTooNew`] when newer).
//!
//! Why SQLite's own read-only mode is not enough: a WAL database read that way still creates
//! `-wal` and `-shm` files beside it when it can (and leaves them behind, with the reader as
//! their owner, where the database's owner may not be able to use them), and fails when it
//! cannot. So when no `-wal` file exists (no connection is open and every commit is in the
//! database file) the database is opened `immutable`: read without locks or shared memory.
//! A writer that starts meanwhile could change the file under the read, so the file's
//! size, times and inode are taken before the open, and every read call checks them again
//! (and that no `-wal` appeared): if anything changed, the call fails with
//! [`Error::DatabaseChanged`] and the caller reads again from a new open. When a `-wal`
//! file exists, another connection is live, and SQLite's read-only mode reads through its
//! files, which already exist.

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};

use crate::db_folder::{DatabaseFolder, OpenFiles};
use crate::error::{Context, Error, Result};
use crate::store::sqlite::file_stamp::{wal_path, FileStamp};
use crate::store::sqlite::schema::{check_version, needs_migration, SCHEMA_VERSION};
use crate::store::sqlite::search_index::register_search_function;
use crate::store::sqlite::{abandon, existing_database, SqliteOptions, SqliteStore};

/// Whether `path` exists (a dangling symlink counts: it is there).
fn exists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

/// A `file:` URI for `path` (absolute), every byte outside the unreserved set percent-encoded
/// so that `?`, `#` and `%` in a folder's name stay part of the path.
fn file_uri(path: &Path, immutable: bool) -> String {
    let mut uri = String::from("file:");
    for byte in path.as_os_str().as_bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'.' | b'_' | b'~' => {
                uri.push(char::from(*byte));
            }
            _ => uri.push_str(&format!("%{byte:02X}")),
        }
    }
    uri.push_str("?mode=ro");
    if immutable {
        uri.push_str("&immutable=1");
    }
    uri
}

impl SqliteStore {
    /// Opens the existing database at `path` read-only (see the module doc): nothing is
    /// created or written. Fails when the file is missing, is not a regular file, or is not
    /// at this build's schema version.
    pub fn open_read_only(path: impl AsRef<Path>) -> Result<Self> {
        SqliteStore::open_read_only_with(path, SqliteOptions::default())
    }

    /// [`SqliteStore::open_read_only`] with `options` (only the busy timeout applies).
    pub fn open_read_only_with(path: impl AsRef<Path>, options: SqliteOptions) -> Result<Self> {
        let given = path.as_ref();
        if !existing_database(given)? {
            return Err(Error::io(
                "open",
                given,
                std::io::Error::from(std::io::ErrorKind::NotFound),
            ));
        }
        let path = given
            .canonicalize()
            .map_err(|e| Error::io("resolve", given, e))?;
        // Taken before the open: a change between the two is caught like one during a read.
        let stamp = FileStamp::of(&path)?;
        let at_rest = !exists(&wal_path(&path));
        SqliteStore::open_read_only_at(path.clone(), &path, (stamp, at_rest), None, options)
    }

    /// [`SqliteStore::open_read_only_with`] for the database `folder` names (under the working
    /// directory): read through its held folder (SQLite is given the path through the folder's
    /// handle; the stamp and the `-wal` looked at there), and the database SQLite opened is
    /// checked to be that folder's before anything is read ([`crate::db_folder`]; else
    /// [`Error::FolderChanged`]).
    pub fn open_read_only_in(folder: DatabaseFolder, options: SqliteOptions) -> Result<Self> {
        let path = folder.path();
        let name = folder.file_name("");
        if folder.folder().file_identity(&name)?.is_none() {
            let error = std::io::Error::from(std::io::ErrorKind::NotFound);
            return Err(Error::io("open", &path, error));
        }
        let stamp = FileStamp::at(folder.folder(), &name)?;
        let at_rest = folder
            .folder()
            .file_identity(&folder.file_name("-wal"))?
            .is_none();
        let sqlite_path = folder.sqlite_path();
        SqliteStore::open_read_only_at(path, &sqlite_path, (stamp, at_rest), Some(folder), options)
    }

    /// The read-only open of the database SQLite finds at `sqlite_path` (absolute), named
    /// `path` in messages, whose file looked like `stamp` and had no `-wal` beside it when
    /// `at_rest`.
    fn open_read_only_at(
        path: PathBuf,
        sqlite_path: &Path,
        (stamp, at_rest): (FileStamp, bool),
        folder: Option<DatabaseFolder>,
        options: SqliteOptions,
    ) -> Result<Self> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let at = path.display().to_string();
        // Held through the open (see crate::db_folder): a read-only connection that is the
        // only one rebuilds the `-shm` like any other.
        let _lock = match &folder {
            Some(folder) => Some(folder.lock_open(options.busy_timeout)?),
            None => None,
        };
        let connection = Connection::open_with_flags(file_uri(sqlite_path, at_rest), flags)
            .context(|| format!("opening {at} read-only"))?;
        if let Some(folder) = &folder {
            // Before the first read: the database SQLite opened is the held folder's.
            if let Err(error) = folder.check_open(OpenFiles::Database) {
                abandon(connection);
                return Err(error);
            }
        }
        connection
            .busy_timeout(options.busy_timeout)
            .context(|| format!("{at}: setting the busy timeout"))?;
        register_search_function(&connection)
            .context(|| format!("{at}: registering the search function"))?;
        let store = SqliteStore::from_parts(connection, path, at_rest.then_some(stamp), folder);
        let version: i64 = store
            .connection
            .query_row("PRAGMA user_version", [], |row| row.get(0))
            .context(|| format!("{at}: reading user_version"))?;
        check_version(&store.connection, store.path(), version)?;
        let needs = needs_migration(&store.connection, version)
            .context(|| format!("{at}: checking its migrations"))?;
        if needs {
            return Err(Error::NeedsMigration {
                path: store.path().to_path_buf(),
                found: version,
                supported: SCHEMA_VERSION,
            });
        }
        store.check_unchanged()?;
        Ok(store)
    }

    /// `result`, unless the database was written while this store read it without locks: then
    /// [`Error::DatabaseChanged`], whatever `result` was (a torn read may fail in any way, or
    /// seem to succeed). Every read call of the store ends with this.
    pub(super) fn checked<T>(&self, result: Result<T>) -> Result<T> {
        self.check_unchanged()?;
        result
    }

    /// Fails with [`Error::DatabaseChanged`] when this store reads without locks and the file
    /// was written since it was opened (see the module doc); a no-op for every other store.
    pub(crate) fn check_unchanged(&self) -> Result<()> {
        let Some(stamp) = &self.snapshot else {
            return Ok(());
        };
        let (wal, now) = match &self.folder {
            Some(folder) => (
                folder
                    .folder()
                    .file_identity(&folder.file_name("-wal"))?
                    .is_some(),
                FileStamp::at(folder.folder(), &folder.file_name(""))?,
            ),
            None => (exists(&wal_path(self.path())), FileStamp::of(self.path())?),
        };
        if wal || now != *stamp {
            return Err(Error::DatabaseChanged {
                path: self.path().to_path_buf(),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_keep_every_byte_of_the_path() {
        assert_eq!(
            file_uri(Path::new("/tmp/a b/c?d#e%f.db"), true),
            "file:/tmp/a%20b/c%3Fd%23e%25f.db?mode=ro&immutable=1"
        );
        assert_eq!(
            file_uri(Path::new("/x/ctxkit.db"), false),
            "file:/x/ctxkit.db?mode=ro"
        );
    }
}
