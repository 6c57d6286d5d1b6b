//! [`DatabaseFolder`]: a SQLite database under the working directory, its folder held open
//! (links refused, [`crate::held_dir`]), and the check that the files SQLite opened (the
//! database, its `-wal` and its `-shm`) are that folder's.
//!
//! Why a check and not only an open through the handle: SQLite's unix VFS opens its files by
//! path, and resolves every symbolic link of a path itself, into text, before opening it
//! (`unixFullPathname`), so even `/proc/self/fd/<n>/ctxkit.db` becomes the folder's textual path
//! again, and the `-wal` and `-shm` are opened later by that text. Swapping the folder for a
//! link between those moments (someone who can write the working directory, racing) would have
//! SQLite read and write a database elsewhere, or pair this database with another folder's
//! `-wal`: commits lost from the real database, both corrupted. A VFS that opens through the
//! handle needs `unsafe`, which this workspace forbids.
//!
//! So, with a [`DatabaseFolder`]:
//! - SQLite is given the path through the held handle ([`DatabaseFolder::sqlite_path`]:
//!   `/proc/self/fd/<n>/<name>` on Linux), so it starts from where the checked folder really is
//!   now, whatever stands at its old name; elsewhere the folder's path;
//! - the database is opened without `SQLITE_OPEN_CREATE` (it was made in the held folder), and
//!   before SQLite reads anything [`DatabaseFolder::check_open`] makes sure the process has
//!   the held folder's database open; after the first read opened the `-wal` and `-shm`, that
//!   it has those open too. A file of the held folder that the process does not have open
//!   means SQLite opened another one: [`Error::FolderChanged`], before any write (migrations
//!   and appends come after the check), and the connection closes without checkpointing or
//!   removing anything (`SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE`).
//!
//! - while SQLite opens the files and until they are checked (or the connection is abandoned),
//!   the process holds an exclusive lock on the held folder ([`DatabaseFolder::lock_open`]):
//!   no two ctxkit processes are in that window at once. A connection led to another folder's
//!   `-wal` while it got the real `-shm` as the only connection rebuilds that `-shm` for the
//!   wrong `-wal` before it is refused; a correct connection that opened meanwhile would trust
//!   the rebuilt `-shm` and could restart the real `-wal` over committed frames not yet in the
//!   database (2 of 152 acknowledged appends lost in one run of `native/tests/all/db_folder_swap.rs`
//!   before the lock). With the lock, the next connection opens after the refused one closed,
//!   is the only one again, and rebuilds the `-shm` from the real `-wal`.
//!
//! What that leaves: SQLite may still *create* an empty `-wal` or `-shm` in the other folder
//! in the microseconds it is led there; nothing of the database is written there and the open
//! is refused. And a store opened this way checkpoints through its connection before it closes
//! (`impl Drop for SqliteStore`): SQLite's own checkpoint at close looks at the database by
//! its path first and skips when that leads elsewhere, which left such frames behind; with
//! it, a `-wal` holds frames only while a connection that uses it is open (or after a kill). The files open in the process are listed from `/proc/self/fd` (Linux) or
//! `/dev/fd`; where neither can be read the check cannot be made and is skipped. In a process
//! holding other connections to the same database, another connection's file could pass for
//! this one's; the command line opens one.

use std::collections::BTreeSet;
use std::ffi::{OsStr, OsString};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use rustix::fs::FlockOperation;
use rustix::io::Errno;

use crate::error::{Error, Result};
use crate::held_dir::HeldDir;

/// Where this process lists its open files.
const OPEN_FILES: &str = if cfg!(target_os = "linux") {
    "/proc/self/fd"
} else {
    "/dev/fd"
};

/// A database file under the working directory: its folder, held open, and its name there.
#[derive(Debug)]
pub struct DatabaseFolder {
    folder: HeldDir,
    name: OsString,
}

/// Which of a database's files [`DatabaseFolder::check_open`] checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenFiles {
    /// The database file alone (right after the open, before SQLite reads).
    Database,
    /// The database, its `-wal` and its `-shm` (after the first read in WAL mode).
    WithWal,
}

impl DatabaseFolder {
    /// The database `name` in the held `folder`.
    pub fn new(folder: HeldDir, name: &OsStr) -> DatabaseFolder {
        DatabaseFolder {
            folder,
            name: name.to_owned(),
        }
    }

    /// The database's path as its folder was named when checked (for messages).
    pub fn path(&self) -> PathBuf {
        self.folder.path().join(&self.name)
    }

    /// The folder, held open.
    pub fn folder(&self) -> &HeldDir {
        &self.folder
    }

    /// The file name of the database (or, with `suffix`, of its `-wal` or `-shm`).
    pub fn file_name(&self, suffix: &str) -> OsString {
        let mut name = self.name.clone();
        name.push(suffix);
        name
    }

    /// The path to give SQLite: through the held handle when the system has such a path
    /// ([`HeldDir::handle_path`]), else the folder's path.
    pub fn sqlite_path(&self) -> PathBuf {
        match self.folder.handle_path() {
            Some(handle) => handle.join(&self.name),
            None => self.path(),
        }
    }

    /// Checks that this process has the held folder's database open (and, with
    /// [`OpenFiles::WithWal`], its `-wal` and `-shm`): else SQLite opened another folder's,
    /// and the error is [`Error::FolderChanged`] (a link where a file of the database should
    /// be is [`Error::Symlink`]). Skipped where this process's open files cannot be listed.
    pub fn check_open(&self, files: OpenFiles) -> Result<()> {
        let suffixes: &[&str] = match files {
            OpenFiles::Database => &[""],
            OpenFiles::WithWal => &["", "-wal", "-shm"],
        };
        let Some(open) = open_file_identities() else {
            return Ok(());
        };
        for suffix in suffixes {
            let identity = self.folder.file_identity(&self.file_name(suffix))?;
            if !identity.is_some_and(|identity| open.contains(&identity)) {
                return Err(Error::FolderChanged { path: self.path() });
            }
        }
        Ok(())
    }
}

