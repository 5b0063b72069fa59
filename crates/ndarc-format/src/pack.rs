//! The producer's packing rule (`export.mjs` `nextItems`): where row parts
//! start, how large a binary chunk is, a part-line writer and the
//! [`ArchiveWriter`] that seals the whole. The one implementation that
//! every writer of archives in the workspace uses (`ndarc-gen`'s generator
//! and `repart`, `ndarc-sqlite`'s `pack`).

use std::io::{self, Write};

use ndarc_json::{number, write_string};

use crate::hash::{sha256, ArchiveHasher, Digest32};

/// The part sizes (`partBytes`) a producer may use: 1 KiB to the longest
/// part line, 16 MiB. The one statement of the rule; `pack`, `gen`,
/// `repart`, the policy (`invalid_part_limit`) and the flags check it here.
pub const PART_BYTES: std::ops::RangeInclusive<usize> = 1024..=crate::MAX_PART_LINE;

/// The room `export.mjs` keeps in every part for the part's own members.
pub(crate) const PART_OVERHEAD: usize = 200;

/// The most rows `export.mjs` puts in one part, whatever `partBytes`.
pub const MAX_PART_ROWS: usize = 1000;

/// Decides where row parts start, exactly as `export.mjs`: a part holds rows
/// of one table, at most `min(1000, ceil(partBytes / 128))` of them, and a
/// row joins the part while `200 + Σ(len(canonical item) + 1) ≤ partBytes`.
#[derive(Debug, Clone)]
pub struct RowPacker {
    part_bytes: usize,
    max_rows: usize,
    size: usize,
    rows: usize,
}

impl RowPacker {
    /// A packer for parts of `part_bytes`.
    pub fn new(part_bytes: usize) -> RowPacker {
        RowPacker {
            part_bytes,
            max_rows: MAX_PART_ROWS.min(part_bytes.div_ceil(128)),
            size: PART_OVERHEAD,
            rows: 0,
        }
    }

    /// The most rows a part holds.
    pub fn max_rows(&self) -> usize {
        self.max_rows
    }

    /// Takes the next row item of `len` bytes (canonical, without LF) and
    /// tells whether it starts a new part. An item too large for any part
    /// is the producer's `row_part_too_large` (`InvalidData`).
    pub fn admit(&mut self, len: usize) -> io::Result<bool> {
        let bytes = len + 1;
        if bytes + PART_OVERHEAD > self.part_bytes {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "a row item of {len} bytes does not fit in a part of {} bytes (row_part_too_large)",
                    self.part_bytes
                ),
            ));
        }
        if self.rows > 0 && self.rows < self.max_rows && self.size + bytes <= self.part_bytes {
            self.size += bytes;
            self.rows += 1;
            Ok(false)
        } else {
            self.size = PART_OVERHEAD + bytes;
            self.rows = 1;
            Ok(true)
        }
    }

    /// Ends the current table: its next row starts a new part.
    pub fn end_table(&mut self) {
        self.rows = 0;
        self.size = PART_OVERHEAD;
    }
}

/// Builds part lines `{"index":N,"items":[…],"kind":"part"}` one at a time,
/// hashes and writes them. Items are written canonical by the caller
/// (members in name order), so the line is canonical.
#[derive(Debug)]
pub struct PartWriter {
    line: Vec<u8>,
    /// The room one part line takes (with its LF).
    room: usize,
    index: u64,
    open: bool,
    items: usize,
}

impl PartWriter {
    /// A writer for parts of at most `part_bytes` (the buffer is sized for
    /// one part).
    pub fn new(part_bytes: usize) -> PartWriter {
        let room = part_bytes.min(1 << 24) + 64;
        PartWriter {
            line: Vec::with_capacity(room),
            room,
            index: 0,
            open: false,
            items: 0,
        }
    }

    /// Starts the next part.
    pub fn begin(&mut self) {
        self.line.clear();
        self.line.extend_from_slice(b"{\"index\":");
        number::write(self.index as f64, &mut self.line);
        self.line.extend_from_slice(b",\"items\":[");
        self.open = true;
        self.items = 0;
    }

