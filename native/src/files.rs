//! The `<workdir>/.ctxkit/` folder and safe file writes.
//!
//! Guarantees:
//! - Folders ctxkit creates are mode 0700, files 0600, whatever the umask (the mode is set on
//!   what was just created, never on a folder or file that was already there): offloaded
//!   outputs, memories and the database may hold secrets a tool printed.
//! - `.ctxkit/.gitignore` (ignoring everything in `.ctxkit`) is written whenever ctxkit creates
//!   the folder (the database's open, an offload, a memory write), so nothing of ctxkit's is
//!   committed by accident.
//! - [`write_atomically`] replaces a file whole or not at all: a temporary file in the same
//!   folder, synced, then renamed over the target; readers see the old or the new content,
//!   never a mix.
//! - [`create_new_inside`] writes a new file only where the given relative path really leads
//!   (no symlinked folder on the way) and never over an existing file; [`read_inside`] reads one
//!   by the same rule, and never through a symlink.

use std::fs::{DirBuilder, File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

use crate::error::{Error, Result};

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
                if path.file_name() == Some(std::ffi::OsStr::new(CTXKIT_DIR)) {
                    write_gitignore(path)?;
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

/// Writes `dir/.gitignore` if it is missing.
fn write_gitignore(dir: &Path) -> Result<()> {
    let gitignore = dir.join(".gitignore");
    match create_private_file(&gitignore) {
        Ok(mut file) => file
            .write_all(GITIGNORE_CONTENT.as_bytes())
            .map_err(|e| Error::io("write", &gitignore, e)),
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::AlreadyExists => {
            Ok(())
        }
        Err(error) => Err(error),
    }
}

/// Creates `<workdir>/.ctxkit` (0700) and its `.gitignore` if missing; returns the folder.
pub fn prepare_ctxkit_dir(workdir: &Path) -> Result<PathBuf> {
    let dir = workdir.join(CTXKIT_DIR);
    create_private_dir(&dir)?;
    write_gitignore(&dir)?;
    Ok(dir)
}

/// Replaces `path` with `content` atomically (temporary file in the same folder, synced, then
/// renamed), mode 0600.
pub fn write_atomically(path: &Path, content: &[u8]) -> Result<()> {
    let folder = path
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    // tempfile creates the file with mode 0600 and a random name, with O_EXCL.
    let mut temporary = tempfile::Builder::new()
        .prefix(".ctxkit-")
        .suffix(".tmp")
        .tempfile_in(folder)
        .map_err(|e| Error::io("create a temporary file in", folder, e))?;
    temporary
        .write_all(content)
        .and_then(|()| temporary.as_file().sync_all())
        .map_err(|e| Error::io("write", temporary.path(), e))?;
    temporary
        .as_file()
        .set_permissions(std::fs::Permissions::from_mode(0o600))
        .map_err(|e| Error::io("set the mode of", temporary.path(), e))?;
    temporary
        .persist(path)
        .map_err(|e| Error::io("rename a temporary file over", path, e.error))?;
    Ok(())
}

/// Writes `content` to a new file `file_name` in the folder `root/relative_folder` (which must
/// exist), mode 0600. Refuses a name that is not one plain path component, a relative folder
/// with anything but plain components, a folder whose canonical path is not exactly
/// `canonical(root)/relative_folder` (so no part of it is a symlink leading elsewhere, inside
/// the root or out of it), and an existing file. Returns the file's path.
pub fn create_new_inside(
    root: &Path,
    relative_folder: &Path,
    file_name: &str,
    content: &[u8],
) -> Result<PathBuf> {
    let path = checked_path_inside(root, relative_folder, file_name)?;
    let mut file = create_private_file(&path)?;
    if let Err(error) = file.write_all(content).and_then(|()| file.sync_data()) {
        // A partial file must not stay behind to be read as the whole output.
        let _ = std::fs::remove_file(&path);
        return Err(Error::io("write", &path, error));
    }
    Ok(path)
}

/// Reads at most `max_bytes` of the file `file_name` in `root/relative_folder`, by the rules of
/// [`create_new_inside`] (plain names, no symlinked folder on the way), refusing a file that is
/// itself a symlink or not a regular file. Returns the bytes read and the file's size.
pub fn read_inside(
    root: &Path,
    relative_folder: &Path,
    file_name: &str,
    max_bytes: u64,
) -> Result<(Vec<u8>, u64)> {
    let path = checked_path_inside(root, relative_folder, file_name)?;
    let before = std::fs::symlink_metadata(&path).map_err(|e| Error::io("read", &path, e))?;
    if !before.file_type().is_file() {
        return Err(Error::invalid(
            "file_name",
            format!("{} is not a regular file", path.display()),
        ));
    }
    let file = std::fs::File::open(&path).map_err(|e| Error::io("open", &path, e))?;
    let opened = file.metadata().map_err(|e| Error::io("read", &path, e))?;
    // The file opened must be the one checked: not swapped for a symlink in between.
    if (opened.dev(), opened.ino()) != (before.dev(), before.ino()) {
        return Err(Error::invalid(
            "file_name",
            format!("{} changed while it was opened", path.display()),
        ));
    }
    let mut bytes = Vec::new();
    file.take(max_bytes)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io("read", &path, e))?;
    Ok((bytes, opened.len()))
}

/// `canonical(root)/relative_folder/file_name`, after checking that the name is one plain
/// component, the folder only plain components, and that the folder's canonical path is
/// exactly where the relative path leads (no symlink on the way, inside the root or out of it).
fn checked_path_inside(root: &Path, relative_folder: &Path, file_name: &str) -> Result<PathBuf> {
    let mut components = Path::new(file_name).components();
    let plain_name = matches!(
        (components.next(), components.next()),
        (Some(Component::Normal(_)), None)
    );
    if !plain_name || file_name.starts_with('.') {
        return Err(Error::invalid(
            "file_name",
            format!("{file_name:?} is not a plain file name"),
        ));
    }
    if !relative_folder
        .components()
        .all(|component| matches!(component, Component::Normal(_)))
    {
        return Err(Error::invalid(
            "folder",
            format!("{} is not a plain relative path", relative_folder.display()),
        ));
    }
    let canonical_root = root
        .canonicalize()
        .map_err(|e| Error::io("resolve", root, e))?;
    let folder = root.join(relative_folder);
    let canonical_folder = folder
        .canonicalize()
        .map_err(|e| Error::io("resolve", &folder, e))?;
    let expected = canonical_root.join(relative_folder);
    if canonical_folder != expected {
        return Err(Error::invalid(
            "folder",
            format!(
                "{} resolves to {}, not {}: a symlink leads elsewhere",
                folder.display(),
                canonical_folder.display(),
                expected.display()
            ),
        ));
    }
    Ok(canonical_folder.join(file_name))
}
