//! Bytes → lines → summaries (parallel) → sequential rules → report.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::time::Instant;

use ndarc_format::part::{check_line_spans, RowSpans};
use ndarc_format::{check_line, Code, Collector, Finding, LineSummary, Plan};

use crate::lines::{self, Input, Line, LineSource};
use crate::read::{self, ReadError, Reader, Tap, Taps};
use crate::rules::{RowRules, Scanned};
use crate::session::Session;
use crate::{Error, Options, Report};

/// Bytes of part lines a job holds, checking one and with more waiting:
/// four of the longest lines read so far, at least 4 MiB and at most
/// 16 MiB (one line of the largest size, 16 MiB, being checked while the
/// next is read). Read blocks in flight are memory the kernel zeroes when
/// first touched, so a larger fixed window cost the reading thread time on
/// short lines and only raised the peak memory (measured in
/// benches/README.md, 2026-12-02).
const PER_JOB: (usize, usize) = (4 << 20, 16 << 20);

/// The bytes of part lines a job holds, the longest line read so far being
/// `longest` bytes (see [`PER_JOB`]).
fn per_job(longest: usize) -> usize {
    longest.saturating_mul(4).clamp(PER_JOB.0, PER_JOB.1)
}

/// The window: bytes of part lines read and not yet fed to the sequential
/// rules, for `jobs` jobs: between 2 and 4 jobs' worth (SPEC.md §11).
fn window_bytes(jobs: usize, longest: usize) -> usize {
    let per_job = per_job(longest);
    jobs.saturating_mul(per_job).clamp(2 * per_job, 4 * per_job)
}

/// Bytes of part lines queued for the pool's `jobs - 1` threads, past
/// which the reading thread checks the next line itself.
fn pool_share(jobs: usize, longest: usize) -> usize {
    jobs.saturating_sub(1)
        .max(1)
        .saturating_mul(per_job(longest))
}

/// The number of jobs `options` asks for: 0 is one per core.
fn jobs(options: &Options) -> usize {
    match options.jobs {
        0 => std::thread::available_parallelism().map_or(1, usize::from),
        n => n,
    }
}

/// Verifies an archive held in memory.
pub fn verify_bytes(data: &[u8], options: &Options) -> Report {
    // Reading a slice cannot fail.
    bytes(data, options, &mut ()).unwrap_or_default()
}

/// Verifies a file, read through 1 MiB buffers (see [`crate::lines`]): a
/// file that shrinks meanwhile ends early, with a finding.
pub fn verify_path(path: &Path, options: &Options) -> Result<Report, Error> {
    let (input, name) = path_input(path)?;
    file(&input, name, options, &mut ())
}

/// Verifies an archive already open as a file, beginning `start` bytes
/// in (a database packed to a temporary file: see [`Input::FileFrom`]),
/// read as [`verify_path`] reads one; offsets in the report are the
/// archive's. `name` names it in errors.
pub fn verify_file(f: File, start: u64, name: &str, options: &Options) -> Result<Report, Error> {
    let input = file_input(f, start, name)?;
    file(&input, name.to_string(), options, &mut ())
}

/// Verifies an archive read from a stream (stdin, a pipe), with bounded
/// memory. The stream is copied to an unnamed temporary file as it is read,
/// so that a table whose rows are out of key order can be re-read to find
/// duplicate keys.
pub fn verify_reader<R: Read + Send>(reader: R, options: &Options) -> Result<Report, Error> {
    stream(reader, options, &mut ())
}

/// [`verify_bytes`], handing each accepted part line to `reader` (see
/// [`crate::read`]).
pub fn read_bytes<R: Reader + ?Sized>(
    data: &[u8],
    options: &Options,
    reader: &mut R,
) -> Result<Report, ReadError<R::Error>> {
    with_reader(options, reader, |tap| bytes(data, options, tap))
}

