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
    // Integers below 10^15 print as plain digits; itoa-style is faster.
    // Below 10^15 the cast truncates exactly, so it tells an integer
    // (`f64::trunc` is a call to libm on x86-64 without SSE4.1).
    if n.abs() < 1e15 && (n as i64) as f64 == n {
        write_integer(n as i64, out);
        return;
    }
    let mut buf = ryu_js::Buffer::new();
    out.extend_from_slice(buf.format_finite(n).as_bytes());
}

/// Appends the digits of `i` (not 0), with its sign.
///
/// Tried and not kept: the digits written into a fixed buffer that is
/// appended whole and cut to length (no `memcpy` call of varying length).
/// It ran fewer instructions but packed narrow rows 10 % slower: wide
/// loads of bytes just stored one at a time wait for the stores.
#[inline]
fn write_integer(i: i64, out: &mut Vec<u8>) {
    let mut v = i.unsigned_abs();
    let mut tmp = [0u8; 20];
    let mut at = tmp.len();
    while v > 0 {
        at -= 1;
        tmp[at] = b'0' + (v % 10) as u8;
        v /= 10;
    }
    if i < 0 {
        out.push(b'-');
    }
    out.extend_from_slice(&tmp[at..]);
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
        for (n, text) in [
            (1.0, "1"),
            (-1.0, "-1"),
            (9.0, "9"),
            (10.0, "10"),
            (-10.0, "-10"),
            (99.0, "99"),
            (100.0, "100"),
            (123456789012345.0, "123456789012345"),
            (-100000000000000.0, "-100000000000000"),
            (1e15, "1000000000000000"),
            (-1e15, "-1000000000000000"),
        ] {
            assert_eq!(w(n), text);
        }
        // Appended after what the buffer holds.
        let mut out = b"[7,".to_vec();
        write(-42.0, &mut out);
        assert_eq!(out, b"[7,-42");
    }

    /// What `short` decides for `text` (a number token).
    fn is_short(text: &str) -> bool {
        let t = token(text.as_bytes(), 0).unwrap_or_else(|e| panic!("{text}: {e:?}"));
        assert_eq!(t.end, text.len(), "{text}");
        short(text.as_bytes(), &t)
    }

    /// Whether ECMAScript writes the value of `text` as `text`.
    fn canonical(text: &str) -> bool {
        let v: f64 = text.parse().unwrap();
        v.is_finite() && format(v) == text
    }

    #[test]
    fn short_exponent_forms() {
        for yes in [
            "1e-7",
            "1.5e+300",
            "1e+21",
            "-9.99999999999999e+307",
            "1.23456789012345e-307",
            "2e-7",
        ] {
            assert!(is_short(yes), "{yes}");
            assert!(canonical(yes), "{yes}");
        }
        for no in [
            // ECMAScript writes these without an exponent.
            "1e+20",
            "1e-6",
            "1.5e-6",
            // Spelled otherwise than ECMAScript spells them.
            "1E+21",
            "1e21",
            "1.0e+21",
            "1.50e+21",
            "10e+21",
            "0.1e+22",
            "1e+021",
            "1e-07",
            // Left to the conversion: 16 digits, subnormal, past ±307.
            "1.234567890123456e+30",
            "5e-324",
            "1e-308",
            "1e+308",
            "1e+999",
        ] {
            assert!(!is_short(no), "{no}");
        }
    }

    #[test]
    fn eight_digits_are_read_as_their_value_and_nothing_else_is() {
        assert_eq!(eight_digits(b"12345678"), Some(12_345_678));
        assert_eq!(eight_digits(b"00000000"), Some(0));
        assert_eq!(eight_digits(b"99999999"), Some(99_999_999));
        assert_eq!(eight_digits(b"00000010"), Some(10));
        assert_eq!(eight_digits(b"1234567"), None);
        // Every byte that is not a digit, in every position.
        for at in 0..8 {
            for b in (0..=255u8).filter(|b| !b.is_ascii_digit()) {
                let mut chunk = *b"31415926";
                chunk[at] = b;
                assert_eq!(eight_digits(&chunk), None, "{b:#x} at {at}");
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4096))]

        /// `short` accepts only text ECMAScript writes, and accepts every
        /// such text of at most 15 digits in an exponent form within ±307.
        #[test]
        fn short_agrees_with_the_conversion(
            digits in "[1-9][0-9]{0,16}",
            exp in -330i32..330,
            upper in proptest::bool::ANY,
            signed in proptest::bool::ANY,
            dot in 0usize..4,
        ) {
            let (first, rest) = digits.split_at(1);
            let e = if upper { "E" } else { "e" };
            let sign = if exp >= 0 && !signed { "" } else if exp >= 0 { "+" } else { "-" };
            let mantissa = if rest.is_empty() { first.to_string() } else { format!("{first}.{rest}") };
            let exponent_form = format!("{mantissa}{e}{sign}{}", exp.abs());
            // A fixed form with the point moved.
            let fixed = if dot < digits.len() {
                format!("{}.{}", &digits[..dot.max(1)], &digits[dot.max(1)..])
            } else {
                format!("0.{}{digits}", "0".repeat(dot))
            };
            for text in [exponent_form, fixed] {
                if text.ends_with('.') { continue; }
                let short = is_short(&text);
                if short {
                    proptest::prop_assert!(canonical(&text), "{} accepted", text);
                }
                let sig = digits.trim_end_matches('0').len();
                if text.contains('e') && canonical(&text) && sig <= 15 && (-307..=307).contains(&exp) {
                    proptest::prop_assert!(short, "{} refused", text);
                }
            }
        }
    }
}

