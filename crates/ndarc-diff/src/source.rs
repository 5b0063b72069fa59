//! Inputs: a file read through bounded buffers (never mapped whole, so
//! resident memory stays small however large the archive), bytes in memory,
//! or a stream spooled to an unnamed temporary file. Lines are re-read by
//! offset for tables whose rows are out of key order.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use memchr::memchr;

/// An input of [`crate::diff`].
pub enum Source<'a> {
    /// A file, read through bounded buffers.
    Path(&'a Path),
    /// An archive in memory.
    Bytes(&'a [u8]),
    /// A stream (standard input, a pipe): copied to an unnamed temporary
    /// file first, since rows out of key order are re-read by offset.
    Reader(Box<dyn Read + Send + 'a>),
}

impl std::fmt::Debug for Source<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Path(p) => f.debug_tuple("Path").field(p).finish(),
            Source::Bytes(b) => write!(f, "Bytes({} bytes)", b.len()),
            Source::Reader(_) => f.write_str("Reader(..)"),
        }
    }
}

/// An opened input.
pub(crate) enum Input<'a> {
    File(File),
    Bytes(&'a [u8]),
}

impl<'a> Input<'a> {
    /// Opens `source`; errors name the input as `name`.
    pub(crate) fn open(source: Source<'a>) -> io::Result<Input<'a>> {
        match source {
            Source::Path(p) => {
                let f = File::open(p)?;
                let meta = f.metadata()?;
                if meta.is_dir() {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        "is a directory, not an archive",
                    ));
                }
                Ok(Input::File(f))
            }
            Source::Bytes(b) => Ok(Input::Bytes(b)),
            Source::Reader(mut r) => {
                let mut spool = tempfile::tempfile()?;
                io::copy(&mut r, &mut spool)?;
                Ok(Input::File(spool))
            }
        }
    }

    /// Reads at `offset` into `buf`; 0 at the end.
    pub(crate) fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Input::Bytes(b) => {
                let start = usize::try_from(offset).unwrap_or(usize::MAX).min(b.len());
                let n = buf.len().min(b.len() - start);
                buf[..n].copy_from_slice(&b[start..start + n]);
                Ok(n)
            }
            Input::File(f) => read_file_at(f, offset, buf),
        }
    }

    /// The line starting at `offset`, without LF (and without a CR before
    /// it), at most `limit` bytes.
    pub(crate) fn line_at(&self, offset: u64, limit: usize) -> io::Result<Vec<u8>> {
        if let Input::Bytes(b) = self {
            let start = usize::try_from(offset).unwrap_or(usize::MAX).min(b.len());
            let rest = &b[start..];
            let end = memchr(b'\n', rest).unwrap_or(rest.len()).min(limit);
            let line = &rest[..end];
            return Ok(line.strip_suffix(b"\r").unwrap_or(line).to_vec());
        }
        let mut out = Vec::new();
        let mut chunk = vec![0u8; 64 * 1024];
        let mut at = offset;
        loop {
            let n = self.read_at(at, &mut chunk)?;
            if n == 0 {
                break;
            }
            if let Some(i) = memchr(b'\n', &chunk[..n]) {
                out.extend_from_slice(&chunk[..i]);
                break;
            }
            out.extend_from_slice(&chunk[..n]);
            at += n as u64;
            if out.len() > limit {
                break;
            }
        }
        out.truncate(limit);
        if out.last() == Some(&b'\r') {
            out.pop();
        }
        Ok(out)
    }
}

#[cfg(unix)]
fn read_file_at(f: &File, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
    use std::os::unix::fs::FileExt;
    loop {
        match f.read_at(buf, offset) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            r => return r,
        }
    }
}

#[cfg(windows)]
fn read_file_at(f: &File, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
    use std::os::windows::fs::FileExt;
    f.seek_read(buf, offset)
}

#[cfg(not(any(unix, windows)))]
fn read_file_at(f: &File, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
    use std::io::{Seek, SeekFrom};
    let mut f = f;
    f.seek(SeekFrom::Start(offset))?;
    f.read(buf)
}

/// One line as read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LineInfo {
    /// 1-based line number.
    pub(crate) number: u64,
    /// Byte offset of its first byte.
    pub(crate) offset: u64,
    /// It ended with LF (false only for the last line of a file).
    pub(crate) has_lf: bool,
    /// A CR preceded the LF (stripped from the bytes).
    pub(crate) cr: bool,
    /// The line was longer than the limit: its bytes were skipped, this is
    /// its length.
    pub(crate) too_long: Option<u64>,
}

/// Sequential lines through a bounded buffer.
pub(crate) struct LineReader<'i, 'a> {
    input: &'i Input<'a>,
    pos: u64,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    eof: bool,
    line: u64,
}

const CHUNK: usize = 1 << 20;