/// [`verify_path`], handing each accepted part line to `reader` (see
/// [`crate::read`]): the file is read once.
pub fn read_path<R: Reader + ?Sized>(
    path: &Path,
    options: &Options,
    reader: &mut R,
) -> Result<Report, ReadError<R::Error>> {
    let (input, name) = path_input(path)?;
    with_reader(options, reader, |tap| file(&input, name, options, tap))
}

/// [`verify_reader`], handing each accepted part line to `reader` (see
/// [`crate::read`]).
pub fn read_stream<S: Read + Send, R: Reader + ?Sized>(
    stream_in: S,
    options: &Options,
    reader: &mut R,
) -> Result<Report, ReadError<R::Error>> {
    with_reader(options, reader, |tap| stream(stream_in, options, tap))
}

/// Runs `verify` with `reader` as its tap: on this thread with one job
/// (`--jobs 1` uses one core), else with the verification on a thread of
/// its own and the reader on this one ([`read::relayed`]).
fn with_reader<'a, R, V>(
    options: &Options,
    reader: &mut R,
    verify: V,
) -> Result<Report, ReadError<R::Error>>
where
    R: Reader + ?Sized,
    V: FnOnce(&mut dyn Taps<'a>) -> Result<Report, Error> + Send,
{
    if jobs(options) == 1 {
        let mut tap = Tap::new(reader);
        let report = verify(&mut tap);
        return read::finish(tap, report);
    }
    read::relayed(reader, verify)
}

fn bytes<'a>(data: &'a [u8], options: &Options, tap: &mut dyn Taps<'a>) -> Result<Report, Error> {
    let input = Input::Slice(data);
    // A pool that cannot start (no threads to be had) leaves the work to
    // rayon's global pool.
    let pool = pool(options).ok();
    run(LineSource::slice(data), &input, options, pool.as_ref(), tap).map_err(|source| Error::Io {
        path: "<memory>".into(),
        source,
    })
}

/// The input of the file at `path`, and its name for errors.
fn path_input(path: &Path) -> Result<(Input<'static>, String), Error> {
    let name = path.display().to_string();
    let f = File::open(path).map_err(|source| Error::Io {
        path: name.clone(),
        source,
    })?;
    Ok((file_input(f, 0, &name)?, name))
}

/// The input of a file whose archive begins `start` bytes in; a directory,
/// a pipe or a device is refused (read those as streams).
fn file_input(file: File, start: u64, name: &str) -> Result<Input<'static>, Error> {
    let meta = file.metadata().map_err(|source| Error::Io {
        path: name.to_string(),
        source,
    })?;
    if !meta.is_file() {
        return Err(Error::NotAFile(name.to_string()));
    }
    Ok(if start == 0 {
        Input::File(file)
    } else {
        Input::FileFrom(file, start)
    })
}

/// Verifies the archive of a file `input` (named `name` in errors).
fn file<'a>(
    input: &'a Input<'_>,
    name: String,
    options: &Options,
    tap: &mut dyn Taps<'a>,
) -> Result<Report, Error> {
    let io = |source| Error::Io {
        path: name.clone(),
        source,
    };
    let src = LineSource::new(input).map_err(io)?;
    let pool = pool(options)?;
    run(src, input, options, Some(&pool), tap).map_err(io)
}

fn stream<'a>(
    reader: impl Read + Send + 'a,
    options: &Options,
    tap: &mut dyn Taps<'a>,
) -> Result<Report, Error> {
    let io = |source| Error::Io {
        path: "<stdin>".into(),
        source,
    };
    let (src, again) = LineSource::stream(reader).map_err(io)?;
    let pool = pool(options)?;
    run(src, &again, options, Some(&pool), tap).map_err(io)
}

/// Runs `f` in a scope of `pool`, or of rayon's global pool.
fn in_scope<'scope, R>(
    pool: Option<&rayon::ThreadPool>,
    f: impl FnOnce(&rayon::Scope<'scope>) -> R,
) -> R {
    match pool {
        Some(p) => p.in_place_scope(f),
        None => rayon::in_place_scope(f),
    }
}