/// The parts of a number token (RFC 8259 grammar), located by
/// [`token`]: what the parser and the scanner both need before they judge
/// the number's value and spelling.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Token {
    /// Offset just past the token.
    pub(crate) end: usize,
    /// It starts with `-`.
    pub(crate) negative: bool,
    /// The integer digits, `start..end`.
    pub(crate) int: (usize, usize),
    /// The fraction digits, `start..end`, if there is a decimal point.
    pub(crate) fraction: Option<(usize, usize)>,
    /// It has an exponent.
    pub(crate) exponent: bool,
}

impl Token {
    /// The value of a plain integer of at most 15 digits (exact in a
    /// double), or `None` for any other number.
    pub(crate) fn small_integer(&self, b: &[u8]) -> Option<i64> {
        let (s, e) = self.int;
        if self.fraction.is_some() || self.exponent || e - s > 15 {
            return None;
        }
        let n = b[s..e]
            .iter()
            .fold(0i64, |n, &d| n * 10 + i64::from(d - b'0'));
        Some(if self.negative { -n } else { n })
    }
}

/// Reads the number token at `start` (a `-` or a digit) in `b`; on a
/// grammar error, the offset and what is wrong.
pub(crate) fn token(b: &[u8], start: usize) -> Result<Token, (usize, &'static str)> {
    let digits = |mut i: usize| {
        while matches!(b.get(i), Some(b'0'..=b'9')) {
            i += 1;
        }
        i
    };
    let negative = b.get(start) == Some(&b'-');
    let int_start = start + usize::from(negative);
    let mut i = match b.get(int_start) {
        Some(b'0') if matches!(b.get(int_start + 1), Some(b'0'..=b'9')) => {
            return Err((start, "numbers must not have leading zeros"))
        }
        Some(b'0') => int_start + 1,
        Some(b'1'..=b'9') => digits(int_start),
        _ => return Err((start, "a `-` must be followed by digits")),
    };
    let int = (int_start, i);
    let mut fraction = None;
    if b.get(i) == Some(&b'.') {
        let d = i + 1;
        i = digits(d);
        if i == d {
            return Err((i, "a decimal point must be followed by digits"));
        }
        fraction = Some((d, i));
    }
    let exponent = matches!(b.get(i), Some(b'e' | b'E'));
    if exponent {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let d = i;
        i = digits(d);
        if i == d {
            return Err((i, "an exponent must have digits"));
        }
    }
    Ok(Token {
        end: i,
        negative,
        int,
        fraction,
        exponent,
    })
}

/// Whether number token `t` of `b` is written as ECMAScript writes its
/// value, decided from its digits without converting it. `true` for a
/// decimal `int.frac` or an exponent form `d[.ddd]e±n` of at most 15
/// significant digits spelled as ECMAScript spells them (see
/// [`short_fixed`], [`short_exponent`]); `false` for every other token,
/// which the caller converts and writes back to compare (integers of at
/// most 15 digits are read before this is asked).
#[inline]
pub(crate) fn short(b: &[u8], t: &Token) -> bool {
    let int = &b[t.int.0..t.int.1];
    let frac = t.fraction.map_or(&[][..], |(s, e)| &b[s..e]);
    if t.exponent {
        let at = t.fraction.map_or(t.int.1, |(_, e)| e);
        short_exponent(int, frac, &b[at..t.end])
    } else {
        t.fraction.is_some() && short_fixed(int, frac)
    }
}

