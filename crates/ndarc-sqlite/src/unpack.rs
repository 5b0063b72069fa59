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

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use ndarc_format::catalogue::decode_base64_into;
use ndarc_format::manifest::{Generated, Manifest, Table};
use ndarc_format::part::BinaryKind;
use ndarc_format::{Affinity, LineRef, Plan, Severity};
use ndarc_json::Value;
use ndarc_verify::{Accepted, ReadError, Reader, Report};
use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, OpenFlags};

use crate::metadata::{sidecar_bytes, ObjectMetadata, SIDECAR_DIR};
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
    /// The database path is an existing directory (exit 2): `--force`
    /// would not help, the path must name a file.
    #[error("output_exists: {} is a directory; -o names the database file to write (e.g. -o {})", .0.display(), .0.join("restored.db").display())]
    IsDirectory(PathBuf),
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
            UnpackError::Exists(_) | UnpackError::IsDirectory(_) => "output_exists",
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

/// Moves `tmp` to `dest`: replacing only with `force`, otherwise failing
/// if `dest` appeared meanwhile.
fn commit(tmp: &Path, dest: &Path, force: bool) -> Result<(), UnpackError> {
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
                return Err(UnpackError::Exists(dest.to_path_buf()));
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

/// A number as a restore leaves it in the database.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RestoredNumber {
    /// An INTEGER.
    Integer(i64),
    /// A REAL.
    Real(f64),
}

/// The number a restore binds for a number cell: integral values within
/// ±2^53 as integers, others as doubles. (An INTEGER cell is always a safe
/// integer in a valid archive.)
fn bound_number(n: f64, affinity: Affinity) -> RestoredNumber {
    if affinity == Affinity::Integer || (n.fract() == 0.0 && n.abs() <= 9_007_199_254_740_992.0) {
        RestoredNumber::Integer(n as i64)
    } else {
        RestoredNumber::Real(n)
    }
}

/// The value a restore leaves for the number cell `n` in a column of
/// archive affinity `affinity` and SQLite affinity `column`
/// ([`crate::sqlite_affinity`] of its declared type), as SQLite reads it
/// back: what [`unpack`] binds, then SQLite's column affinity (a REAL
/// column reads back REAL; INTEGER and NUMERIC keep an integral REAL
/// strictly inside the 64-bit range as an INTEGER, as
/// `sqlite3VdbeIntegerAffinity` does). For readers of rows that give the
/// values a restored database would (the Python package).
pub fn restored_number(
    n: f64,
    affinity: Affinity,
    column: crate::SqliteAffinity,
) -> RestoredNumber {
    let bound = bound_number(n, affinity);
    match (column, bound) {
        (crate::SqliteAffinity::Real, RestoredNumber::Integer(i)) => RestoredNumber::Real(i as f64),
        (
            crate::SqliteAffinity::Integer | crate::SqliteAffinity::Numeric,
            RestoredNumber::Real(r),
        ) if r.fract() == 0.0 && r > -9.223_372_036_854_776e18 && r < 9.223_372_036_854_776e18 => {
            RestoredNumber::Integer(r as i64)
        }
        _ => bound,
    }
}

/// Binds a cell of a verified row.
fn cell(v: &Value<'_>, affinity: Affinity, buf: &mut Vec<u8>) -> SqlValue {
    match v {
        Value::Null | Value::Bool(_) | Value::Array(_) => SqlValue::Null,
        Value::Number(n) => match bound_number(*n, affinity) {
            RestoredNumber::Integer(i) => SqlValue::Integer(i),
            RestoredNumber::Real(r) => SqlValue::Real(r),
        },
        Value::String(s) => SqlValue::Text(s.to_string()),
        Value::Object(o) => {
            buf.clear();
            let b64 = o.get("blob").and_then(Value::as_str).unwrap_or("");
            decode_base64_into(b64, buf);
            SqlValue::Blob(buf.clone())
        }
    }
}

