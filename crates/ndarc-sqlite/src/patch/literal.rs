//! Cells as SQL literals that SQLite reads back as exactly the value
//! `unpack` binds, on one line.

use ndarc_json::number::POW10_EXACT;
use ndarc_json::Value;

/// A cell as an SQL literal: `NULL`, a number, `'text'`, `X'blob'`, with
/// the storage class and value `unpack` gives it (see [`number`]).
pub fn literal(v: &Value<'_>) -> String {
    match v {
        Value::Null => "NULL".to_string(),
        Value::Bool(b) => if *b { "1" } else { "0" }.to_string(),
        Value::Number(n) => number(*n),
        Value::String(s) => text(s),
        Value::Object(o) => match o.get("blob").and_then(Value::as_str) {
            // Decoded as the archive was verified (ndarc-format's strict
            // decoder), not by a second base64 implementation.
            Some(b64) => match ndarc_format::catalogue::decode_base64(b64) {
                Some(bytes) => format!("X'{}'", hex(&bytes)),
                None => "NULL".to_string(),
            },
            None => "NULL".to_string(),
        },
        Value::Array(_) => "NULL".to_string(),
    }
}

/// A text literal on one line: `'it''s'`; with CR or LF (the shell reads
/// a patch line by line and drops a CR before a line's end), each written
/// as a mark the text lacks, put back by `replace()`:
/// `replace('a~b','~',char(10))` (a flat expression however many lines
/// the text has); with NUL (where an SQL literal ends), the UTF-8 bytes.
fn text(s: &str) -> String {
    if s.contains('\0') {
        return format!("CAST(X'{}' AS TEXT)", hex(s.as_bytes()));
    }
    if !s.contains(['\n', '\r']) {
        return format!("'{}'", s.replace('\'', "''"));
    }
    const MARKS: &str = "~^`|#@$%&*+=!?";
    let mut marks = MARKS
        .chars()
        .chain((0xE000..=0xF8FF).filter_map(char::from_u32));
    let mut body = s.to_string();
    let mut wraps = Vec::new();
    for (brk, code) in [('\n', 10), ('\r', 13)] {
        if !s.contains(brk) {
            continue;
        }
        let Some(mark) = marks.find(|m| !s.contains(*m)) else {
            // Every mark is in the text: its bytes, then.
            return format!("CAST(X'{}' AS TEXT)", hex(s.as_bytes()));
        };
        body = body.replace(brk, mark.encode_utf8(&mut [0; 4]));
        wraps.push((mark, code));
    }
    let mut expr = format!("'{}'", body.replace('\'', "''"));
    for (mark, code) in wraps {
        expr = format!("replace({expr},'{mark}',char({code}))");
    }
    expr
}

fn hex(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len() * 2);
    for x in b {
        s.push_str(&format!("{x:02X}"));
    }
    s
}

/// 2^53: `unpack` binds integral numbers up to this magnitude as integers.
pub(super) const SAFE: f64 = 9_007_199_254_740_992.0;

/// A number as `unpack` binds it, as an SQL expression that gives exactly
/// that value: an integral number within ±2^53 as an INTEGER literal, any
/// other as a REAL of the same bits.
pub fn number(n: f64) -> String {
    if !n.is_finite() {
        // JSON has no such number.
        return "NULL".to_string();
    }
    if n.fract() == 0.0 && n.abs() <= SAFE {
        return format!("{}", n as i64);
    }
    let short = ndarc_json::to_canonical_string(&Value::Number(n));
    if decimal_is_exact(&short, n) {
        short
    } else {
        exact_real(n)
    }
}

/// A REAL as an expression SQLite evaluates exactly: the double is
/// `m·2^q` with `m` an odd integer below 2^53, so `m * 1.0` is exact and so
/// is each multiplication or division by a power of two up to 2^62 (an
/// INTEGER literal, converted exactly), every intermediate value lying
/// between `m` and the result.
pub fn exact_real(n: f64) -> String {
    let bits = n.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let fraction = bits & ((1u64 << 52) - 1);
    let (mut m, mut q) = if biased == 0 {
        (fraction, -1074)
    } else {
        (fraction | (1u64 << 52), biased - 1075)
    };
    if m == 0 {
        return "0.0".to_string();
    }
    let shift = m.trailing_zeros();
    m >>= shift;
    q += shift as i32;
    if q >= 0 && n.abs() < 9_223_372_036_854_775_808.0 {
        // An integer of i64's range, converted exactly.
        return format!("CAST({} AS REAL)", n as i64);
    }
    let sign = if n < 0.0 { "-" } else { "" };
    let op = if q >= 0 { '*' } else { '/' };
    let mut out = format!("({sign}{m} * 1.0");
    let mut k = q.unsigned_abs();
    while k > 0 {
        let step = k.min(62);
        out.push_str(&format!(" {op} {}", 1u64 << step));
        k -= step;
    }
    out.push(')');
    out
}

