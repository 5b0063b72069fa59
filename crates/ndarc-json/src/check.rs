//! Whether a text is canonical: the scanner first (most texts are), the
//! parser's check pass and full parse for the rest. Here, not in
//! `parse.rs`, so that the scanner (which uses the parser's lexing) and
//! the parser do not import each other.

use crate::error::Error;
use crate::parse::{check_pass, parse_with, ParseOptions};

/// Checks that `bytes` is a valid JSON text under the profile and returns
/// `Ok(None)` when it is canonical, or `Ok(Some(offset))` of the first
/// non-canonical byte.
///
/// A canonical text is checked without building its value (strings without
/// escapes are not copied, arrays and objects not collected); a text found
/// non-canonical is parsed in full so that every error is still reported.
pub fn check_canonical(bytes: &[u8]) -> Result<Option<usize>, Error> {
    check_canonical_with(bytes, ParseOptions::default())
}

/// [`check_canonical`] with options.
pub fn check_canonical_with(bytes: &[u8], options: ParseOptions) -> Result<Option<usize>, Error> {
    match quick_check(bytes, options) {
        Some(Ok(())) => Ok(None),
        // Up to the first non-canonical byte both parsers see the same
        // text, so an error found before it is the full parse's error too.
        Some(Err(e)) => Err(e),
        // Duplicate names in an unsorted object are found only by the full
        // parse, and they may come before an error later in the text; an
        // error outranks non-canonical form.
        None => parse_with(bytes, options).map(|p| p.non_canonical_at),
    }
}

/// The check pass of [`check_canonical`] alone: `Some(Ok(()))` when the text
/// is valid and canonical, `Some(Err(e))` for an error found while it was
/// still canonical, `None` when the full parse must decide.
pub(crate) fn quick_check(bytes: &[u8], options: ParseOptions) -> Option<Result<(), Error>> {
    // Most texts checked are canonical: the scanner proves that several
    // times faster than the parser's check pass, which decides the rest.
    if crate::scan::is_canonical(bytes, options.max_depth) {
        return Some(Ok(()));
    }
    check_pass(bytes, options)
}
