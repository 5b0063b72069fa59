//! The strict parser.
//!
//! Hand-written rather than serde_json because the profile needs what
//! serde_json does not give: duplicate member names are errors (serde_json
//! keeps the last), nesting is limited to 64, and the same pass decides
//! whether the text is already canonical (RFC 8785) and where it first is
//! not, so the verifier parses and checks each line once.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::HashSet;

// Bytes that end a run of plain string characters: exactly those that
// canonical text never holds raw inside a string (the serializer's table).
use crate::error::{Error, ErrorKind};
use crate::number;
use crate::ser::NEEDS_ESCAPE as STRING_STOP;
use crate::value::{cmp_utf16, Object, Value};

/// The nesting limit of the archive's JSON profile: the outermost array or
/// object is depth 1, and 64 is allowed.
pub const MAX_DEPTH: usize = 64;

/// Options for [`parse_with`].
#[derive(Debug, Clone, Copy)]
pub struct ParseOptions {
    /// Deepest nesting allowed (default [`MAX_DEPTH`]).
    pub max_depth: usize,
}

impl Default for ParseOptions {
    fn default() -> Self {
        ParseOptions {
            max_depth: MAX_DEPTH,
        }
    }
}

/// A parsed text and whether it was canonical.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed<'a> {
    /// The value.
    pub value: Value<'a>,
    /// `None` when the text is byte for byte the RFC 8785 form of `value`;
    /// otherwise the offset where the first token that the canonical form
    /// writes differently starts (whitespace, a member out of order, a
    /// needless escape, a number not written as ECMAScript writes it).
    pub non_canonical_at: Option<usize>,
}

/// Parses one JSON text (RFC 8259: whitespace around and inside allowed)
/// under the archive's profile.
pub fn parse(bytes: &[u8]) -> Result<Value<'_>, Error> {
    parse_with(bytes, ParseOptions::default()).map(|p| p.value)
}

/// Parses one JSON text and reports whether it is canonical.
pub fn parse_with(bytes: &[u8], options: ParseOptions) -> Result<Parsed<'_>, Error> {
    let text = validate(bytes)?;
    let mut p = Parser::<true>::new(text, options);
    let value = p.document()?;
    Ok(Parsed {
        value,
        non_canonical_at: p.non_canonical_at,
    })
}

/// Checks `bytes` exactly as [`parse_with`] does, with the same errors and
/// the same `non_canonical_at`, without building the value: for a long
/// line (the manifest) whose tree would take many times its size.
pub fn validate_with(bytes: &[u8], options: ParseOptions) -> Result<Option<usize>, Error> {
    let text = validate(bytes)?;
    let mut p = Parser::<false>::new(text, options);
    p.document()?;
    Ok(p.non_canonical_at)
}

/// The parser's check pass, for [`crate::check`]: `Some(Ok(()))` when
/// the text is valid and canonical, `Some(Err(e))` for an error found while
/// it was still canonical, `None` when the full parse must decide.
pub(crate) fn check_pass(bytes: &[u8], options: ParseOptions) -> Option<Result<(), Error>> {
    let text = match validate(bytes) {
        Ok(t) => t,
        Err(e) => return Some(Err(e)),
    };
    let mut p = Parser::<false>::new(text, options);
    p.stop_at_mark = true;
    let checked = p.document();
    match (checked, p.non_canonical_at) {
        (Ok(_), None) => Some(Ok(())),
        (Err(e), None) => Some(Err(e)),
        (_, Some(_)) => None,
    }
}

pub(crate) fn validate(bytes: &[u8]) -> Result<&str, Error> {
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        return Err(Error::new(
            ErrorKind::Bom,
            0,
            "the text starts with a UTF-8 byte-order mark; remove the first three bytes",
        ));
    }
    // simdutf8 validates several times faster than std on mixed text; on
    // failure std's error gives the offset.
    if let Ok(text) = simdutf8::basic::from_utf8(bytes) {
        return Ok(text);
    }
    std::str::from_utf8(bytes).map_err(|e| {
        Error::new(
            ErrorKind::InvalidUtf8,
            e.valid_up_to(),
            "invalid UTF-8 byte sequence",
        )
    })
}

