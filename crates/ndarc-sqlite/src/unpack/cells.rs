//! Cells of verified rows bound as a restore binds them (per row: the hot
//! path of an unpack).

use ndarc_format::catalogue::decode_base64_into;
use ndarc_format::Affinity;
use ndarc_json::number::POW10_EXACT;
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
    // Within ±2^53 the cast truncates exactly, so it tells an integer
    // (`f64::fract` calls libm's `trunc` on x86-64 without SSE4.1: 0.3 %
    // of the inserting thread restoring narrow rows).
    if affinity == Affinity::Integer
        || (n.abs() <= 9_007_199_254_740_992.0 && (n as i64) as f64 == n)
    {
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
pub(super) fn cell(v: &Value<'_>, affinity: Affinity) -> SqlValue {
    match v {
        Value::Null | Value::Bool(_) | Value::Array(_) => SqlValue::Null,
        Value::Number(n) => match bound_number(*n, affinity) {
            RestoredNumber::Integer(i) => SqlValue::Integer(i),
            RestoredNumber::Real(r) => SqlValue::Real(r),
        },
        Value::String(s) => SqlValue::Text(s.to_string()),
        Value::Object(o) => {
            let mut blob = Vec::new();
            let b64 = o.get("blob").and_then(Value::as_str).unwrap_or("");
            decode_base64_into(b64, &mut blob);
            SqlValue::Blob(blob)
        }
    }
}

/// Binds the cell whose canonical JSON text is `text` (from a verified
/// line) as parameter `i`, as [`cell`] makes its value: a string without
/// escapes as the bytes between its quotes (in place), a short integer
/// without parsing, a blob decoded straight from its base64, anything else
/// parsed.
pub(super) fn bind_cell<'s>(
    b: &mut Binder<'s, '_>,
    i: usize,
    text: &'s [u8],
    affinity: Affinity,
) -> rusqlite::Result<()> {
    let number = |b: &mut Binder<'s, '_>, n: f64| match bound_number(n, affinity) {
        RestoredNumber::Integer(v) => b.int(i, v),
        RestoredNumber::Real(r) => b.real(i, r),
    };
    match text {
        // Searched with SIMD: core's `contains` reads 16 bytes a step.
        [b'"', inner @ .., b'"'] if memchr::memchr(b'\\', inner).is_none() => {
            return b.text(i, inner)
        }
        b"null" => return b.null(i),
        _ => {}
    }
    // A blob decoded straight from the line: parsed, its base64 (up to
    // 16 MiB) was first copied into a JSON string. What decodes holds only
    // base64 characters, so it is the string's value.
    let base64 = text.strip_prefix(br#"{"blob":""#);
    if let Some(b64) = base64.and_then(|t| t.strip_suffix(br#""}"#)) {
        if let Ok(b64) = simdutf8::basic::from_utf8(b64) {
            let mut buf = b.buffer();
            if decode_base64_into(b64, &mut buf) {
                return b.blob_owned(i, buf);
            }
        }
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
        if let Some(n) = short_decimal(text) {
            return number(b, n);
        }
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
            let mut buf = b.buffer();
            let b64 = o.get("blob").and_then(Value::as_str).unwrap_or("");
            decode_base64_into(b64, &mut buf);
            b.blob_owned(i, buf)
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

/// The value of a decimal with a fraction, no exponent and at most 15
/// digits (`-12.5`, `0.99`: most reals of a restore), as Rust's parser
/// rounds it, without its general path (5 % of the inserting thread
/// restoring narrow rows): the digits as an integer, exact below 2^53,
/// divided by a power of ten, exact up to 10^22; IEEE division rounds the
/// exact quotient, so this is the correctly rounded value (Clinger's fast
/// path).
fn short_decimal(text: &[u8]) -> Option<f64> {
    // A sign, 15 digits and the point at most: nothing longer is searched.
    if text.len() > 17 {
        return None;
    }
    let (neg, t) = match text {
        [b'-', d @ ..] => (true, d),
        d => (false, d),
    };
    let dot = t.iter().position(|&c| c == b'.')?;
    let (int, frac) = (&t[..dot], &t[dot + 1..]);
    if int.is_empty() || frac.is_empty() || int.len() + frac.len() > 15 {
        return None;
    }
    let mut m = 0u64;
    for &d in int.iter().chain(frac) {
        let x = d.wrapping_sub(b'0');
        if x > 9 {
            return None;
        }
        m = m * 10 + u64::from(x);
    }
    let v = m as f64 / POW10_EXACT[frac.len()];
    Some(if neg { -v } else { v })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unpack::stmt::Statement;
    use rusqlite::Connection;

    /// The cast that tells an integer agrees with `fract`, at the edges
    /// of ±2^53 and of the doubles with a fraction.
    #[test]
    fn a_bound_number_is_integral_as_fract_says() {
        let edges = [
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.0,
            4_503_599_627_370_495.5,
            4_503_599_627_370_496.0,
            9_007_199_254_740_991.0,
            9_007_199_254_740_992.0,
            -9_007_199_254_740_992.0,
            9_007_199_254_740_994.0,
            1e300,
            -1e-300,
            5e-324,
        ];
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        // Any bits, and quarters up to 2^54 (around the edge).
        let random = (0..20_000).map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if i % 2 == 0 {
                f64::from_bits(x)
            } else {
                (x >> 8) as f64 / 4.0 * if x & 1 == 0 { 1.0 } else { -1.0 }
            }
        });
        for n in edges.into_iter().chain(random).filter(|n| n.is_finite()) {
            let want = n.fract() == 0.0 && n.abs() <= 9_007_199_254_740_992.0;
            let got = matches!(
                bound_number(n, Affinity::Number),
                RestoredNumber::Integer(_)
            );
            assert_eq!(got, want, "{n:e}");
        }
    }

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
            "{\"blob\":\"QQ\\u003d\\u003d\"}",
            "\"a long text without an escape, longer than a few words\"",
        ];
        let affinities = [
            Affinity::Integer,
            Affinity::Number,
            Affinity::Text,
            Affinity::Blob,
        ];
        for text in texts {
            for aff in affinities {
                st.execute(|b| bind_cell(b, 1, text.as_bytes(), aff))
                    .unwrap();
                let got: SqlValue = conn
                    .query_row("SELECT v FROM t ORDER BY rowid DESC LIMIT 1", [], |r| {
                        r.get(0)
                    })
                    .unwrap();
                let parsed = ndarc_json::parse(text.as_bytes()).unwrap();
                let want = cell(&parsed, aff);
                assert_eq!(got, want, "{text} under {aff:?}");
            }
        }
    }

    proptest::proptest! {
        /// A short decimal is the double Rust's parser gives, bit for bit.
        #[test]
        fn a_short_decimal_is_parsed_as_rust_parses_it(
            neg in proptest::bool::ANY,
            int in "[0-9]{1,8}",
            frac in "[0-9]{1,7}",
        ) {
            let text = format!("{}{int}.{frac}", if neg { "-" } else { "" });
            let want: f64 = text.parse().unwrap();
            let got = short_decimal(text.as_bytes()).unwrap();
            proptest::prop_assert_eq!(got.to_bits(), want.to_bits(), "{}", text);
        }
    }

    /// What is not a short decimal is left to the parser.
    #[test]
    fn other_numbers_are_not_short_decimals() {
        for t in [
            "1",
            "-7",
            "1e5",
            "1.5e3",
            "1.",
            ".5",
            "-",
            "1.2.3",
            "1234567890.123456",
            "0x1.8",
            "12345678901234.5678",
            "\"1.5\"",
        ] {
            assert_eq!(short_decimal(t.as_bytes()), None, "{t}");
        }
        assert_eq!(
            short_decimal(b"123456789.012345"),
            Some(123_456_789.012_345)
        );
        assert_eq!(
            short_decimal(b"-0.0").map(f64::to_bits),
            Some((-0.0f64).to_bits())
        );
    }
}
