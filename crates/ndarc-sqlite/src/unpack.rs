//! `unpack`: an archive to a SQLite database (and its objects and payloads
//! to files), as the producer's import restores it.
//!
//! The archive is verified first (ndarc-verify); then every table is created
//! from its `sql` in dependency order and its rows are inserted with their
//! rowids, all in one transaction, into a temporary file beside the output
//! that is renamed into place at the end. Objects go to
//! `DIR/objects/BUCKET/KEY` and payloads to `DIR/payloads/NAME`; no key
//! can leave `DIR`.

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use ndarc_format::catalogue::decode_base64_into;
use ndarc_format::manifest::{Generated, Manifest, Table};
use ndarc_format::Affinity;
use ndarc_json::Value;
use rusqlite::types::Value as SqlValue;
use rusqlite::Connection;

use crate::quote;

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
    /// `DIR/payloads/NAME`); `None`: they are not written.
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
}

impl Default for UnpackOptions {
    fn default() -> Self {
        UnpackOptions {
            objects_dir: None,
            force: false,
            jobs: 0,
            mode: PRIVATE_MODE,
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

/// Why [`unpack`] restored nothing.
#[derive(Debug, thiserror::Error)]
pub enum UnpackError {
    /// The archive is not valid (exit 1): its first finding.
    #[error("invalid_archive: {0}")]
    Invalid(String),
    /// The archive is valid but SQLite or the file system cannot hold it
    /// (exit 1): `table_sql_rejected`, `table_sql_mismatch`,
    /// `row_rejected`, `unsafe_path`.
    #[error("{code}: {message}")]
    Unholdable {
        /// The code.
        code: &'static str,
        /// One line.
        message: String,
    },
    /// An output exists and `force` is not set (exit 2).
    #[error("output_exists: {0} already exists; use --force to replace it")]
    Exists(PathBuf),
    /// Reading the archive or writing an output failed (exit 2).
    #[error("{code}: {message}")]
    Io {
        /// `archive_unreadable` or `output_failed`.
        code: &'static str,
        /// One line.
        message: String,
    },
}

impl UnpackError {
    /// The stable code.
    pub fn code(&self) -> &'static str {
        match self {
            UnpackError::Invalid(_) => "invalid_archive",
            UnpackError::Unholdable { code, .. } | UnpackError::Io { code, .. } => code,
            UnpackError::Exists(_) => "output_exists",
        }
    }

    /// 1 when the archive is invalid or cannot be held, 2 when unpack could
    /// not run.
    pub fn exit_code(&self) -> u8 {
        match self {
            UnpackError::Invalid(_) | UnpackError::Unholdable { .. } => 1,
            _ => 2,
        }
    }
}

fn unholdable(code: &'static str, message: String) -> UnpackError {
    UnpackError::Unholdable { code, message }
}

fn write_err(what: &Path, e: impl std::fmt::Display) -> UnpackError {
    UnpackError::Io {
        code: "output_failed",
        message: format!("cannot write {}: {e}", what.display()),
    }
}

fn read_err(what: &Path, e: impl std::fmt::Display) -> UnpackError {
    UnpackError::Io {
        code: "archive_unreadable",
        message: format!("cannot read {}: {e}", what.display()),
    }
}

/// Whether SQLite failed for want of room or through the file system
/// (disk full, a file size limit, an I/O error), not because of what it was
/// asked to store: then the output failed (exit 2), whatever the statement.
fn is_storage_error(e: &rusqlite::Error) -> bool {
    use rusqlite::ErrorCode as C;
    matches!(
        e.sqlite_error_code(),
        Some(C::DiskFull | C::SystemIoFailure | C::CannotOpen | C::ReadOnly | C::OutOfMemory)
    )
}

/// A SQLite error on the database being written: [`is_storage_error`]s are
/// `output_failed`, others what `otherwise` makes of them.
fn sqlite_err(
    tmp: &Path,
    e: rusqlite::Error,
    otherwise: impl FnOnce(rusqlite::Error) -> UnpackError,
) -> UnpackError {
    if is_storage_error(&e) {
        storage_err(tmp, &e)
    } else {
        otherwise(e)
    }
}

/// `output_failed` for a SQLite storage error, with a hint: SQLite reports
/// a write beyond the file size limit as a plain I/O error.
fn storage_err(db: &Path, e: &rusqlite::Error) -> UnpackError {
    write_err(
        db,
        format_args!(
            "{e} (is the disk full, or the file too large for its file system or `ulimit -f`?)"
        ),
    )
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

fn temp_sibling(dest: &Path) -> PathBuf {
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
pub(crate) fn safe_segments(key: &str) -> Result<Vec<&str>, String> {
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
struct Written {
    files: Vec<PathBuf>,
    dirs: Vec<PathBuf>,
    temps: Vec<PathBuf>,
    done: bool,
}

impl Drop for Written {
    fn drop(&mut self) {
        for t in &self.temps {
            let _ = fs::remove_file(t);
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
fn place(
    base: &Path,
    segments: &[&str],
    mode: u32,
    written: &mut Written,
) -> Result<PathBuf, UnpackError> {
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
fn make_dir(p: &Path, mode: u32, written: &mut Written) -> Result<(), UnpackError> {
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
fn make_dirs(dir: &Path, mode: u32, written: &mut Written) -> Result<(), UnpackError> {
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
fn create_file(path: &Path, mode: u32, keep: Option<&Path>) -> io::Result<File> {
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

/// An object or payload being written.
struct Sink {
    dest: PathBuf,
    tmp: PathBuf,
    file: io::BufWriter<File>,
    left: u64,
}

struct Binaries {
    base: PathBuf,
    force: bool,
    mode: u32,
    /// `(bucket, key)` or `(None, name)` → size.
    sizes: HashMap<(Option<String>, String), u64>,
    open: Option<Sink>,
    objects: usize,
    payloads: usize,
}

impl Binaries {
    fn start(
        &mut self,
        bucket: Option<&str>,
        key: &str,
        written: &mut Written,
    ) -> Result<(), UnpackError> {
        let size = self
            .sizes
            .get(&(bucket.map(str::to_string), key.to_string()))
            .copied()
            .unwrap_or(0);
        let mut segments = vec![if bucket.is_some() {
            "objects"
        } else {
            "payloads"
        }];
        if let Some(b) = bucket {
            segments.push(b);
        }
        segments.extend(safe_segments(key).map_err(|m| unholdable("unsafe_path", m))?);
        let dest = place(&self.base, &segments, self.mode, written)?;
        let exists = fs::symlink_metadata(&dest).is_ok();
        if exists && !self.force {
            return Err(UnpackError::Exists(dest));
        }
        let tmp = temp_sibling(&dest);
        let file = create_file(&tmp, self.mode, exists.then_some(dest.as_path()))
            .map_err(|e| write_err(&tmp, e))?;
        written.temps.push(tmp.clone());
        self.open = Some(Sink {
            dest,
            tmp,
            file: io::BufWriter::with_capacity(1 << 20, file),
            left: size,
        });
        if bucket.is_some() {
            self.objects += 1;
        } else {
            self.payloads += 1;
        }
        Ok(())
    }

    fn write(&mut self, data: &[u8], written: &mut Written) -> Result<(), UnpackError> {
        let Some(sink) = self.open.as_mut() else {
            return Ok(());
        };
        sink.file
            .write_all(data)
            .map_err(|e| write_err(&sink.dest, e))?;
        sink.left = sink.left.saturating_sub(data.len() as u64);
        if sink.left == 0 {
            let Some(sink) = self.open.take() else {
                return Ok(());
            };
            let file = sink
                .file
                .into_inner()
                .map_err(|e| write_err(&sink.dest, e.error()))?;
            file.sync_all().map_err(|e| write_err(&sink.dest, e))?;
            drop(file);
            commit(&sink.tmp, &sink.dest, self.force)?;
            written.temps.retain(|t| *t != sink.tmp);
            written.files.push(sink.dest);
        }
        Ok(())
    }
}

/// Moves `tmp` to `dest`: replacing only with `force`, otherwise failing
/// if `dest` appeared meanwhile (a hard link never replaces).
fn commit(tmp: &Path, dest: &Path, force: bool) -> Result<(), UnpackError> {
    if force {
        fs::rename(tmp, dest).map_err(|e| write_err(dest, e))?;
    } else {
        match fs::hard_link(tmp, dest) {
            Ok(()) => {
                let _ = fs::remove_file(tmp);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                return Err(UnpackError::Exists(dest.to_path_buf()))
            }
            Err(_) => {
                if fs::symlink_metadata(dest).is_ok() {
                    return Err(UnpackError::Exists(dest.to_path_buf()));
                }
                fs::rename(tmp, dest).map_err(|e| write_err(dest, e))?;
            }
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

/// Tables in the order to create them: each after the tables it depends on
/// (within the archive), otherwise in manifest order; a cycle is broken at
/// its first table in manifest order.
fn creation_order(tables: &[Table]) -> Vec<usize> {
    let mut done = vec![false; tables.len()];
    let mut order = Vec::with_capacity(tables.len());
    let idx = |name: &str| {
        tables
            .iter()
            .position(|t| t.name.eq_ignore_ascii_case(name))
    };
    while order.len() < tables.len() {
        let ready = (0..tables.len()).find(|&i| {
            !done[i]
                && tables[i]
                    .dependencies
                    .iter()
                    .filter_map(|d| idx(d))
                    .all(|j| j == i || done[j])
        });
        let next = ready.unwrap_or_else(|| (0..tables.len()).find(|&i| !done[i]).unwrap_or(0));
        done[next] = true;
        order.push(next);
    }
    order
}

/// Checks that the table SQLite created from `sql` is the table the
/// manifest describes.
fn check_created(conn: &Connection, t: &Table) -> Result<(), UnpackError> {
    let mismatch = |what: String| {
        unholdable(
            "table_sql_mismatch",
            format!(
                "table {}: its sql does not create the table the manifest describes ({what})",
                t.name
            ),
        )
    };
    let exists: bool = conn
        .query_row(
            "SELECT count(*) FROM main.sqlite_schema WHERE type = 'table' AND name = ?1",
            [&t.name],
            |r| r.get::<_, i64>(0),
        )
        .map(|n| n > 0)
        .unwrap_or(false);
    if !exists {
        return Err(mismatch("no table of that name".to_string()));
    }
    let mut st = conn
        .prepare("SELECT name, type, \"notnull\", pk, hidden FROM pragma_table_xinfo(?1, 'main')")
        .map_err(|e| mismatch(e.to_string()))?;
    let cols: Vec<(String, String, i64, i64, i64)> = st
        .query_map([&t.name], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .and_then(|rows| rows.collect())
        .map_err(|e| mismatch(e.to_string()))?;
    if cols.len() != t.columns.len() {
        return Err(mismatch(format!(
            "{} columns, not {}",
            cols.len(),
            t.columns.len()
        )));
    }
    for (c, (name, decl, notnull, pk, hidden)) in t.columns.iter().zip(&cols) {
        let generated = match hidden {
            2 => Some(Generated::Virtual),
            3 => Some(Generated::Stored),
            _ => None,
        };
        if c.name != *name
            // SQLite reports the six STRICT type names (int, text …)
            // upper-cased, whatever case the sql declares them in.
            || !c.decl_type.eq_ignore_ascii_case(decl)
            || i64::from(c.notnull) != *notnull
            || i64::from(c.pk) != *pk
            || c.generated != generated
        {
            return Err(mismatch(format!("column {name:?}")));
        }
    }
    Ok(())
}

/// Binds a cell of a verified row.
fn cell(v: &Value<'_>, affinity: Affinity, buf: &mut Vec<u8>) -> SqlValue {
    match v {
        Value::Null | Value::Bool(_) | Value::Array(_) => SqlValue::Null,
        Value::Number(n) => {
            // Integral values within ±2^53 as integers (SQLite's affinity
            // makes REAL columns real again), others as doubles.
            // (An INTEGER cell is always a safe integer in a valid archive.)
            if affinity == Affinity::Integer
                || (n.fract() == 0.0 && n.abs() <= 9_007_199_254_740_992.0)
            {
                SqlValue::Integer(*n as i64)
            } else {
                SqlValue::Real(*n)
            }
        }
        Value::String(s) => SqlValue::Text(s.to_string()),
        Value::Object(o) => {
            buf.clear();
            let b64 = o.get("blob").and_then(Value::as_str).unwrap_or("");
            decode_base64_into(b64, buf);
            SqlValue::Blob(buf.clone())
        }
    }
}

struct Insert {
    table: usize,
    /// Column names bound, in order (the rowid alias last).
    columns: Vec<(String, Affinity)>,
    rowid: bool,
    sql: String,
}

/// Restores the archive at `archive` into a new SQLite database at `db`
/// (and, with `objects_dir`, its objects and payloads), as the producer's
/// import does. Nothing is left behind on failure: the database is built in
/// a temporary sibling and renamed into place, and object files written so
/// far are removed.
pub fn unpack(
    archive: &Path,
    db: &Path,
    opts: &UnpackOptions,
) -> Result<UnpackSummary, UnpackError> {
    if fs::symlink_metadata(db).is_ok() && !opts.force {
        return Err(UnpackError::Exists(db.to_path_buf()));
    }
    if db.is_dir() {
        return Err(write_err(db, "is a directory"));
    }
    let vopts = ndarc_verify::Options {
        jobs: opts.jobs,
        max_errors: 1,
        ..ndarc_verify::Options::default()
    };
    let report = ndarc_verify::verify_path(archive, &vopts).map_err(|e| read_err(archive, e))?;
    if report.errors > 0 {
        let first = report
            .findings
            .iter()
            .find(|f| f.severity == ndarc_format::Severity::Error)
            .map_or_else(String::new, |f| {
                format!(
                    "{}:{}: {}: {}",
                    f.line,
                    f.offset,
                    f.code.as_str(),
                    f.message
                )
            });
        return Err(UnpackError::Invalid(format!(
            "the archive is not valid ({} errors); first: {first}",
            report.errors
        )));
    }
    let Some(manifest) = report.manifest else {
        return Err(UnpackError::Invalid(
            "the archive has no manifest".to_string(),
        ));
    };
    // Every path first, so that a key that would escape writes nothing.
    if opts.objects_dir.is_some() {
        for o in &manifest.objects {
            safe_segments(&o.bucket)
                .map_err(|m| unholdable("unsafe_path", format!("bucket {m}")))?;
            safe_segments(&o.key)
                .map_err(|m| unholdable("unsafe_path", format!("object key {m}")))?;
        }
        for p in &manifest.payloads {
            safe_segments(&p.name)
                .map_err(|m| unholdable("unsafe_path", format!("payload name {m}")))?;
        }
    }
    let mut written = Written::default();
    let tmp = temp_sibling(db);
    let replaced = fs::symlink_metadata(db).is_ok();
    // SQLite creates a missing file with the umask's mode; an existing
    // empty file it takes as a new database.
    create_file(&tmp, opts.mode, replaced.then_some(db)).map_err(|e| write_err(&tmp, e))?;
    written.temps.push(tmp.clone());
    let summary = restore(archive, (&tmp, db), &manifest, opts, &mut written)?;
    commit(&tmp, db, opts.force)?;
    written.temps.retain(|t| *t != tmp);
    written.done = true;
    Ok(summary)
}

/// Builds the database in `tmp`; messages name `db`, the file it becomes.
fn restore(
    archive: &Path,
    (tmp, db): (&Path, &Path),
    manifest: &Manifest,
    opts: &UnpackOptions,
    written: &mut Written,
) -> Result<UnpackSummary, UnpackError> {
    let sql_err = |e: rusqlite::Error| {
        if is_storage_error(&e) {
            storage_err(db, &e)
        } else {
            write_err(db, e)
        }
    };
    let mut conn = Connection::open(tmp).map_err(sql_err)?;
    conn.execute_batch(
        "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA foreign_keys = OFF;",
    )
    .map_err(sql_err)?;
    let tx = conn.transaction().map_err(sql_err)?;
    // Writes page 1 even when the archive has no tables: SQLite leaves an
    // empty schema as an empty file, which has no SQLite header.
    tx.execute_batch("PRAGMA user_version = 0")
        .map_err(sql_err)?;
    for i in creation_order(&manifest.tables) {
        let t = &manifest.tables[i];
        tx.execute_batch(&t.sql).map_err(|e| {
            sqlite_err(db, e, |e| {
                unholdable(
                    "table_sql_rejected",
                    format!("table {}: SQLite rejects its sql: {e}", t.name),
                )
            })
        })?;
        check_created(&tx, t)?;
    }
    let inserts: Vec<Insert> = manifest
        .tables
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let excluded = manifest.excluded_columns_of(&t.name);
            let mut columns: Vec<(String, Affinity)> = t
                .columns
                .iter()
                .filter(|c| c.generated.is_none() && !excluded.contains(&c.name))
                .map(|c| (c.name.clone(), c.affinity()))
                .collect();
            let rowid = t.rowid_alias.is_some();
            let mut names: Vec<String> = columns.iter().map(|c| quote(&c.0)).collect();
            if let Some(a) = &t.rowid_alias {
                names.push(quote(a));
            }
            let sql = if names.is_empty() {
                format!("INSERT INTO main.{} DEFAULT VALUES", quote(&t.name))
            } else {
                let marks: Vec<String> = (1..=names.len()).map(|n| format!("?{n}")).collect();
                format!(
                    "INSERT INTO main.{}({}) VALUES({})",
                    quote(&t.name),
                    names.join(","),
                    marks.join(",")
                )
            };
            columns.shrink_to_fit();
            Insert {
                table: i,
                columns,
                rowid,
                sql,
            }
        })
        .collect();
    let mut binaries = opts.objects_dir.as_ref().map(|dir| {
        let mut sizes = HashMap::new();
        for o in &manifest.objects {
            sizes.insert((Some(o.bucket.clone()), o.key.clone()), o.size);
        }
        for p in &manifest.payloads {
            sizes.insert((None, p.name.clone()), p.size);
        }
        Binaries {
            base: dir.clone(),
            force: opts.force,
            mode: opts.mode,
            sizes,
            open: None,
            objects: 0,
            payloads: 0,
        }
    });
    if let Some(dir) = &opts.objects_dir {
        if !manifest.objects.is_empty() || !manifest.payloads.is_empty() {
            make_dirs(dir, opts.mode, written)?;
        }
    }
    let mut counts = vec![0u64; manifest.tables.len()];
    {
        let by_name: HashMap<&str, usize> = manifest
            .tables
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name.as_str(), i))
            .collect();
        let file = File::open(archive).map_err(|e| read_err(archive, e))?;
        let mut reader = BufReader::with_capacity(1 << 20, file);
        let mut line = Vec::new();
        let mut n = 0u64;
        let mut current: Option<(usize, rusqlite::Statement<'_>)> = None;
        let mut params: Vec<SqlValue> = Vec::new();
        let mut blob = Vec::new();
        let mut decoded = Vec::new();
        loop {
            line.clear();
            if reader
                .read_until(b'\n', &mut line)
                .map_err(|e| read_err(archive, e))?
                == 0
            {
                break;
            }
            n += 1;
            if n == 1 {
                continue;
            }
            if line.last() == Some(&b'\n') {
                line.pop();
            }
            let v = ndarc_json::parse(&line).map_err(|e| read_err(archive, e))?;
            if v.get("kind").and_then(Value::as_str) != Some("part") {
                continue;
            }
            let items = v
                .get("items")
                .and_then(Value::as_array)
                .map_or(&[][..], |a| a);
            for item in items {
                match item.get("kind").and_then(Value::as_str) {
                    Some("row") => {
                        let name = item.get("table").and_then(Value::as_str).unwrap_or("");
                        let Some(&ti) = by_name.get(name) else {
                            continue;
                        };
                        if current.as_ref().map(|c| c.0) != Some(ti) {
                            let st = tx.prepare(&inserts[ti].sql).map_err(|e| {
                                sqlite_err(db, e, |e| {
                                    unholdable("row_rejected", format!("table {name}: {e}"))
                                })
                            })?;
                            current = Some((ti, st));
                        }
                        let ins = &inserts[ti];
                        let row = item.get("row");
                        params.clear();
                        for (c, aff) in &ins.columns {
                            let v = row.and_then(|r| r.get(c)).unwrap_or(&Value::Null);
                            params.push(cell(v, *aff, &mut blob));
                        }
                        if ins.rowid {
                            let r = item.get("rowid").and_then(Value::as_f64).unwrap_or(0.0);
                            params.push(SqlValue::Integer(r as i64));
                        }
                        if let Some((_, st)) = current.as_mut() {
                            st.execute(rusqlite::params_from_iter(params.iter()))
                                .map_err(|e| {
                                    sqlite_err(db, e, |e| {
                                        let index = item
                                            .get("index")
                                            .and_then(Value::as_f64)
                                            .unwrap_or(0.0);
                                        unholdable(
                                            "row_rejected",
                                            format!(
                                                "table {name}, row {index}: SQLite rejects it: {e}"
                                            ),
                                        )
                                    })
                                })?;
                        }
                        counts[ins.table] += 1;
                    }
                    Some(kind @ ("object" | "payload")) => {
                        let Some(b) = binaries.as_mut() else { continue };
                        let offset = item.get("offset").and_then(Value::as_f64).unwrap_or(0.0);
                        if offset == 0.0 {
                            let (bucket, key) = if kind == "object" {
                                (
                                    item.get("bucket").and_then(Value::as_str),
                                    item.get("key").and_then(Value::as_str).unwrap_or(""),
                                )
                            } else {
                                (None, item.get("name").and_then(Value::as_str).unwrap_or(""))
                            };
                            b.start(bucket, key, written)?;
                        }
                        decoded.clear();
                        let data = item.get("data").and_then(Value::as_str).unwrap_or("");
                        decode_base64_into(data, &mut decoded);
                        // An empty entry's one chunk completes it too.
                        b.write(&decoded, written)?;
                    }
                    _ => {}
                }
            }
        }
    }
    tx.commit().map_err(sql_err)?;
    conn.close().map_err(|(_, e)| sql_err(e))?;
    File::open(tmp)
        .and_then(|f| f.sync_all())
        .map_err(|e| write_err(db, e))?;
    let skipped = if binaries.is_none() {
        manifest.objects.len() + manifest.payloads.len()
    } else {
        0
    };
    Ok(UnpackSummary {
        tables: manifest
            .tables
            .iter()
            .zip(counts)
            .map(|(t, n)| (t.name.clone(), n))
            .collect(),
        objects: binaries.as_ref().map_or(0, |b| b.objects),
        payloads: binaries.as_ref().map_or(0, |b| b.payloads),
        skipped,
    })
}