/// How long [`DatabaseFolder::lock_open`] sleeps between tries.
const LOCK_RETRY: Duration = Duration::from_millis(1);

/// An exclusive lock on a database's held folder, taken by [`DatabaseFolder::lock_open`] and
/// released when dropped. It holds its own handle on the folder (a duplicate, so the same
/// lock), so the store can take the folder while the lock is held.
#[derive(Debug)]
pub struct OpenLock {
    fd: OwnedFd,
}

impl Drop for OpenLock {
    fn drop(&mut self) {
        // Closing the duplicate alone would not release it: the store's handle shares it.
        let _ = rustix::fs::flock(&self.fd, FlockOperation::Unlock);
    }
}

impl DatabaseFolder {
    /// Takes the exclusive lock that every ctxkit process holds from before SQLite opens this
    /// database until its files are checked ([`DatabaseFolder::check_open`]) or the connection
    /// is abandoned (why: the module docs). Another process's lock is waited for, up to `wait`;
    /// then the error names the folder. The lock is on the held folder itself, so a folder
    /// swapped for a link does not change which lock is taken.
    pub fn lock_open(&self, wait: Duration) -> Result<OpenLock> {
        let at = self.folder.path();
        let fd = self
            .folder
            .as_fd()
            .try_clone_to_owned()
            .map_err(|e| Error::io("hold", at, e))?;
        let started = Instant::now();
        loop {
            match rustix::fs::flock(&fd, FlockOperation::NonBlockingLockExclusive) {
                Ok(()) => return Ok(OpenLock { fd }),
                Err(Errno::WOULDBLOCK | Errno::INTR) if started.elapsed() < wait => {
                    std::thread::sleep(LOCK_RETRY);
                }
                Err(Errno::WOULDBLOCK) => {
                    let error = std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        format!(
                            "another ctxkit process held it for {} ms while opening the database",
                            wait.as_millis()
                        ),
                    );
                    return Err(Error::io("lock the database folder", at, error));
                }
                Err(errno) => return Err(Error::io("lock the database folder", at, errno.into())),
            }
        }
    }
}

/// The device and inode of every file this process has open, or `None` when they cannot be
/// listed. A descriptor closed while listing is skipped.
fn open_file_identities() -> Option<BTreeSet<(u64, u64)>> {
    let entries = std::fs::read_dir(OPEN_FILES).ok()?;
    let mut found = BTreeSet::new();
    for entry in entries.flatten() {
        // Following the descriptor's link: what it has open.
        if let Ok(meta) = std::fs::metadata(entry.path()) {
            found.insert((meta.dev(), meta.ino()));
        }
    }
    Some(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    fn database_in(dir: &std::path::Path) -> DatabaseFolder {
        std::fs::write(dir.join("ctxkit.db"), b"").unwrap();
        DatabaseFolder::new(HeldDir::open(dir).unwrap(), OsStr::new("ctxkit.db"))
    }

    #[test]
    fn a_database_open_in_another_folder_is_refused() {
        let (held, other) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let folder = database_in(held.path());
        let _elsewhere = rusqlite::Connection::open(other.path().join("ctxkit.db")).unwrap();
        assert!(matches!(
            folder.check_open(OpenFiles::Database),
            Err(Error::FolderChanged { .. })
        ));
        let _here = rusqlite::Connection::open(folder.sqlite_path()).unwrap();
        folder.check_open(OpenFiles::Database).unwrap();
        // No -wal or -shm open yet.
        assert!(matches!(
            folder.check_open(OpenFiles::WithWal),
            Err(Error::FolderChanged { .. })
        ));
    }

    #[test]
    fn the_open_lock_is_one_per_folder_whatever_name_it_is_reached_by() {
        let root = tempfile::tempdir().unwrap();
        let real = root.path().join("real");
        std::fs::create_dir(&real).unwrap();
        let first = database_in(&real);
        let held = first.lock_open(Duration::ZERO).unwrap();
        // The folder renamed and its name taken by a link elsewhere: a process holding the
        // moved folder still waits for the same lock, and names the folder when it gives up.
        std::fs::rename(&real, root.path().join("moved")).unwrap();
        let second = DatabaseFolder::new(
            HeldDir::open(&root.path().join("moved")).unwrap(),
            OsStr::new("ctxkit.db"),
        );
        let error = second.lock_open(Duration::from_millis(20)).unwrap_err();
        let message = error.to_string();
        assert!(message.contains("lock the database folder"), "{message}");
        assert!(message.contains("moved"), "{message}");
        drop(held);
        second.lock_open(Duration::ZERO).unwrap();
    }

    #[test]
    fn sqlite_finds_the_held_folder_after_its_name_was_taken_by_a_link() {
        let (root, other) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let real = root.path().join("real");
        std::fs::create_dir(&real).unwrap();
        let folder = database_in(&real);
        std::fs::rename(&real, root.path().join("moved")).unwrap();
        std::os::unix::fs::symlink(other.path(), &real).unwrap();
        if folder.folder().handle_path().is_none() {
            return; // No path through the handle on this system.
        }
        let connection = rusqlite::Connection::open(folder.sqlite_path()).unwrap();
        connection.execute_batch("CREATE TABLE t (x)").unwrap();
        folder.check_open(OpenFiles::Database).unwrap();
        assert!(std::fs::read_dir(other.path()).unwrap().next().is_none());
    }
}