/// The offset of the first byte at or after `i` that ends a run of plain
/// string characters (`"`, `\\` or a control character), or `bytes.len()`.
///
/// The first 16 bytes eight at a time (SWAR: a word has a stop byte when one
/// of its bytes is below 0x20, or equals 0x22 or 0x5C), which is all most
/// names and short cells need; a longer run is searched with memchr's
/// vector search for the two stop characters and then checked for control
/// characters with a loop the compiler vectorises, because long text cells
/// dominate the time spent in strings.
#[inline]
pub(crate) fn plain_run(bytes: &[u8], mut i: usize) -> usize {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let swar_end = i.saturating_add(16);
    while i + 8 <= bytes.len() {
        let mut w = [0u8; 8];
        w.copy_from_slice(&bytes[i..i + 8]);
        let x = u64::from_le_bytes(w);
        let quote = x ^ (LO * u64::from(b'"'));
        let backslash = x ^ (LO * u64::from(b'\\'));
        // Bytes below 0x20, or zero after the xor; exact for ASCII, and a
        // byte >= 0x80 never sets its high bit in these terms.
        let found =
            (x.wrapping_sub(LO * 0x20) | quote.wrapping_sub(LO) | backslash.wrapping_sub(LO))
                & !x
                & HI;
        if found != 0 {
            // Borrows only run upwards from a byte that truly stops, and
            // every stop byte is flagged, so the lowest flag is the first
            // stop byte.
            return i + (found.trailing_zeros() / 8) as usize;
        }
        i += 8;
        if i >= swar_end {
            let rest = &bytes[i..];
            let stop = memchr::memchr2(b'"', b'\\', rest).unwrap_or(rest.len());
            let run = &rest[..stop];
            if !run.iter().fold(false, |any, &b| any | (b < 0x20)) {
                return i + stop;
            }
            break; // a control character: found below
        }
    }
    while i < bytes.len() && !STRING_STOP[bytes[i] as usize] {
        i += 1;
    }
    i
}

/// An escape decoded by [`decode_escape`].
pub(crate) struct Escape {
    /// The character it stands for.
    pub(crate) ch: char,
    /// The offset after it.
    pub(crate) next: usize,
    /// Whether canonical text (`JSON.stringify`'s) writes it so: only
    /// `\"`, `\\`, the five short control escapes and lowercase `\u00XX`
    /// for the other control characters; everything else is written raw.
    pub(crate) canonical: bool,
}

/// Why an escape is not valid JSON (or not valid Unicode).
pub(crate) enum EscapeFault {
    /// The text ends after the backslash.
    Unterminated,
    /// `\` followed by this byte.
    Invalid(u8),
    /// `\u` without four hex digits: the offset of that escape (the
    /// second of a surrogate pair's).
    Hex(usize),
    /// A surrogate code unit without its pair.
    LoneSurrogate(u32),
}

/// Decodes the escape at `at` (a backslash): the one definition of JSON's
/// escapes and of which of them canonical text keeps, shared by the parser
/// and the one-pass rewriter.
pub(crate) fn decode_escape(bytes: &[u8], at: usize) -> Result<Escape, EscapeFault> {
    let short = |ch, canonical| {
        Ok(Escape {
            ch,
            next: at + 2,
            canonical,
        })
    };
    match bytes.get(at + 1) {
        None => Err(EscapeFault::Unterminated),
        Some(b'"') => short('"', true),
        Some(b'\\') => short('\\', true),
        // Valid JSON, but JSON.stringify writes `/` raw.
        Some(b'/') => short('/', false),
        Some(b'b') => short('\u{8}', true),
        Some(b'f') => short('\u{c}', true),
        Some(b'n') => short('\n', true),
        Some(b'r') => short('\r', true),
        Some(b't') => short('\t', true),
        Some(b'u') => {
            let unit = hex4(bytes, at)?;
            match unit {
                0xD800..=0xDBFF => {
                    let low_at = at + 6;
                    if bytes.get(low_at..low_at + 2) == Some(b"\\u") {
                        let low = hex4(bytes, low_at)?;
                        if (0xDC00..=0xDFFF).contains(&low) {
                            let c = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                            // Any escaped character above U+001F is written
                            // raw in canonical form.
                            return Ok(Escape {
                                ch: char::from_u32(c).unwrap_or('\u{FFFD}'),
                                next: at + 12,
                                canonical: false,
                            });
                        }
                    }
                    Err(EscapeFault::LoneSurrogate(unit))
                }
                0xDC00..=0xDFFF => Err(EscapeFault::LoneSurrogate(unit)),
                _ => Ok(Escape {
                    ch: char::from_u32(unit).unwrap_or('\u{FFFD}'),
                    next: at + 6,
                    canonical: unit < 0x20
                        && !matches!(unit, 0x08 | 0x09 | 0x0A | 0x0C | 0x0D)
                        && bytes[at + 2..at + 6]
                            .iter()
                            .all(|b| !b.is_ascii_uppercase()),
                }),
            }
        }
        Some(&c) => Err(EscapeFault::Invalid(c)),
    }
}