/// Opens the database being restored (an existing file), defensively: an archive's `sql` runs
/// on this connection, so it can attach no database
/// (`SQLITE_LIMIT_ATTACHED` 0), load no extension, fire no trigger and
/// create no view, trusts nothing in the schema (`trusted_schema` off),
/// cannot corrupt the file through `writable_schema` (defensive mode),
/// [`restore_authorizer`] allows only what a restore does (installed
/// by the caller once its own pragmas have run).
pub fn defensive(path: &Path) -> rusqlite::Result<Connection> {
    use rusqlite::config::DbConfig as C;
    use rusqlite::limits::Limit;
    // The file exists (created with its mode beforehand): opened without
    // SQLITE_OPEN_CREATE, so that a file removed meanwhile (by a signal's
    // cleanup) is not made again, and without SQLITE_OPEN_URI, so that a
    // path beginning with `file:` is a path.
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.set_limit(Limit::SQLITE_LIMIT_ATTACHED, 0)?;
    for (flag, on) in [
        (C::SQLITE_DBCONFIG_DEFENSIVE, true),
        (C::SQLITE_DBCONFIG_TRUSTED_SCHEMA, false),
        (C::SQLITE_DBCONFIG_ENABLE_TRIGGER, false),
        (C::SQLITE_DBCONFIG_ENABLE_VIEW, false),
        (C::SQLITE_DBCONFIG_ENABLE_FKEY, false),
    ] {
        conn.set_db_config(flag, on)?;
    }
    Ok(conn)
}

/// What a restore may do, and nothing else: create tables in `main`, write
/// their rows and the schema table, read (CHECK constraints and defaults),
/// call SQLite's built-in functions, and run its own transaction. Refused:
/// ATTACH and DETACH, temporary objects, triggers, views, indexes other
/// than those of a table's UNIQUE and PRIMARY KEY constraints, virtual
/// tables, every DROP and ALTER, pragmas, `load_extension`.
pub fn restore_authorizer(ctx: AuthContext<'_>) -> Authorization {
    let main = |db: Option<&str>| db.is_none_or(|d| d == "main");
    let allowed = match ctx.action {
        AuthAction::CreateTable { .. } => main(ctx.database_name),
        // The indexes of UNIQUE and PRIMARY KEY constraints, which SQLite
        // creates with the table; no other.
        AuthAction::CreateIndex { index_name, .. } => {
            main(ctx.database_name) && index_name.starts_with("sqlite_autoindex_")
        }
        AuthAction::Insert { .. } | AuthAction::Update { .. } | AuthAction::Read { .. } => {
            main(ctx.database_name)
        }
        AuthAction::Select | AuthAction::Transaction { .. } | AuthAction::Savepoint { .. } => true,
        // Read-only: the restore compares the created table with the
        // manifest's columns.
        AuthAction::Pragma { pragma_name, .. } => pragma_name.eq_ignore_ascii_case("table_xinfo"),
        AuthAction::Function { function_name } => {
            !function_name.eq_ignore_ascii_case("load_extension")
        }
        _ => false,
    };
    if allowed {
        Authorization::Allow
    } else {
        Authorization::Deny
    }
}

/// An insert statement of one table: cells are bound in the plan's column
/// order, the rowid last.
struct Insert {
    sql: String,
    affinities: Vec<Affinity>,
    /// Column names in the plan's order (for rows read without spans).
    names: Vec<String>,
    rowid: bool,
}

fn insert_of(plan: &Plan, t: usize) -> Insert {
    let tp = &plan.tables[t];
    let table = &plan.manifest.tables[t];
    let mut names: Vec<String> = tp.columns.iter().map(|c| quote(&c.name)).collect();
    if let Some(a) = &table.rowid_alias {
        names.push(quote(a));
    }
    let sql = if names.is_empty() {
        format!("INSERT INTO main.{} DEFAULT VALUES", quote(&table.name))
    } else {
        let marks: Vec<String> = (1..=names.len()).map(|n| format!("?{n}")).collect();
        format!(
            "INSERT INTO main.{}({}) VALUES({})",
            quote(&table.name),
            names.join(","),
            marks.join(",")
        )
    };
    Insert {
        sql,
        affinities: tp.columns.iter().map(|c| c.affinity).collect(),
        names: tp.columns.iter().map(|c| c.name.clone()).collect(),
        rowid: table.rowid_alias.is_some(),
    }
}

/// A sidecar to write: its path segments, bytes, and what it is.
type Sidecar = (Vec<String>, Vec<u8>, String);