/// The pool that checks part lines beside the reading thread, which is one
/// of the jobs (see [`run`]).
fn pool(options: &Options) -> Result<rayon::ThreadPool, Error> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(jobs(options).saturating_sub(1).max(1))
        .build()
        .map_err(|e| Error::Threads(e.to_string()))
}

fn run<'a>(
    mut src: LineSource<'a>,
    again: &Input<'_>,
    options: &Options,
    pool: Option<&rayon::ThreadPool>,
    tap: &mut dyn Taps<'a>,
) -> std::io::Result<Report> {
    let started = Instant::now();
    let mut session = match start(&mut src, options, tap, started)? {
        Ok(session) => session,
        Err(refusal) => return Ok(refusal),
    };
    let full = check_parts(&mut src, &mut session, options, pool, tap)?;
    // Whether the limit was reached depends only on the lines fed, not on
    // when the reading loop noticed it.
    let stopped = full || session.is_full();
    Ok(finish(src, again, session, stopped, options, started))
}

/// Reads the manifest line and starts the session on it, or gives the
/// report of a verification that stops there (no manifest line, one over
/// its limit, one that cannot be read as a manifest).
fn start<'a>(
    src: &mut LineSource<'a>,
    options: &Options,
    tap: &mut dyn Taps<'a>,
    started: Instant,
) -> std::io::Result<Result<Session, Report>> {
    let mut c = Collector::new(options.max_errors.max(1));
    let first = src.next_line(options.max_manifest_line, false)?;
    let Some(first) = first else {
        for f in src.take_pending() {
            c.push(f);
        }
        c.push(lines::manifest_missing());
        return Ok(Err(refused(c, started, src)));
    };
    for f in &first.framing {
        c.push(f.clone());
    }
    if first.too_long.is_some() {
        c.push(first.too_long_finding(options.max_manifest_line, "manifest"));
        return Ok(Err(refused(c, started, src)));
    }
    let at = first.at();
    let session = match Session::start(at, first.raw_digest, options, c) {
        Ok(s) => s,
        Err(r) => return Ok(Err(refused(r.findings, r.started, src))),
    };
    tap.start(session.plan(), &first, session.errors());
    Ok(Ok(session))
}

/// A line checked and waiting to be fed in order: the line, its summary
/// (none for a line over its limit), its rows' spans when asked for, and
/// what the row rules took from it.
type Checked<'l> = (
    Line<'l>,
    Option<LineSummary>,
    Option<Box<RowSpans>>,
    Scanned,
);

/// Feeds checked lines to the session in line order, and to a reader's
/// tap.
struct Feed<'t, 'a> {
    tap: &'t mut dyn Taps<'a>,
    /// The sequence number of the next line to feed.
    fed_seq: u64,
    /// Lines were dropped unfed past the error limit.
    full: bool,
    /// The reader's tap asked to stop.
    reader_stopped: bool,
    /// Lines are to be checked with their spans (a reader's tap is live).
    spans_wanted: bool,
    max_line: usize,
}

impl<'a> Feed<'_, 'a> {
    /// Feeds the lines in `waiting` that are next in order; returns the
    /// sequence number of the next line to feed.
    fn ready(
        &mut self,
        session: &mut Session,
        waiting: &mut BTreeMap<u64, Checked<'a>>,
        in_flight: &mut usize,
    ) -> u64 {
        while let Some((mut l, s, spans, scanned)) = waiting.remove(&self.fed_seq) {
            *in_flight -= l.bytes.len()
                + 1
                + s.as_ref().map_or(0, LineSummary::held_bytes)
                + scanned.held_bytes();
            self.fed_seq += 1;
            // Past the error limit, lines already dispatched are dropped
            // unfed: the report then ends at the same line whatever the
            // threads' timing.
            if session.is_full() {
                self.full = true;
                continue;
            }
            for f in std::mem::take(&mut l.framing) {
                session.push(f);
            }
            match s {
                Some(mut s) => {
                    if let Some(d) = l.raw_digest {
                        s.digest = d;
                    }
                    if self.tap.live() && !self.tap.line(&l, &s, spans, session.errors()) {
                        self.reader_stopped = true;
                    }
                    session.scanned(scanned, l.at());
                    session.feed(s);
                }
                None => {
                    session.push(line_too_long(&l, self.max_line));
                    session.feed_unreadable(l.number, l.offset, l.raw_digest);
                }
            }
            if session.errors() > 0 {
                self.tap.close();
            }
            self.spans_wanted = self.tap.live();
        }
        self.fed_seq
    }
}

