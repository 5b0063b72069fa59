//! `unpack`: an archive to a SQLite database (and its objects and payloads
//! to files), as the producer's import restores it.
//!
//! The archive is read once, through ndarc-verify's one door
//! ([`ndarc_verify::read_path`]): the restore acts only on the lines the
//! verification session accepted, and keeps everything provisional until
//! the session's report is valid. Every table is created from its `sql`
//! (one prepared statement, never a batch) in dependency order, and its
//! rows are inserted with their rowids, all in one transaction, into a
//! temporary file beside the output, on a defensive connection (see
//! [`defensive`]). Objects go to temporary files beside
//! `DIR/objects/BUCKET/KEY` and payloads beside `DIR/payloads/NAME`, and
//! the metadata sidecars ([`crate::metadata`]) beside
//! `DIR/metadata/BUCKET.json`. Only
//! when the report is valid is the transaction committed and every file
//! renamed into place; otherwise nothing is left. No key can leave `DIR`.
//!
//! Its parts: `error`, `files` (temporary files, directories, moving into
//! place), `schema` (the defensive connection, creating tables), `cells`
//! (binding a row's cells) and `restore` (the session's reader).

use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use ndarc_format::Severity;
use ndarc_verify::{ReadError, Report};

mod cells;
mod error;
mod files;
mod restore;
mod schema;
mod stmt;

pub use cells::{restored_number, RestoredNumber};
pub use schema::{defensive, restore_authorizer};

use crate::Error;
use error::{is_storage_error, read_err, storage_err, write_err};
use files::{commit, sqlite_side_files, temp_sibling, Written};
use restore::Restore;

/// The mode of the files [`unpack`] creates unless told otherwise:
/// readable and writable by the owner only, whatever the umask (an archive's
/// rows and objects are as private as the archive).
pub const PRIVATE_MODE: u32 = 0o600;

/// The mode of a directory that holds files of `mode`: each class that may
/// read the files may also enter the directory (0o600 → 0o700, 0o640 →
/// 0o750, 0o644 → 0o755).
pub fn dir_mode(mode: u32) -> u32 {
    let mode = mode & 0o777;
    mode | ((mode & 0o444) >> 2)
}

/// How to unpack.
#[derive(Debug, Clone)]
pub struct UnpackOptions {
    /// Where objects and payloads go (`DIR/objects/BUCKET/KEY`,
    /// `DIR/payloads/NAME`, and the buckets' metadata sidecars
    /// `DIR/metadata/BUCKET.json`); `None`: they are not written.
    pub objects_dir: Option<PathBuf>,
    /// Replace an existing database file and existing object files.
    pub force: bool,
    /// Verification threads (0: one per core).
    pub jobs: usize,
    /// The permission bits of every file created (the database, objects,
    /// payloads), set exactly whatever the umask; directories created get
    /// [`dir_mode`] of it. A file replaced with `force` keeps its own mode.
    /// Default [`PRIVATE_MODE`].
    pub mode: u32,
    /// Told of each temporary file as it is created and once it is
    /// renamed into place: for a caller that removes temporary files when
    /// the process is stopped by a signal.
    pub temp_files: Option<TempFiles>,
}

/// Creates one temporary file (see [`TempFiles::create`]).
pub type CreateFile<'a> = dyn FnMut() -> io::Result<File> + 'a;

/// Callbacks for the temporary files [`unpack`] creates (see
/// [`UnpackOptions::temp_files`]).
#[derive(Debug, Clone, Copy)]
pub struct TempFiles {
    /// Creates a temporary file by calling the function given and records
    /// the paths given (the file, and the side files SQLite could make
    /// beside a database) for removal. The caller makes recording and
    /// creating one step for its signal handler, so that a signal finds
    /// every file made, or comes before the file is made.
    pub create: fn(&[PathBuf], &mut CreateFile<'_>) -> io::Result<File>,
    /// The temporary file at this path was renamed into place or removed.
    pub done: fn(&Path),
}

impl Default for UnpackOptions {
    fn default() -> Self {
        UnpackOptions {
            objects_dir: None,
            force: false,
            jobs: 0,
            mode: PRIVATE_MODE,
            temp_files: None,
        }
    }
}

/// What [`unpack`] restored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnpackSummary {
    /// Tables and the rows inserted, in manifest order.
    pub tables: Vec<(String, u64)>,
    /// Objects written (0 without `objects_dir`).
    pub objects: usize,
    /// Payloads written (0 without `objects_dir`).
    pub payloads: usize,
    /// Objects and payloads the archive holds but that were not written
    /// (no `objects_dir`).
    pub skipped: usize,
}

/// Restores the archive at `archive` into a new SQLite database at `db`
/// (and, with `objects_dir`, its objects and payloads), as the producer's
/// import does, reading it once (see the [module](self)). Nothing is left
/// behind on failure, and nothing at all is written for an invalid archive.
pub fn unpack(archive: &Path, db: &Path, opts: &UnpackOptions) -> Result<UnpackSummary, Error> {
    unpack_with(db, opts, |r, v| ndarc_verify::read_path(archive, v, r))
        .map_err(|e| e.reading(archive))
}

/// [`unpack`] from a stream (standard input, a pipe), read once.
pub fn unpack_reader(
    input: impl Read + Send,
    db: &Path,
    opts: &UnpackOptions,
) -> Result<UnpackSummary, Error> {
    unpack_with(db, opts, |r, v| ndarc_verify::read_stream(input, v, r))
        .map_err(|e| e.reading(Path::new("<stdin>")))
}

/// What [`unpack_with`] gives back before the archive's name is known.
enum Failed {
    Unpack(Error),
    Read(ndarc_verify::Error),
}

