//! Bytes → lines → summaries (parallel) → sequential rules → report.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use memchr::memchr;
use ndarc_format::hash::sha256;
use ndarc_format::{
    check_line, check_manifest, rescan_duplicates, Assembler, Code, Collector, Digest32, Finding,
    LineRef, LineReport, LineSummary, ManifestOptions, ManifestOutcome, Plan,
};
use sha2::{Digest, Sha256};

use crate::{Error, Options, Report};

/// Bytes of part lines dispatched to the pool and not yet fed to the
/// sequential rules: enough to keep every core busy behind a slow 16 MiB
/// line, small enough that memory stays flat.
const WINDOW_BYTES: usize = 64 * 1024 * 1024;

/// One framed line.
struct RawLine<'a> {
    line: u64,
    offset: u64,
    /// The record's bytes: the line without LF and without a CR before it.
    bytes: Cow<'a, [u8]>,
    /// The line was longer than its limit (this many bytes); `bytes` is
    /// empty.
    too_long: Option<u64>,
    /// SHA-256 of the line as it is in the file, when that is not the
    /// digest of `bytes` (a CR before the LF; a line over the limit).
    /// `archiveHash` is defined over the raw bytes.
    raw_digest: Option<Digest32>,
    /// Framing findings of this line and of empty lines before it, reported
    /// when the line is fed, so that findings come in file order whatever
    /// the threads' timing.
    framing: Vec<Finding>,
}

/// Splits lines and applies the framing rules (LF only, final LF, no empty
/// line, limits before parsing).
trait LineSource<'a> {
    /// The next line, or `None` at the end. Framing findings go to `c`.
    fn next_line(
        &mut self,
        limit: usize,
        c: &mut Vec<Finding>,
    ) -> std::io::Result<Option<RawLine<'a>>>;
    /// Bytes consumed so far.
    fn position(&self) -> u64;
    /// Total size if known.
    fn total(&self) -> Option<u64>;
    /// Lines read so far.
    fn lines(&self) -> u64;
}

/// Reports a CR anywhere in the line and an empty line; returns the length
/// of the record (without a CR before the LF), `None` for an empty line.
fn frame(line: u64, offset: u64, bytes: &[u8], c: &mut Vec<Finding>) -> Option<usize> {
    let mut len = bytes.len();
    let trailing = len > 0 && bytes[len - 1] == b'\r';
    if trailing {
        len -= 1;
    }
    if let Some(i) = memchr(b'\r', &bytes[..len]) {
        c.push(Finding::new(
            Code::CarriageReturn,
            line,
            offset + i as u64,
            "",
            "a carriage return (CR) inside the line; lines are separated by LF alone and hold no CR",
        ));
    } else if trailing {
        c.push(Finding::new(
            Code::CarriageReturn,
            line,
            offset + len as u64,
            "",
            "the line ends with CR LF; records are separated by LF alone",
        ));
    }
    if len == 0 {
        c.push(Finding::new(
            Code::EmptyLine,
            line,
            offset,
            "",
            "an empty line; every line is one record",
        ));
        return None;
    }
    Some(len)
}

/// Builds the line from its raw bytes (without LF), or `None` when it is
/// empty; a line over `limit` keeps only its digest.
fn framed<'a>(
    line: u64,
    offset: u64,
    raw: Cow<'a, [u8]>,
    limit: usize,
    c: &mut Vec<Finding>,
) -> Option<RawLine<'a>> {
    // A line over the limit keeps only its digest and length.
    let digest_only = |raw: &[u8]| RawLine {
        line,
        offset,
        raw_digest: Some(sha256(raw)),
        bytes: Cow::Borrowed(&[]),
        too_long: Some(raw.len() as u64),
        framing: Vec::new(),
    };
    // A line longer than the limit even without a CR is not looked into
    // (a stream reader skips it unread), so both readers report the same.
    if raw.len() > limit + 1 {
        return Some(digest_only(&raw));
    }
    let len = frame(line, offset, &raw, c)?;
    if len > limit {
        return Some(digest_only(&raw));
    }
    let raw_digest = (len < raw.len()).then(|| sha256(&raw));
    let bytes = match raw {
        Cow::Borrowed(b) => Cow::Borrowed(&b[..len]),
        Cow::Owned(mut v) => {
            v.truncate(len);
            Cow::Owned(v)
        }
    };
    Some(RawLine {
        line,
        offset,
        bytes,
        too_long: None,
        raw_digest,
        framing: Vec::new(),
    })
}

