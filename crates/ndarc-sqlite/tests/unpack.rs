//! A row SQLite rejects is named exactly, wherever it falls among the rows
//! `unpack` inserts several to a statement.

mod common;

use common::*;
use ndarc_sqlite::unpack::{unpack, UnpackOptions};

/// Packs `db` (one part for all its rows, so that they are inserted in
/// batches), unpacks it, and returns the error's code and message.
fn unpack_error(db: &std::path::Path) -> (&'static str, String) {
    let mut o = opts();
    o.part_bytes = 1 << 20;
    let (bytes, _) = pack_vec(db, &o).unwrap();
    assert_valid(&bytes);
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.ndjson");
    std::fs::write(&a, &bytes).unwrap();
    let back = dir.path().join("back.db");
    let e = unpack(&a, &back, &UnpackOptions::default()).unwrap_err();
    assert!(!back.exists(), "a failed unpack left {}", back.display());
    (e.code(), e.to_string())
}

/// A CHECK constraint the source database was written around: the row that
/// breaks it is named, at the start, inside and at the end of a batch, and
/// among the rows after the last whole batch.
#[test]
fn the_row_breaking_a_check_is_named() {
    for bad in [0usize, 1, 63, 64, 100, 127, 150, 255, 256, 299] {
        let (_d, p) = db("CREATE TABLE t(id INTEGER PRIMARY KEY, v INTEGER CHECK (v >= 0));");
        {
            let conn = rusqlite::Connection::open(&p).unwrap();
            conn.execute_batch("PRAGMA ignore_check_constraints = ON; BEGIN")
                .unwrap();
            for i in 0..300usize {
                let v = if i == bad { -1 } else { i as i64 };
                conn.execute(
                    "INSERT INTO t VALUES(?1, ?2)",
                    rusqlite::params![i as i64 + 1, v],
                )
                .unwrap();
            }
            conn.execute_batch("COMMIT").unwrap();
        }
        let (code, message) = unpack_error(&p);
        assert_eq!(code, "row_rejected", "{message}");
        assert!(
            message.contains(&format!(
                "table t, row {bad}: SQLite rejects it: CHECK constraint failed"
            )),
            "row {bad}: {message}"
        );
    }
}

/// A UNIQUE column whose two values are one in the archive (text that is
/// not UTF-8, read as the producer reads it): the second of them is named,
/// whichever batch the first went in.
#[test]
fn the_row_repeating_a_unique_value_is_named() {
    for (first, second) in [(3usize, 40usize), (10, 150), (70, 71), (0, 299), (200, 280)] {
        let (_d, p) = db("CREATE TABLE t(id INTEGER PRIMARY KEY, u TEXT UNIQUE);");
        {
            let conn = rusqlite::Connection::open(&p).unwrap();
            conn.execute_batch("BEGIN").unwrap();
            for i in 0..300usize {
                let sql = if i == first {
                    "INSERT INTO t VALUES(?1, CAST(X'FF' AS TEXT))".to_string()
                } else if i == second {
                    "INSERT INTO t VALUES(?1, CAST(X'FE' AS TEXT))".to_string()
                } else {
                    format!("INSERT INTO t VALUES(?1, 'k{i}')")
                };
                conn.execute(&sql, [i as i64 + 1]).unwrap();
            }
            conn.execute_batch("COMMIT").unwrap();
        }
        let (code, message) = unpack_error(&p);
        assert_eq!(code, "row_rejected", "{message}");
        assert!(
            message.contains(&format!(
                "table t, row {second}: SQLite rejects it: UNIQUE constraint failed: t.u"
            )),
            "rows {first} and {second}: {message}"
        );
    }
}
