//! The framing rules of SPEC.md §2, on bytes: where a line ends, and what
//! its framing says. Lines end with LF, hold no CR, are not empty, the last
//! one ends with LF too, and a line over its limit is not looked into.
//!
//! Nothing here reads or keeps anything: callers hand in bytes (a slice, a
//! read buffer) and get line boundaries and findings back, as `csv-core`
//! does for CSV. The I/O (files read with `pread`, streams, pooled
//! buffers) is `ndarc-verify`'s line source (`crates/ndarc-verify/src/lines`);
//! the generator's readers of its own spools use the same boundaries.

use memchr::{memchr, memchr2};

use crate::{Code, Finding};

/// The index of the first LF in `bytes`: where the raw line at its start
/// ends.
#[inline]
pub fn find_lf(bytes: &[u8]) -> Option<usize> {
    memchr(b'\n', bytes)
}

/// The index of the first LF in `bytes`, found in one pass that also looks
/// for CR: with it, whether a CR comes before that LF (or anywhere, when
/// there is no LF). A line seen to hold no CR is then framed without a
/// second pass over it ([`frame_searched`]); on a 16 MiB part line that
/// pass cost 4 % of `verify`'s CPU.
#[inline]
pub fn find_lf_noting_cr(bytes: &[u8]) -> (Option<usize>, bool) {
    match memchr2(b'\n', b'\r', bytes) {
        None => (None, false),
        Some(i) if bytes[i] == b'\n' => (Some(i), false),
        Some(i) => (memchr(b'\n', &bytes[i + 1..]).map(|j| i + 1 + j), true),
    }
}

/// [`raw_line`] with [`find_lf_noting_cr`]'s CR: the raw line's length,
/// whether an LF ended it, and whether it may hold a CR.
#[inline]
pub fn raw_line_noting_cr(rest: &[u8]) -> (usize, bool, bool) {
    match find_lf_noting_cr(rest) {
        (Some(i), cr) => (i, true, cr),
        (None, cr) => (rest.len(), false, cr),
    }
}

/// The raw line at the start of `rest` (not empty): its length without the
/// LF, and whether an LF ended it (if not, it runs to the end of `rest`).
#[inline]
pub fn raw_line(rest: &[u8]) -> (usize, bool) {
    match find_lf(rest) {
        Some(i) => (i, true),
        None => (rest.len(), false),
    }
}

/// Feeds the next bytes of a stream to the raw line gathered in `line`:
/// appends them up to the first LF (not included). Returns how many bytes
/// were used (the LF included) and whether the line is complete; a caller
/// reading a stream in pieces (`BufRead::fill_buf`) consumes that many and
/// feeds again until it is.
#[inline]
pub fn gather_line(input: &[u8], line: &mut Vec<u8>) -> (usize, bool) {
    let (len, has_lf) = raw_line(input);
    line.extend_from_slice(&input[..len]);
    (len + usize::from(has_lf), has_lf)
}

/// How far past the start of a line an LF is looked for before the line is
/// over `limit`: the limit, a CR before the LF, and the LF.
#[inline]
pub fn window(limit: usize) -> usize {
    limit.saturating_add(2)
}

/// The raw lines of `input`, LF removed and a CR before it kept, each with
/// its offset and whether an LF ended it. An empty line is a line; an
/// input that ends with LF has no empty line after it.
#[derive(Debug, Clone)]
pub struct RawLines<'a> {
    input: &'a [u8],
    pos: usize,
}

impl<'a> RawLines<'a> {
    /// The raw lines of `input`.
    pub fn new(input: &'a [u8]) -> Self {
        RawLines { input, pos: 0 }
    }
}

/// One raw line of [`RawLines`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawLine<'a> {
    /// Byte offset of its first byte.
    pub offset: usize,
    /// The line without its LF (a CR before the LF is kept).
    pub bytes: &'a [u8],
    /// An LF ended it (only the last line of an input may lack one).
    pub has_lf: bool,
}

impl<'a> Iterator for RawLines<'a> {
    type Item = RawLine<'a>;

    #[inline]
    fn next(&mut self) -> Option<RawLine<'a>> {
        let start = self.pos;
        if start >= self.input.len() {
            return None;
        }
        let (len, has_lf) = raw_line(&self.input[start..]);
        self.pos = start + len + usize::from(has_lf);
        Some(RawLine {
            offset: start,
            bytes: &self.input[start..start + len],
            has_lf,
        })
    }
}