struct SliceLines<'a> {
    data: &'a [u8],
    pos: usize,
    line: u64,
}

impl<'a> LineSource<'a> for SliceLines<'a> {
    fn next_line(
        &mut self,
        limit: usize,
        c: &mut Vec<Finding>,
    ) -> std::io::Result<Option<RawLine<'a>>> {
        loop {
            if self.pos >= self.data.len() {
                return Ok(None);
            }
            let start = self.pos;
            let (end, has_lf) = match memchr(b'\n', &self.data[start..]) {
                Some(i) => (start + i, true),
                None => (self.data.len(), false),
            };
            self.pos = if has_lf { end + 1 } else { end };
            self.line += 1;
            if !has_lf {
                c.push(Finding::new(
                    Code::MissingFinalNewline,
                    self.line,
                    end as u64,
                    "",
                    "the file does not end with LF; every line, the closing included, ends with LF (a truncated download?)",
                ));
            }
            let raw = Cow::Borrowed(&self.data[start..end]);
            if let Some(l) = framed(self.line, start as u64, raw, limit, c) {
                return Ok(Some(l));
            }
        }
    }

    fn position(&self) -> u64 {
        self.pos as u64
    }

    fn total(&self) -> Option<u64> {
        Some(self.data.len() as u64)
    }

    fn lines(&self) -> u64 {
        self.line
    }
}

/// Lines from a reader, through a bounded buffer. Everything read is also
/// copied to `spool` (when set) so that tables out of key order can be
/// re-read for duplicate keys.
struct ReaderLines<R: Read> {
    reader: R,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    pos: u64,
    line: u64,
    eof: bool,
    spool: Option<File>,
}

