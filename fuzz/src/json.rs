//! JSON values for the canonicalization targets: an `Arbitrary` value,
//! equality that ignores member order, and re-spelled renderings.

use std::borrow::Cow;

use arbitrary::{Arbitrary, Result, Unstructured};
use ndarc_json::{Object, OwnedValue, Value};

/// Numbers worth hitting on purpose: zero signs, the safe-integer edge,
/// where ECMAScript switches to exponent form, subnormals, the extremes.
pub const SPECIAL_NUMBERS: &[f64] = &[
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.1,
    0.5,
    1.5,
    100.0,
    1e15,
    1e16,
    123456789012345680.0,
    1e20,
    1e21,
    1e-6,
    1e-7,
    1.23e-7,
    0.000001,
    9007199254740991.0,
    9007199254740992.0,
    9007199254740993.0,
    -9007199254740991.0,
    333333333.33333329,
    4.5,
    0.002,
    1e-27,
    1e30,
    5e-324,
    2.2250738585072014e-308,
    2.225073858507201e-308,
    f64::MIN_POSITIVE,
    f64::MAX,
    f64::MIN,
    f64::EPSILON,
];

/// An arbitrary JSON value under the archive's profile: unique member
/// names, finite numbers, valid strings. Nesting goes up to 66 (beyond
/// the profile's 64) so that the depth limit is exercised too.
#[derive(Debug, Clone)]
pub struct ArbValue(pub OwnedValue);

/// How deep [`ArbValue`] nests at most.
pub const ARB_MAX_DEPTH: usize = 66;

impl<'a> Arbitrary<'a> for ArbValue {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        // The first byte sets the depth budget: mostly shallow, sometimes
        // at the limit.
        let budget = match u.arbitrary::<u8>()? {
            0..=223 => 6,
            224..=247 => 16,
            _ => ARB_MAX_DEPTH,
        };
        Ok(ArbValue(arb_value(u, budget)?))
    }
}

fn arb_value(u: &mut Unstructured<'_>, budget: usize) -> Result<OwnedValue> {
    let kinds = if budget == 0 { 4 } else { 6 };
    Ok(match u.choose_index(kinds)? {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        2 => Value::Number(arb_number(u)?),
        3 => Value::String(Cow::Owned(arb_string(u)?)),
        4 => {
            let n = u.arbitrary_len::<u8>()?.min(8);
            let mut items = Vec::with_capacity(n);
            // A single-element chain reaches the budget cheaply.
            for _ in 0..n {
                items.push(arb_value(u, budget - 1)?);
            }
            Value::Array(items)
        }
        _ => {
            let n = u.arbitrary_len::<u8>()?.min(8);
            let mut o = Object::new();
            for _ in 0..n {
                let name = arb_string(u)?;
                let v = arb_value(u, budget - 1)?;
                if !o.contains_key(&name) {
                    o.insert(name, v);
                }
            }
            Value::Object(o)
        }
    })
}

/// A finite double.
pub fn arb_number(u: &mut Unstructured<'_>) -> Result<f64> {
    Ok(match u.choose_index(4)? {
        0 => f64::from(u.arbitrary::<i32>()?),
        1 => *u.choose(SPECIAL_NUMBERS)?,
        2 => {
            // A decimal with a few digits and a modest exponent.
            let m = f64::from(u.arbitrary::<i32>()?);
            let e = u.int_in_range(-30i32..=30)?;
            let n = m * 10f64.powi(e);
            if n.is_finite() {
                n
            } else {
                0.0
            }
        }
        _ => {
            let n = f64::from_bits(u.arbitrary()?);
            if n.is_finite() {
                n
            } else {
                1.0
            }
        }
    })
}

/// A string biased towards what canonical JSON treats specially: control
/// characters, quotes and backslashes, `/`, U+007F, U+2028/9, the BMP
/// private-use area and characters above U+FFFF (where UTF-16 order and
/// code-point order differ).
pub fn arb_string(u: &mut Unstructured<'_>) -> Result<String> {
    if u.ratio(1u8, 4u8)? {
        return Ok(<&str>::arbitrary(u)?.to_string());
    }
    let n = u.arbitrary_len::<u16>()?.min(12);
    let mut s = String::with_capacity(n * 2);
    for _ in 0..n {
        let c = match u.choose_index(10)? {
            0 => u.int_in_range(0x20u32..=0x7E)?,
            1 => u.int_in_range(0u32..=0x1F)?,
            2 => *u.choose(&[0x22u32, 0x5C, 0x2F, 0x7F, 0x2028, 0x2029, 0xFEFF])?,
            3 => u.int_in_range(0x80u32..=0x7FF)?,
            4 => u.int_in_range(0x800u32..=0xD7FF)?,
            5 => u.int_in_range(0xE000u32..=0xFFFF)?,
            6 => u.int_in_range(0x10000u32..=0x10FFFF)?,
            7 => *u.choose(&[
                0x1F600u32, 0xFB33, 0x20AC, 0xE9, 0xF6, 0x80, 0x10000, 0x10FFFF,
            ])?,
            _ => u.int_in_range(0x61u32..=0x64)?, // a-d: collisions and prefixes
        };
        s.push(char::from_u32(c).unwrap_or('?'));
    }
    Ok(s)
}

/// Equality of JSON values with object members compared as sets (names
/// are unique), numbers as doubles (so `-0` equals `0`).
pub fn same(a: &Value<'_>, b: &Value<'_>) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => x == y,
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => false,
    }
}

