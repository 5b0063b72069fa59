//! Why an unpack restored nothing, and the codes of its failures.

use std::path::{Path, PathBuf};

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

pub(super) fn unholdable(code: &'static str, message: String) -> UnpackError {
    UnpackError::Unholdable { code, message }
}

pub(super) fn write_err(what: &Path, e: impl std::fmt::Display) -> UnpackError {
    UnpackError::Io {
        code: "output_failed",
        message: format!("cannot write {}: {e}", what.display()),
    }
}

pub(super) fn read_err(what: &Path, e: impl std::fmt::Display) -> UnpackError {
    UnpackError::Io {
        code: "archive_unreadable",
        message: format!("cannot read {}: {e}", what.display()),
    }
}

/// Whether SQLite failed for want of room or through the file system
/// (disk full, a file size limit, an I/O error), not because of what it was
/// asked to store: then the output failed (exit 2), whatever the statement.
pub(super) fn is_storage_error(e: &rusqlite::Error) -> bool {
    use rusqlite::ErrorCode as C;
    matches!(
        e.sqlite_error_code(),
        Some(C::DiskFull | C::SystemIoFailure | C::CannotOpen | C::ReadOnly | C::OutOfMemory)
    )
}

/// A SQLite error on the database being written: [`is_storage_error`]s are
/// `output_failed`, others what `otherwise` makes of them.
pub(super) fn sqlite_err(
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
pub(super) fn storage_err(db: &Path, e: &rusqlite::Error) -> UnpackError {
    write_err(
        db,
        format_args!(
            "{e} (is the disk full, or the file too large for its file system or `ulimit -f`?)"
        ),
    )
}
