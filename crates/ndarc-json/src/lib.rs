//! Strict JSON for the portability archive.
//!
//! The archive's JSON profile is I-JSON (RFC 7493) with a nesting limit, and
//! its canonical form is RFC 8785 (JCS). This crate gives:
//!
//! - [`parse`] / [`parse_with`]: a strict parser that rejects, with a stable
//!   code and a byte offset, invalid UTF-8, a BOM, duplicate member names,
//!   escaped lone surrogates, numbers that overflow a double, nesting deeper
//!   than 64 and everything RFC 8259 does not allow; in the same pass it
//!   tells whether the text is already canonical.
//! - [`check_canonical`]: the same answer without building the value.
//! - [`write_canonical`] / [`to_canonical_vec`]: the RFC 8785 serializer
//!   (members by UTF-16 code units, strings as `JSON.stringify`, numbers as
//!   ECMAScript `Number::toString`).
//! - [`canonicalize`]: one text in, its canonical bytes out, copying the input
//!   when it is canonical already.
//!
//! ```
//! let v = ndarc_json::parse(br#"{"b": 1.0, "a": [1e21, "\u00e9"]}"#).unwrap();
//! assert_eq!(ndarc_json::to_canonical_string(&v), r#"{"a":[1e+21,"é"],"b":1}"#);
//! let e = ndarc_json::parse(br#"{"a":1,"a":2}"#).unwrap_err();
//! assert_eq!((e.code(), e.offset()), ("json_duplicate_member", 7));
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod check;
mod error;
mod explain;
mod locate;
pub mod number;
mod parse;
mod rewrite;
mod scan;
mod ser;
mod value;

pub use check::{check_canonical, check_canonical_with};
pub use error::{Error, ErrorKind};
pub use explain::{explain_non_canonical, Difference, Rule};
pub use locate::{locate, pointer_token, skip_string, skip_value, Locator};
pub use parse::{parse, parse_with, validate_with, ParseOptions, Parsed, MAX_DEPTH};
pub use scan::{RawNumber, RawStr, Scalar, Scanner};
pub use ser::{
    to_canonical_string, to_canonical_vec, write_canonical, write_canonical_object, write_string,
    write_string_bytes,
};
pub use value::{cmp_utf16, safe_integer, Object, OwnedValue, Value, MAX_SAFE_INTEGER};

/// Appends the canonical form of the JSON text `input` to `out`. Returns
/// `true` when the input was canonical already (and was copied as is).
pub fn canonicalize(input: &[u8], out: &mut Vec<u8>) -> Result<bool, Error> {
    let canonical = canonical_form_into(input, out)?;
    if canonical {
        out.extend_from_slice(input);
    }
    Ok(canonical)
}

/// The canonical form of the JSON text `input`, or `None` when `input` is
/// canonical already (it is its own canonical form, and is not copied).
pub fn canonical_form(input: &[u8]) -> Result<Option<Vec<u8>>, Error> {
    let mut out = Vec::new();
    Ok((!canonical_form_into(input, &mut out)?).then_some(out))
}

/// [`canonical_form`] into a buffer the caller keeps: appends the canonical
/// form of `input` to `out` and returns `false`, or returns `true` and
/// appends nothing when `input` is canonical already. On an error nothing
/// is appended either.
///
/// ```
/// use ndarc_json::canonical_form_into;
/// let mut buf = b"x".to_vec();
/// assert_eq!(canonical_form_into(b"[1.0, 2]", &mut buf), Ok(false));
/// assert_eq!(buf, b"x[1,2]");
/// assert_eq!(canonical_form_into(b"[1,2]", &mut buf), Ok(true));
/// assert_eq!(canonical_form_into(b"[1, ", &mut buf).map_err(|e| e.code()), Err("json_syntax"));
/// assert_eq!(buf, b"x[1,2]");
/// ```
pub fn canonical_form_into(input: &[u8], out: &mut Vec<u8>) -> Result<bool, Error> {
    // Most input is canonical already (archives are written canonical): the
    // scanner proves that without building anything.
    if scan::is_canonical(input, MAX_DEPTH) {
        return Ok(true);
    }
    // Most of the rest differs only in spelling, members in order: written
    // canonical in one pass, no value built.
    let base = out.len();
    out.reserve(input.len());
    if rewrite::rewrite(input, MAX_DEPTH, out) {
        // Canonical after all when the scanner, stricter, refused it.
        if out[base..] == *input {
            out.truncate(base);
            return Ok(true);
        }
        return Ok(false);
    }
    // Errors and members to sort: the check pass, then the full parse into
    // a value written again.
    match check::quick_check(input, ParseOptions::default()) {
        Some(Ok(())) => return Ok(true),
        Some(Err(e)) => return Err(e),
        None => {}
    }
    let parsed = parse_with(input, ParseOptions::default())?;
    if parsed.non_canonical_at.is_none() {
        return Ok(true);
    }
    write_canonical(&parsed.value, out);
    Ok(false)
}