impl Failed {
    fn reading(self, archive: &Path) -> Error {
        match self {
            Failed::Unpack(e) => e,
            Failed::Read(e) => read_err(archive, e),
        }
    }
}

impl From<Error> for Failed {
    fn from(e: Error) -> Self {
        Failed::Unpack(e)
    }
}

fn unpack_with(
    db: &Path,
    opts: &UnpackOptions,
    read: impl FnOnce(&mut Restore<'_>, &ndarc_verify::Options) -> Result<Report, ReadError<Error>>,
) -> Result<UnpackSummary, Failed> {
    let existing = fs::symlink_metadata(db).ok();
    if fs::metadata(db).is_ok_and(|m| m.is_dir()) {
        return Err(Error::IsDirectory(db.to_path_buf()).into());
    }
    if existing.is_some() && !opts.force {
        return Err(Error::Exists(db.to_path_buf()).into());
    }
    if let Some(m) = &existing {
        if !m.is_file() {
            return Err(write_err(
                db,
                "is not a regular file; unpack writes a new database file",
            )
            .into());
        }
    }
    let mut written = Written::default();
    let tmp = temp_sibling(db);
    // SQLite creates a missing file with the umask's mode; an existing
    // empty file it takes as a new database.
    written
        .temp(&tmp, opts, existing.is_some().then_some(db))
        .map_err(|e| write_err(&tmp, e))?;
    let sql_err = |e: rusqlite::Error| {
        if is_storage_error(&e) {
            storage_err(db, &e)
        } else {
            write_err(db, e)
        }
    };
    let mut conn = defensive(&tmp).map_err(sql_err)?;
    // The user_version write puts page 1 in place even when the archive
    // has no tables (SQLite leaves an empty schema as an empty file, which
    // has no SQLite header). Pragmas run before the authorizer, which
    // refuses them. Without a rollback journal, the transaction is the
    // unit of work: the file is thrown away unless it commits.
    conn.execute_batch(
        "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; BEGIN; PRAGMA user_version = 0;",
    )
    .map_err(sql_err)?;
    conn.authorizer(Some(restore_authorizer)).map_err(sql_err)?;
    let vopts = ndarc_verify::Options {
        jobs: opts.jobs,
        ..ndarc_verify::Options::default()
    };
    let (counts, done, mut written, objects, payloads, plan) = {
        let mut restore = Restore {
            conn: &conn,
            db,
            opts,
            plan: None,
            inserts: Vec::new(),
            current: None,
            counts: Vec::new(),
            dests: Vec::new(),
            open: None,
            done: Vec::new(),
            written,
            params: Vec::new(),
            chunk: Vec::new(),
            objects: 0,
            payloads: 0,
        };
        let report = match read(&mut restore, &vopts) {
            Ok(r) => r,
            Err(ReadError::Reader(e)) => return Err(e.into()),
            Err(ReadError::Verify(e)) => return Err(Failed::Read(e)),
        };
        if report.errors > 0 || restore.plan.is_none() {
            return Err(invalid(&report).into());
        }
        restore.finish_open()?;
        let Restore {
            current,
            counts,
            done,
            written,
            objects,
            payloads,
            plan,
            ..
        } = restore;
        drop(current);
        (counts, done, written, objects, payloads, plan)
    };
    conn.execute_batch("COMMIT").map_err(sql_err)?;
    conn.close().map_err(|(_, e)| sql_err(e))?;
    File::open(&tmp)
        .and_then(|f| f.sync_all())
        .map_err(|e| write_err(db, e))?;
    // The archive is valid and restored: every file goes into place.
    for (t, dest) in done {
        commit(&t, &dest, opts.force)?;
        written.committed(&t, dest, opts);
    }
    if opts.force {
        remove_logs(db)?;
    }
    commit(&tmp, db, opts.force)?;
    written.committed(&tmp, db.to_path_buf(), opts);
    written.done = true;
    let Some(plan) = plan else {
        return Err(Error::Invalid("the archive has no manifest".into()).into());
    };
    let m = &plan.manifest;
    let skipped = if opts.objects_dir.is_none() {
        m.objects.len() + m.payloads.len()
    } else {
        0
    };
    Ok(UnpackSummary {
        tables: m
            .tables
            .iter()
            .zip(counts)
            .map(|(t, n)| (t.name.clone(), n))
            .collect(),
        objects,
        payloads,
        skipped,
    })
}

/// Removes the rollback journal, WAL and shared-memory files of the
/// database `db` is about to replace: SQLite would otherwise replay the old
/// database's log onto the restored file when it is next opened.
fn remove_logs(db: &Path) -> Result<(), Error> {
    for p in sqlite_side_files(db) {
        match fs::symlink_metadata(&p) {
            Ok(m) if m.is_file() => fs::remove_file(&p).map_err(|e| write_err(&p, e))?,
            Ok(_) => {
                return Err(write_err(
                    &p,
                    "is not a regular file; remove it before replacing the database",
                ))
            }
            Err(_) => {}
        }
    }
    Ok(())
}

/// The error of an invalid archive: its counts (as `verify` counts them)
/// and its first error.
fn invalid(report: &Report) -> Error {
    let first = report
        .findings
        .iter()
        .find(|f| f.severity == Severity::Error)
        .map_or_else(String::new, |f| {
            format!(
                "; first error: line {}, offset {}: {}: {}",
                f.line,
                f.offset,
                f.code.as_str(),
                f.message
            )
        });
    let plural = |n: u64, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    Error::Invalid(format!(
        "the archive is not valid ({}, {}){first}; nothing was written (`ndarc verify` lists every finding)",
        plural(report.errors, "error"),
        plural(report.warnings, "warning"),
    ))
}

#[cfg(test)]
mod tests;
