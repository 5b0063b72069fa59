//! Re-packing an archive into parts of another size, through the one door
//! of `ndarc-verify` ([`ndarc_verify::read_path`] and friends).
//!
//! The input is read once and verified as it is read; the rows, objects
//! and payloads of the part lines the verifier accepted are re-packed into
//! a spool (the new part lines, without the manifest, whose `partCount`
//! is known only at the end). Only when the report is valid is the output
//! written: the manifest line with the new `partCount`, the spooled parts
//! and the closing line. An archive that does not verify (a row edited, a
//! CRLF copy, a line over its limit …) writes nothing: it is never
//! re-sealed with new hashes.

use std::io::{self, BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::Arc;

use ndarc_format::framing;
use ndarc_format::pack::chunk_part;
use ndarc_format::part::BinaryKind;
use ndarc_format::{LineRef, Plan, MAX_PART_LINE};
use ndarc_json::Value;
use ndarc_verify::{Accepted, Options, ReadError, Reader, Report};

use crate::binary::chunk_cap;
use crate::error::Error;
use crate::gen::{BinaryDelta, Summary, TableSummary};
use ndarc_format::pack::{ArchiveWriter, PartWriter, RowPacker};

/// Reads the next line of the spool into `line` (cleared first; without
/// its LF), its end found by [`framing::gather_line`]; false at the end.
fn next_line(r: &mut impl BufRead, line: &mut Vec<u8>) -> io::Result<bool> {
    line.clear();
    let mut any = false;
    loop {
        let input = match r.fill_buf() {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            r => r?,
        };
        if input.is_empty() {
            return Ok(any);
        }
        any = true;
        let (used, done) = framing::gather_line(input, line);
        r.consume(used);
        if done {
            return Ok(true);
        }
    }
}

/// The binary being re-chunked: which one, the next output offset, the
/// bytes not yet written (less than one chunk between parts).
struct Pending {
    kind: BinaryKind,
    entry: usize,
    cap: usize,
    offset: u64,
    buf: Vec<u8>,
}

/// A [`Reader`] that re-packs the accepted parts into `spool`.
struct Repacker<S: Write> {
    part_bytes: usize,
    spool: BufWriter<S>,
    plan: Option<Arc<Plan>>,
    /// The manifest line as the door handed it over (checked, canonical).
    manifest: Vec<u8>,
    part: PartWriter,
    packer: RowPacker,
    last_table: Option<usize>,
    rows: Vec<u64>,
    pending: Option<Pending>,
    chunk: Vec<u8>,
    item: Vec<u8>,
}

impl<S: Write> Repacker<S> {
    fn new(part_bytes: usize, spool: S) -> Repacker<S> {
        Repacker {
            part_bytes,
            spool: BufWriter::with_capacity(1 << 20, spool),
            plan: None,
            manifest: Vec::new(),
            part: PartWriter::new(part_bytes),
            packer: RowPacker::new(part_bytes),
            last_table: None,
            rows: Vec::new(),
            pending: None,
            chunk: Vec::new(),
            item: Vec::new(),
        }
    }

    /// Writes the open row part, if any.
    fn end_rows(&mut self) -> io::Result<()> {
        // Sealed when copied after the manifest, which needs the count.
        self.part.spool(&mut self.spool)?;
        Ok(())
    }

    /// One chunk of the pending binary as a part.
    fn emit(&mut self, from: usize, to: usize) -> io::Result<()> {
        let (Some(p), Some(plan)) = (self.pending.as_mut(), self.plan.as_ref()) else {
            return Ok(());
        };
        let data = &p.buf[from..to];
        match p.kind {
            BinaryKind::Object => {
                let o = &plan.manifest.objects[p.entry];
                chunk_part(
                    &mut self.part,
                    Some((&o.bucket, &o.key)),
                    "",
                    p.offset,
                    data,
                );
            }
            BinaryKind::Payload => {
                let n = &plan.manifest.payloads[p.entry];
                chunk_part(&mut self.part, None, &n.name, p.offset, data);
            }
        }
        p.offset += (to - from) as u64;
        // Sealed when copied after the manifest, which needs the count.
        self.part.spool(&mut self.spool)?;
        Ok(())
    }

    /// Writes the full chunks of the pending binary, and the rest (one
    /// empty chunk for an empty binary) when `end`.
    fn drain(&mut self, end: bool) -> io::Result<()> {
        let Some(cap) = self.pending.as_ref().map(|p| p.cap) else {
            return Ok(());
        };
        let mut start = 0;
        while self.pending.as_ref().map_or(0, |p| p.buf.len()) - start >= cap {
            self.emit(start, start + cap)?;
            start += cap;
        }
        if let Some(p) = self.pending.as_mut() {
            p.buf.drain(..start);
        }
        if end {
            let rest = self.pending.as_ref().map_or(0, |p| p.buf.len());
            if rest > 0 || self.pending.as_ref().is_some_and(|p| p.offset == 0) {
                self.emit(0, rest)?;
            }
            self.pending = None;
        }
        Ok(())
    }

    /// Adds a row item (its canonical text) to the parts, starting the next
    /// part when it does not fit.
    fn push_item(&mut self, line: u64, item: &[u8]) -> Result<(), Error> {
        if self
            .packer
            .admit(item.len())
            .map_err(|e| Error::archive(line, e.to_string()))?
        {
            self.part.spool(&mut self.spool)?;
            self.part.begin();
        }
        self.part.push_item(item);
        Ok(())
    }

    /// The spool once every part is written.
    fn finish(mut self) -> Result<(S, u64, Vec<u64>), Error> {
        self.end_rows()?;
        self.drain(true)?;
        let count = self.part.count();
        let spool = self.spool.into_inner().map_err(|e| e.into_error())?;
        Ok((spool, count, self.rows))
    }
}

impl<S: Write> Reader for Repacker<S> {
    type Error = Error;

    fn start(&mut self, plan: &Arc<Plan>, manifest: LineRef<'_>) -> Result<(), Error> {
        self.manifest = manifest.bytes.to_vec();
        self.rows = vec![0; plan.manifest.tables.len()];
        self.plan = Some(Arc::clone(plan));
        Ok(())
    }

    fn part(&mut self, part: Accepted<'_>) -> Result<(), Error> {
        let line = part.line.line;
        if let Some(rows) = part.rows() {
            self.drain(true)?;
            if self.last_table != Some(rows.table) {
                self.packer.end_table();
                self.last_table = Some(rows.table);
            }
            if let Some(n) = self.rows.get_mut(rows.table) {
                *n += rows.rows;
            }
            // The line is canonical and checked: its items are written
            // again as they are, one by one, into the new parts: sliced
            // from the line where the verifier's spans place them, else
            // (a line the fast path did not read) parsed and written again.
            let plan = self.plan.clone();
            if let Some(items) = plan.as_deref().and_then(|p| items_of(&part, p)) {
                for (a, b) in items {
                    self.push_item(line, &part.line.bytes[a..b])?;
                }
                return Ok(());
            }
            let v = ndarc_json::parse(part.line.bytes)
                .map_err(|source| Error::Json { line, source })?;
            let items = v
                .get("items")
                .and_then(Value::as_array)
                .ok_or_else(|| Error::archive(line, "a part line has no items"))?;
            let mut text = std::mem::take(&mut self.item);
            for item in items {
                text.clear();
                ndarc_json::write_canonical(item, &mut text);
                self.push_item(line, &text)?;
            }
            self.item = text;
            return Ok(());
        }
        let Some(b) = part.binary() else {
            return Ok(());
        };
        self.end_rows()?;
        // A chunk at offset 0 starts a binary (an empty one, or the next
        // of the same name); otherwise it continues the pending one.
        let same = self
            .pending
            .as_ref()
            .is_some_and(|p| p.kind == b.kind && p.entry == b.entry)
            && b.offset.unwrap_or(0) != 0;
        if !same {
            self.drain(true)?;
            let plan = self
                .plan
                .as_ref()
                .ok_or_else(|| Error::archive(line, "a part before the manifest"))?;
            let cap = match b.kind {
                BinaryKind::Object => plan
                    .manifest
                    .objects
                    .get(b.entry)
                    .map(|o| chunk_cap(self.part_bytes, Some(&o.bucket), Some(&o.key), None)),
                BinaryKind::Payload => plan
                    .manifest
                    .payloads
                    .get(b.entry)
                    .map(|p| chunk_cap(self.part_bytes, None, None, Some(&p.name))),
            }
            .ok_or_else(|| Error::archive(line, "a chunk of an entry the manifest lacks"))?;
            self.pending = Some(Pending {
                kind: b.kind,
                entry: b.entry,
                cap: usize::try_from(cap).unwrap_or(usize::MAX).max(1),
                offset: 0,
                buf: Vec::new(),
            });
        }
        let mut chunk = std::mem::take(&mut self.chunk);
        let data = part
            .chunk(&mut chunk)
            .ok_or_else(|| Error::archive(line, "a chunk's data is not canonical base64"))?;
        if let Some(p) = self.pending.as_mut() {
            p.buf.extend_from_slice(data);
        }
        self.chunk = chunk;
        self.drain(false)?;
        Ok(())
    }
}

/// Where each row item of an accepted rows part is in its line, from the
/// verifier's spans (`None` when they do not describe the line: the fast
/// path did not read it). A canonical part is `{"index":N,"items":[` and
/// its items, comma-separated, each ending with its row (and rowid) and
/// `,"table":NAME}`, then `],"kind":"part"}`; every boundary is checked
/// against those bytes, so a slice is an item or the line is parsed.
fn items_of(part: &Accepted<'_>, plan: &Plan) -> Option<Vec<(usize, usize)>> {
    let spans = part.spans;
    let t = spans.table?;
    let tp = plan.tables.get(t)?;
    let bytes = part.line.bytes;
    let tail = br#","table":"#.len() + tp.name_json.len() + 1;
    let mut at = memchr::memchr(b'[', bytes)? + 1;
    let mut items = Vec::with_capacity(spans.rows.len());
    for (i, &(_, row_end)) in spans.rows.iter().enumerate() {
        let last = if tp.has_rowid {
            spans.rowids.get(i)?.1 .1
        } else {
            row_end
        };
        let end = last as usize + tail;
        let item = bytes.get(at..end)?;
        let name_at = end - 1 - tp.name_json.len();
        let closes = item.starts_with(br#"{"index":"#)
            && item.ends_with(b"}")
            && bytes.get(end - tail..name_at)? == br#","table":"#
            && bytes.get(name_at..end - 1)? == tp.name_json;
        if !closes {
            return None;
        }
        items.push((at, end));
        at = end + 1;
    }
    (bytes.get(at - 1..)? == br#"],"kind":"part"}"#).then_some(items)
}

fn check_part_bytes(part_bytes: usize) -> Result<(), Error> {
    if !ndarc_format::pack::PART_BYTES.contains(&part_bytes) {
        return Err(Error::archive(
            0,
            format!("part_bytes must be 1024 ..= {MAX_PART_LINE}, not {part_bytes}"),
        ));
    }
    Ok(())
}

/// Re-packs the archive at `path` (read once, through
/// [`ndarc_verify::read_path`]) into parts of `part_bytes` (1024 ..= 16
/// MiB) with the producer's packing rule, and writes the result to `out`
/// only when the archive is valid. `spool` holds the new parts meanwhile
/// (a temporary file: as large as the output).
///
/// Rows, chunks' bytes and every manifest member except `partCount` are
/// unchanged, so `contentHash` stays the same; `partCount` and
/// `archiveHash` change.
///
/// Errors: [`Error::Invalid`] with the verifier's report when the archive
/// is not valid (nothing is written to `out`), a row item too large for
/// the new part size (`row_part_too_large`), or an I/O error.
pub fn repart_path<S: Read + Write + Seek>(
    path: &Path,
    part_bytes: usize,
    options: &Options,
    spool: S,
    out: &mut dyn Write,
) -> Result<Summary, Error> {
    check_part_bytes(part_bytes)?;
    let mut r = Repacker::new(part_bytes, spool);
    let report = ndarc_verify::read_path(path, options, &mut r).map_err(door)?;
    complete(r, report, out)
}

/// [`repart_path`] of an archive read from a stream (standard input, a
/// pipe, a database packed on the fly), through
/// [`ndarc_verify::read_stream`]. The manifest line is kept as it goes by
/// (up to the manifest limit) to be written again.
pub fn repart_stream<R: Read + Send, S: Read + Write + Seek>(
    input: R,
    part_bytes: usize,
    options: &Options,
    spool: S,
    out: &mut dyn Write,
) -> Result<Summary, Error> {
    check_part_bytes(part_bytes)?;
    let mut r = Repacker::new(part_bytes, spool);
    let report = ndarc_verify::read_stream(input, options, &mut r).map_err(door)?;
    complete(r, report, out)
}

/// [`repart_stream`] of an archive in memory, with the spool in memory:
/// for tests and small archives.
pub fn repartition(
    input: &[u8],
    part_bytes: usize,
    out: &mut impl Write,
) -> Result<Summary, Error> {
    check_part_bytes(part_bytes)?;
    let options = Options::default();
    let mut r = Repacker::new(part_bytes, io::Cursor::new(Vec::new()));
    let report = ndarc_verify::read_bytes(input, &options, &mut r).map_err(door)?;
    complete(r, report, out)
}

/// [`repart_path`] with default options and an unnamed temporary file as
/// the spool.
pub fn repartition_file(
    path: &Path,
    part_bytes: usize,
    out: &mut impl Write,
) -> Result<Summary, Error> {
    repart_path(
        path,
        part_bytes,
        &Options::default(),
        tempfile::tempfile()?,
        out,
    )
}

fn door(e: ReadError<Error>) -> Error {
    match e {
        ReadError::Reader(e) => e,
        ReadError::Verify(e) => Error::Read(e),
    }
}

/// Writes the output of a valid read: the manifest with the new
/// `partCount`, the spooled parts, the closing.
fn complete<S: Read + Write + Seek>(
    mut r: Repacker<S>,
    report: Report,
    out: &mut dyn Write,
) -> Result<Summary, Error> {
    if !report.is_valid(false) {
        return Err(Error::Invalid(Box::new(report)));
    }
    let Some(plan) = r.plan.clone() else {
        return Err(Error::Invalid(Box::new(report)));
    };
    let content_hash = report
        .content_hash
        .clone()
        .ok_or_else(|| Error::archive(0, "the archive's contentHash is unknown"))?;
    let line = std::mem::take(&mut r.manifest);
    let (mut spool, part_count, rows) = r.finish()?;
    let mut manifest =
        match ndarc_json::parse(&line).map_err(|source| Error::Json { line: 1, source })? {
            Value::Object(o) => o,
            _ => return Err(Error::archive(1, "the manifest is not an object")),
        };
    manifest.insert("partCount", Value::from(part_count as i64));
    let mut archive = ArchiveWriter::begin(
        &ndarc_json::to_canonical_vec(&Value::Object(manifest)),
        part_count,
        out,
    )?;

    // The spooled parts, sealed after the manifest as they are copied.
    spool.seek(SeekFrom::Start(0))?;
    let mut parts = BufReader::with_capacity(1 << 20, spool);
    // Two lines at a time, hashed interleaved.
    let (mut a, mut b) = (Vec::new(), Vec::new());
    while next_line(&mut parts, &mut a)? {
        if next_line(&mut parts, &mut b)? {
            archive.part_line_pair(&a, &b, out)?;
        } else {
            archive.part_line(&a, out)?;
        }
    }
    let sealed = archive.close(&content_hash, out)?;
    let (bytes, archive_hash) = (sealed.bytes, sealed.archive_hash);

    let tables = plan
        .manifest
        .tables
        .iter()
        .zip(rows.iter().copied().chain(std::iter::repeat(0)))
        .map(|(t, rows)| TableSummary {
            name: t.name.clone(),
            rows,
            changed: 0,
            added: 0,
            removed: 0,
        })
        .collect();
    Ok(Summary {
        bytes,
        lines: part_count + 2,
        part_count,
        content_hash,
        archive_hash,
        tables,
        objects: BinaryDelta::default(),
        payloads: BinaryDelta::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks every accepted rows part: the items sliced from the line are
    /// the items the line parses to, written canonically; counts the parts
    /// sliced and those left to the parser.
    #[derive(Default)]
    struct Compare {
        plan: Option<Arc<Plan>>,
        sliced: usize,
        parsed: usize,
    }

    impl Reader for Compare {
        type Error = String;

        fn start(&mut self, plan: &Arc<Plan>, _: LineRef<'_>) -> Result<(), String> {
            self.plan = Some(Arc::clone(plan));
            Ok(())
        }

        fn part(&mut self, part: Accepted<'_>) -> Result<(), String> {
            if part.rows().is_none() {
                return Ok(());
            }
            let v = ndarc_json::parse(part.line.bytes).map_err(|e| e.to_string())?;
            let want: Vec<Vec<u8>> = v
                .get("items")
                .and_then(Value::as_array)
                .ok_or("no items")?
                .iter()
                .map(ndarc_json::to_canonical_vec)
                .collect();
            let plan = self.plan.as_deref().ok_or("no plan")?;
            match items_of(&part, plan) {
                Some(items) => {
                    let got: Vec<Vec<u8>> = items
                        .iter()
                        .map(|&(a, b)| part.line.bytes[a..b].to_vec())
                        .collect();
                    assert_eq!(got, want, "line {}", part.line.line);
                    self.sliced += 1;
                }
                None => {
                    // Only a line the fast path did not read is parsed.
                    assert!(part.spans.table.is_none(), "line {}", part.line.line);
                    self.parsed += 1;
                }
            }
            Ok(())
        }
    }

    /// Over every archive of the corpus, and one whose rows carry rowids
    /// and escapes: an item is sliced exactly as the parser reads it.
    #[test]
    fn items_sliced_from_a_line_are_the_items_it_parses_to() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
        let mut compare = Compare::default();
        for dir in ["valid", "invalid"] {
            let mut files: Vec<_> = std::fs::read_dir(root.join(dir))
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|x| x == "ndjson"))
                .collect();
            files.sort();
            for p in files {
                let bytes = std::fs::read(&p).unwrap();
                compare.plan = None;
                let _ = ndarc_verify::read_bytes(&bytes, &Options::default(), &mut compare);
            }
        }
        assert!(compare.sliced > 50, "{} parts sliced", compare.sliced);
        assert!(compare.parsed > 0, "no part left to the parser");
    }
}