impl<R: Read> ReaderLines<R> {
    /// Reads more into the buffer, moving what is unread to its front and
    /// growing it only while a line (within its limit) needs the room.
    fn fill(&mut self) -> std::io::Result<usize> {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.buf.len() {
            let grow = self.buf.len().max(64 * 1024);
            self.buf.resize(self.buf.len() + grow, 0);
        }
        let n = loop {
            match self.reader.read(&mut self.buf[self.end..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        };
        if let Some(s) = &mut self.spool {
            s.write_all(&self.buf[self.end..self.end + n])?;
        }
        self.end += n;
        if n == 0 {
            self.eof = true;
        }
        Ok(n)
    }

    /// Skips the rest of a line over its limit, hashing it on the way;
    /// returns its total length, its digest and whether an LF ended it.
    fn skip_line(&mut self) -> std::io::Result<(u64, Digest32, bool)> {
        let mut h = Sha256::new();
        let mut skipped = 0u64;
        loop {
            if let Some(i) = memchr(b'\n', &self.buf[self.start..self.end]) {
                h.update(&self.buf[self.start..self.start + i]);
                skipped += i as u64;
                self.start += i + 1;
                self.pos += skipped + 1;
                return Ok((skipped, h.finalize().into(), true));
            }
            h.update(&self.buf[self.start..self.end]);
            skipped += (self.end - self.start) as u64;
            self.start = self.end;
            if self.eof {
                self.pos += skipped;
                return Ok((skipped, h.finalize().into(), false));
            }
            self.fill()?;
        }
    }
}

impl<R: Read> LineSource<'static> for ReaderLines<R> {
    fn next_line(
        &mut self,
        limit: usize,
        c: &mut Vec<Finding>,
    ) -> std::io::Result<Option<RawLine<'static>>> {
        loop {
            // Look for LF within limit + 2 bytes (a CR may precede it).
            let mut scanned = 0;
            let found = loop {
                let window = (self.end - self.start).min(limit + 2);
                if let Some(i) = memchr(b'\n', &self.buf[self.start + scanned..self.start + window])
                {
                    break Some(self.start + scanned + i);
                }
                scanned = window;
                if window >= limit + 2 || self.eof {
                    break None;
                }
                self.fill()?;
            };
            let offset = self.pos;
            match found {
                Some(lf) => {
                    self.line += 1;
                    let raw = self.buf[self.start..lf].to_vec();
                    self.start = lf + 1;
                    self.pos += raw.len() as u64 + 1;
                    if let Some(l) = framed(self.line, offset, Cow::Owned(raw), limit, c) {
                        return Ok(Some(l));
                    }
                }
                None if self.eof && self.end - self.start <= limit + 1 => {
                    if self.start == self.end {
                        return Ok(None);
                    }
                    self.line += 1;
                    let raw = self.buf[self.start..self.end].to_vec();
                    self.pos += raw.len() as u64;
                    self.start = self.end;
                    c.push(Finding::new(
                        Code::MissingFinalNewline,
                        self.line,
                        self.pos,
                        "",
                        "the input does not end with LF; every line, the closing included, ends with LF (truncated?)",
                    ));
                    return Ok(framed(self.line, offset, Cow::Owned(raw), limit, c));
                }
                None => {
                    // Over the limit: skip to the next LF without keeping it.
                    self.line += 1;
                    let (len, digest, had_lf) = self.skip_line()?;
                    if !had_lf {
                        c.push(Finding::new(
                            Code::MissingFinalNewline,
                            self.line,
                            self.pos,
                            "",
                            "the input does not end with LF; every line, the closing included, ends with LF (truncated?)",
                        ));
                    }
                    return Ok(Some(RawLine {
                        line: self.line,
                        offset,
                        bytes: Cow::Owned(Vec::new()),
                        too_long: Some(len),
                        raw_digest: Some(digest),
                        framing: Vec::new(),
                    }));
                }
            }
        }
    }

    fn position(&self) -> u64 {
        self.pos
    }

    fn total(&self) -> Option<u64> {
        None
    }

    fn lines(&self) -> u64 {
        self.line
    }
}

/// Verifies an archive held in memory.
pub fn verify_bytes(data: &[u8], options: &Options) -> Report {
    verify_slice(data, options, &|_| {})
}

/// Verifies `data`; `release(n)` is called as the first `n` bytes are done
/// with (a memory map drops those pages from the process).
fn verify_slice(data: &[u8], options: &Options, release: &(dyn Fn(u64) + Sync)) -> Report {
    let src = SliceLines {
        data,
        pos: 0,
        line: 0,
    };
    let reread = |offset: u64| -> Option<Vec<u8>> { line_at(data, offset).map(<[u8]>::to_vec) };
    // Reading a slice cannot fail. A pool that cannot start (no threads to
    // be had) leaves the work to rayon's global pool.
    let pool = pool(options).ok();
    run(src, options, &reread, pool.as_ref(), release).unwrap_or_default()
}

fn line_at(data: &[u8], offset: u64) -> Option<&[u8]> {
    let start = usize::try_from(offset).ok()?;
    let rest = data.get(start..)?;
    let end = memchr(b'\n', rest).unwrap_or(rest.len());
    let line = &rest[..end];
    Some(line.strip_suffix(b"\r").unwrap_or(line))
}

