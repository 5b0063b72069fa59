//! Mutations of SPEC.md §2 and §3.2: framing (empty lines, CR, the final LF,
//! line limits, the first and last lines, bytes after the closing) and
//! canonical form.

use ndarc_format::Code;

use ndarc_format::hash::{hex, sha256};

use crate::rng::Rng;

use super::edit::{
    first_number, line_start, random_bytes, splice, string_value, At, Edit, Model, Need, R,
};
use super::fixture::{join, rehash, replace, Base, Expect, Fixture, Offset};
use super::Mutation;

pub(super) const MUTATIONS: &[Mutation] = &[
    mutation!(
        NotCanonical,
        "not_canonical-space",
        "a space after a colon of any line",
        not_canonical_space
    ),
    mutation!(
        NotCanonical,
        "not_canonical-number",
        "a number written as N.0",
        not_canonical_number
    ),
    mutation!(
        NotCanonical,
        "not_canonical-escape",
        "a letter escaped as \\u00XX",
        not_canonical_escape
    ),
    mutation!(
        EmptyLine,
        "empty_line",
        "an empty line between two lines, before the first or after the last",
        empty_line
    ),
    mutation!(
        CarriageReturn,
        "carriage_return-closing",
        "the closing line ends with CR LF",
        carriage_return_closing
    ),
    mutation!(
        CarriageReturn,
        "carriage_return",
        "a manifest or part line ends with CR LF (archiveHash over the bytes with the CR)",
        carriage_return_line
    ),
    mutation!(
        MissingFinalNewline,
        "missing_final_newline",
        "the last LF removed",
        missing_final_newline
    ),
    mutation!(
        MissingFinalNewline,
        "missing_final_newline-truncated",
        "the file cut in the middle of the closing line",
        missing_final_newline_truncated
    ),
    mutation!(
        LineTooLong,
        "line_too_long",
        "a new payload whose part line is over the default 16 MiB limit (a 17 MB mutant)",
        line_too_long
    ),
    mutation!(
        TrailingData,
        "trailing_data",
        "a line after the closing line",
        trailing_data
    ),
    mutation!(
        ManifestMissing,
        "manifest_missing",
        "no manifest line: removed, replaced by [], or an empty file",
        manifest_missing
    ),
    mutation!(
        ClosingMissing,
        "closing_missing",
        "the closing line removed",
        closing_missing
    ),
];

/// The bytes a mutation adds to make a part line longer than the default
/// limit of 16 MiB (12 MiB of data are 16 MiB of base64).
const OVERSIZE_BYTES: usize = 12 * 1024 * 1024;

/// A line of the archive, 0-based, among manifest, parts and closing.
fn any_line(m: &Model, rng: &mut Rng) -> usize {
    rng.below(m.parts.len() as u64 + 2) as usize
}

fn describe_line(m: &Model, k: usize) -> String {
    if k == 0 {
        "the manifest (line 1)".to_string()
    } else if k == m.parts.len() + 1 {
        format!("the closing (line {})", k + 1)
    } else {
        format!("part {} (line {})", k - 1, k + 1)
    }
}

/// Edits line `k` (any line, the closing included) after sealing.
fn edit_any_line(
    e: Edit,
    m: &Model,
    k: usize,
    f: impl FnOnce(&[u8]) -> R<Vec<u8>> + 'static,
) -> Edit {
    if k == m.parts.len() + 1 {
        e.closing_bytes(move |l| {
            *l = f(l)?;
            Ok(())
        })
    } else {
        e.line(k, f)
    }
}

fn not_canonical_space(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let k = any_line(m, rng);
    let e = Edit::new(
        At::Line(k as u64 + 1),
        format!(
            "a space after the first colon of {}; archiveHash covers it as written",
            describe_line(m, k)
        ),
    );
    Ok(edit_any_line(e, m, k, |l| {
        let colon = l.iter().position(|&b| b == b':').need("no colon")?;
        Ok(splice(l, colon + 1, 0, b" "))
    }))
}

