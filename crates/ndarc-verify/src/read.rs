//! The one door for every command that acts on an archive's content
//! (`unpack`, the SQL patch, `repart`, readers of rows): the archive is read
//! once, through the verifier's line source and session, and a [`Reader`]
//! is handed each part line the session has checked, in archive order.
//!
//! With more than one job the reader runs on the calling thread while the
//! verification runs on a thread of its own, the accepted parts relayed
//! between them in order through a bounded channel (`relayed`); with
//! `jobs: 1`, both on the calling thread. The reader need not be `Send`,
//! and sees the same parts either way.
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

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use ndarc_format::catalogue::decode_base64_into;
use ndarc_format::part::{BinaryPart, Body, Chunk, RowSpans, RowsPart};
use ndarc_format::{LineRef, LineSummary, Plan};

use crate::chan;
use crate::lines::{Line, LineBytes};
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
    pub(crate) fn new(
        line: LineRef<'a>,
        body: &'a Body,
        spans: &'a RowSpans,
        data_at: u32,
    ) -> Self {
        Accepted {
            line,
            body,
            spans,
            data_at,
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
/// compiled once whatever the reader. `'a` is the lines' lifetime (a
/// relay sends them to another thread).
pub(crate) trait Taps<'a> {
    /// The tap still wants lines.
    fn live(&self) -> bool;
    /// The manifest was read (with `errors` errors so far).
    fn start(&mut self, plan: &Arc<Plan>, manifest: &Line<'a>, errors: u64);
    /// A line was checked; `errors` is the session's count before it is
    /// fed. Returns false when the reader stopped (reading should stop).
    fn line(
        &mut self,
        line: &Line<'a>,
        s: &LineSummary,
        spans: Option<Box<RowSpans>>,
        errors: u64,
    ) -> bool;
    /// The session has found an error: no more lines.
    fn close(&mut self);
}

/// Whether a tap gives its reader the checked line `s` (the rule of the
/// [module](self)): an accepted part, with no error so far; after an
/// error, `live` is cleared and the reader gets no more lines.
fn admits(live: &mut bool, s: &LineSummary, errors: u64) -> bool {
    if errors > 0 || s.dropped > 0 || s.findings.iter().any(|f| f.is_error()) {
        *live = false;
        return false;
    }
    matches!(s.body, Body::Rows(_) | Body::Binary(_))
}

impl<'r, R: Reader + ?Sized> Tap<'r, R> {
    pub(crate) fn new(reader: &'r mut R) -> Self {
        Tap {
            reader,
            live: false,
            error: None,
        }
    }

    fn start_at(&mut self, plan: &Arc<Plan>, manifest: LineRef<'_>) {
        match self.reader.start(plan, manifest) {
            Ok(()) => self.live = true,
            Err(e) => self.error = Some(e),
        }
    }

    /// Gives the reader an accepted part; false when it stopped.
    fn give(&mut self, part: Accepted<'_>) -> bool {
        match self.reader.part(part) {
            Ok(()) => true,
            Err(e) => {
                self.live = false;
                self.error = Some(e);
                false
            }
        }
    }
}

impl<'a, R: Reader + ?Sized> Taps<'a> for Tap<'_, R> {
    fn live(&self) -> bool {
        self.live
    }

    fn start(&mut self, plan: &Arc<Plan>, manifest: &Line<'a>, errors: u64) {
        if errors == 0 {
            self.start_at(plan, manifest.at());
        }
    }

    fn line(
        &mut self,
        line: &Line<'a>,
        s: &LineSummary,
        spans: Option<Box<RowSpans>>,
        errors: u64,
    ) -> bool {
        if !self.live {
            return self.error.is_none();
        }
        if !admits(&mut self.live, s, errors) {
            return true;
        }
        let none = RowSpans::default();
        let spans = spans.as_deref().unwrap_or(&none);
        self.give(Accepted::new(
            line.at(),
            &s.body,
            spans,
            s.anchors.item_data,
        ))
    }

    fn close(&mut self) {
        self.live = false;
    }
}

/// No reader: plain verification, which takes the lines without spans.
impl<'a> Taps<'a> for () {
    fn live(&self) -> bool {
        false
    }
    fn start(&mut self, _: &Arc<Plan>, _: &Line<'a>, _: u64) {}
    fn line(&mut self, _: &Line<'a>, _: &LineSummary, _: Option<Box<RowSpans>>, _: u64) -> bool {
        true
    }
    fn close(&mut self) {}
}

/// Bytes of accepted lines a relay holds ahead of its reader: enough that
/// the reader never waits while the verification has lines checked, and
/// that the verification runs on while the reader works through a long
/// line; bounded, so that a slow reader holds memory flat.
const RELAY_BYTES: usize = 8 << 20;

/// What a relay sends the reader's thread.
enum Relayed<'a> {
    /// The manifest line, read without error, and its plan.
    Start {
        plan: Arc<Plan>,
        number: u64,
        offset: u64,
        bytes: LineBytes<'a>,
    },
    /// An accepted part.
    Part {
        number: u64,
        offset: u64,
        bytes: LineBytes<'a>,
        body: Body,
        data_at: u32,
        spans: Option<Box<RowSpans>>,
    },
}

impl chan::Weight for Relayed<'_> {
    fn weight(&self) -> usize {
        match self {
            Relayed::Start { bytes, .. } => bytes.len(),
            Relayed::Part {
                bytes, body, spans, ..
            } => {
                let body = match body {
                    Body::Rows(r) => r.row_digests.len() * 32,
                    Body::Binary(BinaryPart {
                        data: Chunk::Piece { bytes, .. },
                        ..
                    }) => bytes.len(),
                    _ => 0,
                };
                let spans = spans.as_ref().map_or(0, |s| {
                    8 * (s.rows.len() + s.cells.len()) + 16 * s.rowids.len()
                });
                bytes.len() + body + spans
            }
        }
    }
}