/// The four hex digits after `\u` at `at`.
fn hex4(bytes: &[u8], at: usize) -> Result<u32, EscapeFault> {
    let digits = bytes.get(at + 2..at + 6).ok_or(EscapeFault::Hex(at))?;
    let mut v = 0u32;
    for &b in digits {
        let x = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            _ => return Err(EscapeFault::Hex(at)),
        };
        v = v * 16 + u32::from(x);
    }
    Ok(v)
}

struct Parser<'a, const BUILD: bool> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    depth: usize,
    max_depth: usize,
    non_canonical_at: Option<usize>,
    /// End the pass at the first non-canonical byte (see [`quick_check`]).
    stop_at_mark: bool,
}

impl<'a, const BUILD: bool> Parser<'a, BUILD> {
    fn new(text: &'a str, options: ParseOptions) -> Self {
        Parser {
            text,
            bytes: text.as_bytes(),
            pos: 0,
            depth: 0,
            max_depth: options.max_depth,
            non_canonical_at: None,
            stop_at_mark: false,
        }
    }

    #[inline]
    fn mark(&mut self, at: usize) {
        if self.non_canonical_at.is_none() {
            self.non_canonical_at = Some(at);
            if self.stop_at_mark {
                // Jump to the end: the pass then fails fast, and its caller
                // only wants to know that the text is not canonical.
                self.pos = self.bytes.len();
            }
        }
    }

    fn err<T>(&self, kind: ErrorKind, at: usize, msg: impl Into<String>) -> Result<T, Error> {
        Err(Error::new(kind, at, msg))
    }

    fn syntax<T>(&self, at: usize, msg: impl Into<String>) -> Result<T, Error> {
        self.err(ErrorKind::Syntax, at, msg)
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    #[inline]
    fn skip_ws(&mut self) {
        let start = self.pos;
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
        if self.pos != start {
            self.mark(start);
        }
    }

    fn document(&mut self) -> Result<Value<'a>, Error> {
        self.skip_ws();
        let v = self.value()?;
        self.skip_ws();
        if self.pos < self.bytes.len() {
            return self.syntax(
                self.pos,
                format!(
                    "unexpected {} after the JSON value; one text holds exactly one value",
                    describe(self.bytes[self.pos])
                ),
            );
        }
        Ok(v)
    }