/// The metadata sidecar of each bucket some object of which has metadata
/// (see [`crate::metadata`]): its path segments under the objects
/// directory (`metadata/BUCKET.json`), its bytes, and what it is.
fn sidecars(manifest: &Manifest) -> Result<Vec<Sidecar>, UnpackError> {
    let mut buckets: BTreeMap<&str, Vec<(&str, ObjectMetadata)>> = BTreeMap::new();
    for o in &manifest.objects {
        let m = ObjectMetadata {
            http: o.http_metadata.clone(),
            custom: o.custom_metadata.clone(),
        };
        buckets.entry(&o.bucket).or_default().push((&o.key, m));
    }
    let mut out = Vec::new();
    for (bucket, objects) in buckets {
        let Some(bytes) = sidecar_bytes(objects.iter().map(|(k, m)| (*k, m))) else {
            continue;
        };
        let mut segs = vec![SIDECAR_DIR.to_string()];
        segs.extend(
            safe_segments(bucket)
                .map_err(|m| unholdable("unsafe_path", format!("bucket {m}")))?
                .into_iter()
                .map(str::to_string),
        );
        if let Some(last) = segs.last_mut() {
            last.push_str(".json");
        }
        out.push((segs, bytes, format!("the metadata of bucket {bucket:?}")));
    }
    Ok(out)
}

/// An object or payload being written to its temporary sibling.
struct Sink {
    file: io::BufWriter<File>,
    tmp: PathBuf,
    dest: PathBuf,
}

/// The restore, fed by the verification session (see
/// [`ndarc_verify::read`]): everything it writes is provisional (an open
/// transaction, temporary files) until [`Restore::commit`].
struct Restore<'c> {
    conn: &'c Connection,
    db: &'c Path,
    opts: &'c UnpackOptions,
    plan: Option<Arc<Plan>>,
    inserts: Vec<Insert>,
    current: Option<(usize, rusqlite::Statement<'c>)>,
    counts: Vec<u64>,
    /// Destination of each object, then of each payload (manifest order).
    dests: Vec<PathBuf>,
    open: Option<Sink>,
    /// Temporary files complete, with their destinations.
    done: Vec<(PathBuf, PathBuf)>,
    written: Written,
    params: Vec<SqlValue>,
    blob: Vec<u8>,
    chunk: Vec<u8>,
    objects: usize,
    payloads: usize,
}

impl<'c> Restore<'c> {
    fn plan(&self) -> Result<&Arc<Plan>, UnpackError> {
        self.plan
            .as_ref()
            .ok_or_else(|| UnpackError::Invalid("the archive has no manifest".into()))
    }

