//! Mutations of SPEC.md §3.1: lines that are not JSON of the profile
//! (`json_*`): a fault in the manifest, or in the part line of a binary held
//! in one chunk.

use ndarc_format::Code;

use crate::rng::Rng;

use super::edit::{first_number, splice, string_value, At, Edit, Model, Need, R};
use super::fixture::{join, rehash, replace, Base, Expect, Fixture, Offset};
use super::Mutation;

pub(super) const MUTATIONS: &[Mutation] = &[
    mutation!(
        JsonSyntax,
        "json_syntax-trailing-comma",
        "a comma before the last } of the manifest or of a binary's part line",
        json_syntax_comma
    ),
    mutation!(
        JsonSyntax,
        "json_syntax-nan",
        "NaN for the first number of a line",
        json_syntax_nan
    ),
    mutation!(
        JsonSyntax,
        "json_syntax-leading-zero",
        "a leading zero on the first number of a line",
        json_syntax_leading_zero
    ),
    mutation!(
        JsonSyntax,
        "json_syntax-control-in-string",
        "a raw control character inside a string",
        json_syntax_control
    ),
    mutation!(
        JsonSyntax,
        "json_syntax-truncated",
        "a line without its last }",
        json_syntax_truncated
    ),
    mutation!(
        JsonInvalidUtf8,
        "json_invalid_utf8",
        "bytes that are not UTF-8 inside a string (FF, an overlong form, an encoded surrogate)",
        json_invalid_utf8
    ),
    mutation!(
        JsonBom,
        "json_bom",
        "a byte-order mark before a line",
        json_bom
    ),
    mutation!(
        JsonDuplicateMember,
        "json_duplicate_member",
        "a line's first member written twice",
        json_duplicate_member
    ),
    mutation!(
        JsonLoneSurrogate,
        "json_lone_surrogate",
        "an escaped lone surrogate inside a string",
        json_lone_surrogate
    ),
    mutation!(
        JsonNumberRange,
        "json_number_range",
        "1e400 for a line's first number",
        json_number_range
    ),
    mutation!(
        JsonDepth,
        "json_depth",
        "a number inside 64 nested arrays (depth 65)",
        json_depth
    ),
];

/// A line for a JSON-level fault: the manifest (verification stops there,
/// so it is the only finding) or the part of a binary held in one chunk
/// (whose chunk is then lost: `binary_missing` too). Returns the 0-based
/// line, where to expect the finding, the string member to edit, the
/// codes that come along, and a label.
fn json_target(m: &Model, rng: &mut Rng) -> (usize, At, &'static str, Vec<Code>, String) {
    let mut candidates: Vec<(usize, String)> = vec![(0, "the manifest".to_string())];
    for b in m.bins() {
        if b.parts.len() == 1 {
            candidates.push((
                b.parts[0] + 1,
                format!("the part of {} {:?}", b.kind.word(), b.label),
            ));
        }
    }
    let (k, label) = candidates[rng.below(candidates.len() as u64) as usize].clone();
    if k == 0 {
        (0, At::Manifest, "sourceIdentity", Vec::new(), label)
    } else {
        (k, At::Part(k - 1), "data", vec![Code::BinaryMissing], label)
    }
}

