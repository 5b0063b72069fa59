//! The one door for every command that acts on an archive's content
//! (`unpack`, the SQL patch, `repart`, readers of rows): the archive is read
//! once, through the verifier's line source and session, and a [`Reader`]
//! is handed each part line the session has checked, in archive order.
//!
//! A reader's work is provisional until the [`Report`] says the archive is
//! valid: the closing hashes, counts and duplicate keys are only known at
//! the end. So a reader writes into something it can throw away (a
//! transaction, temporary files) and commits only when
//! `report.is_valid(..)`; on an invalid report it commits nothing. The
//! reader is never called for a line with an error of its own, nor once the
//! session has found any error (the archive is then invalid whatever
//! follows), nor at all when the manifest has an error.
//!
//! ```
//! use std::sync::Arc;
//! use ndarc_verify::{read_bytes, Accepted, Reader};
//!
//! /// Counts rows as they are accepted.
//! struct Rows(u64);
//! impl Reader for Rows {
//!     type Error = std::convert::Infallible;
//!     fn part(&mut self, part: Accepted<'_>) -> Result<(), Self::Error> {
//!         if let Some(rows) = part.rows() {
//!             self.0 += rows.rows;
//!         }
//!         Ok(())
//!     }
//! }
//! let mut rows = Rows(0);
//! let report = read_bytes(ndarc_verify::doc_example_archive(), &Default::default(), &mut rows)?;
//! assert!(report.is_valid(false));
//! assert_eq!(rows.0, 3);
//! # Ok::<(), ndarc_verify::ReadError<std::convert::Infallible>>(())
//! ```

use std::sync::Arc;

use ndarc_format::catalogue::decode_base64_into;
use ndarc_format::part::{BinaryPart, Body, Chunk, RowSpans, RowsPart};
use ndarc_format::{LineRef, LineSummary, Plan};

use crate::{Error, Report};

/// A part line the session has checked, with no error of its own, handed
/// to a [`Reader`] in archive order.
#[derive(Debug)]
pub struct Accepted<'a> {
    /// The line's bytes (canonical JSON, without LF), number and offset.
    pub line: LineRef<'a>,
    /// What the line is: rows of one table, or one chunk of an object or
    /// payload.
    pub body: &'a Body,
    /// Where the rows and cells are in the line, when the fast path read it
    /// (`spans.table` is `Some`); otherwise empty, and a reader that needs
    /// the cells parses [`line`](Self::line) (a canonical row part with a
    /// warning, for example).
    pub spans: &'a RowSpans,
    /// Offset in the line of the chunk's `data` string (binary parts).
    data_at: u32,
}

impl<'a> Accepted<'a> {
    pub(crate) fn new(line: LineRef<'a>, summary: &'a LineSummary, spans: &'a RowSpans) -> Self {
        Accepted {
            line,
            body: &summary.body,
            spans,
            data_at: summary.anchors.item_data,
        }
    }

    /// The rows part, if the line is one.
    pub fn rows(&self) -> Option<&'a RowsPart> {
        match self.body {
            Body::Rows(r) => Some(r),
            _ => None,
        }
    }

    /// The binary part (one chunk of an object or payload), if the line is
    /// one.
    pub fn binary(&self) -> Option<&'a BinaryPart> {
        match self.body {
            Body::Binary(b) => Some(b),
            _ => None,
        }
    }

    /// The decoded bytes of a binary part's chunk: the bytes the verifier
    /// kept, or decoded from the line into `buf`. `None` for a line that is
    /// not a binary part.
    pub fn chunk<'b>(&'b self, buf: &'b mut Vec<u8>) -> Option<&'b [u8]>
    where
        'a: 'b,
    {
        let b = self.binary()?;
        if let Chunk::Piece { bytes, .. } = &b.data {
            return Some(bytes);
        }
        // A whole binary was hashed where its line was checked and its
        // bytes not kept: the `data` string is decoded again. The string
        // is canonical base64 (checked), so it has no escapes.
        let rest = self.line.bytes.get(self.data_at as usize..)?;
        let text = rest.strip_prefix(b"\"")?;
        let end = memchr::memchr(b'"', text)?;
        let s = std::str::from_utf8(&text[..end]).ok()?;
        buf.clear();
        decode_base64_into(s, buf).then_some(&buf[..])
    }
}

