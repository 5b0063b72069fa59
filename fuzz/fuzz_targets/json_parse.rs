//! Arbitrary bytes through the strict parser.
//!
//! - `parse_with` and `check_canonical` agree: the same error (code and
//!   offset), or the same canonical verdict (`None` / first non-canonical
//!   offset); also under a small nesting limit.
//! - When the text parses: `canonicalize` says "already canonical" exactly
//!   when the parser did (and then copies the input), its output re-parses
//!   to an equal value, is canonical, is a fixed point of `canonicalize`
//!   and equals `to_canonical_vec` of the value.
//! - `locate` finds every value of the parsed tree (first few dozen) at a
//!   byte where a value of its type starts, in the input and in the
//!   canonical output.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ndarc_fuzz::json::same;
use ndarc_json::{
    canonicalize, check_canonical, check_canonical_with, locate, parse_with, to_canonical_vec,
    ParseOptions, Value,
};

fn agree(data: &[u8], options: ParseOptions) -> Option<ndarc_json::Parsed<'_>> {
    let parsed = parse_with(data, options);
    let checked = check_canonical_with(data, options);
    match (&parsed, &checked) {
        (Ok(p), Ok(c)) => assert_eq!(
            p.non_canonical_at, *c,
            "parse and check disagree on canonical form"
        ),
        (Err(p), Err(c)) => assert_eq!(
            (p.code(), p.offset()),
            (c.code(), c.offset()),
            "parse and check disagree on the error: {p} / {c}"
        ),
        _ => panic!("parse_with {parsed:?} but check_canonical {checked:?}"),
    }
    if let Err(e) = &parsed {
        assert!(
            e.offset() <= data.len(),
            "error offset beyond the text: {e}"
        );
    }
    if let Ok(Some(at)) = checked {
        assert!(at <= data.len(), "non-canonical offset beyond the text");
    }
    parsed.ok()
}

fn pointers(v: &Value<'_>, prefix: String, out: &mut Vec<(String, u8)>) {
    if out.len() >= 48 {
        return;
    }
    let first = match v {
        Value::Null => b'n',
        Value::Bool(true) => b't',
        Value::Bool(false) => b'f',
        Value::Number(_) => b'0',
        Value::String(_) => b'"',
        Value::Array(_) => b'[',
        Value::Object(_) => b'{',
    };
    out.push((prefix.clone(), first));
    match v {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                pointers(item, format!("{prefix}/{i}"), out);
            }
        }
        Value::Object(o) => {
            for (name, item) in o.iter() {
                let token = name.replace('~', "~0").replace('/', "~1");
                pointers(item, format!("{prefix}/{token}"), out);
            }
        }
        _ => {}
    }
}

fn check_locate(text: &[u8], v: &Value<'_>) {
    let mut ps = Vec::new();
    pointers(v, String::new(), &mut ps);
    for (p, first) in ps {
        let at =
            locate(text, &p).unwrap_or_else(|| panic!("locate found nothing for pointer {p:?}"));
        let b = *text
            .get(at)
            .unwrap_or_else(|| panic!("locate {p:?} -> {at}, past the end"));
        let ok = match first {
            b'0' => b == b'-' || b.is_ascii_digit(),
            _ => b == first,
        };
        assert!(
            ok,
            "locate {p:?} -> byte {at} ({:?}), expected {:?}",
            b as char, first as char
        );
    }
}

fuzz_target!(|data: &[u8]| {
    // A small nesting limit too, so that the limit is hit at every depth.
    let small = ParseOptions {
        max_depth: 1 + data.len() % 4,
    };
    let _ = agree(data, small);
    let Some(parsed) = agree(data, ParseOptions::default()) else {
        let mut out = Vec::new();
        assert!(canonicalize(data, &mut out).is_err());
        return;
    };

    let mut out = Vec::new();
    let copied = canonicalize(data, &mut out).expect("parsed, yet canonicalize failed");
    assert_eq!(copied, parsed.non_canonical_at.is_none());
    if copied {
        assert_eq!(out, data, "canonical input not copied as is");
    }
    assert_eq!(out, to_canonical_vec(&parsed.value));

    let again = parse_with(&out, ParseOptions::default()).expect("canonical output does not parse");
    assert_eq!(
        again.non_canonical_at, None,
        "canonical output is not canonical"
    );
    assert!(
        same(&parsed.value, &again.value),
        "canonical output parses to another value"
    );
    assert_eq!(check_canonical(&out), Ok(None));
    let mut twice = Vec::new();
    assert_eq!(canonicalize(&out, &mut twice), Ok(true));
    assert_eq!(twice, out, "canonicalize is not a fixed point");

    check_locate(data, &parsed.value);
    check_locate(&out, &again.value);
});
