use ndarc_format::Affinity;
use ndarc_json::Value;
use rusqlite::types::Value as SqlValue;
use rusqlite::Connection;

use super::cells::cell;
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
            let bound = cell(&Value::Number(n), aff);
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