/// Checks the part lines after the manifest and feeds them to the session;
/// returns whether lines were dropped unfed past the error limit.
fn check_parts<'a>(
    src: &mut LineSource<'a>,
    session: &mut Session,
    options: &Options,
    pool: Option<&rayon::ThreadPool>,
    tap: &mut dyn Taps<'a>,
) -> std::io::Result<bool> {
    // The pipeline: this thread frames lines and dispatches each to the
    // pool; results come back out of order and are fed to the session in
    // order. Bytes read but not yet fed stay under the window (plus one
    // line), so memory is flat and every core has work while a large line
    // is being checked. This thread is one of the jobs: while the pool has
    // its share of lines queued, it checks the next line itself. With a
    // pool of one thread per job, three threads shared two cores: each
    // time the reading thread woke it displaced a checking thread and its
    // cache (benches/README.md, 2026-12-02, "Two jobs").
    //
    // A reader's tap (see `crate::read`) is given each line as it is fed,
    // with the spans of its rows: lines are then checked with
    // `check_line_spans`, and the spans wait with the line.
    //
    // The row rules (a policy's `objectReferences`, `--integrity`) read
    // the rows beside the line check (see `crate::rules`); what they take
    // from a line waits with it.
    let plan = session.plan().clone();
    let (tx, rx) = std::sync::mpsc::channel::<(u64, Checked<'a>)>();
    let mut waiting: BTreeMap<u64, Checked<'a>> = BTreeMap::new();
    let mut in_flight = 0usize;
    // Lines sent to the pool and not yet back.
    let mut outstanding = 0usize;
    let mut next_seq = 0u64;
    let mut last_progress = 0u64;
    let mut stopped = false;
    let mut feed = Feed {
        spans_wanted: tap.live(),
        tap,
        fed_seq: 0,
        full: false,
        reader_stopped: false,
        max_line: options.max_line,
    };
    let plan_ref: &Plan = &plan;
    let rules = session.rules();
    let rules_ref = rules.as_deref();
    let jobs = jobs(options);
    // Checks a line, with its spans when a reader wants them, and its rows
    // by the row rules.
    // The foreign keys read a line's cells from its spans, not from a
    // parse of the whole line.
    let rules_want_spans = rules_ref.is_some_and(RowRules::wants_spans);
    let check = move |line: &Line<'_>, with_spans: bool| {
        let (mut s, spans) = if with_spans || rules_want_spans {
            let mut spans = Box::<RowSpans>::default();
            let s = check_line_spans(plan_ref, line.at(), &mut spans);
            (s, Some(spans))
        } else {
            (check_line(plan_ref, line.at()), None)
        };
        let scanned = rules_ref.map_or_else(Scanned::default, |r| {
            r.scan(plan_ref, line.at(), &mut s, spans.as_deref())
        });
        (s, spans, scanned)
    };
    // The longest part line so far (which sizes the window), and the bytes
    // of lines sent to the pool and not yet back.
    let mut longest = 0usize;
    let mut dispatched = 0usize;
    let result: std::io::Result<()> = in_scope(pool, |scope| {
        loop {
            let next = if stopped {
                None
            } else {
                src.next_line(options.max_line, true)?
            };
            let Some(line) = next else { break };
            let seq = next_seq;
            next_seq += 1;
            in_flight += line.bytes.len() + 1;
            longest = longest.max(line.bytes.len());
            let window = window_bytes(jobs, longest);
            let with_spans = feed.spans_wanted;
            if line.too_long.is_some() {
                waiting.insert(seq, (line, None, None, Scanned::default()));
            } else if jobs == 1 || dispatched >= pool_share(jobs, longest) {
                // This thread's turn (always, with one job: `--jobs 1` uses
                // one core).
                let (s, spans, scanned) = check(&line, with_spans);
                in_flight += s.held_bytes() + scanned.held_bytes();
                waiting.insert(seq, (line, Some(s), spans, scanned));
            } else {
                let tx = tx.clone();
                outstanding += 1;
                dispatched += line.bytes.len() + 1;
                // The job owns the line (borrowed from a slice, or sharing
                // a read buffer) and sends it back with its summary.
                scope.spawn(move |_| {
                    let (s, spans, scanned) = check(&line, with_spans);
                    let _ = tx.send((seq, (line, Some(s), spans, scanned)));
                });
            }
            feed.ready(session, &mut waiting, &mut in_flight);
            // Take what is back; block while the window is full and lines
            // are still out (none are with one job: they are all fed). Lines
            // checked here wait behind those still out, and count.
            loop {
                let got = if in_flight > window && outstanding > 0 {
                    rx.recv().ok()
                } else {
                    rx.try_recv().ok()
                };
                let Some((seq, done)) = got else { break };
                outstanding -= 1;
                dispatched -= done.0.bytes.len() + 1;
                // A chunk's decoded bytes count as in flight too, until
                // fed.
                in_flight += done.1.as_ref().map_or(0, LineSummary::held_bytes);
                in_flight += done.3.held_bytes();
                waiting.insert(seq, done);
                feed.ready(session, &mut waiting, &mut in_flight);
            }
            if session.is_full() || feed.reader_stopped {
                stopped = true;
            }
            if let Some(p) = &options.progress {
                let pos = src.position();
                if pos - last_progress > 16 << 20 {
                    last_progress = pos;
                    p(pos, src.total());
                }
            }
        }
        // Collect the rest.
        while feed.ready(session, &mut waiting, &mut in_flight) < next_seq {
            let Ok((seq, done)) = rx.recv() else { break };
            in_flight += done.1.as_ref().map_or(0, LineSummary::held_bytes);
            in_flight += done.3.held_bytes();
            waiting.insert(seq, done);
        }
        // Framing findings after the last line (empty lines at the end).
        if !feed.full && !session.is_full() {
            for f in src.take_pending() {
                session.push(f);
            }
        }
        Ok(())
    });
    result?;
    Ok(feed.full)
}

