//! [`FileStamp`]: what a database file looked like (device, inode, length, times), so a store
//! read without locks can tell that another process wrote the file meanwhile; and where
//! SQLite's write-ahead log beside it is. A leaf of the backend: the store type holds a stamp,
//! [`super::read_only`] takes and checks it.

use std::ffi::OsStr;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use rustix::fs::AtFlags;

use crate::error::{Error, Result};
use crate::held_dir::HeldDir;

/// What a database file looked like: a change of any of these means it was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileStamp {
    device: u64,
    inode: u64,
    len: u64,
    modified: (i64, i64),
    changed: (i64, i64),
}

impl FileStamp {
    pub(super) fn of(path: &Path) -> Result<FileStamp> {
        let meta = std::fs::metadata(path).map_err(|e| Error::io("inspect", path, e))?;
        Ok(FileStamp {
            device: meta.dev(),
            inode: meta.ino(),
            len: meta.len(),
            modified: (meta.mtime(), meta.mtime_nsec()),
            changed: (meta.ctime(), meta.ctime_nsec()),
        })
    }
}

impl FileStamp {
    /// The stamp of the file `name` in the held `folder`, never following a link there.
    // `stat`'s field types differ between systems (the casts are no-ops on Linux).
    #[allow(clippy::unnecessary_cast)]
    pub(super) fn at(folder: &HeldDir, name: &OsStr) -> Result<FileStamp> {
        let path = folder.path().join(name);
        let stat = rustix::fs::statat(folder, name, AtFlags::SYMLINK_NOFOLLOW)
            .map_err(|e| Error::io("inspect", &path, e.into()))?;
        Ok(FileStamp {
            device: stat.st_dev as u64,
            inode: stat.st_ino as u64,
            len: stat.st_size as u64,
            modified: (stat.st_mtime as i64, stat.st_mtime_nsec as i64),
            changed: (stat.st_ctime as i64, stat.st_ctime_nsec as i64),
        })
    }
}

/// SQLite's write-ahead log beside `path`.
pub(super) fn wal_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push("-wal");
    PathBuf::from(name)
}