fn not_canonical_number(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let k = rng.below(m.parts.len() as u64 + 1) as usize;
    let e = Edit::new(
        At::Line(k as u64 + 1),
        format!(
            "the first number of {} written with .0",
            describe_line(m, k)
        ),
    );
    Ok(e.line(k, |l| {
        let (_, b) = first_number(l)?;
        Ok(splice(l, b, 0, b".0"))
    }))
}

fn not_canonical_escape(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let k = any_line(m, rng);
    let e = Edit::new(
        At::Line(k as u64 + 1),
        format!(
            "the first letter of the kind of {} escaped as \\u00XX",
            describe_line(m, k)
        ),
    );
    Ok(edit_any_line(e, m, k, |l| {
        let at = string_value(l, "kind")?;
        let c = *l.get(at).need("empty kind")?;
        Ok(splice(l, at, 1, format!("\\u{:04x}", c).as_bytes()))
    }))
}

fn empty_line(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let total = m.parts.len() + 2;
    let k = rng.below(total as u64 + 1) as usize;
    let what = if k == total {
        "an empty line after the closing".to_string()
    } else {
        format!("an empty line before {}", describe_line(m, k))
    };
    Ok(Edit::new(At::Line(k as u64 + 1), what).frame(move |text| {
        let at = line_start(text, k);
        text.insert(at, b'\n');
        Ok(())
    }))
}

fn carriage_return_closing(m: &mut Model, _rng: &mut Rng) -> R<Edit> {
    let _ = m;
    Ok(
        Edit::new(At::Closing, "the closing line ends with CR LF").closing_bytes(|l| {
            l.push(b'\r');
            Ok(())
        }),
    )
}

fn carriage_return_line(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let k = rng.below(m.parts.len() as u64 + 1) as usize;
    Ok(Edit::new(
        At::Line(k as u64 + 1),
        format!(
            "{} ends with CR LF; archiveHash covers the CR (SPEC §7.1: the bytes as they are)",
            describe_line(m, k)
        ),
    )
    .line(k, |l| {
        let mut l = l.to_vec();
        l.push(b'\r');
        Ok(l)
    }))
}

fn missing_final_newline(m: &mut Model, _rng: &mut Rng) -> R<Edit> {
    let _ = m;
    Ok(
        Edit::new(At::Closing, "the LF after the closing line removed").frame(|text| {
            text.pop();
            Ok(())
        }),
    )
}

fn missing_final_newline_truncated(m: &mut Model, _rng: &mut Rng) -> R<Edit> {
    let k = m.parts.len() + 1;
    Ok(Edit::new(
        At::Closing,
        "a download cut in the middle of the closing line",
    )
    .also(&[Code::JsonSyntax, Code::ClosingMissing])
    .allow(&[Code::PartCountMismatch])
    .frame(move |text| {
        let start = line_start(text, k);
        let len = text.len() - start;
        text.truncate(start + len / 2);
        Ok(())
    }))
}

fn line_too_long(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let seed = rng.next_u64();
    // Cheap, deterministic, incompressible enough: a repeated random block.
    let block = random_bytes(&mut Rng::new(seed), 4096);
    let data: Vec<u8> = block.iter().copied().cycle().take(OVERSIZE_BYTES).collect();
    let idx = m.add_last_payload(&data)?;
    let name = m.typed().payloads.get(idx).need("no payload")?.name.clone();
    let p = m.parts.len() - 1;
    Ok(Edit::new(
        At::Part(p),
        format!(
            "a new payload {name:?} of {OVERSIZE_BYTES} bytes in one chunk: its part line is over 16 MiB"
        ),
    )
    .also(&[Code::BinaryMissing]))
}