    /// The line being built, for writing an item in place; call
    /// [`PartWriter::item_written`] after.
    pub fn line(&mut self) -> &mut Vec<u8> {
        if self.items > 0 {
            self.line.push(b',');
        }
        &mut self.line
    }

    /// Records that an item was written into [`PartWriter::line`].
    pub(crate) fn item_written(&mut self) {
        self.items += 1;
    }

    /// Appends a canonical item.
    pub fn push_item(&mut self, item: &[u8]) {
        self.line().extend_from_slice(item);
        self.item_written();
    }

    /// Closes the open part, if any, and writes it with its LF to `spool`
    /// without sealing it: for a writer that must know every part before
    /// it writes the manifest (`repart`), and later hands each spooled
    /// line to [`ArchiveWriter::part_line`]. Returns the bytes written.
    pub fn spool<W: Write + ?Sized>(&mut self, spool: &mut W) -> io::Result<u64> {
        match self.close() {
            Some(line) => {
                spool.write_all(line)?;
                spool.write_all(b"\n")?;
                Ok(line.len() as u64 + 1)
            }
            None => Ok(0),
        }
    }

    /// Closes the open part, if any: the line, without its LF.
    fn close(&mut self) -> Option<&[u8]> {
        if !self.open {
            return None;
        }
        self.line.extend_from_slice(b"],\"kind\":\"part\"}");
        self.open = false;
        self.index += 1;
        Some(&self.line)
    }

    /// Closes the open part, if any, and hands its line over in `line`,
    /// with its LF, instead of copying it, for a writer that builds parts
    /// on one thread and seals and writes them on another
    /// ([`ArchiveWriter::handed_part`]). `line`'s buffer (cleared) becomes
    /// the part's next one, grown to the size of the line just closed (and
    /// an eighth) if it is smaller: a part line copied into a fresh buffer,
    /// grown as it is filled, was a copy of every byte and fresh pages
    /// zeroed by the kernel for each part. A fresh buffer is not reserved
    /// to the part limit (16 MiB by default) either: the allocator maps
    /// such a buffer anew each time, and the kernel zeroed a huge page for
    /// each, 2 MiB for parts of 160 KB (9 % of the CPU of diffing two
    /// databases). Returns whether a part was open (`line` is left as it
    /// was when none was).
    pub fn hand_over(&mut self, line: &mut Vec<u8>) -> bool {
        if self.close().is_none() {
            return false;
        }
        self.line.push(b'\n');
        line.clear();
        let want = self.line.len() + self.line.len() / 8;
        line.reserve(want.min(self.room));
        std::mem::swap(line, &mut self.line);
        true
    }

    /// Parts finished so far.
    pub fn count(&self) -> u64 {
        self.index
    }
}

/// Seals an archive as it is written: the manifest line, the part lines
/// (built by a [`PartWriter`] or copied whole), then the closing line with
/// the part count and both hashes. Every archive ndarc writes from scratch
/// (`gen`, `pack`, `repart`) is written through one, so the closing line
/// and the `archiveHash` construction are written in one place, and an
/// archive whose parts are not the manifest's `partCount` is never sealed.
///
/// It does not own the output: each call takes the writer, so that the
/// parts can be made on one thread and written on another (`pack`).
pub struct ArchiveWriter {
    archive: ArchiveHasher,
    planned: u64,
    parts: u64,
    bytes: u64,
}

impl std::fmt::Debug for ArchiveWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArchiveWriter")
            .field("planned", &self.planned)
            .field("parts", &self.parts)
            .field("bytes", &self.bytes)
            .finish_non_exhaustive()
    }
}

/// What an [`ArchiveWriter`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sealed {
    /// The closing line's `archiveHash`.
    pub archive_hash: String,
    /// Part lines written.
    pub part_count: u64,
    /// Bytes written, every line with its LF.
    pub bytes: u64,
}

impl ArchiveWriter {
    /// Writes the manifest line (canonical JSON, without its LF) and starts
    /// the archive. `part_count` is the manifest's `partCount`: the part
    /// lines that must follow.
    pub fn begin<W: Write + ?Sized>(
        manifest: &[u8],
        part_count: u64,
        out: &mut W,
    ) -> io::Result<ArchiveWriter> {
        let mut w = ArchiveWriter {
            archive: ArchiveHasher::new(),
            planned: part_count,
            parts: 0,
            bytes: 0,
        };
        w.line(manifest, out)?;
        Ok(w)
    }