/// The report at the end of the input: the session's last rules (a
/// duplicate key across parts is looked for by reading lines again).
fn finish(
    src: LineSource<'_>,
    again: &Input<'_>,
    session: Session,
    stopped: bool,
    options: &Options,
    started: Instant,
) -> Report {
    if let Some(p) = &options.progress {
        p(src.position(), src.total());
    }
    let eof = (src.lines() + 1, src.position());
    let max_line = options.max_line;
    let mut report = session.finish(eof, stopped, &mut |line, offset| {
        again.line_at(offset, max_line).map_err(|e| {
            Finding::new(
                Code::PartMissing,
                line,
                offset,
                "",
                format!("the line could not be re-read to look for duplicate keys: {e}"),
            )
        })
    });
    report.bytes = src.position();
    report.lines = src.lines();
    report.elapsed = started.elapsed();
    report
}

fn line_too_long(l: &Line<'_>, limit: usize) -> Finding {
    l.too_long_finding(limit, "part")
}

/// The report of a verification that stopped at the manifest line.
fn refused(c: Collector, started: Instant, src: &LineSource<'_>) -> Report {
    Report {
        errors: c.errors,
        warnings: c.warnings,
        findings: c.kept,
        stopped: true,
        bytes: src.position(),
        lines: src.lines(),
        elapsed: started.elapsed(),
        ..Default::default()
    }
}