/// Whether a raw line (without LF) is over `limit`: a CR at its end does
/// not count.
#[inline]
pub fn over_limit(raw: &[u8], limit: usize) -> bool {
    let n = raw.len();
    let cr = n > 0 && raw[n - 1] == b'\r';
    n > limit.saturating_add(usize::from(cr))
}

/// Whether the end of the last line (no LF) is reported: not for a line
/// over its limit that the reader did not read to its end (a stream may
/// never end), so that a slice, a file and a pipe give the same findings.
#[inline]
pub fn reports_missing_lf(has_lf: bool, over: bool, skip_long: bool) -> bool {
    !has_lf && (skip_long || !over)
}

/// What the framing of one raw line says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frame {
    /// An empty line (perhaps a lone CR): not a record; its findings go
    /// with the next line.
    Empty,
    /// A record: the first `len` bytes of the raw line (a CR before the
    /// LF removed).
    Record {
        /// The record's length.
        len: usize,
    },
    /// Over the limit: not looked into.
    TooLong,
}

/// The framing of a raw line (without its LF) of line `number` at
/// `offset`: its CR and empty-line findings are pushed onto `findings`
/// (nothing is allocated for a clean line).
#[inline]
pub fn frame(
    raw: &[u8],
    number: u64,
    offset: u64,
    limit: usize,
    findings: &mut Vec<Finding>,
) -> Frame {
    frame_searched(raw, true, number, offset, limit, findings)
}

/// [`frame`] of a raw line already searched for CR: `may_have_cr` false
/// when that search ([`find_lf_noting_cr`]) found none, so the line is not
/// searched again. The same findings as [`frame`] either way.
#[inline]
pub fn frame_searched(
    raw: &[u8],
    may_have_cr: bool,
    number: u64,
    offset: u64,
    limit: usize,
    findings: &mut Vec<Finding>,
) -> Frame {
    // A line longer than the limit even without a CR is not looked into (a
    // stream is skipped unread), so every input reports the same.
    if raw.len() > limit.saturating_add(1) {
        return Frame::TooLong;
    }
    let mut len = raw.len();
    if may_have_cr {
        let trailing = len > 0 && raw[len - 1] == b'\r';
        if trailing {
            len -= 1;
        }
        if let Some(i) = memchr(b'\r', &raw[..len]) {
            findings.push(carriage_return(number, offset + i as u64));
        } else if trailing {
            findings.push(crlf(number, offset + len as u64));
        }
    }
    if len == 0 {
        findings.push(empty_line(number, offset));
        return Frame::Empty;
    }
    if len > limit {
        return Frame::TooLong;
    }
    Frame::Record { len }
}

/// The record of a line read again by offset (at most `limit + 1` raw
/// bytes of it, without LF): without a CR at its end, and at most `limit`
/// bytes.
pub fn record_again(raw: &mut Vec<u8>, limit: usize) {
    if raw.last() == Some(&b'\r') {
        raw.pop();
    }
    raw.truncate(limit);
}

/// A CR inside a line, at `offset`.
#[cold]
fn carriage_return(number: u64, offset: u64) -> Finding {
    Finding::new(
        Code::CarriageReturn,
        number,
        offset,
        "",
        "a carriage return (CR) inside the line; lines are separated by LF alone and hold no CR",
    )
}

/// A CR before the LF, at `offset`.
#[cold]
fn crlf(number: u64, offset: u64) -> Finding {
    Finding::new(
        Code::CarriageReturn,
        number,
        offset,
        "",
        "the line ends with CR LF; records are separated by LF alone",
    )
}

/// An empty line at `offset`.
#[cold]
fn empty_line(number: u64, offset: u64) -> Finding {
    Finding::new(
        Code::EmptyLine,
        number,
        offset,
        "",
        "an empty line; every line is one record",
    )
}

/// The `missing_final_newline` finding at the end of the input (`offset`),
/// whose last line is `number`; `stream` for an input that is not a file.
#[cold]
pub fn missing_final_newline(number: u64, offset: u64, stream: bool) -> Finding {
    Finding::new(
        Code::MissingFinalNewline,
        number,
        offset,
        "",
        if stream {
            "the input does not end with LF; every line, the closing included, ends with LF (truncated?)"
        } else {
            "the file does not end with LF; every line, the closing included, ends with LF (a truncated download?)"
        },
    )
}

