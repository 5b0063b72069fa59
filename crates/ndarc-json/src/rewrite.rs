//! The one-pass rewriter: a valid, non-canonical text straight to its
//! canonical form, without building the value.
//!
//! [`canonical_form`](crate::canonical_form) used to parse every text it
//! rewrites into a [`Value`](crate::Value) tree (a vector per array and
//! object, a string per escaped string) and serialize that. Most texts that
//! need rewriting differ from their canonical form only in spelling:
//! whitespace, escapes, number notation. Their members are already in
//! order, so each token can be written canonical as it is read. This
//! rewriter does that, and gives up (`false`) on anything else: an error of
//! any kind, members out of order (or duplicated), nesting over the limit.
//! The caller then takes the full parser, which reports the error or sorts
//! the members. So it never decides anything the parser would decide
//! differently: what it writes is what the serializer writes for the
//! parsed value, as the tests and the `canon_roundtrip` fuzz target hold it.

use std::borrow::Cow;
use std::cmp::Ordering;

use crate::number;
use crate::parse::{decode_escape, plain_run, validate};
use crate::ser::{needs_escape, write_escape};
use crate::value::cmp_utf16;

/// Appends the canonical form of the JSON text `bytes` to `out` when the
/// text is valid, nests at most `max_depth` deep and every object's members
/// are in strictly ascending order; `false` otherwise, and `out` is then
/// left as it was.
pub(crate) fn rewrite(bytes: &[u8], max_depth: usize, out: &mut Vec<u8>) -> bool {
    let base = out.len();
    let Ok(text) = validate(bytes) else {
        return false;
    };
    let mut w = Rewriter {
        text,
        bytes,
        pos: 0,
        out,
    };
    w.ws();
    let done = w.value(max_depth).is_some() && {
        w.ws();
        w.pos == bytes.len()
    };
    if !done {
        out.truncate(base);
    }
    done
}

struct Rewriter<'a, 'o> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    out: &'o mut Vec<u8>,
}

impl<'a> Rewriter<'a, '_> {
    #[inline]
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    /// Skips JSON whitespace.
    #[inline]
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    fn value(&mut self, depth_left: usize) -> Option<()> {
        match self.peek()? {
            b'{' => self.object(depth_left.checked_sub(1)?),
            b'[' => self.array(depth_left.checked_sub(1)?),
            b'"' => self.string(false).map(|_| ()),
            b'-' | b'0'..=b'9' => self.number(),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            _ => None,
        }
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        if !self.bytes[self.pos..].starts_with(word) {
            return None;
        }
        self.pos += word.len();
        self.out.extend_from_slice(word);
        Some(())
    }

    fn array(&mut self, inner: usize) -> Option<()> {
        self.pos += 1;
        self.out.push(b'[');
        self.ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            self.out.push(b']');
            return Some(());
        }
        loop {
            self.ws();
            self.value(inner)?;
            self.ws();
            match self.peek()? {
                b',' => self.out.push(b','),
                b']' => {
                    self.pos += 1;
                    self.out.push(b']');
                    return Some(());
                }
                _ => return None,
            }
            self.pos += 1;
        }
    }

    fn object(&mut self, inner: usize) -> Option<()> {
        self.pos += 1;
        self.out.push(b'{');
        self.ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            self.out.push(b'}');
            return Some(());
        }
        let mut prev: Option<Cow<'a, str>> = None;
        loop {
            self.ws();
            if self.peek() != Some(b'"') {
                return None;
            }
            let name = self.string(true)?;
            // Strictly ascending: in canonical order, and unique. Anything
            // else is the full parser's to sort or to report.
            if let Some(p) = &prev {
                if cmp_utf16(p, &name) != Ordering::Less {
                    return None;
                }
            }
            self.ws();
            if self.peek() != Some(b':') {
                return None;
            }
            self.pos += 1;
            self.out.push(b':');
            self.ws();
            self.value(inner)?;
            prev = Some(name);
            self.ws();
            match self.peek()? {
                b',' => self.out.push(b','),
                b'}' => {
                    self.pos += 1;
                    self.out.push(b'}');
                    return Some(());
                }
                _ => return None,
            }
            self.pos += 1;
        }
    }

    /// Rewrites the string at `self.pos` (its opening quote) as
    /// `JSON.stringify` writes its value. With `name`, also returns the
    /// value (to order member names); otherwise an empty string.
    fn string(&mut self, name: bool) -> Option<Cow<'a, str>> {
        let bytes = self.bytes;
        let start = self.pos + 1;
        let mut i = plain_run(bytes, start);
        // A plain run holds no byte that the serializer escapes.
        self.out.push(b'"');
        self.out.extend_from_slice(&bytes[start..i]);
        match bytes.get(i)? {
            b'"' => {
                self.pos = i + 1;
                self.out.push(b'"');
                // Both ends at ASCII quotes: character boundaries.
                return Some(if name {
                    Cow::Borrowed(self.text.get(start..i)?)
                } else {
                    Cow::Borrowed("")
                });
            }
            b'\\' => {}
            _ => return None, // a raw control character
        }
        let mut value = String::new();
        if name {
            value.push_str(self.text.get(start..i)?);
        }
        loop {
            match bytes.get(i)? {
                b'"' => break,
                b'\\' => {
                    let (c, next) = self.escape(i)?;
                    write_char(c, self.out);
                    if name {
                        value.push(c);
                    }
                    i = next;
                }
                _ => return None,
            }
            let run = i;
            i = plain_run(bytes, i);
            self.out.extend_from_slice(&bytes[run..i]);
            if name {
                value.push_str(self.text.get(run..i)?);
            }
        }
        self.pos = i + 1;
        self.out.push(b'"');
        Some(Cow::Owned(value))
    }

    /// The character of the escape at `at` (a backslash), and the offset
    /// after it; `None` for an invalid escape or a lone surrogate.
    fn escape(&self, at: usize) -> Option<(char, usize)> {
        let e = decode_escape(self.bytes, at).ok()?;
        Some((e.ch, e.next))
    }

    fn number(&mut self) -> Option<()> {
        let b = self.bytes;
        let start = self.pos;
        let t = number::token(b, start).ok()?;
        self.pos = t.end;
        if let Some(n) = t.small_integer(b) {
            // Exact; `-0` is written 0.
            number::write(n as f64, self.out);
            return Some(());
        }
        if number::short(b, &t) {
            // Written as ECMAScript writes its value.
            self.out.extend_from_slice(&b[start..t.end]);
            return Some(());
        }
        let v: f64 = self.text.get(start..t.end)?.parse().ok()?;
        if !v.is_finite() {
            return None;
        }
        number::write(v, self.out);
        Some(())
    }
}