    /// Checks every path first, so that a key that would escape, or two
    /// entries that map to one file, write nothing.
    fn paths(&mut self, manifest: &Manifest) -> Result<(), UnpackError> {
        let Some(base) = &self.opts.objects_dir else {
            return Ok(());
        };
        let mut files: BTreeMap<Vec<String>, String> = BTreeMap::new();
        let mut entries = Vec::with_capacity(manifest.objects.len() + manifest.payloads.len());
        for o in &manifest.objects {
            let mut segs = vec!["objects".to_string()];
            segs.extend(
                safe_segments(&o.bucket)
                    .map_err(|m| unholdable("unsafe_path", format!("bucket {m}")))?
                    .into_iter()
                    .map(str::to_string),
            );
            segs.extend(
                safe_segments(&o.key)
                    .map_err(|m| unholdable("unsafe_path", format!("object key {m}")))?
                    .into_iter()
                    .map(str::to_string),
            );
            entries.push((segs, format!("object {:?} of bucket {:?}", o.key, o.bucket)));
        }
        for p in &manifest.payloads {
            let mut segs = vec!["payloads".to_string()];
            segs.extend(
                safe_segments(&p.name)
                    .map_err(|m| unholdable("unsafe_path", format!("payload name {m}")))?
                    .into_iter()
                    .map(str::to_string),
            );
            entries.push((segs, format!("payload {:?}", p.name)));
        }
        let binaries = entries.len();
        let sidecars = sidecars(manifest)?;
        entries.extend(
            sidecars
                .iter()
                .map(|(segs, _, what)| (segs.clone(), what.clone())),
        );
        for (segs, what) in &entries {
            if let Some(other) = files.insert(segs.clone(), what.clone()) {
                return Err(unholdable(
                    "path_collision",
                    format!(
                        "{other} and {what} would both be written to {}",
                        base.join(segs.join("/")).display()
                    ),
                ));
            }
        }
        // A file that is also a directory of another: `B/x` and `B/x/y`.
        let mut prev: Option<&Vec<String>> = None;
        for segs in files.keys() {
            if let Some(p) = prev {
                if segs.len() > p.len() && segs.starts_with(p) {
                    return Err(unholdable(
                        "path_collision",
                        format!(
                            "{} and {} cannot both be written: {} would be a file and a directory",
                            files[p],
                            files[segs],
                            base.join(p.join("/")).display()
                        ),
                    ));
                }
            }
            prev = Some(segs);
        }
        if !entries.is_empty() {
            make_dirs(base, self.opts.mode, &mut self.written)?;
        }
        for (segs, _) in entries {
            let refs: Vec<&str> = segs.iter().map(String::as_str).collect();
            let dest = place(base, &refs, self.opts.mode, &mut self.written)?;
            if fs::symlink_metadata(&dest).is_ok() && !self.opts.force {
                return Err(UnpackError::Exists(dest));
            }
            self.dests.push(dest);
        }
        // The sidecars are known from the manifest: written now, as
        // temporary files committed with the objects.
        let dests = self.dests.split_off(binaries);
        for (dest, (_, bytes, _)) in dests.into_iter().zip(sidecars) {
            let tmp = temp_sibling(&dest);
            let exists = fs::symlink_metadata(&dest).is_ok();
            let mut file = self
                .written
                .temp(&tmp, self.opts, exists.then_some(dest.as_path()))
                .map_err(|e| write_err(&tmp, e))?;
            file.write_all(&bytes)
                .and_then(|()| file.sync_all())
                .map_err(|e| write_err(&dest, e))?;
            self.done.push((tmp, dest));
        }
        Ok(())
    }

    /// Creates the tables, each from its `sql` as one prepared statement.
    fn create(&mut self, plan: &Plan) -> Result<(), UnpackError> {
        let db = self.db;
        for i in creation_order(&plan.manifest.tables) {
            let t = &plan.manifest.tables[i];
            let rejected = |e: rusqlite::Error| {
                sqlite_err(db, e, |e| {
                    unholdable(
                        "table_sql_rejected",
                        format!("table {}: SQLite rejects its sql: {e}", t.name),
                    )
                })
            };
            // `prepare` refuses a second statement; the authorizer refuses
            // anything but a table in `main`.
            let mut st = self.conn.prepare(&t.sql).map_err(rejected)?;
            st.raw_execute().map_err(rejected)?;
            drop(st);
            check_created(self.conn, t)?;
        }
        Ok(())
    }

    fn rows(&mut self, part: &Accepted<'_>, table: usize) -> Result<(), UnpackError> {
        let plan = self.plan()?.clone();
        if self.current.as_ref().map(|c| c.0) != Some(table) {
            let name = &plan.manifest.tables[table].name;
            let st = self.conn.prepare(&self.inserts[table].sql).map_err(|e| {
                sqlite_err(self.db, e, |e| {
                    unholdable("row_rejected", format!("table {name}: {e}"))
                })
            })?;
            self.current = Some((table, st));
        }
        let ins = &self.inserts[table];
        let first = part.rows().and_then(|r| r.first_index).unwrap_or(0);
        let bytes = part.line.bytes;
        let spans = part.spans;
        let mut n = 0u64;
        if spans.table == Some(table) {
            // Each cell bound straight from its text in the line (copied by
            // SQLite as it binds): no value tree, no owned value per cell.
            let width = ins.affinities.len();
            let Some((_, st)) = self.current.as_mut() else {
                return Ok(());
            };
            for r in 0..spans.rows.len() {
                let bound = (|| {
                    for (c, aff) in ins.affinities.iter().enumerate() {
                        let (a, b) = spans.cells.get(r * width + c).copied().unwrap_or((0, 0));
                        let text = bytes.get(a as usize..b as usize).unwrap_or(b"null");
                        bind_cell(st, c + 1, text, *aff, &mut self.blob)?;
                    }
                    if ins.rowid {
                        let id = spans.rowids.get(r).map_or(0, |x| x.0);
                        st.raw_bind_parameter(width + 1, id)?;
                    }
                    st.raw_execute().map(drop)
                })();
                bound.map_err(|e| rejected(self.db, &plan, table, first + r as u64, e))?;
                n += 1;
            }
        } else {
            // A row part the fast path did not read (a warning on it):
            // read in full.
            let v = ndarc_json::parse(bytes)
                .map_err(|e| UnpackError::Invalid(format!("line {}: {e}", part.line.line)))?;
            let items = v
                .get("items")
                .and_then(Value::as_array)
                .map_or(&[][..], |a| a);
            for (r, item) in items.iter().enumerate() {
                self.params.clear();
                let row = item.get("row");
                for (name, aff) in ins.names.iter().zip(&ins.affinities) {
                    let v = row.and_then(|x| x.get(name)).unwrap_or(&Value::Null);
                    self.params.push(cell(v, *aff, &mut self.blob));
                }
                if ins.rowid {
                    let id = item.get("rowid").and_then(Value::as_f64).unwrap_or(0.0);
                    self.params.push(SqlValue::Integer(id as i64));
                }
                n += 1;
                exec(
                    &mut self.current,
                    &self.params,
                    (self.db, &plan),
                    table,
                    first + r as u64,
                )?;
            }
        }
        self.counts[table] += n;
        Ok(())
    }

