//! Folders held open: every file ctxkit writes or reads under the working directory is opened
//! relative to a folder it already holds open, never by a path checked first and used later.
//!
//! Guarantees:
//! - A folder is opened with `O_DIRECTORY | O_NOFOLLOW` relative to its parent's handle, and a
//!   missing one is made with `mkdirat` (mode 0700, whatever the umask: the mode is set on the
//!   handle of the folder just made). A symbolic link where a folder should be is refused
//!   ([`Error::Symlink`], naming its path), and nothing is created where it leads: there is no
//!   moment between a check and a use for another process to swap a folder for a link, since
//!   the link itself is what the open refuses.
//! - A new file is made with `O_CREAT | O_EXCL | O_NOFOLLOW` (never over an existing file or
//!   through a link), mode exactly 0600; a file is read with `O_NOFOLLOW` and must be a regular
//!   file.
//! - A replacement ([`HeldDir::replace_file`]) is a new temporary file in the same held folder,
//!   synced, then `renameat` over the target: readers see the old or the new content.
//! - Removals are `unlinkat` in the held folder, so a swapped folder cannot make ctxkit delete a
//!   file elsewhere.
//!
//! `rustix` makes these calls (`openat`, `mkdirat`, `fchmod`, `renameat`, `unlinkat`) in safe
//! Rust; the crate already came with `tempfile`, so it adds no code to the build.

use std::ffi::OsStr;
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use crate::error::{Error, Result};

/// Mode of the folders ctxkit makes.
const FOLDER_MODE: u32 = 0o700;
/// Mode of the files ctxkit makes.
const FILE_MODE: u32 = 0o600;
/// How many temporary names a replacement tries before giving up (another process of ours
/// could hold one at the same moment).
const TEMPORARY_ATTEMPTS: u32 = 64;

/// A folder held open; its children are opened relative to it.
#[derive(Debug)]
pub struct HeldDir {
    fd: OwnedFd,
    path: PathBuf,
}

impl AsFd for HeldDir {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

/// One plain path component (no `/`, not `.` or `..`, not empty), or an error naming it.
fn plain(name: &OsStr, what: &str) -> Result<()> {
    let mut components = Path::new(name).components();
    match (components.next(), components.next()) {
        (Some(Component::Normal(_)), None) => Ok(()),
        _ => Err(Error::invalid(
            what,
            format!("{name:?} is not one plain path component"),
        )),
    }
}

impl HeldDir {
    /// Opens the folder `path` itself, following symbolic links in it: the caller chose it
    /// (the working directory). Everything below it is opened with [`HeldDir::child`].
    pub fn open(path: &Path) -> Result<HeldDir> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(rustix::fs::CWD, path, flags, Mode::empty())
            .map_err(|e| Error::io("open folder", path, e.into()))?;
        Ok(HeldDir {
            fd,
            path: path.to_path_buf(),
        })
    }

    /// The folder's path, for messages (the handle, not this path, is what is used).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Opens the child folder `name` (one plain component), first making it (0700) when
    /// `create` and it is missing. Returns it and whether this call made it. A symbolic link
    /// there is [`Error::Symlink`]; something that is not a folder is an I/O error naming it.
    pub fn child(&self, name: &OsStr, create: bool) -> Result<(HeldDir, bool)> {
        plain(name, "folder")?;
        let path = self.path.join(name);
        let made = create
            && match rustix::fs::mkdirat(&self.fd, name, Mode::from_raw_mode(FOLDER_MODE)) {
                Ok(()) => true,
                // There already (a folder, or what the open below refuses): not ours to make.
                Err(Errno::EXIST) => false,
                Err(error) => return Err(Error::io("create folder", &path, error.into())),
            };
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = match rustix::fs::openat(&self.fd, name, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(error) => return Err(self.refusal(name, error, "open folder")),
        };
        if made {
            // mkdirat applies the umask (so maybe less than 0700); the folder just made gets
            // exactly 0700, set through its handle so it is that folder whose mode is set.
            rustix::fs::fchmod(&fd, Mode::from_raw_mode(FOLDER_MODE))
                .map_err(|e| Error::io("set the mode of", &path, e.into()))?;
        }
        Ok((HeldDir { fd, path }, made))
    }