/// Nesting depth: the outermost array or object is 1; scalars add nothing.
pub fn depth(v: &Value<'_>) -> usize {
    match v {
        Value::Array(a) => 1 + a.iter().map(depth).max().unwrap_or(0),
        Value::Object(o) => 1 + o.iter().map(|(_, v)| depth(v)).max().unwrap_or(0),
        _ => 0,
    }
}

/// Writes `v` as valid JSON text spelled as the input chooses: whitespace
/// between tokens, members in any order, strings with optional escapes,
/// numbers in other notations of the same decimal. When the input runs
/// out, the rest is written canonically (sorted members, no whitespace).
pub fn spell(v: &Value<'_>, u: &mut Unstructured<'_>, out: &mut Vec<u8>) {
    ws(u, out);
    spell_inner(v, u, out);
    ws(u, out);
}

fn flag(u: &mut Unstructured<'_>) -> u8 {
    u.arbitrary::<u8>().unwrap_or(0)
}

fn ws(u: &mut Unstructured<'_>, out: &mut Vec<u8>) {
    let b = flag(u);
    // Mostly none.
    if b < 0xC0 {
        return;
    }
    for i in 0..=(b & 3) {
        out.push([b' ', b'\t', b'\n', b'\r'][usize::from((b >> (2 + i)) & 3)]);
    }
}

fn spell_inner(v: &Value<'_>, u: &mut Unstructured<'_>, out: &mut Vec<u8>) {
    match v {
        Value::Null | Value::Bool(_) => ndarc_json::write_canonical(v, out),
        Value::Number(n) => spell_number(*n, flag(u), out),
        Value::String(s) => spell_string(s, u, out),
        Value::Array(items) => {
            out.push(b'[');
            ws(u, out);
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    ws(u, out);
                    out.push(b',');
                    ws(u, out);
                }
                spell_inner(item, u, out);
            }
            ws(u, out);
            out.push(b']');
        }
        Value::Object(o) => {
            // Start from name order (what the canonical form writes), then
            // let the input swap members.
            let mut members = o.sorted();
            for i in (1..members.len()).rev() {
                let j = usize::from(flag(u)) % (i + 1);
                members.swap(i, j);
            }
            out.push(b'{');
            ws(u, out);
            for (i, (name, value)) in members.into_iter().enumerate() {
                if i > 0 {
                    ws(u, out);
                    out.push(b',');
                    ws(u, out);
                }
                spell_string(name, u, out);
                ws(u, out);
                out.push(b':');
                ws(u, out);
                spell_inner(value, u, out);
            }
            ws(u, out);
            out.push(b'}');
        }
    }
}

/// Writes a string, escaping characters as the input chooses (control
/// characters, `"` and `\` always).
pub fn spell_string(s: &str, u: &mut Unstructured<'_>, out: &mut Vec<u8>) {
    // Mode 0 (most inputs): canonical; otherwise per character.
    if flag(u) < 0xA0 {
        ndarc_json::write_string(s, out);
        return;
    }
    out.push(b'"');
    for c in s.chars() {
        let f = flag(u);
        let must = (c as u32) < 0x20 || c == '"' || c == '\\';
        if !must && f < 0x80 {
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            continue;
        }
        let short = match c {
            '"' => Some(b'"'),
            '\\' => Some(b'\\'),
            '/' => Some(b'/'),
            '\u{8}' => Some(b'b'),
            '\u{c}' => Some(b'f'),
            '\n' => Some(b'n'),
            '\r' => Some(b'r'),
            '\t' => Some(b't'),
            _ => None,
        };
        match short {
            Some(e) if f & 1 == 0 => out.extend_from_slice(&[b'\\', e]),
            _ => {
                let upper = f & 2 != 0;
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    if upper {
                        out.extend_from_slice(format!("\\u{:04X}", unit).as_bytes());
                    } else {
                        out.extend_from_slice(format!("\\u{:04x}", unit).as_bytes());
                    }
                }
            }
        }
    }
    out.push(b'"');
}

/// Writes `n` in a notation chosen by `how`: canonical, Rust's shortest
/// exponent form (`1.5e300`, `E`, `e+`), Rust's plain form, trailing
/// zeros, or the decimal point moved against the exponent. Every form is
/// the same decimal, so it parses to the same double.
pub fn spell_number(n: f64, how: u8, out: &mut Vec<u8>) {
    let text = match how % 8 {
        0 | 1 => ndarc_json::number::format(n),
        2 => format!("{n:e}"),
        3 => format!("{n:E}"),
        4 => format!("{n:e}").replace('e', "e+").replace("e+-", "e-"),
        5 => format!("{n}"),
        6 => {
            // Trailing zeros on the mantissa.
            let e = format!("{n:e}");
            let (m, x) = e.split_once('e').unwrap_or((&e, "0"));
            let zeros = "0".repeat(usize::from(how >> 3 & 7) + 1);
            if m.contains('.') {
                format!("{m}{zeros}e{x}")
            } else {
                format!("{m}.{zeros}e{x}")
            }
        }
        _ => {
            // All mantissa digits as an integer, the exponent adjusted:
            // 1.2345e10 -> 12345e6.
            let e = format!("{n:e}");
            let (m, x) = e.split_once('e').unwrap_or((&e, "0"));
            let x: i64 = x.parse().unwrap_or(0);
            let (sign, m) = m.strip_prefix('-').map_or(("", m), |m| ("-", m));
            let (int, frac) = m.split_once('.').unwrap_or((m, ""));
            let digits = format!("{int}{frac}");
            let digits = digits.trim_start_matches('0');
            let digits = if digits.is_empty() { "0" } else { digits };
            format!("{sign}{digits}e{}", x - frac.len() as i64)
        }
    };
    out.extend_from_slice(text.as_bytes());
}
