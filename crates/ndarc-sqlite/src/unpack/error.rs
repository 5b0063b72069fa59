//! The failures of an unpack, as [`Error`]s with their codes.

use crate::Error;
use std::path::Path;

pub(super) fn unholdable(code: &'static str, message: String) -> Error {
    Error::Unholdable { code, message }
}

pub(super) fn write_err(what: &Path, e: impl std::fmt::Display) -> Error {
    Error::Io {
        code: "output_failed",
        message: format!("cannot write {}: {e}", what.display()),
    }
}

pub(super) fn read_err(what: &Path, e: impl std::fmt::Display) -> Error {
    Error::Io {
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
    otherwise: impl FnOnce(rusqlite::Error) -> Error,
) -> Error {
    if is_storage_error(&e) {
        storage_err(tmp, &e)
    } else {
        otherwise(e)
    }
}

/// `output_failed` for a SQLite storage error, with a hint: SQLite reports
/// a write beyond the file size limit as a plain I/O error.
pub(super) fn storage_err(db: &Path, e: &rusqlite::Error) -> Error {
    write_err(
        db,
        format_args!(
            "{e} (is the disk full, or the file too large for its file system or `ulimit -f`?)"
        ),
    )
}
