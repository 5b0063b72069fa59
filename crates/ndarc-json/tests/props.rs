//! Property tests of the parser, the canonical check and the RFC 8785
//! serializer over arbitrary values, their many spellings and arbitrary
//! bytes.

use std::borrow::Cow;
use std::fmt::Write as _;

use ndarc_json::{
    canonicalize, check_canonical, explain_non_canonical, parse, parse_with, to_canonical_vec,
    validate_with, Object, OwnedValue, ParseOptions, Value,
};
use proptest::prelude::*;

// ---------------------------------------------------------------- strategies

/// Characters that exercise escaping and name order: quotes, backslash, C0
/// controls, DEL, the line separators, `/`, BMP characters on either side of
/// the surrogate range and astral ones.
const SPECIAL: &[char] = &[
    '"',
    '\\',
    '/',
    '\0',
    '\u{1}',
    '\u{8}',
    '\t',
    '\n',
    '\u{b}',
    '\u{c}',
    '\r',
    '\u{1f}',
    '\u{7f}',
    '\u{80}',
    'é',
    '\u{2028}',
    '\u{2029}',
    '€',
    '\u{d7ff}',
    '\u{e000}',
    '\u{fb33}',
    '\u{feff}',
    '\u{ffff}',
    '\u{10000}',
    '😀',
    '𝄞',
    '\u{10ffff}',
    'a',
    'b',
    'A',
    '0',
    ' ',
];

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        2 => any::<String>(),
        3 => prop::collection::vec(
            prop_oneof![3 => prop::sample::select(SPECIAL), 1 => any::<char>()],
            0..12
        )
        .prop_map(String::from_iter),
        1 => "[a-c]{0,3}",
    ]
}

fn number() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<u64>()
            .prop_map(f64::from_bits)
            .prop_filter("finite", |f| f.is_finite()),
        prop::sample::select(vec![
            0.0,
            -0.0,
            5e-324,
            -5e-324,
            f64::MIN_POSITIVE,
            2.225073858507201e-308,
            f64::MAX,
            f64::MIN,
            1e21,
            1e-7,
            9007199254740992.0,
            0.1 + 0.2,
        ]),
        (-1e6f64..1e6f64),
        any::<i64>().prop_map(|i| i as f64),
        (-1_000_000i64..1_000_000).prop_map(|i| i as f64),
        (any::<i32>(), -30i32..30).prop_map(|(m, e)| format!("{m}e{e}").parse().unwrap_or(0.0)),
    ]
}

fn leaf() -> impl Strategy<Value = OwnedValue> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number().prop_map(Value::Number),
        text().prop_map(|s| Value::String(Cow::Owned(s))),
    ]
}

/// Arbitrary values: nesting at most 10, objects with unique names in an
/// arbitrary order.
fn value() -> impl Strategy<Value = OwnedValue> {
    leaf().prop_recursive(10, 256, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::btree_map(text(), inner, 0..8)
                .prop_map(|m| m.into_iter().collect::<Vec<_>>())
                .prop_shuffle()
                .prop_map(|members| {
                    Value::Object(Object::from_members(
                        members
                            .into_iter()
                            .map(|(n, v)| (Cow::Owned(n), v))
                            .collect(),
                    ))
                }),
        ]
    })
}

// ----------------------------------------------------------------- helpers

/// Equality with object members compared as sets (`==` on `Value` compares
/// members in order) and numbers by value (`-0 == 0`).
fn same_value(a: &Value<'_>, b: &Value<'_>) -> bool {
    match (a, b) {
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_value(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(name, v)| y.get(name).is_some_and(|w| same_value(v, w)))
        }
        _ => a == b,
    }
}

/// A small deterministic generator for rendering choices.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }
}

/// How to spell a value other than canonically.
#[derive(Debug, Clone, Copy)]
struct Style {
    /// Random whitespace between tokens.
    whitespace: bool,
    /// Indented, one member or item per line.
    pretty: bool,
    /// Members in a random order.
    shuffle: bool,
    /// Needless `\u` and `\/` escapes, upper-case hex.
    escapes: bool,
    /// Numbers in exponent form, with trailing zeros, `E`.
    numbers: bool,
}

fn style() -> impl Strategy<Value = Style> {
    (
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(whitespace, pretty, shuffle, escapes, numbers)| Style {
            whitespace,
            pretty,
            shuffle,
            escapes,
            numbers,
        })
}

struct Renderer {
    style: Style,
    rng: Rng,
    out: String,
}

impl Renderer {
    fn ws(&mut self) {
        if self.style.whitespace {
            for _ in 0..self.rng.below(3) {
                let c = [' ', '\t', '\n', '\r'][self.rng.below(4)];
                self.out.push(c);
            }
        }
    }

    fn newline(&mut self, indent: usize) {
        if self.style.pretty {
            self.out.push('\n');
            for _ in 0..indent {
                self.out.push_str("  ");
            }
        }
    }

    fn hex4(&mut self, unit: u32) {
        if self.style.escapes && self.rng.one_in(2) {
            let _ = write!(self.out, "\\u{unit:04X}");
        } else {
            let _ = write!(self.out, "\\u{unit:04x}");
        }
    }

