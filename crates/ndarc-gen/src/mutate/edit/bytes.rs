//! Byte edits of a line, for what no JSON value can say, and where a
//! line starts in a file.

use ndarc_format::framing::RawLines;

use super::values::{Need, R};

/// The span of the first member's value when it is a number
/// (`{"epoch":769,` / `{"index":3,`).
pub(in crate::mutate) fn first_number(line: &[u8]) -> R<(usize, usize)> {
    let colon = line
        .iter()
        .position(|&b| b == b':')
        .need("no member in the line")?;
    let start = colon + 1;
    let end = line[start..]
        .iter()
        .position(|b| !matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
        .map_or(line.len(), |k| start + k);
    if end == start {
        return Err("the first member is not a number".to_string());
    }
    Ok((start, end))
}

/// The offset just after the opening quote of the string value of
/// `"member":"`.
pub(in crate::mutate) fn string_value(line: &[u8], member: &str) -> R<usize> {
    let pat = format!("\"{member}\":\"");
    let pat = pat.as_bytes();
    line.windows(pat.len())
        .position(|w| w == pat)
        .map(|i| i + pat.len())
        .need("no such string member")
}

pub(in crate::mutate) fn splice(line: &[u8], at: usize, remove: usize, insert: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(line.len() + insert.len());
    out.extend_from_slice(&line[..at]);
    out.extend_from_slice(insert);
    out.extend_from_slice(&line[(at + remove).min(line.len())..]);
    out
}

/// Byte offset of the start of line `k` (0-based) of `text`; `text.len()`
/// when there are not that many lines.
pub(in crate::mutate) fn line_start(text: &[u8], k: usize) -> usize {
    if k == 0 {
        return 0;
    }
    memchr_nth(text, k).map_or(text.len(), |i| i + 1)
}

/// The offset of the `k`th LF (1-based): the end of the `k`th raw line.
fn memchr_nth(text: &[u8], k: usize) -> Option<usize> {
    RawLines::new(text)
        .nth(k - 1)
        .filter(|l| l.has_lf)
        .map(|l| l.offset + l.bytes.len())
}
