//! The `<workdir>/.ctxkit/` folder and safe file writes.
//!
//! Guarantees:
//! - Everything under the working directory is opened through held folders
//!   ([`crate::held_dir::HeldDir`]): each folder opened with `O_NOFOLLOW` relative to its
//!   parent, made with `mkdirat` when missing, each file made with `O_CREAT | O_EXCL |
//!   O_NOFOLLOW`. A symbolic link anywhere on the path under the working directory, `.ctxkit`
//!   itself included, is refused ([`Error::Symlink`], naming it) and nothing is created where it
//!   leads, however the folders are swapped meanwhile.
//! - Folders ctxkit creates are mode 0700, files 0600, whatever the umask (the mode is set on
//!   what was just created, never on a folder or file that was already there): offloaded
//!   outputs, memories and the database may hold secrets a tool printed.
//! - `.ctxkit/.gitignore` (ignoring everything in `.ctxkit`) is written whenever ctxkit opens
//!   the folder to write in it (the database's open, an offload, a memory write) and it is
//!   missing, so nothing of ctxkit's is committed by accident.
//! - [`write_atomically_inside`] replaces a file whole or not at all: a temporary file in the
//!   same held folder, synced, then renamed over the target; readers see the old or the new
//!   content, never a mix.
//! - [`create_new_inside`] writes a new file only where the given relative path really leads
//!   and never over an existing file; [`open_inside`] and [`remove_inside`] read and remove
//!   the same way.
//! - [`prepare_database_inside`] hands the database's held folder to the SQLite store, which
//!   opens the database through it and checks that the files SQLite opened are that folder's
//!   ([`crate::db_folder`]).
//!
//! Outside the working directory (a `--db` elsewhere) [`create_private_dir`] and
//! [`create_private_file`] make folders and files by path, with the same modes: that path is
//! the caller's choice, links included.

use std::ffi::OsStr;
use std::fs::{DirBuilder, File, OpenOptions};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

use crate::db_folder::DatabaseFolder;
use crate::error::{Error, Result};
use crate::held_dir::HeldDir;

/// The name of ctxkit's folder in a working directory.
pub const CTXKIT_DIR: &str = ".ctxkit";
/// The memory precis file, inside [`CTXKIT_DIR`].
pub const MEMORY_FILE: &str = "MEMORY.md";
/// What `.ctxkit/.gitignore` says: ignore everything here, itself included.
pub const GITIGNORE_CONTENT: &str =
    "# Written by ctxkit: offloaded tool outputs and memory stay out of git.\n*\n";

/// Creates `dir` and any missing parents, each with mode 0700 whatever the umask. Folders that
/// exist are left as they are (their mode is their owner's business). A `.ctxkit` folder this
/// creates gets its `.gitignore` at once, so nothing in it can be committed by accident.
pub fn create_private_dir(dir: &Path) -> Result<()> {
    let mut missing = Vec::new();
    let mut next = Some(dir);
    while let Some(path) = next.filter(|path| !path.as_os_str().is_empty()) {
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_dir() => break,
            Ok(_) => {
                let error = std::io::Error::from(std::io::ErrorKind::NotADirectory);
                return Err(Error::io("create folder", path, error));
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                missing.push(path);
                next = path.parent();
            }
            Err(error) => return Err(Error::io("create folder", path, error)),
        }
    }
    for path in missing.into_iter().rev() {
        match DirBuilder::new().mode(0o700).create(path) {
            Ok(()) => {
                // mkdir applies the umask (0700 & !umask, so never more than 0700, but maybe
                // less: 0500 under umask 0277); the folder just made gets exactly 0700.
                std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700))
                    .map_err(|e| Error::io("set the mode of", path, e))?;
                if path.file_name() == Some(OsStr::new(CTXKIT_DIR)) {
                    write_gitignore(&HeldDir::open(path)?)?;
                }
            }
            // Another process made it at the same moment: it is theirs, as it is.
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists && path.is_dir() => {}
            Err(error) => return Err(Error::io("create folder", path, error)),
        }
    }
    Ok(())
}

/// Creates the new file `path` (never over an existing one) with mode exactly 0600, whatever
/// the umask, and returns it open for writing.
pub fn create_private_file(path: &Path) -> Result<File> {
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| Error::io("create", path, e))?;
    // On the open file, so it is the file just made whose mode is set.
    file.set_permissions(std::fs::Permissions::from_mode(0o600))
        .map_err(|e| Error::io("set the mode of", path, e))?;
    Ok(file)
}

/// The relative folder's components, if every one is plain (no root, `.`, `..` or empty).
fn plain_components(relative_folder: &Path) -> Result<Vec<&OsStr>> {
    relative_folder
        .components()
        .map(|component| match component {
            Component::Normal(name) => Ok(name),
            _ => Err(Error::invalid(
                "folder",
                format!("{} is not a plain relative path", relative_folder.display()),
            )),
        })
        .collect()
}

/// Opens `workdir/relative_folder` folder by folder through held handles, refusing a symbolic
/// link at any step ([`Error::Symlink`]). With `create`, missing folders are made (0700), and
/// a `.ctxkit` on the way gets its `.gitignore` if it has none. Without it, nothing is made or
/// written.
pub fn open_folder_inside(workdir: &Path, relative_folder: &Path, create: bool) -> Result<HeldDir> {
    let components = plain_components(relative_folder)?;
    let mut folder = HeldDir::open(workdir)?;
    for (index, name) in components.into_iter().enumerate() {
        let (child, _made) = folder.child(name, create)?;
        if create && index == 0 && name == OsStr::new(CTXKIT_DIR) {
            write_gitignore(&child)?;
        }
        folder = child;
    }
    Ok(folder)
}

