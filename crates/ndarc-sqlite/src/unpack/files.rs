//! The files an unpack writes: temporary siblings, directories under the
//! output directory, and moving them into place.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::error::{unholdable, write_err};
use super::{dir_mode, UnpackOptions};
use crate::Error;

static COUNTER: AtomicU64 = AtomicU64::new(0);

pub(super) fn temp_sibling(dest: &Path) -> PathBuf {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let name = dest
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    let dir = match dest.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    dir.join(format!(".{name}.ndarc-{}-{n}.tmp", std::process::id()))
}

/// The path segments of an object key or payload name, or why it cannot
/// be a path under the output directory.
pub(super) fn safe_segments(key: &str) -> Result<Vec<&str>, String> {
    if key.contains('\0') {
        return Err(format!("{key:?} contains NUL"));
    }
    if key.starts_with('/') {
        return Err(format!("{key:?} is an absolute path"));
    }
    let parts: Vec<&str> = key.split('/').collect();
    for p in &parts {
        if p.is_empty() || *p == "." || *p == ".." {
            return Err(format!("{key:?} has an empty, '.' or '..' path segment"));
        }
        if p.contains('\\') && cfg!(windows) {
            return Err(format!("{key:?} contains a backslash"));
        }
    }
    Ok(parts)
}

/// Files written so far, removed again when the unpack fails.
#[derive(Default)]
pub(super) struct Written {
    pub(super) files: Vec<PathBuf>,
    pub(super) dirs: Vec<PathBuf>,
    pub(super) temps: Vec<PathBuf>,
    pub(super) done: bool,
}

impl Drop for Written {
    fn drop(&mut self) {
        for t in &self.temps {
            let _ = fs::remove_file(t);
            for side in sqlite_side_files(t) {
                let _ = fs::remove_file(side);
            }
        }
        if !self.done {
            for f in &self.files {
                let _ = fs::remove_file(f);
            }
            for d in self.dirs.iter().rev() {
                let _ = fs::remove_dir(d);
            }
        }
    }
}

/// Makes the directories of `segments` (all but the last) under `base`,
/// refusing symbolic links and non-directories on the way; returns the
/// file's path.
pub(super) fn place(
    base: &Path,
    segments: &[&str],
    mode: u32,
    written: &mut Written,
) -> Result<PathBuf, Error> {
    let mut p = base.to_path_buf();
    let last = segments.len().saturating_sub(1);
    for (i, s) in segments.iter().enumerate() {
        p.push(s);
        match fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(unholdable(
                    "unsafe_path",
                    format!(
                        "{} is a symbolic link; unpack does not follow links",
                        p.display()
                    ),
                ))
            }
            Ok(m) if i < last && !m.is_dir() => {
                return Err(unholdable(
                    "unsafe_path",
                    format!("{} is not a directory", p.display()),
                ))
            }
            Ok(m) if i == last && m.is_dir() => {
                return Err(unholdable(
                    "unsafe_path",
                    format!("{} is a directory", p.display()),
                ))
            }
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                if i < last {
                    make_dir(&p, mode, written)?;
                }
            }
            Err(e) => return Err(write_err(&p, e)),
        }
    }
    Ok(p)
}

/// Creates the directory `p` with exactly [`dir_mode`]`(mode)` and records
/// it for removal on failure.
pub(super) fn make_dir(p: &Path, mode: u32, written: &mut Written) -> Result<(), Error> {
    let mut b = fs::DirBuilder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        // The umask narrows the mode given here; it is set exactly below.
        b.mode(dir_mode(mode) & 0o700);
    }
    b.create(p).map_err(|e| write_err(p, e))?;
    written.dirs.push(p.to_path_buf());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(p, fs::Permissions::from_mode(dir_mode(mode)))
            .map_err(|e| write_err(p, e))?;
    }
    Ok(())
}