/// The significant digits (at most 15, no trailing zero) and the power of
/// ten of a decimal JSON number's magnitude: `d·10^e`.
fn decimal_parts(text: &str) -> Option<(u64, i32)> {
    let t = text.strip_prefix('-').unwrap_or(text);
    let (mantissa, exp) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], t[i + 1..].parse::<i32>().ok()?),
        None => (t, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    let all: String = format!("{int}{frac}");
    let lead = all.trim_start_matches('0');
    let digits = lead.trim_end_matches('0');
    if digits.is_empty() || digits.len() > 15 {
        return None;
    }
    let e = exp
        .checked_sub(i32::try_from(frac.len()).ok()?)?
        .checked_add(i32::try_from(lead.len() - digits.len()).ok()?)?;
    Some((digits.parse().ok()?, e))
}

/// `x` rounded to `bits` significant bits, ties to even: `(m, s)` with the
/// result `m·2^s`.
fn round_bits(x: u128, bits: u32) -> (u128, i32) {
    let len = 128 - x.leading_zeros();
    if len <= bits {
        return (x, 0);
    }
    let sh = len - bits;
    let m = x >> sh;
    let rest = x & ((1u128 << sh) - 1);
    let half = 1u128 << (sh - 1);
    let up = rest > half || (rest == half && m & 1 == 1);
    (m + u128::from(up), sh as i32)
}

/// `m·2^e` as a double (`m` below 2^54, the result a normal double).
fn scaled(m: u128, e: i32) -> Option<f64> {
    let pow = |k: i32| {
        (-1022..=1023)
            .contains(&k)
            .then(|| f64::from_bits(((1023 + k) as u64) << 52))
    };
    // `m` is exact as a double; the power of two is applied in two steps
    // so that neither leaves the normal range.
    let (a, b) = (e / 2, e - e / 2);
    Some(m as f64 * pow(a)? * pow(b)?)
}

/// Whether SQLite reads the decimal `text` (a REAL literal: it has a `.` or
/// an exponent) as exactly `v`. SQLite 3.40's `sqlite3AtoF` takes the
/// digits as an integer `s` (at most 15 here, so none is dropped), then for
/// a positive power of ten multiplies `s` by ten while it stays below
/// i64::MAX/10, and computes `s·10^e` or `s/10^e` with `10^e` exact — in
/// `long double` where the platform has one (a 64-bit significand: the
/// result is rounded twice, to 64 then to 53 bits), else in `double`. Both
/// are emulated here exactly; the decimal is kept only when both give `v`.
pub(super) fn decimal_is_exact(text: &str, v: f64) -> bool {
    if !text.contains(['.', 'e', 'E']) {
        // Digits alone are an INTEGER literal.
        return false;
    }
    let Some((digits, e)) = decimal_parts(text) else {
        return false;
    };
    let mag = v.abs();
    let (long_double, double) = if e >= 0 {
        let (mut s, mut e) = (u128::from(digits), e);
        while s < (i64::MAX / 10) as u128 && e > 0 {
            s *= 10;
            e -= 1;
        }
        if e > 19 {
            return false;
        }
        let e = e as u32;
        let (m64, s1) = round_bits(s * 10u128.pow(e), 64);
        let (m53, s2) = round_bits(m64, 53);
        let Some(ld) = scaled(m53, s1 + s2) else {
            return false;
        };
        (ld, s as f64 * POW10_EXACT[e as usize])
    } else {
        let k = e.unsigned_abs();
        if k > 18 {
            // 10^k must stay below 2^60 for the quotient below to keep
            // 66 bits in 128.
            return false;
        }
        let d = u128::from(digits);
        let scale = 10u128.pow(k);
        let t = d.leading_zeros() - 1;
        let n = d << t;
        // The quotient to at least 66 bits, its last bit sticky.
        let q = (n / scale) | u128::from(n % scale != 0);
        let (m64, s1) = round_bits(q, 64);
        let (m53, s2) = round_bits(m64, 53);
        let Some(ld) = scaled(m53, s1 + s2 - t as i32) else {
            return false;
        };
        (ld, digits as f64 / POW10_EXACT[k as usize])
    };
    long_double == mag && double == mag
}