    fn string(&mut self, s: &str) {
        self.out.push('"');
        for c in s.chars() {
            let escape_anyway = self.style.escapes && self.rng.one_in(3);
            match c {
                '"' => self.out.push_str("\\\""),
                '\\' => self.out.push_str("\\\\"),
                '/' if escape_anyway => self.out.push_str("\\/"),
                '\u{8}' | '\t' | '\n' | '\u{c}' | '\r' if !escape_anyway => {
                    let short = match c {
                        '\u{8}' => "\\b",
                        '\t' => "\\t",
                        '\n' => "\\n",
                        '\u{c}' => "\\f",
                        _ => "\\r",
                    };
                    self.out.push_str(short);
                }
                c if u32::from(c) < 0x20 || escape_anyway => {
                    let mut units = [0u16; 2];
                    for unit in c.encode_utf16(&mut units) {
                        self.hex4(u32::from(*unit));
                    }
                }
                c => self.out.push(c),
            }
        }
        self.out.push('"');
    }

    fn number(&mut self, n: f64) {
        let mut buf = Vec::new();
        ndarc_json::number::write(n, &mut buf);
        let canonical = String::from_utf8(buf).unwrap_or_default();
        if !self.style.numbers {
            self.out.push_str(&canonical);
            return;
        }
        let spelled = match self.rng.below(5) {
            0 => format!("{n:e}"),
            1 => format!("{n:E}"),
            // Rust writes the shortest round-trip digits without exponent.
            2 => format!("{n}"),
            3 if !canonical.contains(['.', 'e']) => format!("{canonical}.000"),
            3 => canonical.replace('e', "E"),
            _ => canonical,
        };
        self.out.push_str(&spelled);
    }

    fn value(&mut self, v: &Value<'_>, indent: usize) {
        match v {
            Value::Null => self.out.push_str("null"),
            Value::Bool(b) => self.out.push_str(if *b { "true" } else { "false" }),
            Value::Number(n) => self.number(*n),
            Value::String(s) => self.string(s),
            Value::Array(items) => {
                self.out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.out.push(',');
                    }
                    self.newline(indent + 1);
                    self.ws();
                    self.value(item, indent + 1);
                    self.ws();
                }
                if !items.is_empty() {
                    self.newline(indent);
                }
                self.out.push(']');
            }
            Value::Object(o) => {
                let mut members: Vec<(&str, &Value<'_>)> = o.iter().collect();
                if self.style.shuffle {
                    for i in (1..members.len()).rev() {
                        let j = self.rng.below(i + 1);
                        members.swap(i, j);
                    }
                }
                self.out.push('{');
                for (i, (name, item)) in members.into_iter().enumerate() {
                    if i > 0 {
                        self.out.push(',');
                    }
                    self.newline(indent + 1);
                    self.ws();
                    self.string(name);
                    self.ws();
                    self.out.push(':');
                    if self.style.pretty {
                        self.out.push(' ');
                    }
                    self.ws();
                    self.value(item, indent + 1);
                    self.ws();
                }
                if !o.is_empty() {
                    self.newline(indent);
                }
                self.out.push('}');
            }
        }
    }
}

fn render(v: &Value<'_>, style: Style, seed: u64) -> String {
    let mut r = Renderer {
        style,
        rng: Rng(seed | 1),
        out: String::new(),
    };
    r.ws();
    r.value(v, 0);
    r.ws();
    r.out
}

/// Parse, check and canonicalize must agree on any input: the same error
/// (code and offset), or the same canonical verdict.
fn agree(bytes: &[u8]) -> Result<(), TestCaseError> {
    let parsed = parse_with(bytes, ParseOptions::default());
    let checked = check_canonical(bytes);
    // The check without a tree gives parse_with's verdict exactly.
    let validated = validate_with(bytes, ParseOptions::default());
    match (&parsed, &validated) {
        (Err(a), Err(b)) => {
            prop_assert_eq!(
                (a.code(), a.offset(), a.message()),
                (b.code(), b.offset(), b.message())
            )
        }
        (Ok(p), Ok(at)) => prop_assert_eq!(p.non_canonical_at, *at),
        _ => prop_assert!(false, "parse {:?} but validate {:?}", parsed, validated),
    }
    let mut out = Vec::new();
    let canon = canonicalize(bytes, &mut out);
    match (&parsed, &checked, &canon) {
        (Err(a), Err(b), Err(c)) => {
            prop_assert_eq!((a.code(), a.offset()), (b.code(), b.offset()));
            prop_assert_eq!((a.code(), a.offset()), (c.code(), c.offset()));
            prop_assert!(a.offset() <= bytes.len());
        }
        (Ok(p), Ok(at), Ok(copied)) => {
            prop_assert_eq!(p.non_canonical_at, *at);
            prop_assert_eq!(at.is_none(), *copied);
            prop_assert_eq!(at.is_none(), out == bytes, "verdict vs bytes");
            if let Some(k) = at {
                prop_assert!(*k <= bytes.len());
            }
            prop_assert_eq!(check_canonical(&out), Ok(None));
            // Byte for byte what the serializer writes for the parsed value
            // (the one-pass rewriter included).
            prop_assert_eq!(&out, &to_canonical_vec(&p.value));
            let again = parse(&out).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert!(same_value(&again, &p.value));
            // A non-canonical text is explained, at a point before which it
            // is its canonical text; a canonical one is not.
            let d = explain_non_canonical(bytes);
            prop_assert_eq!(d.is_some(), at.is_some(), "explained {:?}", d);
            if let Some(d) = d {
                prop_assert!(d.offset <= bytes.len() && d.offset <= out.len());
                prop_assert_eq!(&bytes[..d.offset], &out[..d.offset], "{:?}", d);
                prop_assert!(d.found != d.expected, "{:?}", d);
            }
        }
        _ => prop_assert!(
            false,
            "disagree: parse {:?}, check {:?}, canonicalize {:?}",
            parsed.map(|p| p.non_canonical_at),
            checked,
            canon
        ),
    }
    Ok(())
}

