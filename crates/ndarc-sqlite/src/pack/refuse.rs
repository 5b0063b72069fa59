//! Why a database is not packed: the producer's refusals (with their
//! codes, SPEC.md §13.6), unreadable inputs and options, and the refusals
//! found row by row, whose rules are in `rows`.

use std::io;

/// Why a database cannot be archived: the producer's refusal, with its
/// stable code and where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The producer's code (`row_type`, `unsafe_integer`, `virtual_table` …).
    pub code: &'static str,
    /// The table concerned.
    pub table: Option<String>,
    /// The column concerned.
    pub column: Option<String>,
    /// The rowid of the row concerned, when it has one.
    pub rowid: Option<i64>,
    /// A one-line message naming the table, column and row.
    pub message: String,
}

/// Why [`pack`](fn@crate::pack) did not write an archive.
#[derive(Debug, thiserror::Error)]
pub enum PackError {
    /// The database cannot be archived (exit 1): the producer refuses it.
    #[error("{}: {}", .0.code, .0.message)]
    Refused(Refusal),
    /// The database, an object or a payload cannot be read (exit 2): not a
    /// database, corrupt, locked by a writer, an I/O error, or a file that
    /// changed while it was packed.
    #[error("{code}: {message}")]
    Unreadable {
        /// `not_a_database`, `database_corrupt`, `database_locked`,
        /// `database_unreadable`, `object_unreadable` or `object_changed`.
        code: &'static str,
        /// One line.
        message: String,
    },
    /// The options are invalid (exit 2).
    #[error("invalid_options: {0}")]
    Options(String),
    /// Writing the archive failed (exit 2).
    #[error("output_failed: cannot write the archive: {0}")]
    Output(#[source] io::Error),
}

impl PackError {
    /// The stable code: a refusal's code, or `not_a_database`,
    /// `database_corrupt`, `database_locked`, `database_unreadable`,
    /// `object_unreadable`, `object_changed`, `invalid_options`,
    /// `output_failed`.
    pub fn code(&self) -> &'static str {
        match self {
            PackError::Refused(r) => r.code,
            PackError::Unreadable { code, .. } => code,
            PackError::Options(_) => "invalid_options",
            PackError::Output(_) => "output_failed",
        }
    }

    /// Whether the database cannot be archived (a refusal, exit 1) rather
    /// than not read, or the run not made (exit 2).
    pub fn is_refusal(&self) -> bool {
        matches!(self, PackError::Refused(_))
    }

    /// 1 for a refusal, 2 otherwise.
    pub fn exit_code(&self) -> u8 {
        if self.is_refusal() {
            1
        } else {
            2
        }
    }

    /// The message without the code.
    pub fn message(&self) -> String {
        match self {
            PackError::Refused(r) => r.message.clone(),
            PackError::Unreadable { message, .. } => message.clone(),
            PackError::Options(m) => m.clone(),
            PackError::Output(e) => format!("cannot write the archive: {e}"),
        }
    }

    /// The refusal, when this is one.
    pub fn refusal(&self) -> Option<&Refusal> {
        match self {
            PackError::Refused(r) => Some(r),
            _ => None,
        }
    }
}

pub(super) fn refuse(
    code: &'static str,
    table: &str,
    column: Option<&str>,
    rowid: Option<i64>,
    message: String,
) -> PackError {
    PackError::Refused(Refusal {
        code,
        table: Some(table.to_string()),
        column: column.map(str::to_string),
        rowid,
        message,
    })
}

/// Maps a SQLite error to "cannot be read".
pub(crate) fn sql_error(e: rusqlite::Error) -> PackError {
    use rusqlite::ErrorCode as C;
    let code = match e.sqlite_error_code() {
        Some(C::DatabaseBusy | C::DatabaseLocked) => "database_locked",
        Some(C::DatabaseCorrupt) => "database_corrupt",
        Some(C::NotADatabase) => "not_a_database",
        _ => "database_unreadable",
    };
    let message = match code {
        "database_locked" => format!("the database is locked by a writer ({e})"),
        "database_corrupt" => format!("the database file is corrupt ({e})"),
        "not_a_database" => format!("not a SQLite database ({e})"),
        _ => format!("cannot read the database: {e}"),
    };
    PackError::Unreadable { code, message }
}

pub(super) fn out_err(e: io::Error) -> PackError {
    PackError::Output(e)
}
