//! Inputs: a file read through bounded buffers (never mapped whole, so
//! resident memory stays small however large the archive), bytes in memory,
//! or a stream spooled to an unnamed temporary file. Lines are re-read by
//! offset for tables whose rows are out of key order.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// An input of [`crate::diff`].
pub enum Source<'a> {
    /// A file, read through bounded buffers.
    Path(&'a Path),
    /// A file already open whose archive begins `.1` bytes in (a database
    /// packed to a temporary file: see `ndarc_verify::lines::Input::FileFrom`),
    /// read as [`Source::Path`] is; offsets are the archive's.
    File(File, u64),
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
            Source::File(_, start) => write!(f, "File(.., {start})"),
            Source::Bytes(b) => write!(f, "Bytes({} bytes)", b.len()),
            Source::Reader(_) => f.write_str("Reader(..)"),
        }
    }
}

pub(crate) use ndarc_verify::lines::{Input, LineSource};

/// Opens `source`: what lines are read again from, and for a stream the
/// line source that copies it there as it reads.
pub(crate) fn open(source: Source<'_>) -> io::Result<(Input<'_>, Option<LineSource<'_>>)> {
    match source {
        Source::Path(p) => file(File::open(p)?, 0),
        Source::File(f, start) => file(f, start),
        Source::Bytes(b) => Ok((Input::Slice(b), None)),
        Source::Reader(r) => {
            let (lines, again) = LineSource::stream(r)?;
            Ok((again, Some(lines)))
        }
    }
}

/// An open file: read by offset when it is a regular file, else (a pipe,
/// a device) through a spooled copy.
fn file<'a>(f: File, start: u64) -> io::Result<(Input<'a>, Option<LineSource<'a>>)> {
    let meta = f.metadata()?;
    if meta.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "is a directory, not an archive",
        ));
    }
    if !meta.is_file() {
        // A pipe or a device (`diff <(curl …) today.ndjson`): read
        // once, as standard input is, through a spooled copy.
        let (lines, again) = LineSource::stream(f)?;
        return Ok((again, Some(lines)));
    }
    if start == 0 {
        Ok((Input::File(f), None))
    } else {
        Ok((Input::FileFrom(f, start), None))
    }
}