/// Whether a decimal `int.frac` (no exponent) is written as ECMAScript
/// writes its value, decided without converting it: with at most 15
/// significant digits it is, exactly when the fraction does not end in 0
/// and the value is at least 10^-6 (below that ECMAScript uses an
/// exponent). Why: two different decimals of at most 15 significant digits
/// never round to the same double (DBL_DIG is 15; the value here is far
/// from the subnormal range), so no shorter or equally short other
/// spelling reaches the same value, and ECMAScript writes the shortest.
/// Longer decimals are left to the full conversion.
#[inline]
pub(crate) fn short_fixed(int: &[u8], frac: &[u8]) -> bool {
    if frac.last() == Some(&b'0') {
        return false;
    }
    let zeros = fraction_zeros(int, frac);
    if zeros > MAX_FRACTION_ZEROS {
        return false;
    }
    let significant = if int == b"0" {
        frac.len() - zeros
    } else {
        int.len() + frac.len()
    };
    significant <= 15
}

/// The most zeros ECMAScript writes between `0.` and a decimal's first
/// significant digit: below 10^-6 it writes an exponent instead.
const MAX_FRACTION_ZEROS: usize = 5;

/// The zeros of the fraction `frac` before its first significant digit
/// when the integer part `int` is `0`; none otherwise.
fn fraction_zeros(int: &[u8], frac: &[u8]) -> usize {
    if int == b"0" {
        frac.iter().take_while(|&&d| d == b'0').count()
    } else {
        0
    }
}

/// Whether an exponent form, one digit `int`, fraction digits `frac`
/// (perhaps none) and exponent `exp` (from its `e`), is written as
/// ECMAScript writes its value, decided without converting it. ECMAScript
/// writes a value as `d[.ddd]e±n` exactly when its decimal exponent n is
/// at least 21 or below -6, with a first digit other than 0, no trailing
/// zero, a lowercase `e`, a sign always and no leading zero in n. With at
/// most 15 significant digits those digits are the value's shortest (as
/// for [`short_fixed`]), provided the value is a normal double: n is kept
/// within ±307, away from the subnormals (where fewer digits tell values
/// apart, 5e-324 being one) and from overflow. Anything else is left to
/// the full conversion.
#[inline]
fn short_exponent(int: &[u8], frac: &[u8], exp: &[u8]) -> bool {
    let [b'1'..=b'9'] = int else {
        return false;
    };
    if frac.last() == Some(&b'0') || 1 + frac.len() > 15 {
        return false;
    }
    let [b'e', sign @ (b'+' | b'-'), digits @ ..] = exp else {
        return false;
    };
    if !matches!(digits, [b'1'..=b'9', ..]) || digits.len() > 3 {
        return false;
    }
    let n = digits
        .iter()
        .fold(0u32, |n, &d| n * 10 + u32::from(d - b'0'));
    match sign {
        b'+' => (21..=307).contains(&n),
        _ => (7..=307).contains(&n),
    }
}

