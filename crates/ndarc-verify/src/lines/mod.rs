//! The one line source: bytes → framed lines.
//!
//! The framing rules of SPEC.md §2 (lines end with LF, hold no CR, are not
//! empty, the last one ends with LF too, a line over its limit is not
//! looked into) are [`ndarc_format::framing`]'s, on bytes; this module is
//! their I/O: it reads the bytes, keeps the line and offset accounting, and
//! reads "the line at this offset" again. `verify`, the push API's
//! callers, `diff`, `ndarc canon` and `ndarc inspect` all read through it.
//!
//! Three inputs are covered:
//! - a slice in memory;
//! - a file, read through a 1 MiB buffer with `pread`, never mapped: a file
//!   that shrinks while it is read then simply ends early (a finding),
//!   where a memory map would kill the process with SIGBUS;
//! - a stream, either copied to an unnamed temporary file as it is read, so
//!   that lines can be read again by offset ([`LineSource::stream`]), or
//!   read once and kept nowhere ([`LineSource::reader`], for a reader that
//!   never goes back, such as `ndarc canon`).
//!
//! Lines borrow from the slice. Lines of a file share the read buffer
//! they were read into (a block of at least [`BLOCK`] bytes): no copy is
//! made, and the block goes back to a small pool when its last line is
//! dropped. Only the start of a line that a read cut off is copied, to the
//! front of the next block (about half a line per block). Lines of a
//! stream are copied out of the read buffer into a pooled line buffer: a
//! stream's read returns what has arrived, so a shared block might hold a
//! few bytes and pin many times that. Pooling matters: a fresh buffer per
//! line or block is new pages from the allocator every time (a 16 MiB part
//! line is 4,096 page faults, zeroed by the kernel), a pooled one is
//! already faulted in.

use std::fs::File;
use std::io::{self, Read, Write};
use std::sync::Arc;

use ndarc_format::framing::{self, Frame};
use ndarc_format::{Digest32, Finding, LineRef};
use sha2::{Digest, Sha256};

mod buffer;
mod input;

pub use buffer::LineBytes;
use buffer::{Pool, Pooled, Repr};
pub use input::Input;
use input::{lf_or_end_within, read_file_at};

/// Bytes read at once from a stream; the smallest read buffer.
pub const CHUNK: usize = 1 << 20;

/// The smallest read buffer of a file: lines of a file share it, and the
/// start of a line cut off at its end is copied into the next one, so a
/// block several times the usual part line (1 MiB) copies a small part of
/// what it reads (an eighth). Not larger: every block in flight is memory
/// the kernel zeroes when it is first touched, and on 1 MiB lines 8 MiB
/// blocks made that a tenth of the reading thread's time (a 509 MB narrow
/// archive at 2 jobs: 0.62 s against 0.58 s, 72 against 40 MiB). A block
/// grows for a longer line.
const BLOCK: usize = 4 << 20;

/// A file's read buffer above this size was grown for one long line (a
/// manifest of up to 256 MiB): after that line it goes back to [`BLOCK`].
/// Blocks grown for long part lines (16 MiB) stay below it and keep their
/// size, so that each such line is not read into a small block again and
/// grown (copied) on the way.
const GROWN_BLOCK: usize = 32 << 20;

/// One framed line.
#[derive(Debug)]
pub struct Line<'a> {
    /// 1-based line number (empty lines count).
    pub number: u64,
    /// Byte offset of its first byte.
    pub offset: u64,
    /// The record's bytes: the line without LF and without a CR before it;
    /// empty for a line over the limit.
    pub bytes: LineBytes<'a>,
    /// The line was longer than its limit: its length without LF (or, when
    /// `length_known` is false, the bytes seen before reading stopped).
    pub too_long: Option<u64>,
    /// For a line over the limit: whether the whole line was read.
    pub length_known: bool,
    /// SHA-256 of the line as it is in the file, when that is not the
    /// digest of `bytes` (a CR before the LF; a line over the limit).
    /// `archiveHash` is defined over the raw bytes.
    pub raw_digest: Option<Digest32>,
    /// Framing findings of this line and of empty lines before it, in file
    /// order.
    pub framing: Vec<Finding>,
}

impl Line<'_> {
    /// The line as the line checks take it: its number, offset and record
    /// bytes.
    pub fn at(&self) -> LineRef<'_> {
        LineRef {
            line: self.number,
            offset: self.offset,
            bytes: &self.bytes,
        }
    }

    /// The `line_too_long` finding of this line (`what`: "manifest" or
    /// "part").
    pub fn too_long_finding(&self, limit: usize, what: &str) -> Finding {
        let len = self.too_long.unwrap_or(0);
        framing::line_too_long(
            self.number,
            self.offset,
            len,
            self.length_known,
            limit,
            what,
        )
    }
}