/// The tap of a verification whose reader runs on another thread: it makes
/// the tap's decisions where the lines are checked (the same [`admits`]) and
/// sends each accepted part, with a copy of its summary's body, to the
/// reader's thread ([`relayed`]).
struct Relay<'s, 'a> {
    tx: chan::Sender<Relayed<'a>>,
    /// Set by the reader's thread when its reader stopped (or its start
    /// failed).
    stopped: &'s AtomicBool,
    live: bool,
}

impl<'a> Taps<'a> for Relay<'_, 'a> {
    fn live(&self) -> bool {
        self.live
    }

    fn start(&mut self, plan: &Arc<Plan>, manifest: &Line<'a>, errors: u64) {
        if errors > 0 {
            return;
        }
        let m = Relayed::Start {
            plan: Arc::clone(plan),
            number: manifest.number,
            offset: manifest.offset,
            bytes: manifest.bytes.clone(),
        };
        self.live = self.tx.send(m).is_ok();
    }

    fn line(
        &mut self,
        line: &Line<'a>,
        s: &LineSummary,
        spans: Option<Box<RowSpans>>,
        errors: u64,
    ) -> bool {
        let stopped = self.stopped.load(Ordering::Acquire);
        if !self.live || stopped {
            return !stopped;
        }
        if !admits(&mut self.live, s, errors) {
            return true;
        }
        let m = Relayed::Part {
            number: line.number,
            offset: line.offset,
            bytes: line.bytes.clone(),
            body: s.body.clone(),
            data_at: s.anchors.item_data,
            spans,
        };
        self.tx.send(m).is_ok()
    }

    fn close(&mut self) {
        self.live = false;
    }
}

/// Runs `verify` (the pipeline, given a tap) on a thread of its own and
/// `reader` on this one, each accepted part relayed between them in order:
/// the reader's work (a restore's inserts) runs beside the reading,
/// framing, checking and sequential rules instead of between them. The
/// reader stays on the calling thread, so it need not be `Send`. The
/// reader sees what [`Tap`] would show it, in the same order; when it
/// stops, the verification stops at the next line it hands over.
pub(crate) fn relayed<'a, R, V>(reader: &mut R, verify: V) -> Result<Report, ReadError<R::Error>>
where
    R: Reader + ?Sized,
    V: FnOnce(&mut dyn Taps<'a>) -> Result<Report, Error> + Send,
{
    let mut tap = Tap::new(reader);
    let stopped = AtomicBool::new(false);
    let report = std::thread::scope(|scope| {
        let (tx, rx) = chan::channel::<Relayed<'a>>(RELAY_BYTES);
        let stopped = &stopped;
        let verifying = std::thread::Builder::new()
            .name("ndarc-verify".into())
            .spawn_scoped(scope, move || {
                let mut relay = Relay {
                    tx,
                    stopped,
                    live: false,
                };
                verify(&mut relay)
            })
            .map_err(|e| Error::Threads(e.to_string()))?;
        while let Ok(m) = rx.recv() {
            let going = match m {
                Relayed::Start {
                    plan,
                    number,
                    offset,
                    bytes,
                } => {
                    let at = LineRef {
                        line: number,
                        offset,
                        bytes: &bytes,
                    };
                    tap.start_at(&plan, at);
                    tap.live
                }
                Relayed::Part {
                    number,
                    offset,
                    bytes,
                    body,
                    data_at,
                    spans,
                } => {
                    let none = RowSpans::default();
                    let at = LineRef {
                        line: number,
                        offset,
                        bytes: &bytes,
                    };
                    let spans = spans.as_deref().unwrap_or(&none);
                    tap.give(Accepted::new(at, &body, spans, data_at))
                }
            };
            if !going {
                stopped.store(true, Ordering::Release);
                break;
            }
        }
        // Hanging up releases a relay waiting for room.
        drop(rx);
        match verifying.join() {
            Ok(report) => report,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    });
    finish(tap, report)
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
