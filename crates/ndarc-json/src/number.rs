//! ECMAScript number text.

/// Writes `n` as ECMAScript `Number.prototype.toString` does (RFC 8785
/// §3.2.2.3): shortest round-trip digits, `-0` as `0`, exponent form from
/// 1e21 and below 1e-6. `n` must be finite.
///
/// ryu-js implements exactly this algorithm; it is checked against more than
/// 100,000 vectors produced by node (`testdata/json/numbers.csv`).
pub fn format(n: f64) -> String {
    let mut buf = ryu_js::Buffer::new();
    buf.format_finite(n).to_string()
}

/// Appends the ECMAScript text of `n` to `out` without allocating.
pub fn write(n: f64, out: &mut Vec<u8>) {
    if n == 0.0 {
        out.push(b'0');
        return;
    }
    if n.trunc() == n && n.abs() < 1e15 {
        // Integers below 10^15 print as plain digits; itoa-style is faster.
        let mut v = n.abs() as u64;
        let mut tmp = [0u8; 20];
        let mut i = tmp.len();
        while v > 0 {
            i -= 1;
            tmp[i] = b'0' + (v % 10) as u8;
            v /= 10;
        }
        if n < 0.0 {
            out.push(b'-');
        }
        out.extend_from_slice(&tmp[i..]);
        return;
    }
    let mut buf = ryu_js::Buffer::new();
    out.extend_from_slice(buf.format_finite(n).as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(n: f64) -> String {
        let mut v = Vec::new();
        write(n, &mut v);
        let s = String::from_utf8(v).unwrap();
        assert_eq!(s, format(n), "fast path and ryu-js disagree on {n:e}");
        s
    }

    #[test]
    fn rfc8785_examples() {
        assert_eq!(w(0.0), "0");
        assert_eq!(w(-0.0), "0");
        assert_eq!(w(1e21), "1e+21");
        assert_eq!(w(1e-7), "1e-7");
        assert_eq!(w(123e-9), "1.23e-7");
        assert_eq!(w(5e-324), "5e-324");
        assert_eq!(w(1.7976931348623157e308), "1.7976931348623157e+308");
        assert_eq!(w(9007199254740992.0), "9007199254740992");
        assert_eq!(w(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(w(1e20), "100000000000000000000");
        assert_eq!(w(-1.5), "-1.5");
        assert_eq!(w(999999999999999.0), "999999999999999");
        assert_eq!(w(-999999999999999.0), "-999999999999999");
        assert_eq!(w(1e-6), "0.000001");
        assert_eq!(w(4.35), "4.35");
    }
}
