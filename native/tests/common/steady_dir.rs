//! [`SteadyDir`]: a working directory whose path costs the same number of estimated tokens on
//! every run. The native engine's system prompt names its working directory, and the token
//! estimator prices neighbouring character classes, so a `tempfile` name (letters and digits at
//! random) moves the prompt's estimate, and with it where a small window compacts, from run to
//! run: a test that compares two runs' checkpoints must not use one.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// `/tmp/<prefix>-<12 random lowercase letters>`, made empty, removed when dropped.
pub struct SteadyDir {
    dir: PathBuf,
}

impl SteadyDir {
    /// A new folder named `prefix` and twelve lowercase letters, under `/tmp` itself (not
    /// `$TMPDIR`, which would change the path's length from machine to machine).
    pub fn new(prefix: &str) -> SteadyDir {
        let base = PathBuf::from("/tmp").canonicalize().expect("/tmp exists");
        let mut seed = u64::from(std::process::id())
            ^ SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |elapsed| elapsed.as_nanos() as u64);
        for _ in 0..100 {
            // xorshift: another name each try.
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let letters: String = (0..12)
                .map(|i| char::from(b'a' + ((seed >> (i * 5)) % 26) as u8))
                .collect();
            let dir = base.join(format!("{prefix}-{letters}"));
            match std::fs::create_dir(&dir) {
                Ok(()) => return SteadyDir { dir },
                Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(error) => panic!("cannot create {}: {error}", dir.display()),
            }
        }
        panic!("no free folder name under {}", base.display());
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.dir
    }
}

impl Drop for SteadyDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