/// Verifies a file through a memory map.
pub fn verify_path(path: &Path, options: &Options) -> Result<Report, Error> {
    let name = path.display().to_string();
    let io = |source| Error::Io {
        path: name.clone(),
        source,
    };
    let file = File::open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(Error::NotAFile(name));
    }
    if meta.len() == 0 {
        return Ok(verify_bytes(&[], options));
    }
    // SAFETY: the map is read-only; if another process truncates the file
    // while we read it, the OS may signal. That is the documented risk of
    // memory maps, accepted for speed (ripgrep does the same).
    #[allow(unsafe_code)]
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io)?;
    #[cfg(unix)]
    let _ = map.advise(memmap2::Advice::Sequential);
    // Pages of lines already checked are dropped from the process as the
    // pass moves on (they stay in the page cache), so resident memory stays
    // flat however large the file.
    let release = |upto: u64| {
        #[cfg(unix)]
        {
            let len = usize::try_from(upto).unwrap_or(0) & !(PAGE - 1);
            if len > 0 && len <= map.len() {
                // SAFETY: the map is read-only and private: MADV_DONTNEED
                // only unmaps pages, and a later access (the duplicate-key
                // re-scan) faults the same file bytes back in. No line in
                // the range is still borrowed: every line before `upto` has
                // been fed and its summary dropped.
                #[allow(unsafe_code)]
                let _ = unsafe {
                    map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, 0, len)
                };
            }
        }
        let _ = upto;
    };
    Ok(verify_slice(&map, options, &release))
}

/// A page size that divides every page size in use (4 KiB); `madvise`
/// needs a page-aligned length.
const PAGE: usize = 4096;

/// Verifies an archive read from a stream (stdin, a pipe), with bounded
/// memory. The stream is copied to an unnamed temporary file as it is read,
/// so that a table whose rows are out of key order can be re-read to find
/// duplicate keys.
pub fn verify_reader<R: Read + Send>(reader: R, options: &Options) -> Result<Report, Error> {
    let io = |source| Error::Io {
        path: "<stdin>".into(),
        source,
    };
    let spool = tempfile::tempfile().map_err(io)?;
    let src = ReaderLines {
        reader,
        buf: vec![0; 1 << 20],
        start: 0,
        end: 0,
        pos: 0,
        line: 0,
        eof: false,
        spool: Some(spool.try_clone().map_err(io)?),
    };
    let spool = std::sync::Mutex::new(spool);
    let reread = |offset: u64| -> Option<Vec<u8>> {
        let mut f = spool.lock().ok()?;
        f.seek(SeekFrom::Start(offset)).ok()?;
        let mut out = Vec::new();
        let mut byte = [0u8; 64 * 1024];
        loop {
            let n = f.read(&mut byte).ok()?;
            if n == 0 {
                break;
            }
            if let Some(i) = memchr(b'\n', &byte[..n]) {
                out.extend_from_slice(&byte[..i]);
                break;
            }
            out.extend_from_slice(&byte[..n]);
        }
        if out.last() == Some(&b'\r') {
            out.pop();
        }
        Some(out)
    };
    let pool = pool(options)?;
    run(src, options, &reread, Some(&pool), &|_| {}).map_err(io)
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

fn pool(options: &Options) -> Result<rayon::ThreadPool, Error> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(options.jobs)
        .build()
        .map_err(|e| Error::Threads(e.to_string()))
}

fn too_long(raw: &RawLine<'_>, limit: usize, what: &str) -> Finding {
    Finding::new(
        Code::LineTooLong,
        raw.line,
        raw.offset,
        "",
        format!(
            "the {what} line is {} bytes, over the limit of {limit}; it was not parsed (raise the limit with {} if it is legitimate)",
            raw.too_long.unwrap_or(0),
            if what == "manifest" { "--max-manifest-bytes" } else { "--max-line-bytes" }
        ),
    )
}

fn unreadable(l: &RawLine<'_>) -> LineSummary {
    LineSummary {
        line: l.line,
        offset: l.offset,
        digest: l.raw_digest.unwrap_or([0; 32]),
        anchors: Default::default(),
        body: ndarc_format::part::Body::Unreadable,
        findings: Vec::new(),
        dropped: 0,
    }
}