    fn line<W: Write + ?Sized>(&mut self, line: &[u8], out: &mut W) -> io::Result<u64> {
        self.line_hashed(line, &sha256(line), out)
    }

    /// [`Self::line`] of a line whose digest (SHA-256 of `line`) the caller
    /// took.
    fn line_hashed<W: Write + ?Sized>(
        &mut self,
        line: &[u8],
        digest: &Digest32,
        out: &mut W,
    ) -> io::Result<u64> {
        self.archive.add_line_digest(digest);
        out.write_all(line)?;
        out.write_all(b"\n")?;
        let n = line.len() as u64 + 1;
        self.bytes += n;
        Ok(n)
    }

    /// Closes the part open in `part`, if any, and writes it; returns the
    /// bytes written (0 when no part was open).
    pub fn finish_part<W: Write + ?Sized>(
        &mut self,
        part: &mut PartWriter,
        out: &mut W,
    ) -> io::Result<u64> {
        match part.close() {
            Some(line) => {
                self.parts += 1;
                // `line` borrows `part`, not `self`.
                let line: &[u8] = line;
                self.line(line, out)
            }
            None => Ok(0),
        }
    }

    /// Seals and writes a part line handed over by
    /// [`PartWriter::hand_over`] (with its LF), on the thread that writes:
    /// its digest for the `archiveHash` is taken here, not where the part
    /// was built, so that a writer that builds parts on one thread and
    /// writes them on another shares the hashing between the two (it was
    /// 18 % of packing blob-heavy rows, all on the building thread; `pack`
    /// now takes the digests itself, two lines at a time, and calls
    /// [`ArchiveWriter::handed_part_hashed`]). Fails (`InvalidInput`,
    /// nothing written) for a line without its LF.
    pub fn handed_part<W: Write + ?Sized>(&mut self, line: &[u8], out: &mut W) -> io::Result<u64> {
        let digest = sha256(line.strip_suffix(b"\n").unwrap_or_default());
        self.handed_part_hashed(line, &digest, out)
    }

