//! A pull scanner for text that should already be canonical.
//!
//! [`parse_with`](crate::parse_with) builds a value tree and decodes every
//! string, which is what a reader that reports findings needs. A verifier's
//! fast path only needs to know that a line is canonical, valid and of an
//! expected shape, and to read a few scalars out of it: [`Scanner`] does that
//! without allocating. Every method consumes one canonical token and returns
//! what it read, or returns `None`, meaning "not the canonical text of the
//! expected shape": the caller then falls back to the full parser, which
//! says what is wrong. The scanner may therefore be stricter than the
//! parser, never looser; the tests hold it to accepting only what
//! [`check_canonical`](crate::check_canonical) accepts.

use std::borrow::Cow;

use crate::parse::{plain_run, validate};

/// Reads canonical JSON token by token (see the module documentation).
#[derive(Debug, Clone)]
pub struct Scanner<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

/// A string token as written: the text between the quotes, escapes still
/// in their canonical form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawStr<'a> {
    raw: &'a str,
    escaped: bool,
}

/// A scalar token.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scalar<'a> {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number.
    Number(RawNumber<'a>),
    /// A string.
    String(RawStr<'a>),
}

/// A number token: its text, and its value when reading it needed it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RawNumber<'a> {
    text: &'a str,
    value: Num,
}

/// What reading a number token learnt of its value.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Num {
    /// A plain integer of at most 15 digits: exact, and safe.
    Int(i64),
    /// Any other value, converted.
    Float(f64),
    /// A number of at most 15 significant digits with a fraction or an
    /// exponent, checked without converting it (see `number::short`):
    /// never a safe integer (a fraction is never integral, and the
    /// exponent form is used from 10^21 up or below 10^-6).
    Decimal,
}

impl<'a> RawNumber<'a> {
    /// The number as written.
    pub fn text(&self) -> &'a str {
        self.text
    }

    /// The number's value.
    pub fn value(&self) -> f64 {
        match self.value {
            Num::Int(n) => n as f64,
            Num::Float(v) => v,
            // Only checked, finite decimals are left unparsed.
            Num::Decimal => self.text.parse().unwrap_or(f64::NAN),
        }
    }

    /// The value when it is a safe integer (|n| ≤ 2^53−1).
    pub fn safe_integer(&self) -> Option<i64> {
        match self.value {
            // Below 10^15, so safe.
            Num::Int(n) => Some(n),
            Num::Float(v) => crate::safe_integer(v),
            // A canonical number with a fraction is never integral.
            Num::Decimal => None,
        }
    }
}

impl<'a> RawStr<'a> {
    /// The string a [`Scanner`] read as `raw` (the text between the
    /// quotes) with or without escapes, for a caller that kept only those
    /// two. [`decode`](Self::decode) assumes the escapes are canonical, as
    /// the scanner admits them.
    pub fn from_scanned(raw: &'a str, escaped: bool) -> RawStr<'a> {
        RawStr { raw, escaped }
    }

    /// The text between the quotes, as written.
    pub fn raw(&self) -> &'a str {
        self.raw
    }

    /// Whether the string holds escapes (so [`raw`](Self::raw) is not its
    /// value).
    pub fn has_escapes(&self) -> bool {
        self.escaped
    }

    /// The string's value: borrowed when it has no escapes.
    pub fn decode(&self) -> Cow<'a, str> {
        if !self.escaped {
            return Cow::Borrowed(self.raw);
        }
        let mut out = String::with_capacity(self.raw.len());
        let mut chars = self.raw.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            // The scanner admitted only canonical escapes.
            match chars.next() {
                Some('b') => out.push('\u{8}'),
                Some('f') => out.push('\u{c}'),
                Some('n') => out.push('\n'),
                Some('r') => out.push('\r'),
                Some('t') => out.push('\t'),
                Some('u') => {
                    let hex: String = chars.by_ref().take(4).collect();
                    let unit = u32::from_str_radix(&hex, 16).unwrap_or(0xFFFD);
                    out.push(char::from_u32(unit).unwrap_or('\u{FFFD}'));
                }
                Some(other) => out.push(other),
                None => {}
            }
        }
        Cow::Owned(out)
    }
}

