//! Mutations of SPEC.md §2 and §3.2: framing (empty lines, CR, the final LF,
//! line limits, the first and last lines, bytes after the closing) and
//! canonical form.

use ndarc_format::Code;

use crate::rng::Rng;

use super::edit::{
    arr, first_number, line_start, random_bytes, splice, str_at, string_value, At, Edit, Model,
    Need, R,
};
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
    let name = str_at(&arr(&m.manifest, "payloads")[idx], "name")
        .unwrap_or_default()
        .to_string();
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