impl<'i, 'a> LineReader<'i, 'a> {
    pub(crate) fn new(input: &'i Input<'a>) -> Self {
        LineReader {
            input,
            pos: 0,
            buf: vec![0; CHUNK],
            start: 0,
            end: 0,
            eof: false,
            line: 0,
        }
    }

    /// Reads more; false at the end of the input.
    fn fill(&mut self) -> io::Result<bool> {
        if self.eof {
            return Ok(false);
        }
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.buf.len() {
            let grow = self.buf.len().max(CHUNK);
            self.buf.resize(self.buf.len() + grow, 0);
        } else if self.end < CHUNK / 2 && self.buf.len() > 4 * CHUNK {
            // Give back the room a long line needed.
            self.buf.truncate(CHUNK);
            self.buf.shrink_to_fit();
        }
        let n = self.input.read_at(self.pos, &mut self.buf[self.end..])?;
        self.pos += n as u64;
        self.end += n;
        if n == 0 {
            self.eof = true;
        }
        Ok(n > 0)
    }

    /// The next line (its bytes without LF or CR), lines over `limit` bytes
    /// skipped with `too_long` set.
    pub(crate) fn next_line(&mut self, limit: usize) -> io::Result<Option<(LineInfo, &[u8])>> {
        let offset = self.pos - (self.end - self.start) as u64;
        let mut scanned = 0;
        let lf = loop {
            if let Some(i) = memchr(b'\n', &self.buf[self.start + scanned..self.end]) {
                break Some(self.start + scanned + i);
            }
            scanned = self.end - self.start;
            if scanned > limit + 1 {
                break None;
            }
            if !self.fill()? {
                break None;
            }
        };
        let (from, to, has_lf) = match lf {
            Some(lf) => (self.start, lf, true),
            None if self.end - self.start <= limit + 1 => {
                if self.start == self.end {
                    return Ok(None);
                }
                (self.start, self.end, false)
            }
            None => {
                // Too long: skip to the next LF without keeping it.
                self.line += 1;
                let mut skipped = (self.end - self.start) as u64;
                self.start = self.end;
                loop {
                    if !self.fill()? {
                        break;
                    }
                    if let Some(i) = memchr(b'\n', &self.buf[self.start..self.end]) {
                        skipped += i as u64;
                        self.start += i + 1;
                        break;
                    }
                    skipped += (self.end - self.start) as u64;
                    self.start = self.end;
                }
                let info = LineInfo {
                    number: self.line,
                    offset,
                    has_lf: true,
                    cr: false,
                    too_long: Some(skipped),
                };
                return Ok(Some((info, &[])));
            }
        };
        self.line += 1;
        self.start = if has_lf { to + 1 } else { to };
        let mut bytes = &self.buf[from..to];
        let cr = bytes.last() == Some(&b'\r');
        if cr {
            bytes = &bytes[..bytes.len() - 1];
        }
        let too_long = (bytes.len() > limit).then_some(bytes.len() as u64);
        let info = LineInfo {
            number: self.line,
            offset,
            has_lf,
            cr,
            too_long,
        };
        Ok(Some((info, if too_long.is_some() { &[] } else { bytes })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Got = (u64, u64, bool, bool, Option<u64>, Vec<u8>);

    fn lines(data: &[u8], limit: usize) -> Vec<Got> {
        let input = Input::Bytes(data);
        let mut r = LineReader::new(&input);
        let mut out = Vec::new();
        while let Some((i, b)) = r.next_line(limit).unwrap() {
            out.push((i.number, i.offset, i.has_lf, i.cr, i.too_long, b.to_vec()));
        }
        out
    }

    #[test]
    fn splits_lines() {
        let got = lines(b"ab\ncd\r\n\nlongline\nz", 4);
        assert_eq!(
            got,
            vec![
                (1, 0, true, false, None, b"ab".to_vec()),
                (2, 3, true, true, None, b"cd".to_vec()),
                (3, 7, true, false, None, b"".to_vec()),
                (4, 8, true, false, Some(8), b"".to_vec()),
                (5, 17, false, false, None, b"z".to_vec()),
            ]
        );
        assert!(lines(b"", 4).is_empty());
        let input = Input::Bytes(b"ab\ncd\r\n");
        assert_eq!(input.line_at(3, 100).unwrap(), b"cd");
        assert_eq!(input.line_at(0, 1).unwrap(), b"a");
    }

    #[test]
    fn long_lines_across_chunks() {
        let mut data = vec![b'x'; 3 * CHUNK + 5];
        data.push(b'\n');
        data.extend_from_slice(b"tail\n");
        let got = lines(&data, 4 * CHUNK);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].5.len(), 3 * CHUNK + 5);
        assert_eq!(got[1].1, 3 * CHUNK as u64 + 6);
        let got = lines(&data, CHUNK);
        assert_eq!(got[0].4, Some(3 * CHUNK as u64 + 5));
        assert_eq!(got[1].5, b"tail");
    }
}
