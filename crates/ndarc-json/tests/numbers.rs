//! Number formatting and parsing against node's `String(d)` for every vector
//! in `testdata/json/numbers.csv` (regenerate with
//! `node scripts/gen-number-vectors.mjs > testdata/json/numbers.csv`).

use ndarc_json::{check_canonical, number, parse, Scanner, Value};

const VECTORS: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../testdata/json/numbers.csv"
));

/// How many mismatches a failing test lists.
const SHOW: usize = 10;

struct Vector<'a> {
    line: usize,
    bits: u64,
    expected: &'a str,
}

fn vectors() -> Vec<Vector<'static>> {
    let mut out = Vec::new();
    for (i, line) in VECTORS.lines().enumerate() {
        let line_no = i + 1;
        let (hex, expected) = line
            .split_once(',')
            .unwrap_or_else(|| panic!("numbers.csv:{line_no}: no comma in {line:?}"));
        assert_eq!(
            hex.len(),
            16,
            "numbers.csv:{line_no}: bits are not 16 hex digits"
        );
        let bits = u64::from_str_radix(hex, 16)
            .unwrap_or_else(|e| panic!("numbers.csv:{line_no}: bad hex {hex:?}: {e}"));
        out.push(Vector {
            line: line_no,
            bits,
            expected,
        });
    }
    out
}

