//! Cells of verified rows bound as a restore binds them (per row: the hot
//! path of an unpack).

use ndarc_format::catalogue::decode_base64_into;
use ndarc_format::Affinity;
use ndarc_json::Value;
use rusqlite::types::Value as SqlValue;

use super::stmt::Binder;

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
pub(super) fn cell(v: &Value<'_>, affinity: Affinity, buf: &mut Vec<u8>) -> SqlValue {
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

/// Binds the cell whose canonical JSON text is `text` (from a verified
/// line) as parameter `i`, as [`cell`] makes its value: a string without
/// escapes as the bytes between its quotes (in place), a short integer
/// without parsing, anything else parsed (a blob decoded into `buf`).
pub(super) fn bind_cell<'s>(
    b: &mut Binder<'s>,
    i: usize,
    text: &'s [u8],
    affinity: Affinity,
    buf: &mut Vec<u8>,
) -> rusqlite::Result<()> {
    let number = |b: &mut Binder<'s>, n: f64| match bound_number(n, affinity) {
        RestoredNumber::Integer(v) => b.int(i, v),
        RestoredNumber::Real(r) => b.real(i, r),
    };
    match text {
        [b'"', inner @ .., b'"'] if !inner.contains(&b'\\') => return b.text(i, inner),
        b"null" => return b.null(i),
        _ => {}
    }
    if let Some(n) = short_integer(text) {
        // Integral and within ±2^53: bound as the integer it is, under any
        // affinity (`bound_number`).
        return b.int(i, n);
    }
    // Any other number (a verified cell: valid JSON, whose number grammar
    // Rust's float parser takes with the same rounding), without building a
    // JSON value: reals were 3 % of restoring Chinook-like rows.
    if let [b'-' | b'0'..=b'9', ..] = text {
        if let Some(n) = std::str::from_utf8(text)
            .ok()
            .and_then(|t| t.parse::<f64>().ok())
        {
            return number(b, n);
        }
    }
    match ndarc_json::parse(text).unwrap_or(Value::Null) {
        Value::Null | Value::Bool(_) | Value::Array(_) => b.null(i),
        Value::Number(n) => number(b, n),
        Value::String(s) => b.text_copied(i, s.as_bytes()),
        Value::Object(o) => {
            buf.clear();
            let b64 = o.get("blob").and_then(Value::as_str).unwrap_or("");
            decode_base64_into(b64, buf);
            b.blob_copied(i, buf)
        }
    }
}

/// The value of a canonical integer of at most 15 digits (exact as a
/// double, so the same number JSON parsing gives).
fn short_integer(text: &[u8]) -> Option<i64> {
    let (neg, digits) = match text {
        [b'-', d @ ..] => (true, d),
        d => (false, d),
    };
    if digits.is_empty() || digits.len() > 15 || (digits.len() > 1 && digits[0] == b'0') {
        return None;
    }
    // Checked and read in one pass.
    let mut v = 0i64;
    for &d in digits {
        let x = d.wrapping_sub(b'0');
        if x > 9 {
            return None;
        }
        v = v * 10 + i64::from(x);
    }
    Some(if neg { -v } else { v })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unpack::stmt::Statement;
    use rusqlite::Connection;

    /// What binding a cell's text stores, read back: the fast paths
    /// (quoted text, `null`, short integers, other numbers) bind what the
    /// value parsed as JSON binds.
    #[test]
    fn a_bound_cell_is_its_parsed_value() {
        let conn = Connection::open_in_memory().unwrap();
        // No declared type: the column keeps what is bound.
        conn.execute_batch("CREATE TABLE t(v)").unwrap();
        let mut st = Statement::prepare(&conn, "INSERT INTO t VALUES(?1)").unwrap();
        let texts = [
            "0",
            "-0",
            "7",
            "-12",
            "0.99",
            "1.98",
            "-0.5",
            "12.5",
            "1e+21",
            "1e-7",
            "5e-324",
            "1.7976931348623157e+308",
            "123456789012345",
            "1234567890123456",
            "9007199254740991",
            "9007199254740993",
            "18446744073709551616",
            "-2.5e+300",
            "null",
            "true",
            "\"x\"",
            "\"\"",
            "\"a\\\"b\"",
            "{\"blob\":\"AAE=\"}",
            "{\"blob\":\"\"}",
        ];
        let affinities = [
            Affinity::Integer,
            Affinity::Number,
            Affinity::Text,
            Affinity::Blob,
        ];
        let mut buf = Vec::new();
        for text in texts {
            for aff in affinities {
                st.execute(|b| bind_cell(b, 1, text.as_bytes(), aff, &mut buf))
                    .unwrap();
                let got: SqlValue = conn
                    .query_row("SELECT v FROM t ORDER BY rowid DESC LIMIT 1", [], |r| {
                        r.get(0)
                    })
                    .unwrap();
                let parsed = ndarc_json::parse(text.as_bytes()).unwrap();
                let want = cell(&parsed, aff, &mut buf);
                assert_eq!(got, want, "{text} under {aff:?}");
            }
        }
    }
}