fn trailing_data(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let closing_line = m.parts.len() as u64 + 2;
    let variant = rng.below(if m.parts.is_empty() { 2 } else { 3 });
    let (what, copy): (String, Option<usize>) = match variant {
        0 => ("the closing line repeated after itself".to_string(), None),
        1 => (
            "a line that is not JSON after the closing".to_string(),
            None,
        ),
        _ => {
            let p = rng.below(m.parts.len() as u64) as usize;
            (format!("part {p} repeated after the closing"), Some(p + 1))
        }
    };
    let mut e = Edit::new(At::Line(closing_line + 1), what);
    if variant == 1 {
        e = e.allow(&[Code::JsonSyntax]);
    }
    Ok(e.frame(move |text| {
        let line: Vec<u8> = match (variant, copy) {
            (1, _) => b"garbage after the end".to_vec(),
            (_, Some(k)) => {
                let a = line_start(text, k);
                let b = line_start(text, k + 1);
                text[a..b.saturating_sub(1)].to_vec()
            }
            _ => {
                let a = line_start(text, closing_line as usize - 1);
                text[a..text.len() - 1].to_vec()
            }
        };
        text.extend_from_slice(&line);
        text.push(b'\n');
        Ok(())
    }))
}

fn manifest_missing(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let _ = m;
    match rng.below(3) {
        0 => Ok(
            Edit::new(At::Line(1), "the manifest line removed").frame(|text| {
                let at = line_start(text, 1);
                text.drain(..at);
                Ok(())
            }),
        ),
        1 => Ok(Edit::new(At::Line(1), "an empty file").frame(|text| {
            text.clear();
            Ok(())
        })),
        _ => Ok(
            Edit::new(At::Line(1), "the manifest line replaced by []").frame(|text| {
                let at = line_start(text, 1);
                text.splice(..at, b"[]\n".iter().copied());
                Ok(())
            }),
        ),
    }
}

fn closing_missing(m: &mut Model, _rng: &mut Rng) -> R<Edit> {
    let k = m.parts.len() + 1;
    Ok(Edit::new(
        At::Closing,
        format!(
            "the closing line removed (the file ends after line {}); the finding is at line {}",
            k,
            k + 1
        ),
    )
    .frame(move |text| {
        let at = line_start(text, k);
        text.truncate(at);
        Ok(())
    }))
}

// ------------------------------------------------------------- fixtures

/// The fixtures of `testdata/invalid` for these rules, from the base
/// archive (lines: 1 manifest; 2, 3 rows of `notes` and `users`; 4
/// `greeting.txt`; 5, 6 `logo.bin`; 7 `kv cache`; 8 `kv`; 9 closing).
pub(super) fn fixtures(base: &Base) -> R<Vec<Fixture>> {
    let mut out = Vec::new();
    carriage_return_fixtures(base, &mut out)?;
    empty_line_fixtures(base, &mut out)?;
    missing_final_newline_fixtures(base, &mut out)?;
    line_too_long_fixtures(base, &mut out)?;
    trailing_data_fixtures(base, &mut out)?;
    missing_record_fixtures(base, &mut out)?;
    Ok(out)
}

/// `lines` with line `k` replaced by `f` of it.
fn with_line(lines: &[Vec<u8>], k: usize, f: &dyn Fn(&[u8]) -> R<Vec<u8>>) -> R<Vec<Vec<u8>>> {
    let mut ls = lines.to_vec();
    ls[k] = f(&ls[k])?;
    Ok(ls)
}