/// Runs `check` on every vector and fails listing the first few mismatches.
fn check_all(what: &str, check: impl Fn(&Vector<'_>) -> Option<String>) {
    let all = vectors();
    assert!(
        all.len() > 100_000,
        "numbers.csv has only {} vectors",
        all.len()
    );
    let mut bad = Vec::new();
    let mut count = 0usize;
    for v in &all {
        if let Some(msg) = check(v) {
            count += 1;
            if bad.len() < SHOW {
                bad.push(format!(
                    "  numbers.csv:{}: {:016x},{}: {msg}",
                    v.line, v.bits, v.expected
                ));
            }
        }
    }
    assert!(
        count == 0,
        "{what}: {count} of {} vectors mismatch; first ones:\n{}",
        all.len(),
        bad.join("\n")
    );
}

#[test]
fn file_is_complete() {
    let all = vectors();
    assert_eq!(all.len(), 131_283, "numbers.csv changed; update this count");
    assert!(VECTORS.ends_with('\n'));
}

#[test]
fn format_matches_node() {
    check_all("number::format", |v| {
        let got = number::format(f64::from_bits(v.bits));
        (got != v.expected).then(|| format!("format gave {got}"))
    });
}

#[test]
fn write_matches_node() {
    check_all("number::write", |v| {
        let mut out = b"prefix".to_vec();
        number::write(f64::from_bits(v.bits), &mut out);
        let got = &out[6..];
        (got != v.expected.as_bytes() || !out.starts_with(b"prefix"))
            .then(|| format!("write gave {}", String::from_utf8_lossy(got)))
    });
}

#[test]
fn parse_round_trips_bits() {
    check_all("parse", |v| {
        let want = f64::from_bits(v.bits);
        // -0 is written `0`, which parses to +0.
        let want_bits = if want == 0.0 { 0 } else { v.bits };
        match parse(v.expected.as_bytes()) {
            Ok(Value::Number(n)) if n.to_bits() == want_bits => None,
            Ok(other) => Some(format!("parse gave {other:?}")),
            Err(e) => Some(format!("parse failed: {e}")),
        }
    });
}

#[test]
fn expected_text_is_canonical() {
    check_all("check_canonical", |v| {
        match check_canonical(v.expected.as_bytes()) {
            Ok(None) => None,
            other => Some(format!("check_canonical gave {other:?}")),
        }
    });
}

#[test]
fn canonical_text_survives_in_a_document() {
    // The same numbers inside an array, through canonicalize: copied as is.
    let all = vectors();
    for chunk in all.chunks(1000) {
        let mut doc = String::from("[");
        for (i, v) in chunk.iter().enumerate() {
            if i > 0 {
                doc.push(',');
            }
            doc.push_str(v.expected);
        }
        doc.push(']');
        let mut out = Vec::new();
        let copied = ndarc_json::canonicalize(doc.as_bytes(), &mut out)
            .unwrap_or_else(|e| panic!("lines {}..: {e}", chunk[0].line));
        assert!(copied, "lines {}..: not found canonical", chunk[0].line);
        assert_eq!(out, doc.as_bytes());
    }
}

#[test]
fn non_canonical_spellings_are_rewritten() {
    // A few spellings of each vector that parse to the same double but are
    // not canonical: an exponent form and trailing fraction zeros.
    check_all("rewrite", |v| {
        let d = f64::from_bits(v.bits);
        let variants = [
            format!("{d:e}"),
            format!(
                "{}{}",
                v.expected,
                if v.expected.contains(['.', 'e']) {
                    ""
                } else {
                    ".0"
                }
            ),
        ];
        for text in variants {
            let mut out = Vec::new();
            match ndarc_json::canonicalize(text.as_bytes(), &mut out) {
                Ok(_) if out == v.expected.as_bytes() => {}
                Ok(_) => {
                    return Some(format!(
                        "{text} canonicalized to {}",
                        String::from_utf8_lossy(&out)
                    ))
                }
                Err(e) => return Some(format!("{text} failed: {e}")),
            }
        }
        None
    });
}

#[test]
fn exponent_spellings_are_judged_as_the_conversion_judges_them() {
    // Each vector rounded to 1 to 17 significant digits in the exponent
    // form ECMAScript uses (`d.ddde+n`): the parser's check and the
    // scanner accept such a text exactly when ECMAScript writes its value
    // so, whether they decide by its digits or by converting it.
    check_all("exponent spellings", |v| {
        let d = f64::from_bits(v.bits);
        for precision in 0..17 {
            let rust = format!("{d:.precision$e}");
            let (mantissa, exp) = rust.split_once('e')?;
            let text = if exp.starts_with('-') {
                rust.clone()
            } else {
                format!("{mantissa}e+{exp}")
            };
            let value: f64 = text.parse().ok()?;
            let canonical = value.is_finite() && number::format(value) == text;
            let checked = matches!(check_canonical(text.as_bytes()), Ok(None));
            let scanned = Scanner::new(text.as_bytes())
                .and_then(|mut s| s.raw_number())
                .is_some();
            if checked != canonical || scanned != canonical {
                return Some(format!(
                    "{text}: canonical {canonical}, check_canonical {checked}, scanner {scanned}"
                ));
            }
        }
        None
    });
}

#[test]
fn fixed_spellings_are_judged_as_the_conversion_judges_them() {
    // Each vector rounded to 0 to 20 fraction digits in plain decimal form
    // (`ddd.ddd`), negated too: the scanner accepts such a text exactly when
    // ECMAScript writes its value so, and reads the value the conversion
    // reads, whether it decides by the digits, by one division (16 digits)
    // or by converting the text.
    check_all("fixed spellings", |v| {
        let d = f64::from_bits(v.bits).abs();
        if !(1e-7..1e21).contains(&d) {
            return None;
        }
        for precision in 0..=20 {
            for sign in ["", "-"] {
                let text = format!("{sign}{d:.precision$}");
                let value: f64 = text.parse().ok()?;
                let canonical = number::format(value) == text;
                let checked = matches!(check_canonical(text.as_bytes()), Ok(None));
                let scanned = Scanner::new(text.as_bytes())
                    .and_then(|mut s| Some((s.raw_number()?, s.is_at_end())));
                let accepted = matches!(scanned, Some((_, true)));
                if checked != canonical || accepted != canonical {
                    return Some(format!(
                        "{text}: canonical {canonical}, check_canonical {checked}, scanner {accepted}"
                    ));
                }
                if let Some((n, _)) = scanned {
                    if n.value().to_bits() != value.to_bits() {
                        return Some(format!("{text}: scanner read {:e}", n.value()));
                    }
                }
            }
        }
        None
    });
}
