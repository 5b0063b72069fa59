//! A row SQLite rejects is named exactly, wherever it falls among the rows
//! `unpack` inserts several to a statement.

mod common;

use common::*;
use ndarc_sqlite::unpack::{unpack, UnpackOptions};

/// A database of table `t` (`schema`) with rows 0 to 299, row `i` inserted
/// by `insert(i)` on a connection set up by `setup`; packed (one part for
/// all its rows, so that they are inserted in batches) and unpacked.
/// Returns the error's code and message.
fn unpack_error(
    schema: &str,
    setup: &str,
    insert: impl Fn(usize) -> String,
) -> (&'static str, String) {
    let (_d, p) = db(schema);
    {
        let conn = rusqlite::Connection::open(&p).unwrap();
        conn.execute_batch(&format!("{setup} BEGIN")).unwrap();
        for i in 0..300usize {
            conn.execute(&insert(i), []).unwrap();
        }
        conn.execute_batch("COMMIT").unwrap();
    }
    let (dir, a) = packed_file(&p, 1 << 20);
    let back = dir.path().join("back.db");
    let e = unpack(&a, &back, &UnpackOptions::default()).unwrap_err();
    assert!(!back.exists(), "a failed unpack left {}", back.display());
    (e.code(), e.to_string())
}

/// The error is `row_rejected` and its message holds `want`.
fn assert_rejected((code, message): (&str, String), want: &str) {
    assert_eq!(code, "row_rejected", "{message}");
    assert!(message.contains(want), "{want:?} not in {message:?}");
}

/// A CHECK constraint the source database was written around: the row that
/// breaks it is named, at the start, inside and at the end of a batch, and
/// among the rows after the last whole batch.
#[test]
fn the_row_breaking_a_check_is_named() {
    for bad in [0usize, 1, 63, 64, 100, 127, 150, 255, 256, 299] {
        let error = unpack_error(
            "CREATE TABLE t(id INTEGER PRIMARY KEY, v INTEGER CHECK (v >= 0));",
            "PRAGMA ignore_check_constraints = ON;",
            |i| {
                let v = if i == bad { -1 } else { i as i64 };
                format!("INSERT INTO t VALUES({}, {v})", i + 1)
            },
        );
        assert_rejected(
            error,
            &format!("table t, row {bad}: SQLite rejects it: CHECK constraint failed"),
        );
    }
}

/// A UNIQUE column whose two values are one in the archive (text that is
/// not UTF-8, read as the producer reads it): the second of them is named,
/// whichever batch the first went in.
#[test]
fn the_row_repeating_a_unique_value_is_named() {
    for (first, second) in [(3usize, 40usize), (10, 150), (70, 71), (0, 299), (200, 280)] {
        let error = unpack_error(
            "CREATE TABLE t(id INTEGER PRIMARY KEY, u TEXT UNIQUE);",
            "",
            |i| {
                let u = if i == first {
                    "CAST(X'FF' AS TEXT)".to_string()
                } else if i == second {
                    "CAST(X'FE' AS TEXT)".to_string()
                } else {
                    format!("'k{i}'")
                };
                format!("INSERT INTO t VALUES({}, {u})", i + 1)
            },
        );
        assert_rejected(
            error,
            &format!("table t, row {second}: SQLite rejects it: UNIQUE constraint failed: t.u"),
        );
    }
}