/// CR before the LF of every line, of the closing only, and inside a line.
fn carriage_return_fixtures(base: &Base, out: &mut Vec<Fixture>) -> R<()> {
    use Code::*;
    const GREET: usize = 3;
    let l = &base.lines;
    let c = base.closing();
    let closing_line = c as u64 + 1;

    // Every line ends with CR LF; archiveHash covers the CRs.
    let mut ls: Vec<Vec<u8>> = l.iter().map(|x| [&x[..], b"\r"].concat()).collect();
    ls[c].pop();
    rehash(&mut ls)?;
    ls[c].push(b'\r');
    out.push(Expect::new(CarriageReturn, 1)
        .note("every line ends with CR LF (a Windows conversion). archiveHash is computed over the raw line bytes, CRs included (FORMAT-BRIEF §7: 'BOM and CR are errors; archiveHash is still defined over the raw line bytes')")
        .fixture("carriage_return", join(&ls))?);

    let ls = with_line(l, c, &|x| Ok([x, b"\r"].concat()))?;
    out.push(
        Expect::new(CarriageReturn, closing_line)
            .note("only the closing line (which no hash covers) ends with CR LF")
            .fixture("carriage_return-closing", join(&ls))?,
    );

    let mut ls = with_line(l, GREET, &|x| {
        replace(
            x,
            b"\"key\":\"greeting.txt\"",
            b"\"key\":\"greeting\r.txt\"",
        )
    })?;
    rehash(&mut ls)?;
    out.push(
        Expect::new(CarriageReturn, GREET as u64 + 1)
            .also(&["json_syntax", "binary_missing"])
            .note(
                "a bare CR inside a line (not before the LF): not JSON whitespace inside a string",
            )
            .fixture("carriage_return-inside", join(&ls))?,
    );
    Ok(())
}

/// Empty lines: between parts, before the manifest, holding only CR, after
/// the closing.
fn empty_line_fixtures(base: &Base, out: &mut Vec<Fixture>) -> R<()> {
    use Code::*;
    let l = &base.lines;
    let closing_line = base.closing() as u64 + 1;
    let split =
        |at: usize, between: &[u8]| [&join(&l[..at])[..], between, &join(&l[at..])].concat();
    out.push(Expect::new(EmptyLine, 3).fixture("empty_line", split(2, b"\n"))?);
    out.push(
        Expect::new(EmptyLine, 1)
            .offset(Offset::At(0))
            .note("an empty line before the manifest (which is then line 2)")
            .fixture("empty_line-first", split(0, b"\n"))?,
    );
    out.push(
        Expect::new(CarriageReturn, 3)
            .also(&["empty_line"])
            .note("a line holding only CR: a CR and an empty line")
            .fixture("carriage_return-empty-line", split(2, b"\r\n"))?,
    );
    out.push(
        Expect::new(EmptyLine, closing_line + 1)
            .note("an LF after the closing line's LF")
            .fixture("empty_line-end", [&join(l)[..], b"\n"].concat())?,
    );
    Ok(())
}

/// No LF after the closing line, and a closing line cut short.
fn missing_final_newline_fixtures(base: &Base, out: &mut Vec<Fixture>) -> R<()> {
    use Code::*;
    let l = &base.lines;
    let c = base.closing();
    let closing_line = c as u64 + 1;
    out.push(
        Expect::new(MissingFinalNewline, closing_line)
            .fixture("missing_final_newline", l.join(&b'\n'))?,
    );
    let cut = &l[c][..40.min(l[c].len())];
    out.push(Expect::new(MissingFinalNewline, closing_line)
        .also(&["json_syntax", "closing_missing"])
        .allow(&["part_count_mismatch"])
        .note("a download cut in the middle of the closing line; the cut line cannot be told from a part, so counting it as one (part_count_mismatch) is allowed")
        .fixture("missing_final_newline-truncated", [&join(&l[..c])[..], cut].concat())?);
    Ok(())
}

/// Lines over the limits (lowered by each fixture's options).
fn line_too_long_fixtures(base: &Base, out: &mut Vec<Fixture>) -> R<()> {
    use Code::*;
    const GREET: usize = 3;
    let l = &base.lines;
    let c = base.closing();
    // greeting.txt made 900 bytes (1,200 base64) and the archive resealed.
    let long = long_greeting(base)?;
    out.push(
        Expect::new(LineTooLong, GREET as u64 + 1)
            .option("max_line", 1024)
            .also(&["binary_missing"])
            .note("the limit is lowered to 1024 bytes; greeting.txt is 900 bytes in one chunk (1,200 base64)")
            .fixture("line_too_long", join(&long))?,
    );
    let longest = long[GREET].len() as u64;
    if long[1..c]
        .iter()
        .enumerate()
        .any(|(i, x)| i + 1 != GREET && x.len() as u64 >= longest)
    {
        return Err("line 4 is not the longest part line".into());
    }
    out.push(
        Expect::new(LineTooLong, GREET as u64 + 1)
            .option("max_line", longest - 1)
            .also(&["binary_missing"])
            .note("the limit is one byte less than line 4 (the longest part line)")
            .fixture("line_too_long-by-one", join(&long))?,
    );
    out.push(
        Expect::new(LineTooLong, 1)
            .option("max_manifest_line", 1024)
            .note("the manifest limit is lowered to 1024 bytes; the manifest is longer")
            .fixture("line_too_long-manifest", join(l))?,
    );
    Ok(())
}