    fn binary(&mut self, part: &Accepted<'_>) -> Result<(), UnpackError> {
        let Some(b) = part.binary() else {
            return Ok(());
        };
        if self.opts.objects_dir.is_none() {
            return Ok(());
        }
        let plan = self.plan()?.clone();
        let slot = match b.kind {
            BinaryKind::Object => b.entry,
            BinaryKind::Payload => plan.manifest.objects.len() + b.entry,
        };
        if b.offset == Some(0) {
            self.finish_open()?;
            let Some(dest) = self.dests.get(slot).cloned() else {
                return Ok(());
            };
            let tmp = temp_sibling(&dest);
            let exists = fs::symlink_metadata(&dest).is_ok();
            let file = self
                .written
                .temp(&tmp, self.opts, exists.then_some(dest.as_path()))
                .map_err(|e| write_err(&tmp, e))?;
            self.open = Some(Sink {
                file: io::BufWriter::with_capacity(1 << 20, file),
                tmp,
                dest,
            });
            match b.kind {
                BinaryKind::Object => self.objects += 1,
                BinaryKind::Payload => self.payloads += 1,
            }
        }
        let Some(sink) = self.open.as_mut() else {
            return Ok(());
        };
        let mut chunk = std::mem::take(&mut self.chunk);
        let data = part.chunk(&mut chunk).unwrap_or(&[]);
        let r = sink
            .file
            .write_all(data)
            .map_err(|e| write_err(&sink.dest, e));
        self.chunk = chunk;
        r
    }

    /// Closes the file being written (synced), keeping it as a temporary.
    fn finish_open(&mut self) -> Result<(), UnpackError> {
        if let Some(sink) = self.open.take() {
            let file = sink
                .file
                .into_inner()
                .map_err(|e| write_err(&sink.dest, e.error()))?;
            file.sync_all().map_err(|e| write_err(&sink.dest, e))?;
            self.done.push((sink.tmp, sink.dest));
        }
        Ok(())
    }
}

