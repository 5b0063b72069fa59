//! What lines are read from, and read again by offset: a slice, or a
//! file read with `pread`.

use std::fs::File;
use std::io;

use ndarc_format::framing;

use super::CHUNK;

/// What lines are read from, and read again by offset.
pub enum Input<'a> {
    /// Bytes in memory.
    Slice(&'a [u8]),
    /// A file (or the spool of a stream), read with `pread`.
    File(File),
    /// A file whose archive begins `.1` bytes in, read with `pread`;
    /// every offset is the archive's (from `.1`). A database packed to a
    /// temporary file is one (`ndarc_sqlite::pack_to_temp`): its part lines
    /// were written first, after room for the manifest, which then went
    /// in just before them once `partCount` was known, so that no line is
    /// copied.
    FileFrom(File, u64),
}

impl std::fmt::Debug for Input<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Input::Slice(b) => write!(f, "Slice({} bytes)", b.len()),
            Input::File(file) => f.debug_tuple("File").field(file).finish(),
            Input::FileFrom(file, start) => {
                f.debug_tuple("FileFrom").field(file).field(start).finish()
            }
        }
    }
}

impl Input<'_> {
    /// Reads at `offset` into `buf`; 0 at the end.
    pub fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Input::Slice(b) => {
                let start = usize::try_from(offset).unwrap_or(usize::MAX).min(b.len());
                let n = buf.len().min(b.len() - start);
                buf[..n].copy_from_slice(&b[start..start + n]);
                Ok(n)
            }
            Input::File(f) => read_file_at(f, offset, buf),
            Input::FileFrom(f, start) => read_file_at(f, start.saturating_add(offset), buf),
        }
    }

    /// The line starting at `offset`: its record bytes (without LF, and
    /// without a CR before it), at most `limit` bytes of them, and the
    /// offset of the next line.
    pub fn line_at(&self, offset: u64, limit: usize) -> io::Result<(Vec<u8>, u64)> {
        let mut out = Vec::new();
        let mut raw_len = 0u64;
        let mut had_lf = false;
        if let Input::Slice(b) = self {
            let start = usize::try_from(offset).unwrap_or(usize::MAX).min(b.len());
            let rest = &b[start..];
            let (end, lf) = framing::raw_line(rest);
            had_lf = lf;
            raw_len = end as u64;
            out.extend_from_slice(&rest[..end.min(limit.saturating_add(1))]);
        } else {
            let mut chunk = vec![0u8; 64 * 1024];
            let mut at = offset;
            loop {
                let n = self.read_at(at, &mut chunk)?;
                if n == 0 {
                    break;
                }
                let (take, lf) = framing::raw_line(&chunk[..n]);
                raw_len += take as u64;
                let room = limit.saturating_add(1).saturating_sub(out.len());
                out.extend_from_slice(&chunk[..take.min(room)]);
                if lf {
                    had_lf = true;
                    break;
                }
                at += n as u64;
            }
        }
        framing::record_again(&mut out, limit);
        Ok((out, offset + raw_len + u64::from(had_lf)))
    }
}

/// Whether the file holds an LF, or ends, within `n` bytes from `offset`
/// (read a chunk at a time, nothing kept).
pub(super) fn lf_or_end_within(f: &File, offset: u64, n: u64) -> io::Result<bool> {
    let mut buf = vec![0; CHUNK];
    let mut done = 0u64;
    while done < n {
        let want = usize::try_from(n - done).unwrap_or(CHUNK).min(CHUNK);
        let got = read_file_at(f, offset + done, &mut buf[..want])?;
        if got == 0 || framing::find_lf(&buf[..got]).is_some() {
            return Ok(true);
        }
        done += got as u64;
    }
    Ok(false)
}

#[cfg(unix)]
pub(super) fn read_file_at(f: &File, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
    use std::os::unix::fs::FileExt;
    loop {
        match f.read_at(buf, offset) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            r => return r,
        }
    }
}

#[cfg(windows)]
pub(super) fn read_file_at(f: &File, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
    use std::os::windows::fs::FileExt;
    f.seek_read(buf, offset)
}