/// Lines after the closing: the closing again, garbage, a part.
fn trailing_data_fixtures(base: &Base, out: &mut Vec<Fixture>) -> R<()> {
    use Code::*;
    const KV: usize = 7;
    let l = &base.lines;
    let c = base.closing();
    let closing_line = c as u64 + 1;
    let after = |extra: &[u8]| [&join(l)[..], extra, b"\n"].concat();
    out.push(
        Expect::new(TrailingData, closing_line + 1)
            .note("the closing line is repeated after the closing line")
            .fixture("trailing_data", after(&l[c]))?,
    );
    out.push(
        Expect::new(TrailingData, closing_line + 1)
            .allow(&["json_syntax"])
            .note("a line that is not JSON after the closing; reporting that it is not JSON is allowed")
            .fixture("trailing_data-garbage", after(b"-- end of export --"))?,
    );
    out.push(
        Expect::new(TrailingData, closing_line + 1)
            .note("a well-formed part line follows the closing")
            .fixture("trailing_data-part", after(&l[KV]))?,
    );
    Ok(())
}

/// No closing line; no manifest line (an empty file, the parts first, the
/// manifest in an array).
fn missing_record_fixtures(base: &Base, out: &mut Vec<Fixture>) -> R<()> {
    use Code::*;
    let l = &base.lines;
    let c = base.closing();
    let closing_line = c as u64 + 1;
    out.push(Expect::new(ClosingMissing, closing_line)
        .offset(Offset::Eof)
        .note("truncated before the closing line; the finding is at the line where the closing should be, offset = file length")
        .fixture("closing_missing", join(&l[..c]))?);
    out.push(
        Expect::new(ManifestMissing, 1)
            .offset(Offset::At(0))
            .note("an empty file")
            .fixture("manifest_missing", Vec::new())?,
    );
    out.push(
        Expect::new(ManifestMissing, 1)
            .pointer("/kind")
            .note("the manifest line is missing: the file starts with the first part")
            .fixture("manifest_missing-part-first", join(&l[1..]))?,
    );
    let mut ls = with_line(l, 0, &|x| Ok([b"[", x, b"]"].concat()))?;
    rehash(&mut ls)?;
    out.push(
        Expect::new(ManifestMissing, 1)
            .pointer("")
            .fixture("manifest_missing-array", join(&ls))?,
    );
    Ok(())
}

/// The base archive with `greeting.txt` (its only chunk on line 4) made 900
/// bytes long, sealed again.
fn long_greeting(base: &Base) -> R<Vec<Vec<u8>>> {
    const GREET: usize = 3;
    let old = b"hello, world\n";
    let mut new: Vec<u8> = (0..=255u8).cycle().take(3 * 256).collect();
    new.resize(900, 0);
    let mut ls = base.lines.clone();
    let sized = |d: &[u8]| format!("\"sha256\":\"{}\",\"size\":{}", hex(&sha256(d)), d.len());
    ls[0] = replace(&ls[0], sized(old).as_bytes(), sized(&new).as_bytes())?;
    let b64 = |d: &[u8]| {
        let mut v = b"\"data\":\"".to_vec();
        ndarc_format::pack::push_base64(d, &mut v);
        v
    };
    ls[GREET] = replace(&ls[GREET], &b64(old), &b64(&new))?;
    let sealed = crate::reseal(&join(&ls)).map_err(|e| e.to_string())?;
    Ok(Base::new(&sealed)?.lines)
}

