//! [`Error`]: the one error type of the crate, for every job it does
//! (pack, unpack, the SQL patch, the databases of `fuzz-producer`, a
//! database packed on the fly), and [`Refusal`], what a producer's refusal
//! says.
//!
//! Each variant prints as the CLI has always printed it: a stable code and
//! its message (`CODE: message`) where the job has codes (pack, unpack),
//! the message alone elsewhere.

use std::io;
use std::path::PathBuf;

/// Why a database cannot be archived: the producer's refusal, with its
/// stable code and where it is.
///
/// Not a second error type: it is what [`Error::Refused`] carries, the
/// refusal as a report (code, table, column, rowid) that `fuzz-producer`
/// and the tests compare with what another producer says.
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

/// Why an operation of this crate did not complete.
///
/// [`Error::code`] is the stable code, [`Error::exit_code`] the CLI's exit
/// status for it (1: the input is refused or invalid; 2: the run could not
/// be made), [`Error::message`] the text after the code.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    // --- pack (fn@crate::pack)
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
    /// The pack options are invalid (exit 2).
    #[error("invalid_options: {0}")]
    Options(String),
    /// Writing the archive failed (exit 2).
    #[error("output_failed: cannot write the archive: {0}")]
    Output(#[source] io::Error),

    // --- unpack (fn@crate::unpack)
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
    /// Reading the archive or writing an output of an unpack failed
    /// (exit 2).
    #[error("{code}: {message}")]
    Io {
        /// `archive_unreadable` or `output_failed`.
        code: &'static str,
        /// One line.
        message: String,
    },

    // --- the SQL patch (crate::patch)
    /// The second archive could not be read as one.
    #[error("the second archive: line {line}: {message}")]
    Archive {
        /// The 1-based line.
        line: u64,
        /// What is wrong.
        message: String,
    },
    /// The diff was made without verifying the archives: a patch is only
    /// written from verified ones.
    #[error("an SQL patch is written only from verified archives (the diff was made without verification)")]
    Unverified,
    /// A table's `sql`, copied into the patch, could be read by the
    /// `sqlite3` shell as more than the one statement it is.
    #[error("table {table:?}: its sql cannot be written into a patch safely: {reason}")]
    UnsafeSql {
        /// The table.
        table: String,
        /// Why.
        reason: &'static str,
    },
    /// A name holds a line break or NUL.
    #[error("{name:?}: a name with a line break or NUL cannot be written into a patch")]
    UnsafeName {
        /// The name.
        name: String,
    },
    /// Writing the patch failed. The crate's one conversion from
    /// [`io::Error`]: other jobs name the file that failed.
    #[error("cannot write the patch: {0}")]
    PatchOutput(#[from] io::Error),

    // --- the databases of fuzz-producer (crate::fuzzdb, crate::fuzzschema)
    /// SQLite refused a statement of a planned database (a plan that
    /// shrinking made impossible, such as a generated column whose input
    /// was dropped).
    #[error("{what}: {source}")]
    Sqlite {
        /// The statement or step.
        what: String,
        /// SQLite's error.
        #[source]
        source: rusqlite::Error,
    },
    /// A planned database's file could not be replaced.
    #[error("cannot replace {path}: {source}")]
    Replace {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// SQLite refused an author's schema (`fuzz-producer --schema`).
    #[error("SQLite refused the schema: {0}")]
    Schema(String),
    /// The author's schema creates no table a producer archives.
    #[error(
        "the schema creates no table (views, indexes, triggers and virtual tables are left out)"
    )]
    NoTables,

    // --- a database packed on the fly (crate::stream)
    /// The packed archive could not be passed on to its reader.
    #[error("cannot pass the archive on: {0}")]
    Handoff(#[source] io::Error),
    /// The packer's thread ended without an outcome (it panicked).
    #[error("the packer stopped")]
    PackerStopped,
}

impl Error {
    /// The stable code: a refusal's code; for pack `not_a_database`,
    /// `database_corrupt`, `database_locked`, `database_unreadable`,
    /// `object_unreadable`, `object_changed`, `invalid_options`,
    /// `output_failed`; for unpack `invalid_archive`, its refusals'
    /// codes, `output_exists`, `archive_unreadable`, `output_failed`. The
    /// variants printed without a code have one all the same
    /// (`archive_unreadable`, `unverified_diff`, `unsafe_sql`,
    /// `unsafe_name`, `output_failed`, `statement_rejected`,
    /// `schema_rejected`, `schema_without_tables`, `packer_stopped`).
    pub fn code(&self) -> &'static str {
        match self {
            Error::Refused(r) => r.code,
            Error::Unreadable { code, .. }
            | Error::Unholdable { code, .. }
            | Error::Io { code, .. } => code,
            Error::Options(_) => "invalid_options",
            Error::Output(_)
            | Error::PatchOutput(_)
            | Error::Replace { .. }
            | Error::Handoff(_) => "output_failed",
            Error::Invalid(_) => "invalid_archive",
            Error::Exists(_) | Error::IsDirectory(_) => "output_exists",
            Error::Archive { .. } => "archive_unreadable",
            Error::Unverified => "unverified_diff",
            Error::UnsafeSql { .. } => "unsafe_sql",
            Error::UnsafeName { .. } => "unsafe_name",
            Error::Sqlite { .. } => "statement_rejected",
            Error::Schema(_) => "schema_rejected",
            Error::NoTables => "schema_without_tables",
            Error::PackerStopped => "packer_stopped",
        }
    }

    /// Whether the database cannot be archived (a producer's refusal)
    /// rather than not read, or the run not made.
    pub fn is_refusal(&self) -> bool {
        matches!(self, Error::Refused(_))
    }

    /// 1 when the input is refused, invalid or cannot be held; 2 when the
    /// run could not be made.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Refused(_) | Error::Invalid(_) | Error::Unholdable { .. } => 1,
            _ => 2,
        }
    }

    /// The message without the code (the whole text where none is
    /// printed).
    pub fn message(&self) -> String {
        let text = self.to_string();
        match text
            .strip_prefix(self.code())
            .and_then(|m| m.strip_prefix(": "))
        {
            Some(m) => m.to_string(),
            None => text,
        }
    }

    /// The refusal, when this is one.
    pub fn refusal(&self) -> Option<&Refusal> {
        match self {
            Error::Refused(r) => Some(r),
            _ => None,
        }
    }
}