/// Creates `dir` and the missing directories above it, each with
/// [`dir_mode`]`(mode)`, recording them for removal on failure.
pub(super) fn make_dirs(dir: &Path, mode: u32, written: &mut Written) -> Result<(), Error> {
    let mut missing = Vec::new();
    let mut p = Some(dir);
    while let Some(d) = p.filter(|d| !d.as_os_str().is_empty()) {
        match fs::symlink_metadata(d) {
            Ok(_) => break,
            Err(e) if e.kind() == io::ErrorKind::NotFound => missing.push(d),
            Err(e) => return Err(write_err(d, e)),
        }
        p = d.parent();
    }
    for d in missing.into_iter().rev() {
        make_dir(d, mode, written)?;
    }
    Ok(())
}

/// Creates the new file `path` (failing if it exists) with exactly `mode`,
/// or the mode of `keep` (the file it is to replace) when there is one.
pub(super) fn create_file(path: &Path, mode: u32, keep: Option<&Path>) -> io::Result<File> {
    let mut o = OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // At most the owner's bits until the exact mode is set below, so
        // that no one else opens it meanwhile.
        o.mode(mode & 0o600);
    }
    let file = o.open(path)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let perms = match keep.and_then(|k| fs::metadata(k).ok()) {
            Some(m) => m.permissions(),
            None => fs::Permissions::from_mode(mode & 0o7777),
        };
        if let Err(e) = file.set_permissions(perms) {
            drop(file);
            let _ = fs::remove_file(path);
            return Err(e);
        }
    }
    #[cfg(not(unix))]
    let _ = (mode, keep);
    Ok(file)
}

/// Moves `tmp` to `dest`: replacing only with `force`, otherwise failing
/// if `dest` appeared meanwhile.
pub(super) fn commit(tmp: &Path, dest: &Path, force: bool) -> Result<(), Error> {
    if force {
        fs::rename(tmp, dest).map_err(|e| write_err(dest, e))?;
    } else {
        // tempfile's no-clobber rename: renameat2(RENAME_NOREPLACE) where
        // the kernel and file system have it, else link and unlink; either
        // way an existing `dest` (made since the run began) is never
        // replaced. On failure the temporary file stays for the caller's
        // cleanup.
        let temp = tempfile::TempPath::try_from_path(tmp).map_err(|e| write_err(tmp, e))?;
        if let Err(e) = temp.persist_noclobber(dest) {
            let _ = e.path.keep();
            if e.error.kind() == io::ErrorKind::AlreadyExists || fs::symlink_metadata(dest).is_ok()
            {
                return Err(Error::Exists(dest.to_path_buf()));
            }
            // A file system with neither (no hard links): a plain rename,
            // `dest` having been seen absent just now.
            fs::rename(tmp, dest).map_err(|e| write_err(dest, e))?;
        }
    }
    if let Some(dir) = dest.parent() {
        if let Ok(d) = File::open(if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        }) {
            let _ = d.sync_all();
        }
    }
    Ok(())
}

impl Written {
    /// Creates the temporary file `tmp` (removed unless committed) with
    /// [`create_file`], as one step with telling the caller's signal
    /// cleanup of it.
    pub(super) fn temp(
        &mut self,
        tmp: &Path,
        opts: &UnpackOptions,
        keep: Option<&Path>,
    ) -> io::Result<File> {
        self.temps.push(tmp.to_path_buf());
        let mut create = || create_file(tmp, opts.mode, keep);
        match &opts.temp_files {
            Some(t) => {
                // SQLite's own files beside the database being built.
                let mut paths = vec![tmp.to_path_buf()];
                paths.extend(sqlite_side_files(tmp));
                (t.create)(&paths, &mut create)
            }
            None => create(),
        }
    }

    /// `tmp` became `dest`.
    pub(super) fn committed(&mut self, tmp: &Path, dest: PathBuf, opts: &UnpackOptions) {
        self.temps.retain(|t| t != tmp);
        self.files.push(dest);
        if let Some(t) = &opts.temp_files {
            (t.done)(tmp);
            for side in sqlite_side_files(tmp) {
                (t.done)(&side);
            }
        }
    }
}

/// The journal, WAL and shared-memory files SQLite may keep beside the
/// database `db`.
pub(super) fn sqlite_side_files(db: &Path) -> [PathBuf; 3] {
    ["-journal", "-wal", "-shm"].map(|suffix| {
        let mut name = db.as_os_str().to_owned();
        name.push(suffix);
        PathBuf::from(name)
    })
}