/// Inserts one row with `params`.
fn exec(
    current: &mut Option<(usize, rusqlite::Statement<'_>)>,
    params: &[SqlValue],
    (db, plan): (&Path, &Plan),
    table: usize,
    index: u64,
) -> Result<(), UnpackError> {
    let Some((_, st)) = current.as_mut() else {
        return Ok(());
    };
    st.execute(rusqlite::params_from_iter(params.iter()))
        .map(drop)
        .map_err(|e| rejected(db, plan, table, index, e))
}

/// SQLite's error on row `index` of `table`.
fn rejected(db: &Path, plan: &Plan, table: usize, index: u64, e: rusqlite::Error) -> UnpackError {
    sqlite_err(db, e, |e| {
        unholdable(
            "row_rejected",
            format!(
                "table {}, row {index}: SQLite rejects it: {e}",
                plan.manifest.tables[table].name
            ),
        )
    })
}

/// Binds the cell whose canonical JSON text is `text` (from a verified
/// line) as parameter `i` of `st`, as [`cell`] makes its value: a string
/// without escapes as the bytes between its quotes, a short integer
/// without parsing, anything else parsed (a blob decoded into `buf`).
fn bind_cell(
    st: &mut rusqlite::Statement<'_>,
    i: usize,
    text: &[u8],
    affinity: Affinity,
    buf: &mut Vec<u8>,
) -> rusqlite::Result<()> {
    use rusqlite::types::{ToSqlOutput, ValueRef};
    let number = |n: f64| match bound_number(n, affinity) {
        RestoredNumber::Integer(i) => ToSqlOutput::Owned(SqlValue::Integer(i)),
        RestoredNumber::Real(r) => ToSqlOutput::Owned(SqlValue::Real(r)),
    };
    match text {
        [b'"', inner @ .., b'"'] if !inner.contains(&b'\\') => {
            return st.raw_bind_parameter(i, ToSqlOutput::Borrowed(ValueRef::Text(inner)));
        }
        b"null" => return st.raw_bind_parameter(i, ToSqlOutput::Owned(SqlValue::Null)),
        _ => {}
    }
    if let Some(n) = short_integer(text) {
        return st.raw_bind_parameter(i, number(n as f64));
    }
    let v = ndarc_json::parse(text).unwrap_or(Value::Null);
    let out = match &v {
        Value::Null | Value::Bool(_) | Value::Array(_) => ToSqlOutput::Owned(SqlValue::Null),
        Value::Number(n) => number(*n),
        Value::String(s) => ToSqlOutput::Borrowed(ValueRef::Text(s.as_bytes())),
        Value::Object(o) => {
            buf.clear();
            let b64 = o.get("blob").and_then(Value::as_str).unwrap_or("");
            decode_base64_into(b64, buf);
            ToSqlOutput::Borrowed(ValueRef::Blob(buf))
        }
    };
    st.raw_bind_parameter(i, out)
}

/// The value of a canonical integer of at most 15 digits (exact as a
/// double, so the same number JSON parsing gives).
fn short_integer(text: &[u8]) -> Option<i64> {
    let (neg, digits) = match text {
        [b'-', d @ ..] => (true, d),
        d => (false, d),
    };
    if digits.is_empty() || digits.len() > 15 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    if digits.len() > 1 && digits[0] == b'0' {
        return None;
    }
    let v = digits
        .iter()
        .fold(0i64, |acc, &d| acc * 10 + i64::from(d - b'0'));
    Some(if neg { -v } else { v })
}

impl Reader for Restore<'_> {
    type Error = UnpackError;

    fn start(&mut self, plan: &Arc<Plan>, _: LineRef<'_>) -> Result<(), UnpackError> {
        self.plan = Some(plan.clone());
        self.paths(&plan.manifest)?;
        self.create(plan)?;
        self.inserts = (0..plan.tables.len()).map(|t| insert_of(plan, t)).collect();
        self.counts = vec![0; plan.tables.len()];
        Ok(())
    }

    fn part(&mut self, part: Accepted<'_>) -> Result<(), UnpackError> {
        match part.rows() {
            Some(r) => self.rows(&part, r.table),
            None => self.binary(&part),
        }
    }
}

