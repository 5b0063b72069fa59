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

mod error;
mod locate;
pub mod number;
mod parse;
mod scan;
mod ser;
mod value;

pub use error::{Error, ErrorKind};
pub use locate::{locate, skip_string, skip_value, Locator};
pub use parse::{
    check_canonical, check_canonical_with, parse, parse_with, validate_with, ParseOptions, Parsed,
    MAX_DEPTH,
};
pub use scan::{RawNumber, RawStr, Scalar, Scanner};
pub use ser::{
    to_canonical_string, to_canonical_vec, write_canonical, write_canonical_object, write_string,
};
pub use value::{cmp_utf16, safe_integer, Object, OwnedValue, Value, MAX_SAFE_INTEGER};

/// Appends the canonical form of the JSON text `input` to `out`. Returns
/// `true` when the input was canonical already (and was copied as is).
pub fn canonicalize(input: &[u8], out: &mut Vec<u8>) -> Result<bool, Error> {
    Ok(match canonical_form(input)? {
        None => {
            out.extend_from_slice(input);
            true
        }
        Some(canon) => {
            out.extend_from_slice(&canon);
            false
        }
    })
}

/// The canonical form of the JSON text `input`, or `None` when `input` is
/// canonical already (it is its own canonical form, and is not copied).
pub fn canonical_form(input: &[u8]) -> Result<Option<Vec<u8>>, Error> {
    // Most input is canonical already (archives are written canonical): the
    // check pass builds nothing, and only a text it finds non-canonical is
    // parsed into a value and written again.
    match parse::quick_check(input, ParseOptions::default()) {
        Some(Ok(())) => return Ok(None),
        Some(Err(e)) => return Err(e),
        None => {}
    }
    let parsed = parse_with(input, ParseOptions::default())?;
    if parsed.non_canonical_at.is_none() {
        return Ok(None);
    }
    let mut out = Vec::with_capacity(input.len());
    write_canonical(&parsed.value, &mut out);
    Ok(Some(out))
}