/// A `not_canonical` fixture: name, line index, the bytes replaced and
/// their replacement, and a note.
type CanonSub = (
    &'static str,
    usize,
    &'static [u8],
    &'static [u8],
    Option<&'static str>,
);

/// The `not_canonical` fixtures of `testdata/invalid` (SPEC.md §3.2), from
/// the base archive: line 1 the manifest, 2 and 3 the rows of `notes` and
/// `users`, 9 the closing.
pub(super) fn canonical_fixtures(base: &Base) -> R<Vec<Fixture>> {
    const M: usize = 0;
    const NOTES: usize = 1;
    const USERS: usize = 2;
    let edited = |k: usize, f: &dyn Fn(&[u8]) -> R<Vec<u8>>| -> R<Vec<u8>> {
        let mut ls = base.lines.clone();
        ls[k] = f(&ls[k])?;
        rehash(&mut ls)?;
        Ok(join(&ls))
    };
    let subs: &[CanonSub] = &[
        ("not_canonical", M, br#""epoch":1,"#, br#""epoch": 1,"#, None),
        (
            "not_canonical-code-point-order",
            M,
            "\"\u{1F600}\":\"astral\",\"\u{fb01}le\":\"ligature\"".as_bytes(),
            "\"\u{fb01}le\":\"ligature\",\"\u{1F600}\":\"astral\"".as_bytes(),
            Some("customMetadata members sorted by code point (U+FB01 before U+1F600) instead of UTF-16 code units"),
        ),
        ("not_canonical-escape", NOTES, br#""first""#, br#""\u0066irst""#, None),
        ("not_canonical-hex-case", NOTES, br"\u001f", br"\u001F", None),
        (
            "not_canonical-del-escaped",
            NOTES,
            b"\x7f",
            br"\u007f",
            Some("U+007F escaped; JSON.stringify writes it as itself"),
        ),
        ("not_canonical-astral-escaped", NOTES, "\u{1F600}".as_bytes(), br"\ud83d\ude00", None),
        ("not_canonical-solidus", M, br#""text/plain""#, br#""text\/plain""#, None),
        ("not_canonical-number", NOTES, br#""user_id":7}"#, br#""user_id":7.0}"#, None),
        ("not_canonical-exponent", USERS, br#""score":1.5}"#, br#""score":15e-1}"#, None),
        ("not_canonical-negative-zero", M, br#""journal":[]"#, br#""journal":[-0]"#, None),
    ];
    let mut out = Vec::new();
    for &(name, k, old, new, note) in subs {
        let mut e = Expect::new(Code::NotCanonical, k as u64 + 1);
        if let Some(n) = note {
            e = e.note(n);
        }
        out.push(e.fixture(name, edited(k, &|l| replace(l, old, new))?)?);
    }
    // Line 2's members in insertion order: kind, index, items.
    let reorder = |l: &[u8]| -> R<Vec<u8>> {
        let items = l
            .strip_prefix(b"{\"index\":0,\"items\":")
            .and_then(|r| r.strip_suffix(b",\"kind\":\"part\"}"))
            .ok_or("line 2 is not {index 0, items, kind part}")?;
        Ok([
            &b"{\"kind\":\"part\",\"index\":0,\"items\":"[..],
            items,
            b"}",
        ]
        .concat())
    };
    out.push(
        Expect::new(Code::NotCanonical, 2)
            .note("members of a part in insertion order (kind, index, items) instead of sorted")
            .fixture("not_canonical-order", edited(NOTES, &reorder)?)?,
    );
    // The closing line, which no hash covers: a space after its first comma.
    let mut ls = base.lines.clone();
    let c = base.closing();
    ls[c] = replace(&ls[c], b",", b", ")?;
    out.push(
        Expect::new(Code::NotCanonical, c as u64 + 1)
            .fixture("not_canonical-closing", join(&ls))?,
    );
    Ok(out)
}