impl Written {
    /// Creates the temporary file `tmp` (removed unless committed) with
    /// [`create_file`], as one step with telling the caller's signal
    /// cleanup of it.
    fn temp(&mut self, tmp: &Path, opts: &UnpackOptions, keep: Option<&Path>) -> io::Result<File> {
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
    fn committed(&mut self, tmp: &Path, dest: PathBuf, opts: &UnpackOptions) {
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
fn sqlite_side_files(db: &Path) -> [PathBuf; 3] {
    ["-journal", "-wal", "-shm"].map(|suffix| {
        let mut name = db.as_os_str().to_owned();
        name.push(suffix);
        PathBuf::from(name)
    })
}

/// Restores the archive at `archive` into a new SQLite database at `db`
/// (and, with `objects_dir`, its objects and payloads), as the producer's
/// import does, reading it once (see the [module](self)). Nothing is left
/// behind on failure, and nothing at all is written for an invalid archive.
pub fn unpack(
    archive: &Path,
    db: &Path,
    opts: &UnpackOptions,
) -> Result<UnpackSummary, UnpackError> {
    unpack_with(db, opts, |r, v| ndarc_verify::read_path(archive, v, r))
        .map_err(|e| e.reading(archive))
}

/// [`unpack`] from a stream (standard input, a pipe), read once.
pub fn unpack_reader(
    input: impl Read + Send,
    db: &Path,
    opts: &UnpackOptions,
) -> Result<UnpackSummary, UnpackError> {
    unpack_with(db, opts, |r, v| ndarc_verify::read_stream(input, v, r))
        .map_err(|e| e.reading(Path::new("<stdin>")))
}

/// What [`unpack_with`] gives back before the archive's name is known.
enum Failed {
    Unpack(UnpackError),
    Read(ndarc_verify::Error),
}

impl Failed {
    fn reading(self, archive: &Path) -> UnpackError {
        match self {
            Failed::Unpack(e) => e,
            Failed::Read(e) => read_err(archive, e),
        }
    }
}

impl From<UnpackError> for Failed {
    fn from(e: UnpackError) -> Self {
        Failed::Unpack(e)
    }
}

fn unpack_with(
    db: &Path,
    opts: &UnpackOptions,
    read: impl FnOnce(
        &mut Restore<'_>,
        &ndarc_verify::Options,
    ) -> Result<Report, ReadError<UnpackError>>,
) -> Result<UnpackSummary, Failed> {
    let existing = fs::symlink_metadata(db).ok();
    if fs::metadata(db).is_ok_and(|m| m.is_dir()) {
        return Err(UnpackError::IsDirectory(db.to_path_buf()).into());
    }
    if existing.is_some() && !opts.force {
        return Err(UnpackError::Exists(db.to_path_buf()).into());
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
            blob: Vec::new(),
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
        return Err(UnpackError::Invalid("the archive has no manifest".into()).into());
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
fn remove_logs(db: &Path) -> Result<(), UnpackError> {
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
fn invalid(report: &Report) -> UnpackError {
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
    UnpackError::Invalid(format!(
        "the archive is not valid ({}, {}){first}; nothing was written (`ndarc verify` lists every finding)",
        plural(report.errors, "error"),
        plural(report.warnings, "warning"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `restored_number` says what SQLite itself stores: each number is
    /// bound as `unpack` binds it into a column of each declared type and
    /// read back.
    #[test]
    fn restored_number_is_what_sqlite_reads_back() {
        let conn = Connection::open_in_memory().unwrap();
        let decls = [
            "INTEGER", "REAL", "FLOAT", "NUMERIC", "DATETIME", "", "BLOB",
        ];
        let cols: Vec<String> = (0..decls.len())
            .map(|i| format!("c{i} {}", decls[i]))
            .collect();
        conn.execute(&format!("CREATE TABLE t({})", cols.join(",")), [])
            .unwrap();
        let numbers: [f64; 10] = [
            0.0,
            5.0,
            -7.0,
            1.5,
            9_007_199_254_740_992.0,
            1e18,
            1e20,
            9.223_372_036_854_776e18,
            -9.223_372_036_854_776e18,
            1e-7,
        ];
        for n in numbers {
            for (i, decl) in decls.iter().enumerate() {
                let aff = Affinity::of(decl);
                if aff == Affinity::Integer && n.fract() != 0.0 {
                    continue; // not a valid INTEGER cell
                }
                if aff == Affinity::Integer && n.abs() > 9_007_199_254_740_991.0 {
                    continue; // not a safe integer: not a valid INTEGER cell
                }
                conn.execute("DELETE FROM t", []).unwrap();
                let bound = cell(&Value::Number(n), aff, &mut Vec::new());
                conn.execute(&format!("INSERT INTO t(c{i}) VALUES(?1)"), [&bound])
                    .unwrap();
                let got: SqlValue = conn
                    .query_row(&format!("SELECT c{i} FROM t"), [], |r| r.get(0))
                    .unwrap();
                let want = match restored_number(n, aff, crate::sqlite_affinity(decl)) {
                    RestoredNumber::Integer(i) => SqlValue::Integer(i),
                    RestoredNumber::Real(r) => SqlValue::Real(r),
                };
                assert_eq!(got, want, "{n} in a {decl:?} column");
            }
        }
    }
}