/// The `manifest_missing` finding of an empty input.
pub fn manifest_missing() -> Finding {
    framing::manifest_missing()
}

/// What a line is read from.
enum Backing<'a> {
    Slice(&'a [u8]),
    /// A file, its archive beginning `.1` bytes in (see [`Input::FileFrom`]).
    File(&'a File, u64),
    Stream {
        reader: Box<dyn Read + Send + 'a>,
        /// The copy of what was read, for [`LineSource::stream`]; `None`
        /// for [`LineSource::reader`].
        spool: Option<File>,
    },
}

/// Sequential framed lines from an [`Input`] or a stream.
pub struct LineSource<'a> {
    backing: Backing<'a>,
    /// A regular file or a slice: a line over its limit can be skipped to
    /// its end (a stream or a device may never end).
    finite: bool,
    total: Option<u64>,
    /// The read buffer; `buf.buf[start..end]` is unread. Lines of a file
    /// share it (see [`LineSource::fill`]).
    buf: Arc<Pooled>,
    start: usize,
    end: usize,
    /// File offset of `buf[end]` (files and streams).
    read_pos: u64,
    eof: bool,
    /// Offset of the next line.
    pos: u64,
    line: u64,
    /// Findings of empty lines, reported with the next line.
    pending: Vec<Finding>,
    /// Reading stopped inside a line over its limit.
    stopped: bool,
    /// Line numbers are known (the source started at the first line).
    counted: bool,
    /// Buffers of lines copied out of `buf`.
    pool: Arc<Pool>,
}

impl<'a> LineSource<'a> {
    fn with(backing: Backing<'a>, finite: bool, total: Option<u64>) -> Self {
        let pool = Arc::<Pool>::default();
        LineSource {
            backing,
            finite,
            total,
            buf: Arc::new(Pooled {
                buf: Vec::new(),
                pool: Arc::clone(&pool),
            }),
            start: 0,
            end: 0,
            read_pos: 0,
            eof: false,
            pos: 0,
            line: 0,
            pending: Vec::new(),
            stopped: false,
            counted: true,
            pool,
        }
    }

    /// Lines of `input`.
    pub fn new(input: &'a Input<'_>) -> io::Result<Self> {
        Ok(match input {
            Input::Slice(b) => Self::with(Backing::Slice(b), true, Some(b.len() as u64)),
            Input::File(f) => Self::file(f, 0)?,
            Input::FileFrom(f, start) => Self::file(f, *start)?,
        })
    }

    /// Lines of file `f`, its archive beginning `start` bytes in.
    fn file(f: &'a File, start: u64) -> io::Result<Self> {
        let meta = f.metadata()?;
        let regular = meta.is_file();
        let total = meta.len().saturating_sub(start);
        Ok(Self::with(
            Backing::File(f, start),
            regular,
            regular.then_some(total),
        ))
    }

    /// Lines of `input` from `offset`, which must be the start of a line
    /// (the end of the input gives no lines). The lines before it are not
    /// read, so their count is unknown: every line and finding from here
    /// has line number 0 (unknown); offsets are exact. For reading the end of a file without reading it all, as
    /// `ndarc inspect` does for the closing line.
    pub fn tail(input: &'a Input<'_>, offset: u64) -> io::Result<Self> {
        let mut src = Self::new(input)?;
        src.pos = offset;
        src.read_pos = offset;
        src.counted = false;
        Ok(src)
    }

    /// Lines of a slice.
    pub fn slice(data: &'a [u8]) -> Self {
        Self::with(Backing::Slice(data), true, Some(data.len() as u64))
    }

    /// Lines of a stream, copied to an unnamed temporary file as they are
    /// read; the returned [`Input`] reads that copy (for lines read again
    /// by offset).
    pub fn stream(reader: impl Read + Send + 'a) -> io::Result<(Self, Input<'static>)> {
        let spool = tempfile::tempfile()?;
        let again = Input::File(spool.try_clone()?);
        let backing = Backing::Stream {
            reader: Box::new(reader),
            spool: Some(spool),
        };
        Ok((Self::with(backing, false, None), again))
    }

    /// Lines of a stream read once: nothing is copied or kept, so no line
    /// can be read again by offset (no temporary file is created, and none
    /// of the stream's bytes are written anywhere). The framing is that of
    /// [`LineSource::stream`]: a line over its limit that is not skipped
    /// stops the reading there.
    pub fn reader(reader: impl Read + Send + 'a) -> Self {
        let backing = Backing::Stream {
            reader: Box::new(reader),
            spool: None,
        };
        Self::with(backing, false, None)
    }