    fn value(&mut self) -> Result<Value<'a>, Error> {
        let at = self.pos;
        match self.peek() {
            None => self.syntax(at, "expected a JSON value, found the end of the text"),
            Some(b'{') => self.object(),
            Some(b'[') => self.array(),
            Some(b'"') => Ok(if BUILD {
                Value::String(self.string()?)
            } else {
                self.string()?;
                Value::Null
            }),
            Some(b'-' | b'0'..=b'9') => self.number().map(Value::Number),
            Some(b't') => self.literal(b"true", Value::Bool(true)),
            Some(b'f') => self.literal(b"false", Value::Bool(false)),
            Some(b'n') => self.literal(b"null", Value::Null),
            Some(b) => self.syntax(
                at,
                match b {
                    b'N' | b'I' => "NaN and Infinity are not JSON".to_string(),
                    b'/' => "comments are not JSON".to_string(),
                    b'\'' => "strings are written in double quotes".to_string(),
                    b']' | b'}' | b',' => format!(
                        "expected a JSON value, found {} (a trailing comma?)",
                        describe(b)
                    ),
                    _ => format!("expected a JSON value, found {}", describe(b)),
                },
            ),
        }
    }

    fn literal(&mut self, word: &'static [u8], v: Value<'a>) -> Result<Value<'a>, Error> {
        if self.bytes[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(v)
        } else {
            self.syntax(
                self.pos,
                format!(
                    "invalid literal; expected `{}`",
                    std::str::from_utf8(word).unwrap_or("?")
                ),
            )
        }
    }

    fn enter(&mut self) -> Result<(), Error> {
        self.depth += 1;
        if self.depth > self.max_depth {
            return self.err(
                ErrorKind::Depth,
                self.pos,
                format!(
                    "arrays and objects nest deeper than {} levels",
                    self.max_depth
                ),
            );
        }
        Ok(())
    }

    fn array(&mut self) -> Result<Value<'a>, Error> {
        self.enter()?;
        self.pos += 1; // [
        let mut items = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            self.depth -= 1;
            return Ok(Value::Array(items));
        }
        loop {
            self.skip_ws();
            let v = self.value()?;
            if BUILD {
                items.push(v);
            }
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    break;
                }
                None => return self.syntax(self.pos, "unterminated array: expected `,` or `]`"),
                Some(b) => {
                    return self.syntax(
                        self.pos,
                        format!("expected `,` or `]` in array, found {}", describe(b)),
                    )
                }
            }
        }
        self.depth -= 1;
        Ok(Value::Array(items))
    }

    fn object(&mut self) -> Result<Value<'a>, Error> {
        self.enter()?;
        self.pos += 1; // {
        let open = self.pos - 1;
        let mut obj = Object::new();
        // While names arrive in strictly increasing order, uniqueness follows
        // from the order; once they do not, the full parse keeps every name
        // in a set and reports a duplicate where it occurs, so errors come in
        // text order. (The check pass leaves that to the full parse.)
        let mut prev: Option<Cow<'a, str>> = None;
        let mut sorted = true;
        let mut seen: HashSet<Cow<'a, str>> = HashSet::new();
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            self.depth -= 1;
            obj.set_span(open, self.pos);
            return Ok(Value::Object(obj));
        }
        loop {
            self.skip_ws();
            let name_at = self.pos;
            match self.peek() {
                Some(b'"') => {}
                None => {
                    return self.syntax(self.pos, "unterminated object: expected a member name")
                }
                Some(b'}') => {
                    return self.syntax(
                        self.pos,
                        "expected a member name, found `}` (a trailing comma?)",
                    )
                }
                Some(b) => {
                    return self.syntax(
                        self.pos,
                        format!(
                            "expected a member name in double quotes, found {}",
                            describe(b)
                        ),
                    )
                }
            }
            let name = self.string()?;
            if sorted {
                if let Some(p) = &prev {
                    match cmp_utf16(p, &name) {
                        Ordering::Less => {}
                        Ordering::Equal => {
                            return self.err(
                                ErrorKind::DuplicateMember,
                                name_at,
                                format!("duplicate member name {:?}", name.as_ref()),
                            )
                        }
                        Ordering::Greater => {
                            self.mark(name_at);
                            sorted = false;
                            if BUILD {
                                seen.extend(obj.names().cloned());
                            } else if !self.stop_at_mark {
                                // The check pass keeps no names while they
                                // are sorted: read them again, once.
                                seen.extend(self.names_between(open, name_at));
                            }
                        }
                    }
                }
            }
            if !sorted && !self.stop_at_mark && !seen.insert(name.clone()) {
                return self.err(
                    ErrorKind::DuplicateMember,
                    name_at,
                    format!("duplicate member name {:?}", name.as_ref()),
                );
            }
            self.skip_ws();
            if self.peek() != Some(b':') {
                return self.syntax(self.pos, "expected `:` after the member name");
            }
            self.pos += 1;
            self.skip_ws();
            let v = self.value()?;
            if BUILD {
                obj.push_unchecked(name.clone(), v);
            }
            if sorted {
                prev = Some(name);
            }
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    break;
                }
                None => return self.syntax(self.pos, "unterminated object: expected `,` or `}`"),
                Some(b) => {
                    return self.syntax(
                        self.pos,
                        format!("expected `,` or `}}` in object, found {}", describe(b)),
                    )
                }
            }
        }
        self.depth -= 1;
        obj.set_span(open, self.pos);
        Ok(Value::Object(obj))
    }

    /// The member names of the object whose `{` is at `open`, up to the
    /// member whose name starts at `end` (text already parsed without error).
    fn names_between(&self, open: usize, end: usize) -> Vec<Cow<'a, str>> {
        let mut p = Parser::<'a, false>::new(
            self.text,
            ParseOptions {
                max_depth: self.max_depth,
            },
        );
        p.depth = self.depth;
        p.pos = open + 1;
        let mut names = Vec::new();
        loop {
            p.skip_ws();
            if p.pos >= end {
                break;
            }
            let Ok(name) = p.string() else { break };
            names.push(name);
            p.skip_ws();
            p.pos += 1; // :
            p.skip_ws();
            if p.value().is_err() {
                break;
            }
            p.skip_ws();
            p.pos += 1; // ,
        }
        names
    }

    /// Parses a string at `self.pos` (the opening quote).
    fn string(&mut self) -> Result<Cow<'a, str>, Error> {
        let open = self.pos;
        let start = open + 1;
        let mut i = start;
        let bytes = self.bytes;
        i = plain_run(bytes, i);
        match bytes.get(i) {
            Some(b'"') => {
                self.pos = i + 1;
                // Slicing at ASCII quote bytes is at char boundaries.
                return Ok(Cow::Borrowed(&self.text[start..i]));
            }
            Some(b'\\') => {}
            Some(_) => return self.control(i),
            None => return self.syntax(open, "unterminated string"),
        }
        // Slow path: the string has escapes.
        let mut out = String::with_capacity(i - start + 16);
        out.push_str(&self.text[start..i]);
        loop {
            match bytes.get(i) {
                Some(b'"') => {
                    self.pos = i + 1;
                    return Ok(Cow::Owned(out));
                }
                Some(b'\\') => {
                    i = self.escape(i, &mut out)?;
                }
                Some(_) => return self.control(i),
                None => return self.syntax(open, "unterminated string"),
            }
            let run = i;
            i = plain_run(bytes, i);
            out.push_str(&self.text[run..i]);
        }
    }

    fn control<T>(&self, at: usize) -> Result<T, Error> {
        self.syntax(
            at,
            format!(
                "raw control character U+{:04X} in a string; write it as an escape",
                self.bytes[at]
            ),
        )
    }

    /// Decodes the escape at `at` (a backslash) into `out`; returns the
    /// offset after it.
    fn escape(&mut self, at: usize, out: &mut String) -> Result<usize, Error> {
        match decode_escape(self.bytes, at) {
            Ok(e) => {
                if !e.canonical {
                    self.mark(at);
                }
                out.push(e.ch);
                Ok(e.next)
            }
            Err(EscapeFault::Unterminated) => self.syntax(at, "unterminated escape"),
            Err(EscapeFault::Invalid(c)) => self.syntax(
                at,
                format!("invalid escape `\\{}`", char::from(c).escape_default()),
            ),
            Err(EscapeFault::Hex(at)) => {
                self.syntax(at, "`\\u` must be followed by four hex digits")
            }
            Err(EscapeFault::LoneSurrogate(unit)) => self.err(
                ErrorKind::LoneSurrogate,
                at,
                format!("escaped lone surrogate \\u{unit:04x}: strings must be valid Unicode"),
            ),
        }
    }

    fn number(&mut self) -> Result<f64, Error> {
        let start = self.pos;
        let t = match number::token(self.bytes, start) {
            Ok(t) => t,
            Err((at, msg)) => return self.syntax(at, msg),
        };
        let i = t.end;
        self.pos = i;
        let text = &self.text[start..i];
        let value: f64 = if let Some(n) = t.small_integer(self.bytes) {
            // Exact: at most 15 digits fit a double's 53-bit mantissa.
            if t.negative && n == 0 {
                self.mark(start); // -0 is written 0
                -0.0
            } else {
                n as f64
            }
        } else {
            let short = number::short(self.bytes, &t);
            // A short decimal is finite and canonical as written: the check
            // pass needs neither its value nor its spelling.
            if short && !BUILD {
                return Ok(0.0);
            }
            let v: f64 = text
                .parse()
                .map_err(|_| Error::new(ErrorKind::Syntax, start, "invalid number"))?;
            if !v.is_finite() {
                return self.err(
                    ErrorKind::NumberRange,
                    start,
                    format!("number {text} is out of the range of a 64-bit double"),
                );
            }
            if !short && self.non_canonical_at.is_none() {
                let mut buf = ryu_js::Buffer::new();
                if buf.format_finite(v) != text {
                    self.mark(start);
                }
            }
            v
        };
        Ok(value)
    }
}