fn json_edit(
    m: &Model,
    rng: &mut Rng,
    what: &str,
    f: impl FnOnce(&[u8], &'static str) -> R<Vec<u8>> + 'static,
) -> R<Edit> {
    let (k, at, member, also, label) = json_target(m, rng);
    Ok(Edit::new(at, format!("{what} in {label} (line {})", k + 1))
        .also(&also)
        .line(k, move |l| f(l, member)))
}

fn json_syntax_comma(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    json_edit(m, rng, "a trailing comma before the last }", |l, _| {
        let last = l.len().checked_sub(1).need("empty line")?;
        Ok(splice(l, last, 0, b","))
    })
}

fn json_syntax_nan(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    json_edit(m, rng, "NaN for the first number", |l, _| {
        let (a, b) = first_number(l)?;
        Ok(splice(l, a, b - a, b"NaN"))
    })
}

fn json_syntax_leading_zero(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    json_edit(m, rng, "a leading zero on the first number", |l, _| {
        let (a, _) = first_number(l)?;
        let at = if l[a] == b'-' { a + 1 } else { a };
        Ok(splice(l, at, 0, b"0"))
    })
}

fn json_syntax_control(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    json_edit(m, rng, "a raw U+0001 inside a string", |l, member| {
        Ok(splice(l, string_value(l, member)?, 0, b"\x01"))
    })
}

fn json_syntax_truncated(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    json_edit(m, rng, "the last } cut off", |l, _| {
        Ok(l[..l.len().saturating_sub(1)].to_vec())
    })
}

fn json_invalid_utf8(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let (bytes, what): (&'static [u8], &str) = match rng.below(3) {
        0 => (b"\xff", "a byte FF (never UTF-8)"),
        1 => (b"\xc0\xaf", "an overlong encoding C0 AF of /"),
        _ => (
            b"\xed\xa0\x80",
            "a UTF-8-encoded surrogate ED A0 80 (CESU-8)",
        ),
    };
    json_edit(
        m,
        rng,
        &format!("{what} inside a string"),
        move |l, member| Ok(splice(l, string_value(l, member)?, 0, bytes)),
    )
}

fn json_bom(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    json_edit(m, rng, "a byte-order mark at the start", |l, _| {
        Ok(splice(l, 0, 0, b"\xef\xbb\xbf"))
    })
}

fn json_duplicate_member(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    json_edit(
        m,
        rng,
        "the first member written twice with the same value (last-wins parsers see nothing)",
        |l, _| {
            let (_, end) = first_number(l)?;
            let mut dup = b",".to_vec();
            dup.extend_from_slice(&l[1..end]);
            Ok(splice(l, end, 0, &dup))
        },
    )
}

fn json_lone_surrogate(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let (esc, what): (&'static [u8], &str) = match rng.below(3) {
        0 => (b"\\ud800", "a lone high surrogate \\ud800"),
        1 => (b"\\udc00", "a lone low surrogate \\udc00"),
        _ => (b"\\udc00\\ud800", "a reversed pair \\udc00\\ud800"),
    };
    json_edit(
        m,
        rng,
        &format!("{what} inside a string"),
        move |l, member| Ok(splice(l, string_value(l, member)?, 0, esc)),
    )
}

fn json_number_range(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let lit: &'static [u8] = if rng.one_in(2) { b"1e400" } else { b"-1e400" };
    let what = format!(
        "{} (beyond a double) for the first number",
        String::from_utf8_lossy(lit)
    );
    json_edit(m, rng, &what, move |l, _| {
        let (a, b) = first_number(l)?;
        Ok(splice(l, a, b - a, lit))
    })
}

fn json_depth(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    json_edit(
        m,
        rng,
        "the first number inside 64 nested arrays (depth 65 with the record)",
        |l, _| {
            let (a, b) = first_number(l)?;
            let mut v = vec![b'['; 64];
            v.extend_from_slice(&l[a..b]);
            v.extend(std::iter::repeat_n(b']', 64));
            Ok(splice(l, a, b - a, &v))
        },
    )
}

// ------------------------------------------------------------- fixtures

/// Line indexes of the base archive (line number − 1).
const M: usize = 0;
const KV: usize = 7;

/// A fixture that replaces the first `old` of line `k` with `new`, before
/// `archiveHash` (which covers the line as edited).
struct Sub {
    name: &'static str,
    code: Code,
    k: usize,
    old: &'static [u8],
    new: &'static [u8],
    also: &'static [&'static str],
    note: Option<&'static str>,
}

const BM: &[&str] = &["binary_missing"];

const fn sub(
    name: &'static str,
    code: Code,
    k: usize,
    old: &'static [u8],
    new: &'static [u8],
) -> Sub {
    Sub {
        name,
        code,
        k,
        old,
        new,
        also: &[],
        note: None,
    }
}

const fn part(name: &'static str, code: Code, old: &'static [u8], new: &'static [u8]) -> Sub {
    Sub {
        name,
        code,
        k: KV,
        old,
        new,
        also: BM,
        note: None,
    }
}

const fn noted(s: Sub, note: &'static str) -> Sub {
    Sub {
        note: Some(note),
        ..s
    }
}

const J: &[u8] = br#""journal":[]"#;
const SRC: &[u8] = br#""sourceIdentity":"src-1""#;