    /// Bytes consumed so far.
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// Total size, when known.
    pub fn total(&self) -> Option<u64> {
        self.total
    }

    /// Lines read so far (empty ones included).
    pub fn lines(&self) -> u64 {
        self.line
    }

    /// Framing findings after the last line (empty lines at the end).
    pub fn take_pending(&mut self) -> Vec<Finding> {
        std::mem::take(&mut self.pending)
    }

    fn is_stream(&self) -> bool {
        matches!(self.backing, Backing::Stream { .. })
    }

    /// The next non-empty line, or `None` at the end. A line over `limit`
    /// is skipped to its end when `skip_long` (its digest is needed), or
    /// when the input is a regular file; otherwise reading stops there
    /// (an endless stream ends the reading at the first limit).
    pub fn next_line(&mut self, limit: usize, skip_long: bool) -> io::Result<Option<Line<'a>>> {
        loop {
            if self.stopped {
                return Ok(None);
            }
            let offset = self.pos;
            let raw = match &self.backing {
                Backing::Slice(data) => {
                    let data: &'a [u8] = data;
                    let start = self.pos as usize;
                    if start >= data.len() {
                        return Ok(None);
                    }
                    let (len, has_lf, cr) = framing::raw_line_noting_cr(&data[start..]);
                    let end = start + len;
                    self.pos = (end + usize::from(has_lf)) as u64;
                    Raw::Bytes(LineBytes(Repr::Borrowed(&data[start..end])), has_lf, cr)
                }
                _ => match self.buffered(limit, skip_long || self.finite)? {
                    Some(raw) => raw,
                    None => return Ok(None),
                },
            };
            self.line += 1;
            if let Some(l) = self.frame(offset, raw, limit, skip_long) {
                return Ok(Some(l));
            }
        }
    }

    /// Applies the framing rules ([`framing::frame`]) to a raw line; `None`
    /// for an empty line (its finding waits for the next line).
    fn frame(
        &mut self,
        offset: u64,
        raw: Raw<'a>,
        limit: usize,
        skip_long: bool,
    ) -> Option<Line<'a>> {
        let number = if self.counted { self.line } else { 0 };
        let (has_lf, over) = match &raw {
            Raw::Bytes(b, lf, _) => (*lf, framing::over_limit(b, limit)),
            Raw::Long { has_lf, .. } => (*has_lf, true),
        };
        if framing::reports_missing_lf(has_lf, over, skip_long) {
            let stream = self.is_stream();
            self.pending
                .push(framing::missing_final_newline(number, self.pos, stream));
        }
        let long = |len: u64, digest: Option<Digest32>, known: bool, framing: Vec<Finding>| Line {
            number,
            offset,
            bytes: LineBytes(Repr::Borrowed(&[])),
            too_long: Some(len),
            length_known: known,
            raw_digest: digest,
            framing,
        };
        let (bytes, cr) = match raw {
            Raw::Long {
                len, digest, known, ..
            } => return Some(long(len, digest, known, self.take_pending())),
            Raw::Bytes(b, _, cr) => (b, cr),
        };
        let len =
            match framing::frame_searched(&bytes, cr, number, offset, limit, &mut self.pending) {
                Frame::Empty => return None,
                Frame::TooLong => {
                    let d = sha256(&bytes);
                    return Some(long(bytes.len() as u64, Some(d), true, self.take_pending()));
                }
                Frame::Record { len } => len,
            };
        let framing = self.take_pending();
        let raw_digest = (len < bytes.len()).then(|| sha256(&bytes));
        let bytes = bytes.truncated(len);
        Some(Line {
            number,
            offset,
            bytes,
            too_long: None,
            length_known: true,
            raw_digest,
            framing,
        })
    }

    /// The next raw line of a file or stream.
    fn buffered(&mut self, limit: usize, skip: bool) -> io::Result<Option<Raw<'a>>> {
        // Look for LF within limit + 2 bytes (a CR may precede it).
        let window_max = framing::window(limit);
        let mut scanned = 0;
        // A CR seen in the bytes scanned: the framing looks for it again.
        let mut cr = false;
        let mut probed = false;
        loop {
            let avail = self.end - self.start;
            let window = avail.min(window_max);
            let (found, cr_here) = framing::find_lf_noting_cr(
                &self.buf.buf[self.start + scanned..self.start + window],
            );
            cr |= cr_here;
            if let Some(i) = found {
                let lf = self.start + scanned + i;
                self.pos += (lf - self.start) as u64 + 1;
                let bytes = self.take_line(lf);
                return Ok(Some(Raw::Bytes(bytes, true, cr)));
            }
            scanned = window;
            if window >= window_max {
                break;
            }
            if self.eof {
                if avail == 0 {
                    return Ok(None);
                }
                let bytes = self.take_line(self.end);
                self.pos += avail as u64;
                return Ok(Some(Raw::Bytes(bytes, false, cr)));
            }
            // A file's line that would grow the buffer past GROWN_BLOCK
            // (only a manifest may be that long) is first looked ahead of
            // without keeping it: a line over its limit (a 400 MiB line
            // without LF) is then skipped in bounded memory rather than
            // held up to the limit.
            if skip && !probed && window_max > GROWN_BLOCK && avail >= GROWN_BLOCK / 2 {
                probed = true;
                if let Backing::File(f, start) = &self.backing {
                    let ahead = (window_max - avail) as u64;
                    if !lf_or_end_within(f, start.saturating_add(self.read_pos), ahead)? {
                        break;
                    }
                }
            }
            self.fill(window_max)?;
        }
        // Over the limit.
        if !skip {
            self.stopped = true;
            let seen = (self.end - self.start) as u64;
            self.pos += seen;
            return Ok(Some(Raw::Long {
                len: seen,
                digest: None,
                known: false,
                has_lf: true,
            }));
        }
        let mut h = Sha256::new();
        let mut len = 0u64;
        loop {
            if let Some(i) = framing::find_lf(&self.buf.buf[self.start..self.end]) {
                h.update(&self.buf.buf[self.start..self.start + i]);
                len += i as u64;
                self.start += i + 1;
                self.pos += len + 1;
                return Ok(Some(Raw::Long {
                    len,
                    digest: Some(h.finalize().into()),
                    known: true,
                    has_lf: true,
                }));
            }
            h.update(&self.buf.buf[self.start..self.end]);
            len += (self.end - self.start) as u64;
            self.start = self.end;
            if self.eof {
                self.pos += len;
                return Ok(Some(Raw::Long {
                    len,
                    digest: Some(h.finalize().into()),
                    known: true,
                    has_lf: false,
                }));
            }
            self.fill(CHUNK)?;
        }
    }

    /// The bytes from `start` to `lf` as a line; the unread bytes start
    /// after the LF. A file's line shares the read buffer. A stream's is a
    /// pooled copy, but a line that the buffer grew for (a manifest of up
    /// to 256 MiB) takes the buffer itself, rather than a copy beside it,
    /// and the bytes after it move to a fresh buffer.
    fn take_line(&mut self, lf: usize) -> LineBytes<'a> {
        let start = self.start;
        self.start = (lf + 1).min(self.end);
        let rest = self.end - self.start;
        if matches!(self.backing, Backing::File(..)) {
            let line = LineBytes(Repr::Shared {
                block: Arc::clone(&self.buf),
                start,
                end: lf,
            });
            // A line that the buffer grew for (a manifest of up to 256 MiB)
            // is left the only holder of that buffer: the few bytes after
            // it move to a small block, so that the large one is freed with
            // the line rather than read on to the end of the file.
            if self.buf.buf.len() > GROWN_BLOCK && rest <= CHUNK {
                let next = self.pool.block(CHUNK, &self.buf.buf[self.start..self.end]);
                self.buf = Arc::new(next);
                self.start = 0;
                self.end = rest;
            }
            return line;
        }
        if lf - start <= 4 * CHUNK || rest > CHUNK {
            return LineBytes(Repr::Owned(Arc::new(
                self.pool.copy(&self.buf.buf[start..lf]),
            )));
        }
        let next = self.pool.block(CHUNK, &self.buf.buf[self.start..self.end]);
        let mut line = std::mem::replace(&mut self.buf, Arc::new(next));
        self.start = 0;
        self.end = rest;
        if let Some(p) = Arc::get_mut(&mut line) {
            p.buf.truncate(lf);
            if start > 0 {
                p.buf.copy_within(start.., 0);
                p.buf.truncate(lf - start);
            }
            return LineBytes(Repr::Owned(line));
        }
        // Not reached: a stream's lines are copies, so nothing else holds
        // its read buffer.
        LineBytes(Repr::Shared {
            block: line,
            start,
            end: lf,
        })
    }

    /// Reads more. The unread bytes move to the front of the buffer, which
    /// grows only while a line (within its limit) needs the room, then one
    /// read fills what is free. When lines still share the buffer (a
    /// file's lines, being checked on other threads), the unread bytes
    /// move to a block of the pool instead, of at least [`BLOCK`] bytes.
    fn fill(&mut self, max_line: usize) -> io::Result<()> {
        let unread = self.end - self.start;
        let have = self.buf.buf.len();
        let file = matches!(self.backing, Backing::File(..));
        let (least, grown) = if file {
            (BLOCK, GROWN_BLOCK)
        } else {
            (CHUNK, 4 * CHUNK)
        };
        let grow = unread == have;
        let shrink = unread < CHUNK / 2 && have > grown;
        // The size the buffer should have.
        let mut len = if grow {
            // Full: grow, within the line's limit. Doubling, until the
            // buffer is a fraction of the limit: then straight to the
            // limit, in fresh zeroed memory that becomes resident only as
            // it is read into. A buffer grown by doubling to the limit
            // would hold the last two sizes at once while it is copied
            // (twice the limit for a line read to it); this way a
            // stream's line read to its limit costs the limit and 2 %
            // more. A file's buffer doubles until a tenth: its long line
            // is first looked ahead of once the buffer holds
            // GROWN_BLOCK / 2 (see `buffered`), which a jump to the limit
            // would read past (a 400 MiB line would be read to the limit
            // before it is found to be over it).
            let cap = max_line.saturating_add(CHUNK).max(least);
            let doubled = have + have.max(least);
            let fraction = if file { 10 } else { 50 };
            if doubled.saturating_mul(fraction) >= cap {
                cap
            } else {
                doubled
            }
        } else if shrink {
            // Give back the room a long line needed.
            least
        } else {
            have.max(least)
        };
        if let (Backing::File(..), Some(total)) = (&self.backing, self.total) {
            // No room (zeroed, so resident) past what the file holds.
            let left = total.saturating_sub(self.read_pos);
            // At least a chunk more, should the file have grown.
            let left = usize::try_from(left).unwrap_or(usize::MAX).max(CHUNK);
            len = len.min(unread.saturating_add(left));
        }
        let len = len.max(unread + 1);
        match Arc::get_mut(&mut self.buf) {
            Some(p) => {
                if grow && len > have {
                    // A zeroed allocation (fresh pages, not written), the
                    // unread bytes copied in, the old buffer freed.
                    let mut fresh = vec![0u8; len];
                    fresh[..unread].copy_from_slice(&p.buf[self.start..self.end]);
                    p.buf = fresh;
                } else {
                    p.buf.copy_within(self.start..self.end, 0);
                    if (grow || shrink) && len != have {
                        p.buf.truncate(unread);
                        p.buf.shrink_to(len);
                        p.buf.resize(len, 0);
                    }
                }
            }
            None => {
                let fresh = self.pool.block(len, &self.buf.buf[self.start..self.end]);
                self.buf = Arc::new(fresh);
            }
        }
        self.start = 0;
        self.end = unread;
        let end = self.end;
        let Some(p) = Arc::get_mut(&mut self.buf) else {
            return Err(io::Error::other("the read buffer is shared"));
        };
        let buf = &mut p.buf;
        let n = match &mut self.backing {
            Backing::Slice(_) => 0,
            Backing::File(f, start) => {
                read_file_at(f, start.saturating_add(self.read_pos), &mut buf[end..])?
            }
            Backing::Stream { reader, spool } => {
                let n = loop {
                    match reader.read(&mut buf[end..]) {
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                        r => break r?,
                    }
                };
                if let Some(spool) = spool {
                    spool.write_all(&buf[end..end + n])?;
                }
                n
            }
        };
        self.read_pos += n as u64;
        self.end += n;
        if n == 0 {
            self.eof = true;
        }
        Ok(())
    }
}