fn describe(b: u8) -> String {
    match b {
        0x20..=0x7E => format!("`{}`", char::from(b)),
        _ => format!("byte 0x{b:02X}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::check_canonical;

    #[test]
    fn plain_run_finds_the_first_stop_byte() {
        let stops: Vec<u8> = (0u8..0x20).chain([b'"', b'\\']).collect();
        for filler in [b'a', 0x7F, 0x80, 0xC3, 0xFF, b'!', b'#', b'[', b']'] {
            for len in 0..70 {
                let mut text = vec![filler; len];
                assert_eq!(plain_run(&text, 0), len, "no stop, filler {filler:#x}");
                for at in 0..len {
                    for &stop in &stops {
                        text[at] = stop;
                        // Stop bytes after the first do not matter.
                        if at + 1 < len {
                            text[len - 1] = b'"';
                        }
                        assert_eq!(plain_run(&text, 0), at, "stop {stop:#x} at {at} of {len}");
                        text = vec![filler; len];
                    }
                }
            }
        }
    }

    fn err(s: &str) -> (&'static str, usize) {
        let e = parse(s.as_bytes()).unwrap_err();
        (e.code(), e.offset())
    }

    fn canon_at(s: &str) -> Option<usize> {
        let a = parse_with(s.as_bytes(), ParseOptions::default())
            .unwrap()
            .non_canonical_at;
        let b = check_canonical(s.as_bytes()).unwrap();
        assert_eq!(a, b, "parse and check disagree on {s}");
        a
    }

    #[test]
    fn rejects_what_json_does_not_allow() {
        assert_eq!(err("[1,]"), ("json_syntax", 3));
        assert_eq!(err("{\"a\":1,}"), ("json_syntax", 7));
        assert_eq!(err("NaN"), ("json_syntax", 0));
        assert_eq!(err("[Infinity]"), ("json_syntax", 1));
        assert_eq!(err("// c\n1"), ("json_syntax", 0));
        assert_eq!(err("01"), ("json_syntax", 0));
        assert_eq!(err("-01"), ("json_syntax", 0));
        assert_eq!(err("1."), ("json_syntax", 2));
        assert_eq!(err(".5"), ("json_syntax", 0));
        assert_eq!(err("1e"), ("json_syntax", 2));
        assert_eq!(err("-"), ("json_syntax", 0));
        assert_eq!(err("'a'"), ("json_syntax", 0));
        assert_eq!(err(""), ("json_syntax", 0));
        assert_eq!(err("  "), ("json_syntax", 2));
        assert_eq!(err("1 2"), ("json_syntax", 2));
        assert_eq!(err("\"a\u{1}\""), ("json_syntax", 2));
        assert_eq!(err("\"abc"), ("json_syntax", 0));
        assert_eq!(err("\"\\x\""), ("json_syntax", 1));
        assert_eq!(err("\"\\u12\""), ("json_syntax", 1));
        assert_eq!(err("tru"), ("json_syntax", 0));
        assert_eq!(err("{1:2}"), ("json_syntax", 1));
        assert_eq!(err("{\"a\" 1}"), ("json_syntax", 5));
        assert_eq!(err("[1 2]"), ("json_syntax", 3));
        assert_eq!(err("+1"), ("json_syntax", 0));
    }

    #[test]
    fn profile_errors() {
        assert_eq!(err("\u{FEFF}{}"), ("json_bom", 0));
        let e = parse(b"[\"a\xff\"]").unwrap_err();
        assert_eq!((e.code(), e.offset()), ("json_invalid_utf8", 3));
        assert_eq!(err("{\"a\":1,\"a\":2}"), ("json_duplicate_member", 7));
        // Duplicate found after the order broke.
        assert_eq!(
            err("{\"b\":1,\"a\":2,\"b\":3}"),
            ("json_duplicate_member", 13)
        );
        assert_eq!(err("{\"a\":1,\"\\u0061\":2}"), ("json_duplicate_member", 7));
        assert_eq!(err("\"\\ud800\""), ("json_lone_surrogate", 1));
        assert_eq!(err("\"\\udc00\""), ("json_lone_surrogate", 1));
        assert_eq!(err("\"\\ud800\\u0041\""), ("json_lone_surrogate", 1));
        assert_eq!(err("1e400"), ("json_number_range", 0));
        assert_eq!(err("-1e309"), ("json_number_range", 0));
        let deep64 = "[".repeat(64) + &"]".repeat(64);
        assert!(parse(deep64.as_bytes()).is_ok());
        let deep65 = "[".repeat(65) + &"]".repeat(65);
        assert_eq!(err(&deep65), ("json_depth", 64));
        let deep_obj = "{\"a\":".repeat(65) + "1" + &"}".repeat(65);
        assert_eq!(err(&deep_obj).0, "json_depth");
    }

    #[test]
    fn duplicate_check_in_check_mode() {
        let e = check_canonical(b"{\"b\":1,\"a\":2,\"b\":3}").unwrap_err();
        assert_eq!(e.code(), "json_duplicate_member");
        let e = check_canonical(b"{\"a\":1,\"a\":2}").unwrap_err();
        assert_eq!(e.code(), "json_duplicate_member");
    }

    #[test]
    fn values() {
        let v = parse(br#" {"a": [1, -2.5e3, true, false, null], "b": "x\u00e9\ud83d\ude00\n"} "#)
            .unwrap();
        let o = v.as_object().unwrap();
        assert_eq!(
            o.get("a").unwrap().as_array().unwrap(),
            &[
                Value::Number(1.0),
                Value::Number(-2500.0),
                Value::Bool(true),
                Value::Bool(false),
                Value::Null
            ]
        );
        assert_eq!(o.get("b").unwrap().as_str(), Some("xé😀\n"));
        assert_eq!(parse(b"5e-324").unwrap(), Value::Number(5e-324));
        assert_eq!(parse(b"1e-400").unwrap(), Value::Number(0.0));
        assert_eq!(
            parse(b"123456789012345678901234567890").unwrap(),
            Value::Number(1.2345678901234568e29)
        );
    }

    #[test]
    fn canonical_detection() {
        assert_eq!(canon_at(r#"{"a":1,"b":[true,null,"x"]}"#), None);
        assert_eq!(canon_at(r#"{"b":1,"a":2}"#), Some(7));
        assert_eq!(canon_at(r#"{"a": 1}"#), Some(5));
        assert_eq!(canon_at(" 1"), Some(0));
        assert_eq!(canon_at("1 "), Some(1));
        assert_eq!(canon_at("1.0"), Some(0));
        assert_eq!(canon_at("-0"), Some(0));
        assert_eq!(canon_at("0"), None);
        assert_eq!(canon_at("1e21"), Some(0));
        assert_eq!(canon_at("1e+21"), None);
        assert_eq!(canon_at("1E+21"), Some(0));
        assert_eq!(canon_at("100"), None);
        assert_eq!(canon_at("1e2"), Some(0));
        assert_eq!(canon_at("0.1"), None);
        assert_eq!(canon_at("1e-7"), None);
        assert_eq!(canon_at("0.0000001"), Some(0));
        assert_eq!(canon_at("9007199254740993"), Some(0));
        assert_eq!(canon_at("9007199254740992"), None);
        assert_eq!(canon_at(r#""\/""#), Some(1));
        assert_eq!(canon_at(r#""\u0041""#), Some(1));
        assert_eq!(canon_at(r#""\u000a""#), Some(1));
        assert_eq!(canon_at(r#""\n\t\"\\\b\f\r""#), None);
        assert_eq!(canon_at(r#""\u001f\u0000""#), None);
        assert_eq!(canon_at(r#""\u001F""#), Some(1));
        assert_eq!(canon_at(r#""\ud83d\ude00""#), Some(1));
        assert_eq!(canon_at("\"\u{7f}\u{2028}\u{2029}\""), None);
        // Names sort by UTF-16 code units.
        assert_eq!(canon_at("{\"\u{1F600}\":1,\"\u{FB33}\":2}"), None);
        assert_eq!(canon_at("{\"\u{FB33}\":1,\"\u{1F600}\":2}"), Some(9));
    }
}