    /// [`ArchiveWriter::handed_part`] of a line whose digest the caller
    /// took (SHA-256 of the line without its LF), as a writer that hashes
    /// its lines two at a time does (`pack`). The caller vouches for the
    /// digest, as for [`ArchiveWriter::after_parts`].
    pub fn handed_part_hashed<W: Write + ?Sized>(
        &mut self,
        line: &[u8],
        digest: &Digest32,
        out: &mut W,
    ) -> io::Result<u64> {
        if !line.ends_with(b"\n") {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a handed-over part line ends with its LF",
            ));
        }
        self.parts += 1;
        self.archive.add_line_digest(digest);
        out.write_all(line)?;
        self.bytes += line.len() as u64;
        Ok(line.len() as u64)
    }

    /// Starts an archive whose first part lines were written before the
    /// manifest could be (their number is in it): `bytes` bytes of part
    /// lines, the digest of each (without its LF) taken as it was written,
    /// in order. The caller writes `manifest` (canonical JSON, without its
    /// LF) and its LF itself, so that they end where those lines begin: for
    /// a writer that makes the parts in one pass and learns `partCount` at
    /// the end (`ndarc_sqlite::pack_to_temp`, which writes the lines after
    /// room for the manifest, and the manifest last, so that no line is
    /// copied). The caller vouches that the digests are those of the lines;
    /// the parts that follow are written through the writer as usual.
    pub fn after_parts(
        manifest: &[u8],
        part_count: u64,
        digests: &[crate::hash::Digest32],
        bytes: u64,
    ) -> ArchiveWriter {
        let mut w = ArchiveWriter {
            archive: ArchiveHasher::new(),
            planned: part_count,
            parts: digests.len() as u64,
            bytes: manifest.len() as u64 + 1 + bytes,
        };
        w.archive.add_line(manifest);
        for d in digests {
            w.archive.add_line_digest(d);
        }
        w
    }

    /// Writes one whole part line (canonical, without its LF), as made
    /// elsewhere by a [`PartWriter`] (`repart` copies its spooled parts).
    pub fn part_line<W: Write + ?Sized>(&mut self, line: &[u8], out: &mut W) -> io::Result<u64> {
        self.parts += 1;
        self.line(line, out)
    }

    /// [`ArchiveWriter::part_line`] for two lines, `a` then `b`, their
    /// digests taken interleaved (`ndarc_sha::digest_two`: on the SHA
    /// extensions two streams cost little more than one), for a writer
    /// that copies many lines (`repart`, whose copying hashed one line at a
    /// time as long as it took to verify the input).
    pub fn part_line_pair<W: Write + ?Sized>(
        &mut self,
        a: &[u8],
        b: &[u8],
        out: &mut W,
    ) -> io::Result<u64> {
        let (da, db) = ndarc_sha::digest_two(a, b);
        self.parts += 2;
        Ok(self.line_hashed(a, &da, out)? + self.line_hashed(b, &db, out)?)
    }

    /// Part lines written so far.
    pub fn parts(&self) -> u64 {
        self.parts
    }

    /// The manifest's `partCount`: the part lines the archive must hold.
    pub fn planned(&self) -> u64 {
        self.planned
    }

    /// Writes the closing line with `content_hash` and the archive hash,
    /// and flushes `out`. Fails (`InvalidData`, nothing written) when the
    /// part lines written are not the manifest's `partCount`.
    pub fn close<W: Write + ?Sized>(
        mut self,
        content_hash: &str,
        out: &mut W,
    ) -> io::Result<Sealed> {
        if self.parts != self.planned {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "the manifest planned {} parts but {} were written",
                    self.planned, self.parts
                ),
            ));
        }
        let archive_hash = std::mem::take(&mut self.archive).finish();
        let mut closing = crate::closing_line(self.parts, content_hash, &archive_hash);
        closing.push(b'\n');
        out.write_all(&closing)?;
        out.flush()?;
        Ok(Sealed {
            archive_hash,
            part_count: self.parts,
            bytes: self.bytes + closing.len() as u64,
        })
    }
}

/// The producer's chunk length limit: `max(1, floor((partBytes − 200 −
/// len(canonical {bucket, key, name})) · 3/4))`, absent members as `null`.
pub fn chunk_cap(
    part_bytes: usize,
    bucket: Option<&str>,
    key: Option<&str>,
    name: Option<&str>,
) -> u64 {
    let mut v = Vec::with_capacity(64);
    let member = |label: &[u8], s: Option<&str>, v: &mut Vec<u8>| {
        v.extend_from_slice(label);
        match s {
            Some(s) => write_string(s, v),
            None => v.extend_from_slice(b"null"),
        }
    };
    member(b"{\"bucket\":", bucket, &mut v);
    member(b",\"key\":", key, &mut v);
    member(b",\"name\":", name, &mut v);
    v.push(b'}');
    let room = part_bytes as i64 - 200 - v.len() as i64;
    (room * 3).div_euclid(4).max(1) as u64
}

/// Number of chunks (parts) of an entry of `size` bytes: one for an empty
/// entry.
pub fn chunk_count(size: u64, cap: u64) -> u64 {
    if size == 0 {
        1
    } else {
        size.div_ceil(cap.max(1))
    }
}

/// Appends the canonical base64 of `bytes` to `out`.
pub fn push_base64(bytes: &[u8], out: &mut Vec<u8>) {
    let start = out.len();
    let len = base64_simd::STANDARD.encoded_length(bytes.len());
    out.resize(start + len, 0);
    let written = base64_simd::STANDARD
        .encode(bytes, base64_simd::Out::from_slice(&mut out[start..]))
        .len();
    out.truncate(start + written);
}