// -------------------------------------------------------------- properties

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn canon_is_a_fixed_point(v in value()) {
        let c = to_canonical_vec(&v);
        let mut out = Vec::new();
        prop_assert_eq!(canonicalize(&c, &mut out), Ok(true));
        prop_assert_eq!(&out, &c);
        prop_assert_eq!(check_canonical(&c), Ok(None));
        prop_assert!(std::str::from_utf8(&c).is_ok());
    }

    #[test]
    fn canon_parses_back_to_the_value(v in value()) {
        let c = to_canonical_vec(&v);
        let back = parse(&c).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(same_value(&back, &v), "{:?}", String::from_utf8_lossy(&c));
        let parsed = parse_with(&c, ParseOptions::default())
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(parsed.non_canonical_at, None);
        // In canonical text the members come in name order, so the parsed
        // value serializes to the same bytes.
        prop_assert_eq!(to_canonical_vec(&back), c);
    }

    #[test]
    fn every_spelling_canonicalizes_to_canon(v in value(), style in style(), seed in any::<u64>()) {
        let c = to_canonical_vec(&v);
        let text = render(&v, style, seed);
        let mut out = Vec::new();
        let copied = canonicalize(text.as_bytes(), &mut out)
            .map_err(|e| TestCaseError::fail(format!("{e} in {text:?}")))?;
        prop_assert_eq!(
            String::from_utf8_lossy(&out),
            String::from_utf8_lossy(&c),
            "from {:?}",
            text
        );
        prop_assert_eq!(copied, text.as_bytes() == c.as_slice());
        agree(text.as_bytes())?;
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        agree(&bytes)?;
    }

    #[test]
    fn json_like_bytes_never_panic(
        bytes in prop::collection::vec(
            prop::sample::select(
                b"{}[]\":,0123456789.eE+-truefalsn \t\n\r\\u/aAdD\xff\xc3\xa9\xed\xa0\x80\xf0\x9f\x98".to_vec()
            ),
            0..64,
        )
    ) {
        agree(&bytes)?;
    }

    #[test]
    fn mutated_texts_agree(
        v in value(),
        style in style(),
        seed in any::<u64>(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..4),
    ) {
        let mut bytes = render(&v, style, seed).into_bytes();
        for (at, byte, op) in edits {
            if bytes.is_empty() {
                bytes.push(byte);
                continue;
            }
            let i = at.index(bytes.len());
            match op {
                0 => bytes[i] = byte,
                1 => bytes.insert(i, byte),
                _ => {
                    bytes.remove(i);
                }
            }
        }
        agree(&bytes)?;
    }

    #[test]
    fn duplicate_names_are_always_found(
        names in prop::collection::btree_set(text(), 1..6),
        pick in any::<prop::sample::Index>(),
        seed in any::<u64>(),
    ) {
        // Write every name once, then one of them again somewhere later,
        // possibly spelled with escapes.
        let names: Vec<String> = names.into_iter().collect();
        let dup = pick.get(&names).clone();
        let style = Style { whitespace: false, pretty: false, shuffle: true, escapes: true, numbers: false };
        let members: Vec<(Cow<'static, str>, OwnedValue)> = names
            .iter()
            .map(|n| (Cow::Owned(n.clone()), Value::Null))
            .collect();
        let text = render(&Value::Object(Object::from_members(members)), style, seed);
        // Replace the closing brace with one more member.
        let mut r = Renderer { style, rng: Rng(seed ^ 0x55), out: String::new() };
        r.string(&dup);
        let with_dup = format!("{},{}:1}}", &text[..text.len() - 1], r.out);
        let e = parse(with_dup.as_bytes()).err();
        prop_assert_eq!(e.as_ref().map(|e| e.code()), Some("json_duplicate_member"), "{}", with_dup);
        let e2 = check_canonical(with_dup.as_bytes()).err();
        let e3 = validate_with(with_dup.as_bytes(), ParseOptions::default()).err();
        prop_assert_eq!(e.as_ref().map(|e| e.offset()), e3.map(|e| e.offset()));
        prop_assert_eq!(e.map(|e| e.offset()), e2.map(|e| e.offset()));
    }
}