/// Appends `c` as `JSON.stringify` writes it inside a string (see
/// [`write_string`](crate::write_string)).
#[inline]
fn write_char(c: char, out: &mut Vec<u8>) {
    if needs_escape(c) {
        write_escape(c as u8, out);
    } else {
        let mut buf = [0u8; 4];
        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse_with, to_canonical_vec, ParseOptions, MAX_DEPTH};

    /// The rewriter's output, or `None` when it gives up.
    fn one_pass(text: &str) -> Option<String> {
        let mut out = b"keep".to_vec();
        let ok = rewrite(text.as_bytes(), MAX_DEPTH, &mut out);
        assert!(out.starts_with(b"keep"));
        if !ok {
            assert_eq!(out, b"keep", "{text}: output left behind");
            return None;
        }
        Some(String::from_utf8(out[4..].to_vec()).unwrap())
    }

    /// Where the rewriter writes, it writes what the serializer writes.
    fn agrees(text: &str) -> Option<String> {
        let got = one_pass(text);
        if let Some(g) = &got {
            let parsed = parse_with(text.as_bytes(), ParseOptions::default()).unwrap();
            assert_eq!(g.as_bytes(), to_canonical_vec(&parsed.value), "{text}");
        }
        got
    }

    #[test]
    fn rewrites_spelling() {
        for (text, want) in [
            (
                r#" { "a" : [ 1.0 , -0, 1E21, 0.000001, 1e-7, 5e-324 ] , "b" : null } "#,
                r#"{"a":[1,0,1e+21,0.000001,1e-7,5e-324],"b":null}"#,
            ),
            (
                r#"["\u00e9\u20AC\ud83d\ude00", "\/\"\\\b\f\n\r\t\u0001\u001F\u007f", "\u2028"]"#,
                "[\"é€😀\",\"/\\\"\\\\\\b\\f\\n\\r\\t\\u0001\\u001f\u{7f}\",\"\u{2028}\"]",
            ),
            (
                r#"{"\u0061": true, "b\u00e9": false, "c": "x"}"#,
                r#"{"a":true,"bé":false,"c":"x"}"#,
            ),
            (
                "[13.857142857142858, 0.30000000000000004, 4.50, 1.7976931348623157e308, 100]",
                "[13.857142857142858,0.30000000000000004,4.5,1.7976931348623157e+308,100]",
            ),
            ("\t\"plain\"\n", r#""plain""#),
            ("[{}, [], {\"a\": {}}]", r#"[{},[],{"a":{}}]"#),
        ] {
            assert_eq!(agrees(text).as_deref(), Some(want), "{text}");
        }
    }

    #[test]
    fn leaves_to_the_parser_what_it_must_decide() {
        for text in [
            // Members out of order, or twice (also when escapes hide it).
            r#"{"b":1,"a":2}"#,
            r#"{"a":1,"a":2}"#,
            r#"{"a":1,"\u0061":2}"#,
            // UTF-16 order differs from code point order above the BMP.
            "{\"\u{fb33}\":1,\"\u{1f600}\":2}",
            // Errors.
            r#"{"a":1,}"#,
            r#"[1,]"#,
            r#"[1 2]"#,
            r#"{"a" 1}"#,
            r#"{1:2}"#,
            r#""\ud800""#,
            r#""\udc00""#,
            r#""\ud800\u0041""#,
            r#""\x""#,
            r#""\u12G4""#,
            "\"a\u{1}\"",
            r#""unterminated"#,
            "[1e400]",
            "[-]",
            "[01]",
            "[1.]",
            "nul",
            "[true false]",
            "1 2",
            "",
            " ",
            "\u{feff}1",
        ] {
            assert_eq!(agrees(text), None, "{text}");
        }
        assert!(!rewrite(b"\"\xff\"", MAX_DEPTH, &mut Vec::new()));
    }

    #[test]
    fn depth_limit_as_the_parser_has_it() {
        let nest = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(agrees(&nest(MAX_DEPTH)).is_some());
        assert_eq!(agrees(&nest(MAX_DEPTH + 1)), None);
        let mut out = Vec::new();
        assert!(rewrite(b"[[ ]]", 2, &mut out));
        assert!(!rewrite(b"[[ ]]", 1, &mut out));
        assert!(rewrite(b" 1 ", 0, &mut out));
    }
}