enum Raw<'a> {
    /// The line without its LF, whether an LF ended it, and whether it
    /// may hold a CR (false when the search for its LF saw none).
    Bytes(LineBytes<'a>, bool, bool),
    /// A line over the limit, not kept.
    Long {
        len: u64,
        digest: Option<Digest32>,
        known: bool,
        has_lf: bool,
    },
}

fn sha256(b: &[u8]) -> Digest32 {
    ndarc_format::hash::sha256(b)
}

#[cfg(test)]
mod tests {
    use super::buffer::POOL_BYTES;
    use super::*;
    use ndarc_format::Code;

    type Got = (u64, u64, Option<u64>, Vec<u8>, Vec<Code>);

    fn collect(mut src: LineSource<'_>, limit: usize) -> (Vec<Got>, Vec<Code>) {
        let mut out = Vec::new();
        while let Some(l) = src.next_line(limit, true).unwrap() {
            out.push((
                l.number,
                l.offset,
                l.too_long,
                l.bytes.to_vec(),
                l.framing.iter().map(|f| f.code).collect(),
            ));
        }
        let rest = src.take_pending().iter().map(|f| f.code).collect();
        (out, rest)
    }

    /// A reader that hands out at most `step` bytes a call, so that lines
    /// span many reads.
    struct Trickle<'a>(&'a [u8], usize);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = buf.len().min(self.1).min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    /// The same lines and findings from a slice, a file, a spooled stream
    /// and a stream read once (whole, and a few bytes a read).
    fn all(data: &[u8], limit: usize) -> (Vec<Got>, Vec<Code>) {
        let a = collect(LineSource::slice(data), limit);
        let (s, again) = LineSource::stream(data).unwrap();
        let b = collect(s, limit);
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(data).unwrap();
        let input = Input::File(f);
        let c = collect(LineSource::new(&input).unwrap(), limit);
        let d = collect(LineSource::reader(data), limit);
        // Small reads for small inputs; a few dozen for large ones (each
        // read moves the unread bytes to the front of the buffer).
        let step = 3.max(data.len() / 40);
        let e = collect(LineSource::reader(Trickle(data, step)), limit);
        assert_eq!(a, b, "slice and stream");
        assert_eq!(a, c, "slice and file");
        assert_eq!(a, d, "slice and reader");
        assert_eq!(a, e, "slice and a reader of a few bytes a read");
        // The spooled stream kept a copy; the reader keeps nothing.
        let mut copy = vec![0u8; data.len() + 1];
        assert_eq!(again.read_at(0, &mut copy).unwrap(), data.len());
        assert_eq!(&copy[..data.len()], data);
        a
    }

    #[test]
    fn frames_lines() {
        let (got, rest) = all(b"ab\ncd\r\n\nlongline\nz\r\x0dy", 4);
        use Code::*;
        assert_eq!(
            got,
            vec![
                (1, 0, None, b"ab".to_vec(), vec![]),
                (2, 3, None, b"cd".to_vec(), vec![CarriageReturn]),
                (4, 8, Some(8), vec![], vec![EmptyLine]),
                (
                    5,
                    17,
                    None,
                    b"z\r\ry".to_vec(),
                    vec![MissingFinalNewline, CarriageReturn]
                ),
            ]
        );
        assert!(rest.is_empty());
        let (got, rest) = all(b"a\n\n\n", 4);
        assert_eq!(got.len(), 1);
        assert_eq!(rest, vec![EmptyLine, EmptyLine]);
        assert_eq!(all(b"", 4), (vec![], vec![]));
    }

    /// Fuzz reproducer (verify_archive, 600 bytes of `x`, manifest limit
    /// 512): a manifest line over its limit without LF gave
    /// `missing_final_newline` from a slice but not from a stream, which
    /// stops reading at the limit.
    #[test]
    fn unread_long_line_says_nothing_about_its_end() {
        let data = vec![b'x'; 600];
        let first = |mut src: LineSource<'_>, skip: bool| {
            let l = src.next_line(512, skip).unwrap().unwrap();
            let mut codes: Vec<Code> = l.framing.iter().map(|f| f.code).collect();
            codes.extend(src.take_pending().iter().map(|f| f.code));
            (l.too_long.is_some(), codes)
        };
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&data).unwrap();
        let input = Input::File(f);
        for skip in [false, true] {
            let want = if skip {
                vec![Code::MissingFinalNewline]
            } else {
                vec![]
            };
            assert_eq!(first(LineSource::slice(&data), skip), (true, want.clone()));
            assert_eq!(
                first(LineSource::new(&input).unwrap(), skip),
                (true, want.clone())
            );
            if !skip {
                let (s, _) = LineSource::stream(&data[..]).unwrap();
                assert_eq!(first(s, skip), (true, want.clone()));
                assert_eq!(first(LineSource::reader(&data[..]), skip), (true, want));
            }
        }
        // Within the limit (a CR before the end does not count), the
        // missing LF is reported whatever the mode.
        let mut cr = vec![b'x'; 512];
        cr.push(b'\r');
        assert_eq!(
            first(LineSource::slice(&cr), false),
            (false, vec![Code::MissingFinalNewline, Code::CarriageReturn])
        );
        let short = vec![b'x'; 512];
        let (s, _) = LineSource::stream(&short[..]).unwrap();
        assert_eq!(first(s, false), (false, vec![Code::MissingFinalNewline]));
        assert_eq!(
            first(LineSource::reader(&short[..]), false),
            (false, vec![Code::MissingFinalNewline])
        );
    }

    #[test]
    fn long_lines_across_chunks() {
        let mut data = vec![b'x'; 3 * CHUNK + 5];
        data.push(b'\n');
        data.extend_from_slice(b"tail\n");
        let (got, _) = all(&data, 4 * CHUNK);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].3.len(), 3 * CHUNK + 5);
        assert_eq!(got[1].1, 3 * CHUNK as u64 + 6);
        let (got, _) = all(&data, CHUNK);
        assert_eq!(got[0].2, Some(3 * CHUNK as u64 + 5));
        assert_eq!(got[1].3, b"tail");
        // A CR in the line's first chunk, its LF chunks later: the one
        // search for both remembers it.
        data[10] = b'\r';
        let (got, _) = all(&data, 4 * CHUNK);
        assert_eq!(got[0].4, vec![Code::CarriageReturn]);
        assert_eq!(got[1].4, vec![]);
    }

    #[test]
    fn an_endless_line_stops_the_stream() {
        let zeros = std::io::repeat(0).take(1 << 40);
        let (mut s, _) = LineSource::stream(zeros).unwrap();
        let l = s.next_line(1000, false).unwrap().unwrap();
        assert!(l.too_long.is_some_and(|n| n > 1001), "{:?}", l.too_long);
        assert!(!l.length_known);
        assert!(s.next_line(1000, false).unwrap().is_none());
        let mut s = LineSource::reader(std::io::repeat(0).take(1 << 40));
        let l = s.next_line(1000, false).unwrap().unwrap();
        assert!(l.too_long.is_some_and(|n| n > 1001), "{:?}", l.too_long);
        assert!(s.next_line(1000, false).unwrap().is_none());
    }

    #[test]
    fn line_buffers_are_reused_and_the_pool_is_bounded() {
        let mut data = Vec::new();
        for i in 0..50 {
            data.extend(std::iter::repeat_n(b'a' + (i % 26) as u8, 3 << 20));
            data.push(b'\n');
        }
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&data).unwrap();
        let input = Input::File(f);
        let mut src = LineSource::new(&input).unwrap();
        let mut blocks = std::collections::HashSet::new();
        for i in 0..50u8 {
            let l = src.next_line(4 << 20, false).unwrap().unwrap();
            assert_eq!(l.bytes.len(), 3 << 20);
            assert!(l.bytes.iter().all(|&b| b == b'a' + i % 26));
            // A file's line is a range of the block it was read into.
            let Repr::Shared { block, start, .. } = &l.bytes.0 else {
                panic!("line {i} of a file was copied");
            };
            assert_eq!(l.bytes.as_ptr(), block.buf[*start..].as_ptr());
            blocks.insert(block.buf.as_ptr() as usize);
            drop(l); // its block back to the pool once read past
        }
        // One line at a time in flight: two blocks serve every line (the
        // one being read, and the one the start of a cut line moves to).
        assert!(blocks.len() <= 2, "{blocks:?}");
        // A stream's lines are copies, in reused line buffers.
        let mut src = LineSource::reader(&data[..]);
        let mut addresses = std::collections::HashSet::new();
        for _ in 0..50 {
            let l = src.next_line(4 << 20, false).unwrap().unwrap();
            assert!(matches!(l.bytes.0, Repr::Owned(_)));
            addresses.insert(l.bytes.as_ptr() as usize);
        }
        assert_eq!(addresses.len(), 1, "{addresses:?}");
        // Many lines alive at once: the pool keeps at most POOL_BYTES.
        let mut src = LineSource::new(&input).unwrap();
        let alive: Vec<_> = (0..50)
            .map(|_| src.next_line(4 << 20, false).unwrap().unwrap())
            .collect();
        let pool = Arc::clone(&src.pool);
        drop(alive);
        let held = pool.free.lock().unwrap().1;
        assert!(held > 0 && held <= POOL_BYTES, "{held}");
    }

    /// A file's line that grew the read buffer far past a block (a large
    /// manifest) is the only holder of that buffer once read: dropping it
    /// frees it, although the source reads on (diff drops the manifest
    /// line early, and kept a second copy of it alive before this).
    /// Blocks that grew for longer lines are reused. The pool once kept
    /// the 8 MiB blocks of the short lines before them, which filled it: a
    /// 16 MiB block was then allocated for every long line.
    #[test]
    fn grown_blocks_are_reused_once_short_lines_are_past() {
        let mut data = Vec::new();
        for (n, len) in [(40usize, 1usize << 20), (40, 12 << 20)] {
            for i in 0..n {
                data.extend(std::iter::repeat_n(b'a' + (i % 26) as u8, len));
                data.push(b'\n');
            }
        }
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&data).unwrap();
        let input = Input::File(f);
        let mut src = LineSource::new(&input).unwrap();
        let pool = Arc::clone(&src.pool);
        // As verification holds them: a window of lines in flight, here
        // 40 MiB of short lines (5 blocks), then 4 long lines.
        let mut alive = std::collections::VecDeque::new();
        let mut fresh_before_long = 0;
        for i in 0..80 {
            if i == 40 {
                fresh_before_long = pool.fresh.load(std::sync::atomic::Ordering::Relaxed);
            }
            let l = src.next_line(16 << 20, false).unwrap().unwrap();
            alive.push_back(l);
            let keep = if i < 40 { 40 } else { 4 };
            while alive.len() > keep {
                alive.pop_front();
            }
        }
        let fresh = pool.fresh.load(std::sync::atomic::Ordering::Relaxed) - fresh_before_long;
        assert!(fresh <= 8, "{fresh} blocks allocated for 40 long lines");
    }

    #[test]
    fn a_long_line_does_not_pin_the_read_buffer() {
        // Longer than a block grown for a part line is kept.
        let len = GROWN_BLOCK + BLOCK;
        let mut data = vec![b'm'; len];
        data.extend_from_slice(b"\npart\nclosing\n");
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&data).unwrap();
        let input = Input::File(f);
        let mut src = LineSource::new(&input).unwrap();
        let long = src.next_line(2 * len, false).unwrap().unwrap();
        assert_eq!(long.bytes.len(), len);
        assert!(src.buf.buf.len() <= CHUNK, "{}", src.buf.buf.len());
        let Repr::Shared { block, .. } = &long.bytes.0 else {
            panic!("a file's line was copied");
        };
        assert_eq!(Arc::strong_count(block), 1);
        drop(long);
        assert_eq!(&*src.next_line(100, false).unwrap().unwrap().bytes, b"part");
        assert_eq!(
            &*src.next_line(100, false).unwrap().unwrap().bytes,
            b"closing"
        );
        assert!(src.next_line(100, false).unwrap().is_none());
    }

    /// A source started at a line in the middle reads from there, with
    /// exact offsets and line number 0 (unknown), from a slice and a file.
    #[test]
    fn tail_starts_at_an_offset_with_unknown_line_numbers() {
        let data = b"ab\ncd\r\n\nlast";
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(data).unwrap();
        for input in [Input::Slice(data), Input::File(f), behind(b"x\ny\n", data)] {
            let (got, rest) = collect(LineSource::tail(&input, 3).unwrap(), 100);
            use Code::*;
            assert_eq!(
                got,
                vec![
                    (0, 3, None, b"cd".to_vec(), vec![CarriageReturn]),
                    (
                        0,
                        8,
                        None,
                        b"last".to_vec(),
                        vec![EmptyLine, MissingFinalNewline]
                    ),
                ]
            );
            assert!(rest.is_empty());
            let mut src = LineSource::tail(&input, data.len() as u64).unwrap();
            assert!(src.next_line(100, true).unwrap().is_none());
        }
    }

    /// A file holding `data` behind `junk`, read from where `data` begins.
    fn behind(junk: &[u8], data: &[u8]) -> Input<'static> {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(junk).unwrap();
        f.write_all(data).unwrap();
        Input::FileFrom(f, junk.len() as u64)
    }

    /// A file's lines from an offset in it are those of a file of the
    /// bytes from there, at the same offsets; nothing before it is read.
    #[test]
    fn a_file_from_an_offset_reads_as_the_file_of_its_bytes() {
        let data = b"ab\ncd\r\n\nlast";
        let (alone, _) = collect(LineSource::slice(data), 100);
        for junk in [
            &b""[..],
            b"\n",
            b"{\"kind\":\"manifest\"}\n\n",
            &[0u8; 5000],
        ] {
            let input = behind(junk, data);
            let src = LineSource::new(&input).unwrap();
            assert_eq!(src.total(), Some(data.len() as u64));
            let (got, rest) = collect(src, 100);
            assert_eq!(got, alone, "behind {} bytes", junk.len());
            assert!(rest.is_empty());
        }
    }

    #[test]
    fn line_at_reads_again() {
        let data = b"ab\ncd\r\nlast";
        for input in [
            Input::Slice(data),
            {
                let mut f = tempfile::tempfile().unwrap();
                f.write_all(data).unwrap();
                Input::File(f)
            },
            behind(b"z\n\n", data),
        ] {
            assert_eq!(input.line_at(0, 100).unwrap(), (b"ab".to_vec(), 3));
            assert_eq!(input.line_at(3, 100).unwrap(), (b"cd".to_vec(), 7));
            assert_eq!(input.line_at(7, 100).unwrap(), (b"last".to_vec(), 11));
            assert_eq!(input.line_at(0, 1).unwrap().0, b"a");
        }
    }
}
