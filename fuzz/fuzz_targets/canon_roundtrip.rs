//! Structure-aware: an arbitrary JSON value (unique names, finite numbers,
//! valid strings, nesting up to 66) through the RFC 8785 serializer.
//!
//! - canonical bytes parse back to an equal value, are canonical, and
//!   serialize to the same bytes again (values nested deeper than 64 are
//!   refused with `json_depth` instead);
//! - every number's text is what `number::format` writes and parses back
//!   to the same double;
//! - a re-spelled rendering of the value (whitespace, members in another
//!   order, escapes, other number notations) parses to an equal value, is
//!   called canonical exactly when it equals the canonical bytes, and
//!   canonicalizes to the canonical bytes.
#![no_main]

use arbitrary::{Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;
use ndarc_fuzz::json::{depth, same, spell, ArbValue};
use ndarc_json::{
    canonicalize, check_canonical, number, parse_with, to_canonical_vec, ParseOptions, Value,
    MAX_DEPTH,
};

fn numbers(v: &Value<'_>, out: &mut Vec<f64>) {
    match v {
        Value::Number(n) => out.push(*n),
        Value::Array(items) => items.iter().for_each(|i| numbers(i, out)),
        Value::Object(o) => o.iter().for_each(|(_, i)| numbers(i, out)),
        _ => {}
    }
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(ArbValue(v)) = ArbValue::arbitrary(&mut u) else {
        return;
    };
    let canon = to_canonical_vec(&v);
    let deep = depth(&v) > MAX_DEPTH;

    match parse_with(&canon, ParseOptions::default()) {
        Err(e) => {
            assert!(deep, "canonical bytes do not parse: {e}");
            assert_eq!(e.code(), "json_depth", "{e}");
            assert_eq!(
                check_canonical(&canon).map_err(|e| e.code()),
                Err("json_depth")
            );
        }
        Ok(p) => {
            assert!(!deep, "a value nested {} deep parsed", depth(&v));
            assert_eq!(
                p.non_canonical_at, None,
                "canonical bytes are not canonical"
            );
            assert!(same(&v, &p.value), "canonical bytes parse to another value");
            assert_eq!(to_canonical_vec(&p.value), canon, "not a fixed point");
            assert_eq!(check_canonical(&canon), Ok(None));
        }
    }

    let mut ns = Vec::new();
    numbers(&v, &mut ns);
    for n in ns.into_iter().take(16) {
        let mut w = Vec::new();
        number::write(n, &mut w);
        assert_eq!(
            w,
            number::format(n).as_bytes(),
            "write and format differ for {n:e}"
        );
        let back = parse_with(&w, ParseOptions::default()).expect("number text does not parse");
        assert_eq!(back.value, Value::Number(n), "{n:e} does not round-trip");
        assert_eq!(back.non_canonical_at, None);
    }

    // The rest of the input spells the value another way.
    let mut spelled = Vec::new();
    spell(&v, &mut u, &mut spelled);
    match parse_with(&spelled, ParseOptions::default()) {
        Err(e) => {
            assert!(
                deep,
                "re-spelled text does not parse: {e}\n{}",
                String::from_utf8_lossy(&spelled)
            );
            assert_eq!(e.code(), "json_depth", "{e}");
        }
        Ok(p) => {
            assert!(
                same(&v, &p.value),
                "re-spelled text parses to another value:\n{}",
                String::from_utf8_lossy(&spelled)
            );
            assert_eq!(
                p.non_canonical_at.is_none(),
                spelled == canon,
                "canonical verdict {:?} for\n{}\ncanonical\n{}",
                p.non_canonical_at,
                String::from_utf8_lossy(&spelled),
                String::from_utf8_lossy(&canon)
            );
            assert_eq!(check_canonical(&spelled), Ok(p.non_canonical_at));
            let mut out = Vec::new();
            assert_eq!(canonicalize(&spelled, &mut out), Ok(spelled == canon));
            assert_eq!(out, canon, "re-spelled text canonicalizes differently");
        }
    }
});