impl<'a> Scanner<'a> {
    /// A scanner at the start of `bytes`; `None` when `bytes` is not UTF-8
    /// or starts with a byte-order mark.
    pub fn new(bytes: &'a [u8]) -> Option<Scanner<'a>> {
        let text = validate(bytes).ok()?;
        Some(Scanner {
            text,
            bytes,
            pos: 0,
        })
    }

    /// The offset of the next token.
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// The next byte.
    pub fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    /// Whether the whole text has been read.
    pub fn is_at_end(&self) -> bool {
        self.pos == self.bytes.len()
    }

    /// Consumes the byte `b`.
    #[inline]
    pub fn eat(&mut self, b: u8) -> Option<()> {
        if self.peek() == Some(b) {
            self.pos += 1;
            Some(())
        } else {
            None
        }
    }

    /// Consumes exactly `lit` (structural text such as `{"index":`, which
    /// canonical form writes one way only).
    #[inline(always)]
    pub fn eat_bytes(&mut self, lit: &[u8]) -> Option<()> {
        if starts_with(&self.bytes[self.pos..], lit) {
            self.pos += lit.len();
            Some(())
        } else {
            None
        }
    }

    /// Consumes a canonical string.
    ///
    /// Canonical escapes are `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t` and
    /// `\u00xx` (lowercase hex) for the other control characters; every other
    /// character is written raw. Anything else, including a lone surrogate
    /// (an error of the profile), gives `None`.
    #[inline(always)]
    pub fn string(&mut self) -> Option<RawStr<'a>> {
        if self.peek() != Some(b'"') {
            return None;
        }
        let bytes = self.bytes;
        let start = self.pos + 1;
        let mut i = plain_run(bytes, start);
        let mut escaped = false;
        loop {
            match bytes.get(i)? {
                b'"' => break,
                b'\\' => {
                    escaped = true;
                    i = plain_run(bytes, canonical_escape(bytes, i)?);
                }
                _ => return None, // a raw control character
            }
        }
        self.pos = i + 1;
        // Both ends are at ASCII quotes, so at character boundaries.
        Some(RawStr {
            raw: span(self.text, start, i)?,
            escaped,
        })
    }

    /// Consumes a number written as ECMAScript writes it (RFC 8785 §3.2.2.3)
    /// and returns its value.
    #[inline]
    pub fn number(&mut self) -> Option<f64> {
        self.raw_number().map(|n| n.value())
    }

