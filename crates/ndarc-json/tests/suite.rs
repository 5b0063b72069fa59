//! A JSONTestSuite-style table: texts the archive's JSON profile must reject
//! (with the exact code and byte offset) and must accept (with their exact
//! canonical form), plus the RFC 8785 rules end to end through
//! `canonicalize`.

use ndarc_json::{canonicalize, check_canonical, parse, parse_with, ParseOptions, Value};

/// A text that must be rejected with `code` at byte `offset`.
struct Reject {
    name: &'static str,
    input: Vec<u8>,
    code: &'static str,
    offset: usize,
}

fn r(name: &'static str, input: impl AsRef<[u8]>, code: &'static str, offset: usize) -> Reject {
    Reject {
        name,
        input: input.as_ref().to_vec(),
        code,
        offset,
    }
}

const SYN: &str = "json_syntax";
const UTF8: &str = "json_invalid_utf8";
const BOM: &str = "json_bom";
const DUP: &str = "json_duplicate_member";
const SUR: &str = "json_lone_surrogate";
const RANGE: &str = "json_number_range";
const DEPTH: &str = "json_depth";

fn rejects() -> Vec<Reject> {
    vec![
        // Trailing and misplaced commas.
        r("trailing comma in array", "[1,]", SYN, 3),
        r("double comma in array", "[1,,2]", SYN, 3),
        r("leading comma in array", "[,1]", SYN, 1),
        r("trailing comma in object", r#"{"a":1,}"#, SYN, 7),
        r("lone comma in object", "{,}", SYN, 1),
        r("trailing comma after value", "1,", SYN, 1),
        // Comments.
        r("block comment", "/* c */ 1", SYN, 0),
        r("line comment after value", "[1 // c\n]", SYN, 3),
        r("hash comment", "# c\n1", SYN, 0),
        // Not numbers JSON knows.
        r("NaN", "NaN", SYN, 0),
        r("Infinity in array", "[Infinity]", SYN, 1),
        r("-Infinity", "-Infinity", SYN, 0),
        r("leading zero", "01", SYN, 0),
        r("negative leading zero", "-01", SYN, 0),
        r("double zero", "00", SYN, 0),
        r("leading zero in array", "[012]", SYN, 1),
        r("plus sign", "+1", SYN, 0),
        r("leading dot", ".5", SYN, 0),
        r("minus leading dot", "-.5", SYN, 0),
        r("trailing dot", "1.", SYN, 2),
        r("dot before exponent", "1.e5", SYN, 2),
        r("bare exponent", "1e", SYN, 2),
        r("exponent sign only", "1e+", SYN, 3),
        r("upper exponent sign only", "1E-", SYN, 3),
        r("exponent letter", "[1ea]", SYN, 3),
        r("fraction then bare exponent", "1.0e", SYN, 4),
        r("hex number", "0x10", SYN, 1),
        r("digit separator", "1_000", SYN, 1),
        r("lone minus", "-", SYN, 0),
        r("double minus", "--1", SYN, 0),
        r("minus in array", "[-]", SYN, 1),
        // Raw control characters in strings.
        r("raw NUL in string", b"\"\x00\"", SYN, 1),
        r("raw tab in string", "\"a\tb\"", SYN, 2),
        r("raw LF in string", "\"a\nb\"", SYN, 2),
        r("raw CR in string", "[\"\r\"]", SYN, 2),
        r("raw U+001F in string", b"\"\x1f\"", SYN, 1),
        // Bad escapes.
        r("escape x", r#""\x41""#, SYN, 1),
        r("escape a", r#""\a""#, SYN, 1),
        r("escaped apostrophe", r#""\'""#, SYN, 1),
        r("upper U escape", r#""\U0041""#, SYN, 1),
        r("short unicode escape", r#""\u12""#, SYN, 1),
        r("non-hex unicode escape", r#""\u12G4""#, SYN, 1),
        r("escape at the end", "\"\\", SYN, 1),
        r("escaped raw control", b"\"\\\x01\"", SYN, 1),
        r("bad low half of a pair", r#""\ud83d\u00""#, SYN, 7),
        // Lone surrogates.
        r("lone high surrogate", r#""\ud800""#, SUR, 1),
        r("lone low surrogate", r#""\udfff""#, SUR, 1),
        r("reversed pair", r#""\ude00\ud83d""#, SUR, 1),
        r("two high surrogates", r#""\ud83d\ud83d""#, SUR, 1),
        r("high surrogate then text", r#""x\ud83dy""#, SUR, 2),
        r(
            "high surrogate then BMP escape",
            r#"["\ud800\u0041"]"#,
            SUR,
            2,
        ),
        r("high surrogate then short escape", r#""\ud83d\n""#, SUR, 1),
        r("lone surrogate in a name", r#"{"\udc00":1}"#, SUR, 2),
        r("upper-case lone surrogate", r#""\uDBFF""#, SUR, 1),
        // Invalid UTF-8.
        r("overlong slash", b"\"\xc0\xaf\"", UTF8, 1),
        r("overlong three bytes", b"\"\xe0\x80\xaf\"", UTF8, 1),
        r("overlong NUL", b"\"\xc0\x80\"", UTF8, 1),
        r("UTF-8 encoded high surrogate", b"\"\xed\xa0\x80\"", UTF8, 1),
        r(
            "UTF-8 encoded low surrogate",
            b"[\"\xed\xbf\xbf\"]",
            UTF8,
            2,
        ),
        r("truncated sequence", b"\"\xe2\x82\"", UTF8, 1),
        r("truncated at the end", b"\"ab\xf0\x9f\x98", UTF8, 3),
        r("lone continuation byte", b"\"\x80\"", UTF8, 1),
        r("byte FF", b"\xff", UTF8, 0),
        r("beyond U+10FFFF", b"\"\xf4\x90\x80\x80\"", UTF8, 1),
        r("Latin-1 text", b"\"caf\xe9\"", UTF8, 4),
        r("invalid UTF-8 after the value", b"[1]\xff", UTF8, 3),
        // Byte-order mark.
        r("BOM before object", b"\xef\xbb\xbf{}", BOM, 0),
        r("BOM alone", b"\xef\xbb\xbf", BOM, 0),
        r("U+FEFF after whitespace", b" \xef\xbb\xbf1", SYN, 1),
        // Duplicate member names.
        r("duplicate name", r#"{"a":1,"a":2}"#, DUP, 7),
        r("duplicate via escape", r#"{"a":1,"\u0061":2}"#, DUP, 7),
        r("duplicate both ways", r#"{"\u00e9":1,"é":2}"#, DUP, 12),
        r("duplicate via solidus escape", r#"{"/":1,"\/":2}"#, DUP, 7),
        r("duplicate out of order", r#"{"b":1,"a":2,"b":3}"#, DUP, 13),
        r(
            "duplicate in nested object",
            r#"{"x":{"a":1,"a":2}}"#,
            DUP,
            12,
        ),
        r("duplicate empty name", r#"{"":1,"":2}"#, DUP, 6),
        r(
            "duplicate astral name after order broke",
            "{\"\u{FB33}\":1,\"\u{1F600}\":2,\"\\ud83d\\ude00\":3}",
            DUP,
            18,
        ),
        r(
            "two duplicates, the first in text order is reported",
            r#"{"b":1,"a":2,"b":3,"a":4}"#,
            DUP,
            13,
        ),
        r(
            "duplicate before a later syntax error",
            r#"[{"b":1,"a":2,"b":3},]"#,
            DUP,
            14,
        ),
        r(
            "duplicate before a trailing comma",
            r#"{"b":1,"a":2,"b":3,}"#,
            DUP,
            13,
        ),
        r(
            "duplicate before a deeper error",
            r#"{"b":1,"a":2,"b":[1,]}"#,
            DUP,
            13,
        ),
        r(
            "duplicate with whitespace",
            "{ \"a\" : 1 , \"a\" : 2 }",
            DUP,
            12,
        ),
        // Depth.
        r(
            "65 nested arrays",
            "[".repeat(65) + &"]".repeat(65),
            DEPTH,
            64,
        ),
        r(
            "65 nested objects",
            "{\"a\":".repeat(65) + "1" + &"}".repeat(65),
            DEPTH,
            320,
        ),
        r(
            "65 levels mixed",
            "[{\"a\":".repeat(32) + "[1]" + &"}]".repeat(32),
            DEPTH,
            32 * 6,
        ),
        r("100,000 open brackets", "[".repeat(100_000), DEPTH, 64),
        // Numbers out of range.
        r("1e309", "1e309", RANGE, 0),
        r("-1e309", "-1e309", RANGE, 0),
        r("1.8e308 in array", "[0,1.8e308]", RANGE, 3),
        r(
            "just above the largest double",
            "1.7976931348623159e308",
            RANGE,
            0,
        ),
        r("400 digits", "9".repeat(400), RANGE, 0),
        r("huge exponent", "1e99999999999999999999", RANGE, 0),
        // Text after the value.
        r("two objects", "{} {}", SYN, 3),
        r("two numbers", "1 2", SYN, 2),
        r("extra bracket", "[]]", SYN, 2),
        r("letter after string", "\"a\"x", SYN, 3),
        r("true with suffix", "truex", SYN, 4),
        r("null with suffix", "nulll", SYN, 4),
        r("NUL after value", b"\"a\"\x00", SYN, 3),
        r("second line", "{}\n{}", SYN, 3),
        // Empty and broken texts.
        r("empty input", "", SYN, 0),
        r("whitespace only", " \t\r\n", SYN, 4),
        r("truncated literal", "tru", SYN, 0),
        r("capitalised literal", "True", SYN, 0),
        r("truncated null", "nul", SYN, 0),
        r("single quotes", "'a'", SYN, 0),
        r("unquoted name", "{a:1}", SYN, 1),
        r("number as name", "{1:2}", SYN, 1),
        r("missing colon", r#"{"a" 1}"#, SYN, 5),
        r("missing comma in array", "[1 2]", SYN, 3),
        r("missing comma in object", r#"{"a":1 "b":2}"#, SYN, 7),
        r("unclosed array", "[1", SYN, 2),
        r("unclosed empty array", "[", SYN, 1),
        r("unclosed object", r#"{"a":1"#, SYN, 6),
        r("unclosed empty object", "{", SYN, 1),
        r("member without value", r#"{"a":}"#, SYN, 5),
        r("unterminated string", "\"abc", SYN, 0),
        r("lone closing bracket", "]", SYN, 0),
        r("form feed is not whitespace", "\x0c1", SYN, 0),
        r("no-break space is not whitespace", "\u{a0}1", SYN, 0),
        r("vertical tab is not whitespace", "[1,\x0b2]", SYN, 3),
    ]
}

#[test]
fn rejects_with_exact_code_and_offset() {
    let cases = rejects();
    assert!(cases.len() >= 60, "only {} reject cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let shown = String::from_utf8_lossy(&case.input[..case.input.len().min(60)]).into_owned();
        let results = [
            ("parse", parse(&case.input).map(|_| ())),
            (
                "parse_with",
                parse_with(&case.input, ParseOptions::default()).map(|_| ()),
            ),
            ("check_canonical", check_canonical(&case.input).map(|_| ())),
            (
                "canonicalize",
                canonicalize(&case.input, &mut Vec::new()).map(|_| ()),
            ),
        ];
        for (what, got) in results {
            match got {
                Err(e) if e.code() == case.code && e.offset() == case.offset => {
                    assert!(!e.message().is_empty());
                }
                Err(e) => failures.push(format!(
                    "{} ({what}) {shown:?}: want {} at {}, got {} at {}: {}",
                    case.name,
                    case.code,
                    case.offset,
                    e.code(),
                    e.offset(),
                    e.message()
                )),
                Ok(()) => failures.push(format!(
                    "{} ({what}) {shown:?}: want {} at {}, was accepted",
                    case.name, case.code, case.offset
                )),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_error_kind_is_covered() {
    let cases = rejects();
    for kind in ndarc_json::ErrorKind::ALL {
        assert!(
            cases.iter().any(|c| c.code == kind.code()),
            "no reject case for {}",
            kind.code()
        );
    }
}

#[test]
fn reject_names_are_unique() {
    let cases = rejects();
    let mut names: Vec<_> = cases.iter().map(|c| c.name).collect();
    names.sort_unstable();
    let before = names.len();
    names.dedup();
    assert_eq!(before, names.len());
}

/// A text that must be accepted, and its canonical form.
fn accepts() -> Vec<(&'static str, Vec<u8>, String)> {
    fn a(
        name: &'static str,
        input: impl AsRef<[u8]>,
        canon: impl Into<String>,
    ) -> (&'static str, Vec<u8>, String) {
        (name, input.as_ref().to_vec(), canon.into())
    }
    let deep64 = "[".repeat(64) + &"]".repeat(64);
    let deep64_obj = "{\"a\":".repeat(64) + "1" + &"}".repeat(64);
    let deep64_mixed = "[{\"a\":".repeat(32) + "1" + &"}]".repeat(32);
    vec![
        a("depth 64 arrays", &deep64, deep64.clone()),
        a("depth 64 objects", &deep64_obj, deep64_obj.clone()),
        a("depth 64 mixed", &deep64_mixed, deep64_mixed.clone()),
        a(
            "depth 64 with whitespace",
            "[ ".repeat(64) + &" ]".repeat(64),
            deep64.clone(),
        ),
        a("smallest subnormal", "5e-324", "5e-324"),
        a("negative smallest subnormal", "-5e-324", "-5e-324"),
        a("underflow to zero", "1e-400", "0"),
        a("negative underflow to zero", "-1e-400", "0"),
        a("rounds to the smallest subnormal", "3e-324", "5e-324"),
        a(
            "largest double",
            "1.7976931348623157e308",
            "1.7976931348623157e+308",
        ),
        a(
            "rounds down to the largest double",
            "1.7976931348623158e308",
            "1.7976931348623157e+308",
        ),
        a(
            "smallest normal",
            "2.2250738585072014E-308",
            "2.2250738585072014e-308",
        ),
        a(
            "big integer",
            "123456789012345678901234567890",
            "1.2345678901234568e+29",
        ),
        a("2^64", "18446744073709551616", "18446744073709552000"),
        a("2^53 + 1", "9007199254740993", "9007199254740992"),
        a("-2^53", "-9007199254740992", "-9007199254740992"),
        a("long fraction", format!("0.{}1", "0".repeat(500)), "0"),
        a(
            "many digits",
            format!("1.{}", "1".repeat(1000)),
            "1.1111111111111112",
        ),
        a(
            "exponent with leading zeros",
            "1e-0000000000000000001",
            "0.1",
        ),
        a("zero with exponent", "0E+1", "0"),
        a("minus zero", "-0", "0"),
        a("minus zero fraction", "-0.0e0", "0"),
        a("upper exponent", "1.5E+2", "150"),
        a("1e21", "1e21", "1e+21"),
        a("1e20", "1e20", "100000000000000000000"),
        a("1e-7", "1E-7", "1e-7"),
        a("1e-6", "1e-6", "0.000001"),
        a(
            "all short escapes",
            r#""\"\\\/\b\f\n\r\t""#,
            r#""\"\\/\b\f\n\r\t""#,
        ),
        a(
            "unicode escapes",
            r#""\u0041\u00e9\u20AC\ud83d\ude00\uD834\uDD1E\u0000\u001F\u007f""#,
            "\"Aé€😀𝄞\\u0000\\u001f\u{7f}\"",
        ),
        a(
            "astral characters raw",
            "\"😀𝄞\u{10FFFF}\"",
            "\"😀𝄞\u{10FFFF}\"",
        ),
        a(
            "DEL and line separators raw",
            "\"\u{7f}\u{2028}\u{2029}\"",
            "\"\u{7f}\u{2028}\u{2029}\"",
        ),
        a("U+FEFF inside a string", "\"\u{feff}\"", "\"\u{feff}\""),
        a(
            "noncharacters",
            "\"\u{fffe}\u{ffff}\\uFFFF\"",
            "\"\u{fffe}\u{ffff}\u{ffff}\"",
        ),
        a("escaped NUL", r#""\u0000""#, r#""\u0000""#),
        a(
            "whitespace everywhere",
            " \t\r\n[ 1 ,\n2\r\n, { \"b\" : null , \"a\" : [ ] } ]\n",
            r#"[1,2,{"a":[],"b":null}]"#,
        ),
        a("empty string", r#""""#, r#""""#),
        a("empty array", "[]", "[]"),
        a("empty object", "{}", "{}"),
        a("empty name", r#"{"":0}"#, r#"{"":0}"#),
        a("literals", "[true,false,null]", "[true,false,null]"),
        a("scalar at top level", "\"x\"", "\"x\""),
        a(
            "names that differ by escape",
            r#"{"a\/":1,"a/b":2}"#,
            r#"{"a/":1,"a/b":2}"#,
        ),
        a("prefix names", r#"{"ab":1,"a":2}"#, r#"{"a":2,"ab":1}"#),
    ]
}

#[test]
fn accepts_with_exact_canonical_form() {
    let mut failures = Vec::new();
    for (name, input, want) in accepts() {
        let mut out = Vec::new();
        match canonicalize(&input, &mut out) {
            Ok(copied) => {
                if out != want.as_bytes() {
                    failures.push(format!(
                        "{name}: canonical form {:?}, want {want:?}",
                        String::from_utf8_lossy(&out)
                    ));
                }
                if copied != (input == want.as_bytes()) {
                    failures.push(format!("{name}: canonicalize said copied={copied}"));
                }
                let check = check_canonical(&input);
                if check.as_ref().map(Option::is_none) != Ok(copied) {
                    failures.push(format!("{name}: check_canonical gave {check:?}"));
                }
                // The output is canonical and a fixed point.
                if check_canonical(&out) != Ok(None) {
                    failures.push(format!("{name}: output not canonical"));
                }
                match parse(&input) {
                    Ok(v) => {
                        if !parse(&out).is_ok_and(|o| same_value(&o, &v)) {
                            failures.push(format!("{name}: output parses to another value"));
                        }
                    }
                    Err(e) => failures.push(format!("{name}: parse failed: {e}")),
                }
            }
            Err(e) => failures.push(format!("{name}: rejected: {e}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Equality of JSON values with object members compared as sets (the
/// parser keeps members in input order; `Value`'s `==` compares in order).
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

fn canon(input: &str) -> String {
    let mut out = Vec::new();
    canonicalize(input.as_bytes(), &mut out).unwrap_or_else(|e| panic!("{input:?}: {e}"));
    String::from_utf8(out).unwrap_or_else(|e| panic!("{input:?}: {e}"))
}

#[test]
fn rfc8785_member_order_is_by_utf16_code_units() {
    // By code point U+FB33 < U+1F600; by UTF-16 the surrogate pair of
    // U+1F600 (D83D DE00) sorts first.
    assert_eq!(
        canon(r#"{"\uFB33":1,"\ud83d\ude00":2,"\u20ac":3,"z":4,"\u0080":5}"#),
        "{\"z\":4,\"\u{80}\":5,\"€\":3,\"😀\":2,\"\u{FB33}\":1}"
    );
    // Raw input in code point order is not canonical.
    let raw = "{\"\u{E000}\":1,\"\u{10000}\":2}";
    assert_eq!(check_canonical(raw.as_bytes()), Ok(Some(9)));
    assert_eq!(canon(raw), "{\"\u{10000}\":2,\"\u{E000}\":1}");
    // The RFC 8785 §3.2.3 example.
    assert_eq!(
        canon(
            r#"{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}"#
        ),
        "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u{80}\":\"Control\",\"ö\":\"Latin Small Letter O With Diaeresis\",\"€\":\"Euro Sign\",\"😀\":\"Emoji: Grinning Face\",\"\u{FB33}\":\"Hebrew Letter Dalet With Dagesh\"}"
    );
    // Nested objects are sorted too, arrays keep their order.
    assert_eq!(
        canon(r#"{"b":[{"y":1,"x":2},3],"a":{"d":1,"c":2}}"#),
        r#"{"a":{"c":2,"d":1},"b":[{"x":2,"y":1},3]}"#
    );
}

#[test]
fn rfc8785_string_escapes() {
    // Every C0 control, written as an upper-case escape in the input.
    let mut input = String::from("\"");
    for c in 0u32..0x20 {
        input.push_str(&format!("\\u{c:04X}"));
    }
    input.push_str("\\\"\\\\\"");
    let want = "\"\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\b\\t\\n\\u000b\\f\\r\\u000e\\u000f\\u0010\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017\\u0018\\u0019\\u001a\\u001b\\u001c\\u001d\\u001e\\u001f\\\"\\\\\"";
    assert_eq!(canon(&input), want);
    assert_eq!(check_canonical(want.as_bytes()), Ok(None));
    // U+007F, U+2028, U+2029 are written raw, also when escaped in the input.
    assert_eq!(
        canon(r#""\u007F\u2028\u2029""#),
        "\"\u{7f}\u{2028}\u{2029}\""
    );
    assert_eq!(
        check_canonical("\"\u{7f}\u{2028}\u{2029}\"".as_bytes()),
        Ok(None)
    );
    // `/` is never escaped.
    assert_eq!(canon(r#""\/""#), r#""/""#);
    // Lower-case hex in \u00xx escapes.
    assert_eq!(canon(r#""\u001B""#), r#""\u001b""#);
}

#[test]
fn rfc8785_numbers() {
    let cases = [
        ("0", "0"),
        ("-0", "0"),
        ("1e21", "1e+21"),
        ("1e-7", "1e-7"),
        ("123e-9", "1.23e-7"),
        ("5e-324", "5e-324"),
        ("1.7976931348623157e308", "1.7976931348623157e+308"),
        ("9007199254740992", "9007199254740992"),
        ("0.30000000000000004", "0.30000000000000004"),
        (
            "0.3000000000000000444089209850062616169452667236328125",
            "0.30000000000000004",
        ),
        ("333333333.33333329", "333333333.3333333"),
        ("1E30", "1e+30"),
        ("4.50", "4.5"),
        ("2e-3", "0.002"),
        ("0.000000000000000000000000001", "1e-27"),
        ("295147905179352830000", "295147905179352830000"),
        ("1e+23", "1e+23"),
        ("-1.5", "-1.5"),
    ];
    for (input, want) in cases {
        assert_eq!(canon(input), want, "input {input}");
        assert_eq!(canon(&format!("[{input}]")), format!("[{want}]"));
        assert_eq!(
            canon(&format!("{{\"n\":{input}}}")),
            format!("{{\"n\":{want}}}")
        );
    }
    // 2^53 and 0.1 + 0.2 computed, through the serializer.
    let v = ndarc_json::Value::Array(vec![
        ndarc_json::Value::Number(2f64.powi(53)),
        ndarc_json::Value::Number(0.1 + 0.2),
    ]);
    assert_eq!(
        ndarc_json::to_canonical_string(&v),
        "[9007199254740992,0.30000000000000004]"
    );
}

#[test]
fn rfc8785_appendix_sample() {
    let input = r#"{
  "numbers": [333333333.33333329, 1E30, 4.50,
              2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}"#;
    assert_eq!(
        canon(input),
        r#"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}"#
    );
}

#[test]
fn first_non_canonical_byte() {
    let cases: [(&str, Option<usize>); 14] = [
        (r#"{"a":1,"b":[true,null,"x"]}"#, None),
        (r#"{"b":1,"a":2}"#, Some(7)),
        (r#"{"a": 1}"#, Some(5)),
        (r#"{"a":1 }"#, Some(6)),
        (" 1", Some(0)),
        ("1\n", Some(1)),
        (r#"[1,2.0]"#, Some(3)),
        (r#"[1,"\u0041"]"#, Some(4)),
        (r#"["a","\/"]"#, Some(6)),
        (r#"{"a":{"c":1,"b":2}}"#, Some(12)),
        (r#"{"a":-0}"#, Some(5)),
        (r#"[1E2]"#, Some(1)),
        (r#"["\ud83d\ude00"]"#, Some(2)),
        (r#"["\u001F"]"#, Some(2)),
    ];
    for (input, want) in cases {
        assert_eq!(check_canonical(input.as_bytes()), Ok(want), "{input}");
        assert_eq!(
            parse_with(input.as_bytes(), ParseOptions::default()).map(|p| p.non_canonical_at),
            Ok(want),
            "{input}"
        );
        let mut out = Vec::new();
        assert_eq!(canonicalize(input.as_bytes(), &mut out), Ok(want.is_none()));
    }
}

#[test]
fn canonicalize_appends() {
    let mut out = b"keep:".to_vec();
    assert_eq!(canonicalize(b"{\"b\":1, \"a\":2}", &mut out), Ok(false));
    assert_eq!(out, b"keep:{\"a\":2,\"b\":1}");
    let mut out = b"keep:".to_vec();
    assert_eq!(canonicalize(b"[1]", &mut out), Ok(true));
    assert_eq!(out, b"keep:[1]");
}

#[test]
fn options_change_the_depth_limit() {
    let deep = "[".repeat(10) + &"]".repeat(10);
    let shallow = ParseOptions { max_depth: 9 };
    let e = match parse_with(deep.as_bytes(), shallow) {
        Err(e) => e,
        Ok(p) => panic!("accepted: {p:?}"),
    };
    assert_eq!((e.code(), e.offset()), (DEPTH, 9));
    assert!(parse_with(deep.as_bytes(), ParseOptions { max_depth: 10 }).is_ok());
}
