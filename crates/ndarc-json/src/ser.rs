//! The RFC 8785 serializer.

use crate::number;
use crate::value::{cmp_utf16, Value};

/// Appends the canonical (RFC 8785) form of `v` to `out`.
pub fn write_canonical(v: &Value<'_>, out: &mut Vec<u8>) {
    match v {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => number::write(*n, out),
        Value::String(s) => write_string(s, out),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical(item, out);
            }
            out.push(b']');
        }
        Value::Object(o) => write_canonical_object(o, out),
    }
}

/// Appends the canonical form of an object to `out` (as
/// [`write_canonical`] of `Value::Object`, without building that value).
pub fn write_canonical_object(o: &crate::value::Object<'_>, out: &mut Vec<u8>) {
    {
        {
            out.push(b'{');
            let in_order = o
                .keys()
                .zip(o.keys().skip(1))
                .all(|(a, b)| cmp_utf16(a, b).is_lt());
            let write_member = |i: usize, name: &str, value: &Value<'_>, out: &mut Vec<u8>| {
                if i > 0 {
                    out.push(b',');
                }
                write_string(name, out);
                out.push(b':');
                write_canonical(value, out);
            };
            if in_order {
                for (i, (name, value)) in o.iter().enumerate() {
                    write_member(i, name, value, out);
                }
            } else {
                for (i, (name, value)) in o.sorted().into_iter().enumerate() {
                    write_member(i, name, value, out);
                }
            }
            out.push(b'}');
        }
    }
}

/// The canonical form of `v` as bytes.
pub fn to_canonical_vec(v: &Value<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    write_canonical(v, &mut out);
    out
}

/// The canonical form of `v` as a string.
pub fn to_canonical_string(v: &Value<'_>) -> String {
    // The serializer writes only UTF-8: copies of valid strings and ASCII.
    String::from_utf8(to_canonical_vec(v)).unwrap_or_default()
}

/// Bytes that a string in canonical text holds only escaped: the C0
/// controls, `"` and `\`. The parser's plain runs stop at the same bytes.
pub(crate) static NEEDS_ESCAPE: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = true;
        i += 1;
    }
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t
};

/// Appends `s` as a JSON string escaped exactly as ECMAScript
/// `JSON.stringify` does: `"` and `\` with a backslash, the five C0 controls
/// that have short escapes as `\b \t \n \f \r`, other C0 controls as
/// `\u00xx` in lowercase hex, everything else (U+007F, U+2028, U+2029
/// included) raw.
pub fn write_string(s: &str, out: &mut Vec<u8>) {
    write_string_bytes(s.as_bytes(), out);
}

/// [`write_string`] of bytes not yet known to be UTF-8, for a writer that
/// checks a whole record once rather than each string (`pack`'s rows):
/// every escape replaces an ASCII byte with ASCII bytes and every other
/// byte is copied, so the output between its quotes is UTF-8 exactly when
/// `bytes` is, and a check of the output is a check of the input.
pub fn write_string_bytes(bytes: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    let mut run = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if !NEEDS_ESCAPE[b as usize] {
            continue;
        }
        out.extend_from_slice(&bytes[run..i]);
        run = i + 1;
        write_escape(b, out);
    }
    out.extend_from_slice(&bytes[run..]);
    out.push(b'"');
}

/// Whether canonical text escapes the character `c` inside a string.
#[inline]
pub(crate) fn needs_escape(c: char) -> bool {
    c.is_ascii() && NEEDS_ESCAPE[c as usize]
}

/// Appends the escape canonical text (`JSON.stringify`) writes for the
/// byte `b`, one of those [`needs_escape`] names: the one place where that
/// spelling is decided, for the serializer and the one-pass rewriter.
#[inline]
pub(crate) fn write_escape(b: u8, out: &mut Vec<u8>) {
    match b {
        b'"' => out.extend_from_slice(b"\\\""),
        b'\\' => out.extend_from_slice(b"\\\\"),
        0x08 => out.extend_from_slice(b"\\b"),
        0x09 => out.extend_from_slice(b"\\t"),
        0x0A => out.extend_from_slice(b"\\n"),
        0x0C => out.extend_from_slice(b"\\f"),
        0x0D => out.extend_from_slice(b"\\r"),
        _ => {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(b >> 4)]);
            out.push(HEX[usize::from(b & 15)]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse;

    fn canon(s: &str) -> String {
        to_canonical_string(&parse(s.as_bytes()).unwrap())
    }

    #[test]
    fn member_order_by_utf16() {
        // RFC 8785 §3.2.3 example names.
        let input = "{\"\\u20ac\":\"Euro Sign\",\"\\r\":\"Carriage Return\",\"\\ufb33\":\"Hebrew Letter Dalet With Dagesh\",\"1\":\"One\",\"\\ud83d\\ude00\":\"Emoji: Grinning Face\",\"\\u0080\":\"Control\",\"\\u00f6\":\"Latin Small Letter O With Diaeresis\"}";
        let expected = "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u{80}\":\"Control\",\"ö\":\"Latin Small Letter O With Diaeresis\",\"€\":\"Euro Sign\",\"😀\":\"Emoji: Grinning Face\",\"\u{FB33}\":\"Hebrew Letter Dalet With Dagesh\"}";
        assert_eq!(canon(input), expected);
    }

    #[test]
    fn string_escapes() {
        let all_c0: String = (0u8..0x20).map(char::from).collect();
        let v = Value::String(all_c0.into());
        assert_eq!(
            to_canonical_string(&v),
            "\"\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\b\\t\\n\\u000b\\f\\r\\u000e\\u000f\\u0010\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017\\u0018\\u0019\\u001a\\u001b\\u001c\\u001d\\u001e\\u001f\""
        );
        assert_eq!(canon(r#""a\"b\\c\/d""#), r#""a\"b\\c/d""#);
        assert_eq!(
            canon("\"\u{7f}\u{2028}\u{2029}\""),
            "\"\u{7f}\u{2028}\u{2029}\""
        );
        assert_eq!(canon(r#""\u00e9\u20AC""#), "\"é€\"");
    }

    #[test]
    fn numbers_and_structure() {
        assert_eq!(
            canon(
                r#"[ 0, -0, 1E21, 1e-7, 123e-9, 5e-324, 1.7976931348623157e308, 9007199254740992, 1.0, 200.00 ]"#
            ),
            "[0,0,1e+21,1e-7,1.23e-7,5e-324,1.7976931348623157e+308,9007199254740992,1,200]"
        );
        assert_eq!(
            canon(" { \"b\" : [ ] , \"a\" : { } } "),
            r#"{"a":{},"b":[]}"#
        );
        // RFC 8785 §3.2.2 sample.
        assert_eq!(
            canon(
                r#"{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001], "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/", "literals": [null, true, false]}"#
            ),
            r#"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}"#
        );
    }
}