    /// Consumes a number written as ECMAScript writes it, computing its
    /// value only where deciding that needs it (see [`RawNumber`]).
    /// Inlined, with the rarer numbers out of line, so that the token is
    /// returned in registers.
    #[inline(always)]
    pub fn raw_number(&mut self) -> Option<RawNumber<'a>> {
        if let Some(n) = self.small_integer() {
            return Some(n);
        }
        self.other_number()
    }

    /// [`raw_number`](Self::raw_number) for every token but a small integer.
    #[inline(never)]
    fn other_number(&mut self) -> Option<RawNumber<'a>> {
        let b = self.bytes;
        let start = self.pos;
        if let Some((end, value)) = crate::number::plain_decimal(b, start) {
            let text = span(self.text, start, end)?;
            self.pos = end;
            let value = value.map_or(Num::Decimal, Num::Float);
            return Some(RawNumber { text, value });
        }
        let t = crate::number::token(b, start).ok()?;
        let i = t.end;
        let text = span(self.text, start, i)?;
        let value = match (t.small_integer(b), t.fraction, t.exponent) {
            // Exact, and written so by ECMAScript, except -0 (written 0).
            (Some(0), _, _) if t.negative => return None,
            (Some(n), _, _) => Num::Int(n),
            (None, _, _) if crate::number::short(b, &t) => Num::Decimal,
            _ => {
                let v: f64 = text.parse().ok()?;
                if !v.is_finite() {
                    return None;
                }
                let mut buf = ryu_js::Buffer::new();
                if buf.format_finite(v) != text {
                    return None;
                }
                Num::Float(v)
            }
        };
        self.pos = i;
        Some(RawNumber { text, value })
    }

    /// The common case of [`raw_number`](Self::raw_number) in one pass: a
    /// plain integer of 1 to 15 digits (`0`, or no leading zero), which
    /// ECMAScript writes as written, except `-0`. `None` sends every other
    /// token (and every fault) to the general reader.
    #[inline(always)]
    fn small_integer(&mut self) -> Option<RawNumber<'a>> {
        let b = self.bytes;
        let start = self.pos;
        let negative = b.get(start) == Some(&b'-');
        let first = start + usize::from(negative);
        let mut n = match b.get(first)? {
            d @ b'1'..=b'9' => i64::from(d - b'0'),
            // `0`, but not `-0`, `01`, `0.5` or `0e1`.
            b'0' if !negative => 0,
            _ => return None,
        };
        let mut i = first + 1;
        if n != 0 {
            while let Some(d @ b'0'..=b'9') = b.get(i) {
                if i - first == 15 {
                    return None;
                }
                n = n * 10 + i64::from(d - b'0');
                i += 1;
            }
        }
        if matches!(b.get(i), Some(b'0'..=b'9' | b'.' | b'e' | b'E')) {
            return None;
        }
        // ASCII throughout, so at character boundaries.
        let text = span(self.text, start, i)?;
        self.pos = i;
        Some(RawNumber {
            text,
            value: Num::Int(if negative { -n } else { n }),
        })
    }

    /// Consumes a scalar: `null`, `true`, `false`, a number or a string.
    /// Arrays and objects give `None` (the caller reads those with
    /// [`eat`](Self::eat)).
    #[inline(always)]
    pub fn scalar(&mut self) -> Option<Scalar<'a>> {
        match self.peek()? {
            b'"' => self.string().map(Scalar::String),
            b'-' | b'0'..=b'9' => self.raw_number().map(Scalar::Number),
            b'n' => self.eat_bytes(b"null").map(|()| Scalar::Null),
            b't' => self.eat_bytes(b"true").map(|()| Scalar::Bool(true)),
            b'f' => self.eat_bytes(b"false").map(|()| Scalar::Bool(false)),
            _ => None,
        }
    }
}

/// Whether `bytes` is one canonical JSON text nesting at most `max_depth`
/// arrays and objects deep, decided by the scanner alone. Accept-only, as
/// the scanner is: `false` means "let the parser decide". Members must come
/// in strictly ascending UTF-16 order, which also makes them unique.
pub(crate) fn is_canonical(bytes: &[u8], max_depth: usize) -> bool {
    let Some(mut s) = Scanner::new(bytes) else {
        return false;
    };
    s.canonical_value(max_depth).is_some() && s.is_at_end()
}

impl<'a> Scanner<'a> {
    /// Consumes one canonical value with at most `depth_left` levels of
    /// arrays and objects (the parser's depth rule).
    fn canonical_value(&mut self, depth_left: usize) -> Option<()> {
        match self.peek()? {
            b'{' => {
                let inner = depth_left.checked_sub(1)?;
                self.pos += 1;
                if self.eat(b'}').is_some() {
                    return Some(());
                }
                let mut prev: Option<RawStr<'a>> = None;
                loop {
                    let name = self.string()?;
                    if let Some(p) = prev {
                        if !ascending(p, name) {
                            return None;
                        }
                    }
                    self.eat(b':')?;
                    self.member_value(inner)?;
                    prev = Some(name);
                    match self.peek()? {
                        b',' => self.pos += 1,
                        b'}' => {
                            self.pos += 1;
                            return Some(());
                        }
                        _ => return None,
                    }
                }
            }
            b'[' => {
                let inner = depth_left.checked_sub(1)?;
                self.pos += 1;
                if self.eat(b']').is_some() {
                    return Some(());
                }
                loop {
                    self.member_value(inner)?;
                    match self.peek()? {
                        b',' => self.pos += 1,
                        b']' => {
                            self.pos += 1;
                            return Some(());
                        }
                        _ => return None,
                    }
                }
            }
            _ => self.scalar().map(|_| ()),
        }
    }