const SUBS: &[Sub] = &[
    sub("json_syntax", Code::JsonSyntax, M, J, br#""journal":[,]"#),
    sub(
        "json_syntax-literal",
        Code::JsonSyntax,
        M,
        J,
        br#""journal":[True]"#,
    ),
    sub(
        "json_syntax-nan",
        Code::JsonSyntax,
        M,
        J,
        br#""journal":[NaN]"#,
    ),
    sub(
        "json_syntax-leading-zero",
        Code::JsonSyntax,
        M,
        br#""epoch":1"#,
        br#""epoch":01"#,
    ),
    sub(
        "json_syntax-control-in-string",
        Code::JsonSyntax,
        M,
        SRC,
        b"\"sourceIdentity\":\"src\x01-1\"",
    ),
    sub(
        "json_invalid_utf8",
        Code::JsonInvalidUtf8,
        M,
        SRC,
        b"\"sourceIdentity\":\"src\xff-1\"",
    ),
    part(
        "json_invalid_utf8-part",
        Code::JsonInvalidUtf8,
        br#""name":"kv""#,
        b"\"name\":\"k\xc3v\"",
    ),
    noted(
        sub(
            "json_invalid_utf8-surrogate",
            Code::JsonInvalidUtf8,
            M,
            SRC,
            b"\"sourceIdentity\":\"src\xed\xa0\x80\"",
        ),
        "a surrogate encoded in UTF-8 (CESU-8 style, ED A0 80) is not UTF-8",
    ),
    sub(
        "json_invalid_utf8-overlong",
        Code::JsonInvalidUtf8,
        M,
        SRC,
        b"\"sourceIdentity\":\"src\xc0\xaf\"",
    ),
    sub(
        "json_duplicate_member",
        Code::JsonDuplicateMember,
        M,
        J,
        br#""journal":{"a":1,"a":1}"#,
    ),
    sub(
        "json_duplicate_member-top",
        Code::JsonDuplicateMember,
        M,
        br#""epoch":1,"#,
        br#""epoch":1,"epoch":1,"#,
    ),
    part(
        "json_duplicate_member-part",
        Code::JsonDuplicateMember,
        br#""kind":"part"}"#,
        br#""kind":"part","kind":"part"}"#,
    ),
    Sub {
        name: "json_duplicate_member-escaped",
        code: Code::JsonDuplicateMember,
        k: 2,
        old: br#""id":3,"#,
        new: br#""id":3,"\u0069d":3,"#,
        also: &["row_count", "content_hash_mismatch"],
        note: Some(
            r#"the same name spelled two ways ("id" and "\u0069d") in a row: a rows part that does not parse loses its rows"#,
        ),
    },
    sub(
        "json_lone_surrogate",
        Code::JsonLoneSurrogate,
        M,
        SRC,
        br#""sourceIdentity":"src-\ud800""#,
    ),
    sub(
        "json_lone_surrogate-low",
        Code::JsonLoneSurrogate,
        M,
        SRC,
        br#""sourceIdentity":"\udc00src""#,
    ),
    sub(
        "json_lone_surrogate-reversed",
        Code::JsonLoneSurrogate,
        M,
        SRC,
        br#""sourceIdentity":"\ude00\ud83d""#,
    ),
    part(
        "json_lone_surrogate-part",
        Code::JsonLoneSurrogate,
        br#""name":"kv""#,
        br#""name":"kv\ud83d""#,
    ),
    sub(
        "json_number_range",
        Code::JsonNumberRange,
        M,
        br#""epoch":1"#,
        br#""epoch":1e400"#,
    ),
    sub(
        "json_number_range-negative",
        Code::JsonNumberRange,
        M,
        J,
        br#""journal":[-1.8e308]"#,
    ),
    part(
        "json_number_range-part",
        Code::JsonNumberRange,
        br#""offset":0"#,
        br#""offset":1e400"#,
    ),
];

/// `n` nested empty arrays.
fn nest(n: usize) -> Vec<u8> {
    let mut v = vec![b'['; n];
    v.resize(2 * n, b']');
    v
}

/// The fixtures of `testdata/invalid` for these rules (`json_*`), from the
/// base archive (see `framing::fixtures` for its lines).
pub(super) fn fixtures(base: &Base) -> R<Vec<Fixture>> {
    let edited = |k: usize, f: &dyn Fn(&[u8]) -> R<Vec<u8>>| -> R<Vec<u8>> {
        let mut ls = base.lines.clone();
        ls[k] = f(&ls[k])?;
        rehash(&mut ls)?;
        Ok(join(&ls))
    };
    let mut out = Vec::new();
    for s in SUBS {
        let mut e = Expect::new(s.code, s.k as u64 + 1).also(s.also);
        if let Some(n) = s.note {
            e = e.note(n);
        }
        out.push(e.fixture(s.name, edited(s.k, &|l| replace(l, s.old, s.new))?)?);
    }
    out.push(
        Expect::new(Code::JsonSyntax, KV as u64 + 1)
            .also(BM)
            .fixture(
                "json_syntax-part",
                edited(KV, &|l| Ok(l[..l.len().saturating_sub(1)].to_vec()))?,
            )?,
    );
    let bom = |l: &[u8]| Ok([&b"\xef\xbb\xbf"[..], l].concat());
    out.push(
        Expect::new(Code::JsonBom, 1)
            .offset(Offset::At(0))
            .fixture("json_bom", edited(M, &bom)?)?,
    );
    out.push(
        Expect::new(Code::JsonBom, KV as u64 + 1)
            .also(BM)
            .fixture("json_bom-part", edited(KV, &bom)?)?,
    );
    out.push(
        Expect::new(Code::JsonDepth, 1)
            .note("journal holds 64 nested arrays inside the manifest object: depth 65")
            .fixture(
                "json_depth",
                edited(M, &|l| {
                    replace(l, J, &[&b"\"journal\":"[..], &nest(64)].concat())
                })?,
            )?,
    );
    out.push(
        Expect::new(Code::JsonDepth, KV as u64 + 1)
            .also(BM)
            .note("part (1) > items (2) > item (3) > 62 arrays: depth 65")
            .fixture(
                "json_depth-part",
                edited(KV, &|l| {
                    replace(
                        l,
                        br#""data":"e30=""#,
                        &[&b"\"data\":"[..], &nest(62)].concat(),
                    )
                })?,
            )?,
    );
    Ok(out)
}
