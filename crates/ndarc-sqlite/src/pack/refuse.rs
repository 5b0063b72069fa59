//! Why a database is not packed: the producer's refusals (with their
//! codes, SPEC.md §13.6), unreadable inputs and options, and the refusals
//! found row by row, whose rules are in `rows`.

use crate::{Error, Refusal};
use std::io;

pub(super) fn refuse(
    code: &'static str,
    table: &str,
    column: Option<&str>,
    rowid: Option<i64>,
    message: String,
) -> Error {
    Error::Refused(Refusal {
        code,
        table: Some(table.to_string()),
        column: column.map(str::to_string),
        rowid,
        message,
    })
}

/// Maps a SQLite error to "cannot be read".
pub(crate) fn sql_error(e: rusqlite::Error) -> Error {
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
    Error::Unreadable { code, message }
}

pub(super) fn out_err(e: io::Error) -> Error {
    Error::Output(e)
}