/// Writes one part holding one chunk of an object
/// (`{"bucket","data","key","kind":"object","offset"}`) or, with `object`
/// `None`, of the payload `name`, into `part` (which it begins; the caller
/// finishes it).
pub fn chunk_part(
    part: &mut PartWriter,
    object: Option<(&str, &str)>,
    name: &str,
    offset: u64,
    data: &[u8],
) {
    part.begin();
    let l = part.line();
    match object {
        Some((b, k)) => {
            l.extend_from_slice(b"{\"bucket\":");
            write_string(b, l);
            l.extend_from_slice(b",\"data\":\"");
            push_base64(data, l);
            l.extend_from_slice(b"\",\"key\":");
            write_string(k, l);
            l.extend_from_slice(b",\"kind\":\"object\",\"offset\":");
        }
        None => {
            l.extend_from_slice(b"{\"data\":\"");
            push_base64(data, l);
            l.extend_from_slice(b"\",\"kind\":\"payload\",\"name\":");
            write_string(name, l);
            l.extend_from_slice(b",\"offset\":");
        }
    }
    number::write(offset as f64, l);
    l.push(b'}');
    part.item_written();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The writer seals what it wrote: the archive hash is that of the
    /// lines as written, the closing line names the part count, and a part
    /// count other than the manifest's is refused with nothing written.
    #[test]
    fn the_archive_writer_seals_what_it_wrote() {
        let manifest = br#"{"kind":"manifest","partCount":2}"#;
        let mut out = Vec::new();
        let mut w = ArchiveWriter::begin(manifest, 2, &mut out).unwrap();
        let mut part = PartWriter::new(1024);
        part.begin();
        part.push_item(br#"{"x":1}"#);
        assert_eq!(w.finish_part(&mut part, &mut out).unwrap(), 44);
        assert_eq!(
            w.finish_part(&mut part, &mut out).unwrap(),
            0,
            "no part open"
        );
        w.part_line(br#"{"index":1,"items":[],"kind":"part"}"#, &mut out)
            .unwrap();
        let sealed = w.close("c", &mut out).unwrap();
        let text = String::from_utf8(out.clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[1], r#"{"index":0,"items":[{"x":1}],"kind":"part"}"#);
        let mut h = ArchiveHasher::new();
        for l in &lines[..3] {
            h.add_line(l.as_bytes());
        }
        let archive_hash = h.finish();
        assert_eq!(sealed.archive_hash, archive_hash);
        assert_eq!(sealed.part_count, 2);
        assert_eq!(sealed.bytes, out.len() as u64);
        assert_eq!(
            lines[3].as_bytes(),
            crate::closing_line(2, "c", &archive_hash).as_slice()
        );

        let mut out = Vec::new();
        let w = ArchiveWriter::begin(manifest, 2, &mut out).unwrap();
        let written = out.len();
        let e = w.close("c", &mut out).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert!(e.to_string().contains("planned 2 parts but 0"), "{e}");
        assert_eq!(out.len(), written, "no closing line");
    }

    /// A handed-over line is the part's, with its LF; the buffer given in
    /// its place is grown to about that line's size, not to the part
    /// limit (a fresh 16 MiB buffer per part was a huge page zeroed by the
    /// kernel per part). Sealed where it is written, it makes the archive
    /// a writer that copies its parts makes.
    #[test]
    fn a_handed_over_part_keeps_its_line_and_sizes_the_next_buffer() {
        let manifest = br#"{"kind":"manifest","partCount":2}"#;
        let mut out = Vec::new();
        let mut w = ArchiveWriter::begin(manifest, 2, &mut out).unwrap();
        let mut part = PartWriter::new(crate::MAX_PART_LINE);
        let mut line = Vec::new();
        assert!(!part.hand_over(&mut line), "no part open");
        part.begin();
        part.push_item(br#"{"x":1}"#);
        assert!(part.hand_over(&mut line));
        assert_eq!(
            line,
            b"{\"index\":0,\"items\":[{\"x\":1}],\"kind\":\"part\"}\n"
        );
        assert!(part.line.capacity() >= line.len() - 1);
        assert!(part.line.capacity() < 4096, "{}", part.line.capacity());
        assert_eq!(w.handed_part(&line, &mut out).unwrap(), line.len() as u64);
        // A recycled buffer keeps the room it had.
        let mut recycled = Vec::with_capacity(1 << 20);
        part.begin();
        part.push_item(br#"{"x":2}"#);
        std::mem::swap(&mut line, &mut recycled);
        assert!(part.hand_over(&mut line));
        assert!(part.line.capacity() >= 1 << 20);
        let e = w
            .handed_part(&line[..line.len() - 1], &mut out)
            .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        w.handed_part(&line, &mut out).unwrap();
        assert_eq!(w.parts(), 2);
        w.close("c", &mut out).unwrap();

        // The same parts written whole: the same archive.
        assert_eq!(out, written_whole(manifest));
    }

    /// The archive of `manifest` and the parts `{"x":1}`, `{"x":2}`, each
    /// written whole ([`ArchiveWriter::finish_part`]), closed with "c".
    fn written_whole(manifest: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut w = ArchiveWriter::begin(manifest, 2, &mut out).unwrap();
        let mut part = PartWriter::new(crate::MAX_PART_LINE);
        for x in [1, 2] {
            part.begin();
            part.push_item(format!(r#"{{"x":{x}}}"#).as_bytes());
            w.finish_part(&mut part, &mut out).unwrap();
        }
        w.close("c", &mut out).unwrap();
        out
    }

    /// Parts written before their manifest, with their digests, and the
    /// manifest put before them make the archive a writer that writes
    /// them in order makes, and the same account of its bytes and parts.
    #[test]
    fn parts_written_before_the_manifest_make_the_same_archive() {
        let manifest = br#"{"kind":"manifest","partCount":2}"#;
        let mut part = PartWriter::new(crate::MAX_PART_LINE);
        let (mut spool, mut digests) = (Vec::new(), Vec::new());
        let mut line = Vec::new();
        for x in [1, 2] {
            part.begin();
            part.push_item(format!(r#"{{"x":{x}}}"#).as_bytes());
            assert!(part.hand_over(&mut line));
            digests.push(crate::hash::sha256(&line[..line.len() - 1]));
            spool.extend_from_slice(&line);
        }
        let w = ArchiveWriter::after_parts(manifest, 2, &digests, spool.len() as u64);
        assert_eq!(w.parts(), 2);
        let mut out = manifest.to_vec();
        out.push(b'\n');
        out.extend_from_slice(&spool);
        let sealed = w.close("c", &mut out).unwrap();

        let whole = written_whole(manifest);
        assert_eq!(out, whole);
        assert_eq!(sealed.bytes, whole.len() as u64);
        assert_eq!(sealed.part_count, 2);

        // One part short of the plan is not sealed.
        let w = ArchiveWriter::after_parts(manifest, 3, &digests, spool.len() as u64);
        let e = w.close("c", &mut Vec::new()).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
    }

    #[test]
    fn chunk_cap_follows_the_producer() {
        // 1024 − 200 − len({"bucket":null,"key":null,"name":"kv"}) = 786; · 3/4.
        assert_eq!(chunk_cap(1024, None, None, Some("kv")), 589);
        assert_eq!(chunk_cap(1024, Some("b"), Some(&"k".repeat(2000)), None), 1);
        assert_eq!(chunk_count(0, 10), 1);
        assert_eq!(chunk_count(10, 10), 1);
        assert_eq!(chunk_count(11, 10), 2);
    }

    #[test]
    fn packer_follows_export_mjs() {
        let mut p = RowPacker::new(1024);
        assert_eq!(p.max_rows(), 8);
        // 200 + 4 × 201 = 1004 ≤ 1024; a fifth does not fit.
        assert!(p.admit(200).unwrap());
        for _ in 0..3 {
            assert!(!p.admit(200).unwrap());
        }
        assert!(p.admit(200).unwrap());
        // At most 8 rows however small.
        let mut p = RowPacker::new(1024);
        let starts: Vec<bool> = (0..10).map(|_| p.admit(1).unwrap()).collect();
        assert_eq!(starts.iter().filter(|s| **s).count(), 2);
        assert!(starts[8]);
        // The largest item that fits alone: 1024 − 200 − 1.
        let mut p = RowPacker::new(1024);
        assert!(p.admit(823).unwrap());
        assert!(p.admit(824).is_err());
        assert_eq!(RowPacker::new(16 * 1024 * 1024).max_rows(), 1000);
    }
}