/// Writes `.gitignore` in `dir` if it is missing.
fn write_gitignore(dir: &HeldDir) -> Result<()> {
    match dir.create_file(OsStr::new(".gitignore"), GITIGNORE_CONTENT.as_bytes()) {
        Ok(_) => Ok(()),
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::AlreadyExists => {
            Ok(())
        }
        Err(error) => Err(error),
    }
}

/// Opens (making it 0700 with its `.gitignore` if missing) `<workdir>/.ctxkit`, refusing a
/// symbolic link there; returns it held.
pub fn prepare_ctxkit_dir(workdir: &Path) -> Result<HeldDir> {
    open_folder_inside(workdir, Path::new(CTXKIT_DIR), true)
}

/// The folder part and the file name of a relative file path.
fn split_file(relative_path: &Path) -> Result<(&Path, &OsStr)> {
    match (relative_path.parent(), relative_path.file_name()) {
        (Some(folder), Some(name)) => Ok((folder, name)),
        _ => Err(Error::invalid(
            "path",
            format!("{} does not name a file", relative_path.display()),
        )),
    }
}

/// Replaces `workdir/relative_path` with `content` atomically (a temporary file in the same
/// held folder, synced, then renamed), mode 0600, making its folders as
/// [`open_folder_inside`] does. Returns the file's path.
pub fn write_atomically_inside(
    workdir: &Path,
    relative_path: &Path,
    content: &[u8],
) -> Result<PathBuf> {
    let (folder, name) = split_file(relative_path)?;
    let held = open_folder_inside(workdir, folder, true)?;
    held.replace_file(name, content)?;
    Ok(held.path().join(name))
}

/// Writes `content` to a new file `file_name` in the folder `root/relative_folder`, mode 0600,
/// making the missing folders (0700) on the way. Refuses a name that is not one plain path
/// component or starts with `.`, a relative folder with anything but plain components, a
/// symbolic link anywhere under `root` ([`Error::Symlink`]) and an existing file. Returns the
/// file's path.
pub fn create_new_inside(
    root: &Path,
    relative_folder: &Path,
    file_name: &str,
    content: &[u8],
) -> Result<PathBuf> {
    if file_name.starts_with('.') || file_name.contains('/') {
        return Err(Error::invalid(
            "file_name",
            format!("{file_name:?} is not a plain file name"),
        ));
    }
    let held = open_folder_inside(root, relative_folder, true)?;
    held.create_file(OsStr::new(file_name), content)
}

/// Opens the regular file `root/relative_path` for reading through held folders: nothing is
/// created, and a symbolic link on the way or at the file is [`Error::Symlink`].
pub fn open_inside(root: &Path, relative_path: &Path) -> Result<File> {
    let (folder, name) = split_file(relative_path)?;
    open_folder_inside(root, folder, false)?.open_file(name)
}

/// Removes the file `root/relative_path` through held folders (a link on the way is refused;
/// a link at the file is removed, never followed).
pub fn remove_inside(root: &Path, relative_path: &Path) -> Result<()> {
    let (folder, name) = split_file(relative_path)?;
    open_folder_inside(root, folder, false)?.remove_file(name)
}

/// Prepares the database path `db` when it lies under `workdir` (compared as absolute paths,
/// links not resolved): its folders are opened through held handles and, with `create`, made
/// (0700, `.ctxkit` with its `.gitignore`) and the database file made (0600, `O_EXCL`) if
/// missing. A symbolic link on the way or at the file is [`Error::Symlink`], before anything is
/// made where it leads. Without `create` nothing is made (a missing folder is fine: the
/// database is missing too, and `None` is returned). A database elsewhere is the caller's
/// choice, links included: nothing is done here, and the answer is `None`.
///
/// Returns the database's folder, held open, for SQLite's open to go through and be checked
/// against ([`DatabaseFolder`]): a folder swapped for a link after this call cannot lead the
/// database, its `-wal` or `-shm` elsewhere unnoticed.
pub fn prepare_database_inside(
    workdir: &Path,
    db: &Path,
    create: bool,
) -> Result<Option<DatabaseFolder>> {
    let (Ok(workdir), Ok(absolute_db)) = (std::path::absolute(workdir), std::path::absolute(db))
    else {
        return Ok(None);
    };
    let Ok(relative) = absolute_db.strip_prefix(&workdir) else {
        return Ok(None);
    };
    let (folder, name) = split_file(relative)?;
    if plain_components(folder).is_err() {
        // A `..` on the way: not lexically under the working directory.
        return Ok(None);
    }
    let held = match open_folder_inside(&workdir, folder, create) {
        Ok(held) => held,
        Err(Error::Io { source, .. })
            if !create && source.kind() == std::io::ErrorKind::NotFound =>
        {
            return Ok(None)
        }
        Err(error) => return Err(error),
    };
    if create && !held.exists_not_link(name)? {
        match held.create_new(name) {
            Ok(_) => {}
            // Another process made it meanwhile: it is theirs to have set up.
            Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::AlreadyExists => {
            }
            Err(error) => return Err(error),
        }
    }
    Ok(Some(DatabaseFolder::new(held, name)))
}