    /// [`canonical_value`](Self::canonical_value) for a member or an
    /// element: a scalar, which most are, is read here rather than in a
    /// call of its own.
    #[inline(always)]
    fn member_value(&mut self, depth_left: usize) -> Option<()> {
        match self.peek()? {
            b'{' | b'[' => self.canonical_value(depth_left),
            _ => self.scalar().map(|_| ()),
        }
    }
}

/// Whether member name `a` sorts strictly before `b` (UTF-16 code units of
/// their values, RFC 8785 §3.2.3).
#[inline]
fn ascending(a: RawStr<'_>, b: RawStr<'_>) -> bool {
    // Most names differ in their first byte: when one of the two is ASCII,
    // that byte decides (see `cmp_utf16`), without a call.
    if let (Some(&x), Some(&y)) = (a.raw().as_bytes().first(), b.raw().as_bytes().first()) {
        if x != y && x.min(y) < 0x80 && x != b'\\' && y != b'\\' {
            return x < y;
        }
    }
    let order = if a.has_escapes() || b.has_escapes() {
        crate::cmp_utf16(&a.decode(), &b.decode())
    } else {
        crate::cmp_utf16(a.raw(), b.raw())
    };
    order == std::cmp::Ordering::Less
}

/// `text[start..end]`, where both ends are at ASCII bytes the scanner read
/// (so at character boundaries; `None` otherwise, which does not happen).
/// `str::get` with a range stayed an out-of-line call on the hot path (a
/// call per string and number, 2 % of a narrow-row verification);
/// `split_at_checked` inlines.
#[inline(always)]
fn span(text: &str, start: usize, end: usize) -> Option<&str> {
    let (head, _) = text.split_at_checked(end)?;
    head.split_at_checked(start).map(|(_, s)| s)
}

/// `hay.starts_with(needle)`, eight bytes at a time: the needles are member
/// names of a few bytes, for which a call to `memcmp` costs more than the
/// comparison.
/// Compared in words, the last one overlapping the one before, so that no
/// byte-wise tail (which the compiler turns into a `memcmp` call) is left.
#[inline]
fn starts_with(hay: &[u8], needle: &[u8]) -> bool {
    let n = needle.len();
    let Some(hay) = hay.get(..n) else {
        return false;
    };
    let w8 = |s: &[u8], at: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&s[at..at + 8]);
        u64::from_le_bytes(w)
    };
    let w4 = |s: &[u8], at: usize| {
        let mut w = [0u8; 4];
        w.copy_from_slice(&s[at..at + 4]);
        u32::from_le_bytes(w)
    };
    if n >= 8 {
        let mut at = 0;
        while at + 8 < n {
            if w8(hay, at) != w8(needle, at) {
                return false;
            }
            at += 8;
        }
        w8(hay, n - 8) == w8(needle, n - 8)
    } else if n >= 4 {
        w4(hay, 0) == w4(needle, 0) && w4(hay, n - 4) == w4(needle, n - 4)
    } else {
        hay.iter().zip(needle).all(|(a, b)| a == b)
    }
}