fn run<'a, S: LineSource<'a>>(
    mut src: S,
    options: &Options,
    reread: &(dyn Fn(u64) -> Option<Vec<u8>> + Sync),
    pool: Option<&rayon::ThreadPool>,
    release: &(dyn Fn(u64) + Sync),
) -> std::io::Result<Report> {
    let started = Instant::now();
    let mut c = Collector::new(options.max_errors.max(1));
    let mut report = Report::default();
    let mut framing: Vec<Finding> = Vec::new();
    let first = src.next_line(options.max_manifest_line, &mut framing)?;
    for f in framing.drain(..) {
        c.push(f);
    }
    let Some(first) = first else {
        c.push(Finding::new(
            Code::ManifestMissing,
            1,
            0,
            "",
            "the archive is empty; its first line must be the manifest",
        ));
        return Ok(finish_report(report, c, started, &src));
    };
    if first.too_long.is_some() {
        c.push(too_long(&first, options.max_manifest_line, "manifest"));
        report.stopped = true;
        return Ok(finish_report(report, c, started, &src));
    }
    let at = LineRef {
        line: first.line,
        offset: first.offset,
        bytes: &first.bytes,
    };
    let mut lr = LineReport::new(at, options.max_errors.max(1));
    let manifest = match ndarc_json::parse_with(&first.bytes, Default::default()) {
        Err(e) => {
            lr.add_at(
                Code::from(e.kind()),
                e.offset(),
                "",
                format!("the manifest line is not JSON: {}", e.message()),
            );
            None
        }
        Ok(parsed) => {
            if let Some(nc) = parsed.non_canonical_at {
                lr.add_at(Code::NotCanonical, nc, "", "the manifest line is valid JSON but not its canonical (RFC 8785) form; `ndarc canon` rewrites it");
            }
            match check_manifest(
                &parsed.value,
                &mut lr,
                &ManifestOptions {
                    formats: options.formats.clone(),
                },
            ) {
                ManifestOutcome::Read(m) => Some(*m),
                ManifestOutcome::Fatal => None,
            }
        }
    };
    let (found, dropped) = lr.into_findings();
    for f in found {
        c.push(f);
    }
    c.dropped(dropped);
    let Some(manifest) = manifest else {
        report.stopped = true;
        return Ok(finish_report(report, c, started, &src));
    };
    let mut plan = Plan::new(manifest);
    plan.max_findings_per_line = options.max_errors.max(1);
    let plan = Arc::new(plan);
    let mut asm = Assembler::new(plan.clone(), &first.bytes, first.offset, c)
        .manifest_line_number(first.line);
    if let Some(d) = &first.raw_digest {
        asm = asm.manifest_digest(d);
    }
    drop(first);

    // The pipeline: this thread frames lines and dispatches each to the
    // pool; results come back out of order and are fed to the assembler in
    // order. Bytes dispatched but not yet fed stay under WINDOW_BYTES (plus
    // one line), so memory is flat and every core has work while a large
    // line is being checked.
    type Done<'l> = (u64, RawLine<'l>, Option<LineSummary>);
    let (tx, rx) = std::sync::mpsc::channel::<Done<'a>>();
    let mut waiting: BTreeMap<u64, (RawLine<'a>, Option<LineSummary>)> = BTreeMap::new();
    let mut in_flight = 0usize;
    let mut next_seq = 0u64;
    let mut fed_seq = 0u64;
    let mut last_progress = 0u64;
    let fed_upto = std::cell::Cell::new(0u64);
    let full = std::cell::Cell::new(false);
    let mut released = 0u64;
    let mut feed_ready = |asm: &mut Assembler,
                          waiting: &mut BTreeMap<u64, (RawLine<'a>, Option<LineSummary>)>,
                          in_flight: &mut usize| {
        while let Some((mut l, s)) = waiting.remove(&fed_seq) {
            *in_flight -= l.bytes.len() + 1;
            fed_seq += 1;
            fed_upto.set(l.offset);
            // Past the error limit, lines already dispatched are dropped
            // unfed: the report then ends at the same line whatever the
            // threads' timing.
            if asm.findings.errors >= options.max_errors as u64 {
                full.set(true);
                continue;
            }
            for f in l.framing.drain(..) {
                asm.findings.push(f);
            }
            match s {
                Some(mut s) => {
                    if let Some(d) = l.raw_digest {
                        s.digest = d;
                    }
                    asm.feed(s)
                }
                None => {
                    asm.findings.push(too_long(&l, options.max_line, "part"));
                    asm.feed(unreadable(&l));
                }
            }
        }
        fed_seq
    };
    let plan_ref: &Plan = &plan;
    let result: std::io::Result<()> = in_scope(pool, |scope| {
        loop {
            let next = if report.stopped {
                None
            } else {
                src.next_line(options.max_line, &mut framing)?
            };
            let Some(mut line) = next else { break };
            line.framing = std::mem::take(&mut framing);
            let seq = next_seq;
            next_seq += 1;
            in_flight += line.bytes.len() + 1;
            if line.too_long.is_some() {
                waiting.insert(seq, (line, None));
            } else if options.jobs == 1 {
                // One job: check on this thread, so that `--jobs 1` uses one
                // core (a pool thread would run beside this one).
                let s = check_line(
                    plan_ref,
                    LineRef {
                        line: line.line,
                        offset: line.offset,
                        bytes: &line.bytes,
                    },
                );
                waiting.insert(seq, (line, Some(s)));
            } else {
                let tx = tx.clone();
                // The job owns the line (borrowed from the map, or read
                // from a stream) and sends it back with its summary.
                scope.spawn(move |_| {
                    let s = check_line(
                        plan_ref,
                        LineRef {
                            line: line.line,
                            offset: line.offset,
                            bytes: &line.bytes,
                        },
                    );
                    let _ = tx.send((seq, line, Some(s)));
                });
            }
            // Take what is back; block while the window is full.
            loop {
                let got = if in_flight > WINDOW_BYTES {
                    rx.recv().ok()
                } else {
                    rx.try_recv().ok()
                };
                let Some((seq, l, s)) = got else { break };
                waiting.insert(seq, (l, s));
                feed_ready(&mut asm, &mut waiting, &mut in_flight);
            }
            feed_ready(&mut asm, &mut waiting, &mut in_flight);
            if fed_upto.get() - released >= WINDOW_BYTES as u64 {
                released = fed_upto.get();
                release(released);
            }
            if asm.findings.errors >= options.max_errors as u64 {
                report.stopped = true;
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
        while feed_ready(&mut asm, &mut waiting, &mut in_flight) < next_seq {
            let Ok((seq, l, s)) = rx.recv() else { break };
            waiting.insert(seq, (l, s));
        }
        // Framing findings after the last line (empty lines at the end).
        if !full.get() && asm.findings.errors < options.max_errors as u64 {
            for f in framing.drain(..) {
                asm.findings.push(f);
            }
        }
        Ok(())
    });
    result?;
    // Whether the limit was reached depends only on the lines fed, not on
    // when the reading loop noticed it.
    report.stopped = full.get() || asm.findings.errors >= options.max_errors as u64;
    if let Some(p) = &options.progress {
        p(src.position(), src.total());
    }
    let eof = (src.lines() + 1, src.position());
    let (outcome, mut c) = asm.finish(eof);
    if !report.stopped {
        for (t, tparts) in &outcome.rescan {
            let name = plan.manifest.tables[*t].name.clone();
            let keys = tparts.iter().map(|&(line, offset)| {
                let bytes = reread(offset).unwrap_or_default();
                (
                    line,
                    offset,
                    ndarc_format::part::part_keys(&plan, *t, &bytes),
                )
            });
            rescan_duplicates(&name, keys, &mut c);
        }
    }
    report.parts = outcome.parts;
    report.content_hash = Some(outcome.content_hash);
    report.archive_hash = Some(outcome.archive_hash);
    report.closing_hashes = outcome
        .closing
        .and_then(|cl| Some((cl.content_hash?, cl.archive_hash?)));
    report.manifest = Some(plan.manifest.clone());
    Ok(finish_report(report, c, started, &src))
}

fn finish_report<'a, S: LineSource<'a>>(
    mut report: Report,
    c: Collector,
    started: Instant,
    src: &S,
) -> Report {
    report.findings = c.kept;
    report.errors = c.errors;
    report.warnings = c.warnings;
    report.bytes = src.position();
    report.lines = src.lines();
    report.elapsed = started.elapsed();
    report
}