    /// The error for a failed open of `name`: [`Error::Symlink`] when it is a symbolic link
    /// (`O_NOFOLLOW` gives `ELOOP`, or `ENOTDIR` with `O_DIRECTORY` on some systems), else the
    /// operating system's error naming the path.
    fn refusal(&self, name: &OsStr, error: Errno, action: &'static str) -> Error {
        let path = self.path.join(name);
        let is_link = rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW)
            .map(|stat| FileType::from_raw_mode(stat.st_mode) == FileType::Symlink)
            .unwrap_or(false);
        if is_link || error == Errno::LOOP {
            Error::Symlink { path }
        } else {
            Error::io(action, &path, error.into())
        }
    }

    /// Whether `name` exists here, never following it: `Ok(false)` when missing, an
    /// [`Error::Symlink`] when it is a symbolic link.
    pub fn exists_not_link(&self, name: &OsStr) -> Result<bool> {
        plain(name, "file_name")?;
        match rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) if FileType::from_raw_mode(stat.st_mode) == FileType::Symlink => {
                Err(Error::Symlink {
                    path: self.path.join(name),
                })
            }
            Ok(_) => Ok(true),
            Err(Errno::NOENT) => Ok(false),
            Err(error) => Err(Error::io("inspect", &self.path.join(name), error.into())),
        }
    }

    /// The device and inode of the regular file `name` here, never following it: `Ok(None)`
    /// when missing, [`Error::Symlink`] for a link, an error naming it for anything else that
    /// is not a regular file.
    // `stat`'s field types differ between systems (the casts are no-ops on Linux).
    #[allow(clippy::unnecessary_cast)]
    pub fn file_identity(&self, name: &OsStr) -> Result<Option<(u64, u64)>> {
        plain(name, "file_name")?;
        let path = self.path.join(name);
        match rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => match FileType::from_raw_mode(stat.st_mode) {
                FileType::RegularFile => Ok(Some((stat.st_dev as u64, stat.st_ino as u64))),
                FileType::Symlink => Err(Error::Symlink { path }),
                _ => {
                    let error = std::io::Error::other("not a regular file");
                    Err(Error::io("open", &path, error))
                }
            },
            Err(Errno::NOENT) => Ok(None),
            Err(error) => Err(Error::io("inspect", &path, error.into())),
        }
    }

    /// A path that leads to this very folder through its handle, whatever happened to its name
    /// since it was opened: `/proc/self/fd/<n>` on Linux, when `/proc` is there and that path
    /// is this folder. `None` elsewhere (other systems have no such path to a folder).
    pub fn handle_path(&self) -> Option<PathBuf> {
        if !cfg!(target_os = "linux") {
            return None;
        }
        let path = PathBuf::from(format!("/proc/self/fd/{}", self.fd.as_raw_fd()));
        let held = rustix::fs::fstat(&self.fd).ok()?;
        let there = rustix::fs::stat(&path).ok()?;
        (held.st_dev == there.st_dev && held.st_ino == there.st_ino).then_some(path)
    }

    /// Makes the new file `name` (never over an existing one, never through a link), mode
    /// exactly 0600, writes `content` and syncs it. A failed write removes the file, so no
    /// partial file stays to be read as whole. Returns the file's path.
    pub fn create_file(&self, name: &OsStr, content: &[u8]) -> Result<PathBuf> {
        let mut file = self.create_new(name)?;
        let path = self.path.join(name);
        if let Err(error) = file.write_all(content).and_then(|()| file.sync_data()) {
            let _ = rustix::fs::unlinkat(&self.fd, name, AtFlags::empty());
            return Err(Error::io("write", &path, error));
        }
        Ok(path)
    }

    /// Makes the new file `name`, mode exactly 0600, and returns it open for writing.
    pub fn create_new(&self, name: &OsStr) -> Result<File> {
        plain(name, "file_name")?;
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW;
        let fd = match rustix::fs::openat(
            &self.fd,
            name,
            flags | OFlags::CLOEXEC,
            Mode::from_raw_mode(FILE_MODE),
        ) {
            Ok(fd) => fd,
            Err(Errno::EXIST) => {
                let path = self.path.join(name);
                return Err(Error::io("create", &path, Errno::EXIST.into()));
            }
            Err(error) => return Err(self.refusal(name, error, "create")),
        };
        // On the handle, so it is the file just made whose mode is set (the umask may have
        // taken bits off).
        rustix::fs::fchmod(&fd, Mode::from_raw_mode(FILE_MODE))
            .map_err(|e| Error::io("set the mode of", &self.path.join(name), e.into()))?;
        Ok(File::from(fd))
    }

    /// Opens the regular file `name` for reading, never through a link.
    pub fn open_file(&self, name: &OsStr) -> Result<File> {
        plain(name, "file_name")?;
        let path = self.path.join(name);
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(&self.fd, name, flags, Mode::empty())
            .map_err(|error| self.refusal(name, error, "open"))?;
        let stat = rustix::fs::fstat(&fd).map_err(|e| Error::io("read", &path, e.into()))?;
        if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
            let error = std::io::Error::other("not a regular file");
            return Err(Error::io("open", &path, error));
        }
        Ok(File::from(fd))
    }

    /// Checks that this user may write the regular file `name` (opened for appending, never
    /// through a link, and closed again: nothing is written).
    pub fn check_writable(&self, name: &OsStr) -> Result<()> {
        plain(name, "file_name")?;
        let flags = OFlags::WRONLY | OFlags::APPEND | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        rustix::fs::openat(&self.fd, name, flags, Mode::empty())
            .map(drop)
            .map_err(|error| self.refusal(name, error, "open for writing"))
    }

    /// Gives the file `from` here a second name, `to`, in this folder (a hard link): never
    /// over an existing file (`to` taken is an `AlreadyExists` error naming it), never
    /// through a link.
    pub fn link_new(&self, from: &OsStr, to: &OsStr) -> Result<()> {
        plain(from, "file_name")?;
        plain(to, "file_name")?;
        rustix::fs::linkat(&self.fd, from, &self.fd, to, AtFlags::empty())
            .map_err(|e| Error::io("create", &self.path.join(to), e.into()))
    }

    /// The names in this folder (`.` and `..` left out).
    pub fn names(&self) -> Result<Vec<std::ffi::OsString>> {
        let error = |e: Errno| Error::io("list", &self.path, e.into());
        let mut dir = rustix::fs::Dir::read_from(&self.fd).map_err(error)?;
        let mut names = Vec::new();
        while let Some(entry) = dir.read() {
            let entry = entry.map_err(error)?;
            let name = OsStr::from_bytes(entry.file_name().to_bytes());
            if name != "." && name != ".." {
                names.push(name.to_owned());
            }
        }
        Ok(names)
    }

    /// Replaces `name` with `content` atomically: a temporary file in this folder (0600),
    /// synced, then renamed over `name`. The target is replaced, never written through: a link
    /// at `name` is replaced by the file, not followed.
    pub fn replace_file(&self, name: &OsStr, content: &[u8]) -> Result<()> {
        plain(name, "file_name")?;
        let pid = std::process::id();
        for attempt in 0..TEMPORARY_ATTEMPTS {
            let temporary = format!(".ctxkit-{pid}-{attempt}.tmp");
            let temporary = OsStr::new(&temporary);
            match self.create_file(temporary, content) {
                Ok(_) => {
                    return rustix::fs::renameat(&self.fd, temporary, &self.fd, name).map_err(
                        |error| {
                            let _ = rustix::fs::unlinkat(&self.fd, temporary, AtFlags::empty());
                            Error::io(
                                "rename a temporary file over",
                                &self.path.join(name),
                                error.into(),
                            )
                        },
                    );
                }
                Err(Error::Io { source, .. })
                    if source.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(error) => return Err(error),
            }
        }
        let error = std::io::Error::from(std::io::ErrorKind::AlreadyExists);
        Err(Error::io("create a temporary file in", &self.path, error))
    }

    /// Removes the file `name` from this folder (a link is removed, not followed).
    pub fn remove_file(&self, name: &OsStr) -> Result<()> {
        plain(name, "file_name")?;
        rustix::fs::unlinkat(&self.fd, name, AtFlags::empty())
            .map_err(|e| Error::io("remove", &self.path.join(name), e.into()))
    }

    /// Removes the empty folder `name` from this folder.
    pub fn remove_dir(&self, name: &OsStr) -> Result<()> {
        plain(name, "folder")?;
        rustix::fs::unlinkat(&self.fd, name, AtFlags::REMOVEDIR)
            .map_err(|e| Error::io("remove folder", &self.path.join(name), e.into()))
    }
}