/// The offset after the canonical escape at `at` (a backslash), or `None`.
#[inline]
fn canonical_escape(b: &[u8], at: usize) -> Option<usize> {
    match b.get(at + 1)? {
        b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => Some(at + 2),
        b'u' => {
            let d = b.get(at + 2..at + 6)?;
            let low = match d[3] {
                c @ b'0'..=b'9' => c - b'0',
                c @ b'a'..=b'f' => c - b'a' + 10,
                _ => return None,
            };
            let unit = match (d[0], d[1], d[2]) {
                (b'0', b'0', b'0') => low,
                (b'0', b'0', b'1') => 16 + low,
                _ => return None,
            };
            // These five have short forms.
            (!matches!(unit, 0x08 | 0x09 | 0x0A | 0x0C | 0x0D)).then_some(at + 6)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{check_canonical, parse, Value};

    fn one(text: &str) -> Option<Scalar<'_>> {
        let mut s = Scanner::new(text.as_bytes())?;
        let v = s.scalar()?;
        s.is_at_end().then_some(v)
    }

    #[test]
    fn accepts_canonical_scalars() {
        assert_eq!(one("null"), Some(Scalar::Null));
        assert_eq!(one("true"), Some(Scalar::Bool(true)));
        assert_eq!(one("false"), Some(Scalar::Bool(false)));
        let num = |t: &str| match one(t) {
            Some(Scalar::Number(n)) => Some(n.value()),
            _ => None,
        };
        assert_eq!(num("0"), Some(0.0));
        assert_eq!(num("-12"), Some(-12.0));
        assert_eq!(num("1.5"), Some(1.5));
        assert_eq!(num("-0.000001"), Some(-0.000001));
        assert_eq!(num("1e+21"), Some(1e21));
        assert_eq!(num("1e-7"), Some(1e-7));
        assert_eq!(num("9007199254740991"), Some(9007199254740991.0));
        assert_eq!(num("5e-324"), Some(5e-324));
        assert_eq!(num("13.857142857142858"), Some(13.857142857142858));
    }

    #[test]
    fn rejects_what_canonical_form_writes_otherwise() {
        for t in [
            "-0",
            "1.0",
            "1E+21",
            "0.0000001",
            "0.00000012",
            "1.10",
            "-0.0",
            "1e21",
            "01",
            "1.",
            ".5",
            "-",
            "1e",
            "0.10",
            "100000000000000000000000",
            "1e400",
            "NaN",
            "nul",
            "tru",
            "\"\\/\"",
            "\"\\u0041\"",
            "\"\\u000A\"",
            "\"\\u001F\"",
            "\"\\u0008\"",
            "\"\\ud800\"",
            "\"\\ud83d\\ude00\"",
            "\"a\u{1}\"",
            "\"unterminated",
            "[]",
            "{}",
        ] {
            assert_eq!(one(t), None, "{t}");
        }
        assert!(Scanner::new(b"\xEF\xBB\xBF1").is_none());
        assert!(Scanner::new(b"\"\xff\"").is_none());
    }

    #[test]
    fn strings_keep_raw_text_and_decode() {
        let text = "\"a\\\"b\\\\c\\n\\u001f\\b\\f\\r\\tü😀\"";
        let Some(Scalar::String(s)) = one(text) else {
            panic!("not accepted")
        };
        assert!(s.has_escapes());
        assert_eq!(s.raw(), &text[1..text.len() - 1]);
        assert_eq!(s.decode(), "a\"b\\c\n\u{1f}\u{8}\u{c}\r\tü😀");
        let Some(Scalar::String(plain)) = one("\"plain\"") else {
            panic!("not accepted")
        };
        assert!(!plain.has_escapes());
        assert!(matches!(plain.decode(), Cow::Borrowed("plain")));
    }

    #[test]
    fn never_looser_than_the_parser() {
        // Every scalar the scanner accepts is valid, canonical, and the
        // value the parser reads.
        let cases = [
            "0",
            "-1",
            "1.25",
            "123456789012345",
            "1234567890123456",
            "12345678901234567",
            "-9007199254740991",
            "1e-7",
            "0.000001",
            "1.7976931348623157e+308",
            "\"\"",
            "\"\\u0000\\u0007\\u000b\\u000e\\u001a\"",
            "\"\u{2028}\u{7f}\"",
        ];
        for t in cases {
            let got = one(t);
            let canonical = check_canonical(t.as_bytes()) == Ok(None);
            assert_eq!(got.is_some(), canonical, "{t}");
            if let Some(v) = got {
                let parsed = parse(t.as_bytes()).unwrap();
                match (v, parsed) {
                    (Scalar::Number(a), Value::Number(b)) => {
                        assert_eq!(a.value().to_bits(), b.to_bits());
                        assert_eq!(a.safe_integer(), crate::safe_integer(b));
                    }
                    (Scalar::String(a), Value::String(b)) => assert_eq!(a.decode(), b),
                    (a, b) => panic!("{t}: {a:?} vs {b:?}"),
                }
            }
        }
    }

    /// The decimal shortcut decides exactly as converting and writing the
    /// number again does, on 300,000 decimals of every length and scale.
    #[test]
    fn decimal_shortcut_matches_conversion() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut accepted = 0;
        for _ in 0..300_000 {
            let r = next();
            let int_len = (r % 17) as usize;
            let frac_len = 1 + ((r >> 8) % 18) as usize;
            let zeros = ((r >> 16) % 9) as usize;
            let mut t = String::new();
            if r & (1 << 30) != 0 {
                t.push('-');
            }
            if int_len == 0 {
                t.push('0');
            } else {
                t.push(char::from(b'1' + (next() % 9) as u8));
                for _ in 1..int_len {
                    t.push(char::from(b'0' + (next() % 10) as u8));
                }
            }
            t.push('.');
            for _ in 0..zeros.min(frac_len - 1) {
                t.push('0');
            }
            while t.len() - t.find('.').unwrap_or(0) <= frac_len {
                t.push(char::from(b'0' + (next() % 10) as u8));
            }
            let v: f64 = t.parse().unwrap();
            let canonical = crate::number::format(v) == t;
            let got = one(&t);
            assert_eq!(got.is_some(), canonical, "{t}");
            if let Some(Scalar::Number(n)) = got {
                assert_eq!(n.value().to_bits(), v.to_bits(), "{t}");
                accepted += 1;
            }
        }
        assert!((50_000..250_000).contains(&accepted), "{accepted} accepted");
    }

    #[test]
    fn starts_with_every_length_and_position() {
        let hay: Vec<u8> = (0u8..40).map(|i| b'a' + i % 26).collect();
        for n in 0..=hay.len() {
            let needle = hay[..n].to_vec();
            assert!(starts_with(&hay, &needle), "{n}");
            assert!(!starts_with(&hay[..n.saturating_sub(1)], &needle) || n == 0);
            for at in 0..n {
                let mut other = needle.clone();
                other[at] ^= 1;
                assert!(!starts_with(&hay, &other), "{n} differs at {at}");
            }
        }
    }

    #[test]
    fn integers_take_the_one_pass_reader() {
        // What the one-pass reader takes, and what it leaves to the general
        // reader, give the same outcome.
        for t in [
            "0",
            "7",
            "-7",
            "10",
            "-10",
            "123456789012345",
            "-123456789012345",
            "1234567890123456",
            "9007199254740991",
            "9007199254740992",
            "-0",
            "00",
            "01",
            "-01",
            "0.5",
            "0e1",
            "1e5",
            "1E5",
            "10.25",
            "-",
            "-a",
        ] {
            let mut s = Scanner::new(t.as_bytes()).unwrap();
            let fast = s.small_integer();
            let b = t.as_bytes();
            let general = crate::number::token(b, 0).ok().and_then(|tok| {
                tok.small_integer(b)
                    .filter(|&n| !(n == 0 && tok.negative) && tok.end == b.len())
            });
            assert_eq!(fast.and_then(|n| n.safe_integer()), general, "{t}");
            if let Some(n) = fast {
                assert_eq!(n.text(), t);
                assert_eq!(n.value(), t.parse::<f64>().unwrap(), "{t}");
            }
        }
    }

    #[test]
    fn plain_decimals_read_in_one_pass_agree_with_the_general_reader() {
        // Each text through `raw_number` (which reads plain decimals in
        // one pass) and through the tokenizer and the conversion: the same
        // verdict, the same value and the same end.
        for t in [
            "0.5",
            "-0.5",
            "0.000001",
            "0.0000001",
            "-0.0",
            "0.50",
            "10.25",
            "622.7688078830721",
            "-622.7688078830721",
            "0.30000000000000004",
            "0.1000000000000001",
            "0.1234567890123456",
            "1234567890123456.5",
            "9007199254740993.5",
            "900719925474099.3",
            "900719925474099.25",
            "0.9007199254740993",
            "0.9007199254740992",
            "0.12345678901234567",
            "0.1234567890123456789012",
            "0.00000000000000000000001",
            "123456789012345678.5",
            "1.7976931348623157",
            "13.857142857142858",
            "13.857142857142857",
            "5.",
            "5.e1",
            "5.5e1",
            "01.5",
            "-01.5",
            "1.5x",
        ] {
            let b = t.as_bytes();
            let mut s = Scanner::new(b).unwrap();
            let fast = s.raw_number().map(|n| (n.value().to_bits(), s.pos()));
            let general = crate::number::token(b, 0).ok().and_then(|tok| {
                let v: f64 = t[..tok.end].parse().ok()?;
                (crate::number::format(v) == t[..tok.end]).then_some((v.to_bits(), tok.end))
            });
            assert_eq!(fast, general, "{t}");
        }
    }

    #[test]
    fn whole_texts_are_accepted_only_when_canonical() {
        for (text, depth, want) in [
            (r#"{"a":[1,{"b":null}],"c":"x"}"#, 3, true),
            (r#"{"a":[1,{"b":null}],"c":"x"}"#, 2, false),
            (r#"[]"#, 1, true),
            (r#"[]"#, 0, false),
            (r#"7"#, 0, true),
            (r#"{"b":1,"a":2}"#, 1, false),
            (r#"{"a":1,"a":2}"#, 1, false),
            (r#"{"a":1, "b":2}"#, 1, false),
            (r#"[1,]"#, 1, false),
            (r#"{"a":1}x"#, 1, false),
            (r#"{"\u0001":1,"a":2}"#, 1, true),
            ("{\"\u{fb33}\":1,\"\u{1f600}\":2}", 1, false),
            ("{\"\u{1f600}\":1,\"\u{fb33}\":2}", 1, true),
            (r#"{"\"":1,"b":2}"#, 1, true),
            (r#"{"b":1,"\"":2}"#, 1, false),
            (r#"{"\\":1,"]":2}"#, 1, true),
            (r#"{"]":1,"\\":2}"#, 1, false),
            // Escapes are compared by the character they stand for.
            (r#"{"\n":1,"A":2}"#, 1, true),
            (r#"{"A":1,"\n":2}"#, 1, false),
            ("{\"z\":1,\"é\":2}", 1, true),
            ("{\"é\":1,\"z\":2}", 1, false),
            ("{\"a\":1,\"ab\":2}", 1, true),
        ] {
            assert_eq!(
                is_canonical(text.as_bytes(), depth),
                want,
                "{text} at {depth}"
            );
            if want {
                let options = crate::ParseOptions { max_depth: depth };
                assert_eq!(
                    crate::check_canonical_with(text.as_bytes(), options),
                    Ok(None)
                );
            }
        }
    }

    #[test]
    fn structural_bytes() {
        let mut s = Scanner::new(br#"{"index":7,"x":[]}"#).unwrap();
        assert_eq!(s.eat_bytes(br#"{"index":"#), Some(()));
        assert_eq!(s.number(), Some(7.0));
        assert_eq!(s.eat_bytes(br#","y""#), None);
        assert_eq!(s.pos(), 10);
        assert_eq!(s.eat(b','), Some(()));
        assert_eq!(s.string().map(|r| r.raw()), Some("x"));
        assert_eq!(s.eat_bytes(b":[]}"), Some(()));
        assert!(s.is_at_end());
        assert_eq!(s.peek(), None);
        assert_eq!(s.eat(b'}'), None);
    }
}