/// The `line_too_long` finding of line `number` at `offset`, of `len`
/// bytes (more than that when not `known`), over `limit` (`what`:
/// "manifest" or "part").
pub fn line_too_long(
    number: u64,
    offset: u64,
    len: u64,
    known: bool,
    limit: usize,
    what: &str,
) -> Finding {
    let size = if known {
        format!("{len} bytes")
    } else {
        format!("more than {len} bytes")
    };
    Finding::new(
        Code::LineTooLong,
        number,
        offset,
        "",
        format!(
            "the {what} line is {size}, over the limit of {limit}; it was not parsed (raise the limit with {} if it is legitimate)",
            if what == "manifest" { "--max-manifest-bytes" } else { "--max-line-bytes" }
        ),
    )
}

/// The `manifest_missing` finding of an empty input.
pub fn manifest_missing() -> Finding {
    Finding::new(
        Code::ManifestMissing,
        1,
        0,
        "",
        "the archive is empty; its first line must be the manifest",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_lines_keep_empty_lines_and_crs() {
        let got: Vec<_> = RawLines::new(b"a\r\n\nb")
            .map(|l| (l.offset, l.bytes, l.has_lf))
            .collect();
        assert_eq!(
            got,
            vec![
                (0, &b"a\r"[..], true),
                (3, &b""[..], true),
                (4, &b"b"[..], false)
            ]
        );
        assert_eq!(RawLines::new(b"").count(), 0);
        assert_eq!(RawLines::new(b"x\n").count(), 1);
        let mut line = Vec::new();
        assert_eq!(gather_line(b"ab", &mut line), (2, false));
        assert_eq!(gather_line(b"c\nd", &mut line), (2, true));
        assert_eq!(line, b"abc");
    }

    /// Every input of up to 8 bytes from `a`, CR and LF: the one-pass
    /// search finds the LF `raw_line` finds, never misses a CR before it,
    /// and framing with what it saw gives `frame`'s findings.
    #[test]
    fn the_search_noting_cr_frames_as_frame_does() {
        let mut checked = 0;
        for len in 0..=8u32 {
            for n in 0..3usize.pow(len) {
                let bytes: Vec<u8> = (0..len)
                    .map(|k| [b'a', b'\r', b'\n'][n / 3usize.pow(k) % 3])
                    .collect();
                let (l, lf, cr) = raw_line_noting_cr(&bytes);
                assert_eq!((l, lf), raw_line(&bytes), "{bytes:?}");
                assert_eq!(cr, bytes[..l].contains(&b'\r'), "{bytes:?}");
                let raw = &bytes[..l];
                for limit in [0, 2, 4, 8] {
                    let (mut a, mut b) = (Vec::new(), Vec::new());
                    let fa = frame(raw, 1, 0, limit, &mut a);
                    let fb = frame_searched(raw, cr, 1, 0, limit, &mut b);
                    assert_eq!(fa, fb, "{bytes:?}");
                    let key = |f: &Vec<Finding>| -> Vec<_> {
                        f.iter().map(|f| (f.code, f.offset)).collect()
                    };
                    assert_eq!(key(&a), key(&b), "{bytes:?}");
                }
                checked += 1;
            }
        }
        assert_eq!(checked, (0..=8).map(|k| 3usize.pow(k)).sum::<usize>());
    }

    #[test]
    fn frames_a_line() {
        let mut f = Vec::new();
        assert_eq!(frame(b"ab", 1, 0, 4, &mut f), Frame::Record { len: 2 });
        assert!(f.is_empty());
        assert_eq!(frame(b"ab\r", 1, 0, 2, &mut f), Frame::Record { len: 2 });
        assert_eq!(f[0].code, Code::CarriageReturn);
        assert_eq!(f[0].offset, 2);
        f.clear();
        assert_eq!(frame(b"\r", 2, 5, 4, &mut f), Frame::Empty);
        let codes: Vec<_> = f.iter().map(|f| f.code).collect();
        assert_eq!(codes, vec![Code::CarriageReturn, Code::EmptyLine]);
        assert_eq!(frame(b"abcdef", 1, 0, 4, &mut f), Frame::TooLong);
        assert_eq!(frame(b"a\rcde", 1, 0, 4, &mut f), Frame::TooLong);
        assert!(!over_limit(b"abcd\r", 4));
        assert!(over_limit(b"abcde", 4));
    }
}