/// What consumes an archive's accepted lines (see the [module](self)).
pub trait Reader {
    /// Why the reader stopped (returned by the `read_*` functions as
    /// [`ReadError::Reader`]).
    type Error;

    /// Called once, before any part, when the manifest was read without
    /// an error: its plan, and the manifest line as it was read and
    /// checked (so a reader that writes it again never reads the file a
    /// second time). The default does nothing.
    fn start(&mut self, plan: &Arc<Plan>, manifest: LineRef<'_>) -> Result<(), Self::Error> {
        let _ = (plan, manifest);
        Ok(())
    }

    /// Called for each accepted part line, in archive order.
    fn part(&mut self, part: Accepted<'_>) -> Result<(), Self::Error>;
}

/// Why reading an archive through a [`Reader`] did not give a report.
#[derive(Debug, thiserror::Error)]
pub enum ReadError<E> {
    /// The verification could not run (I/O).
    #[error(transparent)]
    Verify(#[from] Error),
    /// The reader stopped.
    #[error("the reader stopped")]
    Reader(E),
}

/// The state of a reader inside the pipeline: whether it still gets lines,
/// and the error it stopped with.
pub(crate) struct Tap<'r, R: Reader + ?Sized> {
    reader: &'r mut R,
    /// The reader is being given lines (the manifest and every line so far
    /// were without error, and the reader has not stopped).
    live: bool,
    pub(crate) error: Option<R::Error>,
}

/// What the pipeline needs of a tap, object-safe so that the pipeline is
/// compiled once whatever the reader.
pub(crate) trait Taps {
    /// The tap still wants lines.
    fn live(&self) -> bool;
    /// The manifest was read (with `errors` errors so far).
    fn start(&mut self, plan: &Arc<Plan>, manifest: LineRef<'_>, errors: u64);
    /// A line was checked; `errors` is the session's count before it is
    /// fed. Returns false when the reader stopped (reading should stop).
    fn line(&mut self, at: LineRef<'_>, s: &LineSummary, spans: &RowSpans, errors: u64) -> bool;
    /// The session has found an error: no more lines.
    fn close(&mut self);
}

impl<'r, R: Reader + ?Sized> Tap<'r, R> {
    pub(crate) fn new(reader: &'r mut R) -> Self {
        Tap {
            reader,
            live: false,
            error: None,
        }
    }
}

impl<R: Reader + ?Sized> Taps for Tap<'_, R> {
    fn live(&self) -> bool {
        self.live
    }

    fn start(&mut self, plan: &Arc<Plan>, manifest: LineRef<'_>, errors: u64) {
        if errors > 0 {
            return;
        }
        match self.reader.start(plan, manifest) {
            Ok(()) => self.live = true,
            Err(e) => self.error = Some(e),
        }
    }

    fn line(&mut self, at: LineRef<'_>, s: &LineSummary, spans: &RowSpans, errors: u64) -> bool {
        if !self.live {
            return self.error.is_none();
        }
        if errors > 0 || s.dropped > 0 || s.findings.iter().any(|f| f.is_error()) {
            self.live = false;
            return true;
        }
        if !matches!(s.body, Body::Rows(_) | Body::Binary(_)) {
            return true;
        }
        match self.reader.part(Accepted::new(at, s, spans)) {
            Ok(()) => true,
            Err(e) => {
                self.live = false;
                self.error = Some(e);
                false
            }
        }
    }

    fn close(&mut self) {
        self.live = false;
    }
}

/// No reader: plain verification, which takes the lines without spans.
impl Taps for () {
    fn live(&self) -> bool {
        false
    }
    fn start(&mut self, _: &Arc<Plan>, _: LineRef<'_>, _: u64) {}
    fn line(&mut self, _: LineRef<'_>, _: &LineSummary, _: &RowSpans, _: u64) -> bool {
        true
    }
    fn close(&mut self) {}
}

/// The report of a read, or why there is none.
pub(crate) fn finish<R: Reader + ?Sized>(
    tap: Tap<'_, R>,
    report: Result<Report, Error>,
) -> Result<Report, ReadError<R::Error>> {
    let report = report?;
    match tap.error {
        Some(e) => Err(ReadError::Reader(e)),
        None => Ok(report),
    }
}