/// The powers of ten a double holds exactly, 10^0 to 10^22: an integer
/// below 2^53 multiplied or divided by one of them is rounded once, so
/// the product or quotient is the decimal's correctly rounded value
/// (Clinger's fast path).
pub const POW10_EXACT: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// Reads a plain decimal `int.frac` (no exponent) at `start` in `b` of at
/// most 18 significant digits that ECMAScript writes as written, in one
/// pass with its digits gathered on the way as an integer w, with f
/// fraction digits: the offset past it, and its value when it was
/// computed (`None` for a decimal judged by its digits alone). `None`
/// leaves the token (whatever it is, canonical or not) to the general
/// reader ([`token`], then the conversion), which is never looser.
///
/// A decimal of at most 15 significant digits is judged by its digits
/// ([`short_fixed`]). A longer one (f at most 22) is canonical when
/// ECMAScript writes its value as the text, its value being w / 10^f.
/// That quotient is computed here from w, not by `str::parse` reading
/// the text again, and the check needs no proof that it is rounded right:
/// ECMAScript's text of a double v reads back as v, so a v written as the
/// text is the text's value. A v rounded wrong is only written otherwise,
/// and the general reader then decides. These are the 16- and 17-digit
/// decimals of `Math.random()` and of computed amounts, about half the
/// rows of a narrow archive.
#[inline]
pub(crate) fn plain_decimal(b: &[u8], start: usize) -> Option<(usize, Option<f64>)> {
    let negative = b.get(start) == Some(&b'-');
    let first = start + usize::from(negative);
    // The digits so far as an integer; below 10^18 while there are at
    // most 18 significant ones, which is all this reader takes.
    let mut w: u64 = 0;
    let mut i = first;
    match b.get(i)? {
        b'0' => i += 1,
        b'1'..=b'9' => {
            while let Some(d @ b'0'..=b'9') = b.get(i) {
                if i - first == 17 {
                    return None;
                }
                w = w * 10 + u64::from(d - b'0');
                i += 1;
            }
        }
        _ => return None,
    }
    let int = (first, i);
    if b.get(i) != Some(&b'.') {
        return None;
    }
    i += 1;
    let frac_start = i;
    // Eight digits at a time while the fraction has them: most of a
    // long decimal's digits are its fraction's.
    while i + 8 - frac_start <= 22 && w < 10_000_000_000 {
        match b.get(i..i + 8).and_then(eight_digits) {
            Some(d) => w = w * 100_000_000 + d,
            None => break,
        }
        i += 8;
    }
    while let Some(d @ b'0'..=b'9') = b.get(i) {
        // More than 22 fraction digits, or more than 18 significant
        // ones, are the general reader's.
        if i - frac_start == 22 || w >= 100_000_000_000_000_000 {
            return None;
        }
        w = w * 10 + u64::from(d - b'0');
        i += 1;
    }
    let frac = (frac_start, i);
    if frac.0 == frac.1 || matches!(b.get(i), Some(b'e' | b'E')) {
        return None;
    }
    let int_digits = &b[int.0..int.1];
    let frac_digits = &b[frac.0..frac.1];
    let value = if short_fixed(int_digits, frac_digits) {
        None
    } else {
        // Not short: a trailing 0, under 10^-6 (ECMAScript writes an
        // exponent), or more than 15 significant digits.
        if frac_digits.last() == Some(&b'0') {
            return None;
        }
        let p = POW10_EXACT[frac.1 - frac.0];
        let magnitude = if w <= 1 << 53 {
            // Both exact: one rounding (Clinger's fast path).
            w as f64 / p
        } else {
            // w = hi + lo, with hi = w rounded and lo exact; hi / p = q
            // + r / p exactly (the remainder of a division is exact,
            // by fma). Summed, the quotient is rounded right in all but
            // rare cases (none of 25,723 17-digit amounts).
            let hi = w as f64;
            let lo = (w as i64 - hi as i64) as f64;
            let q = hi / p;
            let r = (-q).mul_add(p, hi);
            q + (r + lo) / p
        };
        let v = if negative { -magnitude } else { magnitude };
        if !(w < 1 << 53 && alone_in_its_interval(w, p, magnitude, int_digits, frac_digits)) {
            let mut buf = ryu_js::Buffer::new();
            if v == 0.0 || buf.format_finite(v).as_bytes() != &b[start..i] {
                return None;
            }
        }
        Some(v)
    };
    Some((i, value))
}

/// Whether ECMAScript writes `v` = w / `p` (w below 2^53 with more than
/// 15 digits, the last not 0; `p` = 10^f exact) as the plain decimal
/// `int.frac` of w's digits, decided by two divisions instead of writing
/// `v` out: true when neither decimal one step away, (w ± 1) × 10^-f,
/// rounds to v (each quotient exact, so rounded once, as parsing rounds)
/// and the text is not below 10^-6. Why that suffices: the reals that
/// round to v form an interval, and it then holds one point of the grid
/// k × 10^-f, the text. Every decimal of at most 16 digits near v lies on
/// that grid (the interval does not reach below 10^(15-f), where a finer
/// grid begins, or w - 1 would be in it), so no shorter decimal rounds to
/// v and no other of 16 digits does: ECMAScript's shortest, closest
/// digits are w's. `false` leaves the text to the written-out comparison.
#[inline]
fn alone_in_its_interval(w: u64, p: f64, v: f64, int: &[u8], frac: &[u8]) -> bool {
    fraction_zeros(int, frac) <= MAX_FRACTION_ZEROS
        && (w - 1) as f64 / p != v
        && (w + 1) as f64 / p != v
}

/// The value of eight ASCII digits, or `None` if any byte is not one (the
/// SWAR reading of simdjson and fast_float: the digit test, then three
/// multiplications that add the digits pairwise, by fours, then all).
#[inline(always)]
fn eight_digits(chunk: &[u8]) -> Option<u64> {
    let x = u64::from_le_bytes(chunk.try_into().ok()?);
    // Each byte's high nibble is 3 and its low nibble plus 6 stays below 16.
    let digits = (x & 0xF0F0_F0F0_F0F0_F0F0)
        | (((x.wrapping_add(0x0606_0606_0606_0606)) & 0xF0F0_F0F0_F0F0_F0F0) >> 4);
    if digits != 0x3333_3333_3333_3333 {
        return None;
    }
    let v = x - 0x3030_3030_3030_3030;
    let v = v * 10 + (v >> 8);
    const MASK: u64 = 0x0000_00FF_0000_00FF;
    const MUL1: u64 = 0x000F_4240_0000_0064;
    const MUL2: u64 = 0x0000_2710_0000_0001;
    Some(
        ((v & MASK)
            .wrapping_mul(MUL1)
            .wrapping_add(((v >> 16) & MASK).wrapping_mul(MUL2)))
            >> 32,
    )
}
