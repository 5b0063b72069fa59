//! Rules that span lines (SPEC.md §5–§7), checked in one sequential pass
//! over [`LineSummary`]s in archive order.

use std::collections::HashMap;
use std::sync::Arc;

use crate::code::{Code, Severity};
use crate::finding::Finding;
use crate::hash::{hex, ArchiveHasher, ContentHasher, Digest32};
use crate::key::{key_step, RowKey};
use crate::manifest::Manifest;
use crate::plan::Plan;
use crate::summary::{
    Anchors, BinaryKind, BinaryPart, Body, Chunk, Closing, Descent, LineSummary, RowsPart,
};

/// Findings kept for a report: at most `max` kept, all counted.
#[derive(Debug, Clone, Default)]
pub struct Collector {
    /// Findings kept, in the order found.
    pub kept: Vec<Finding>,
    /// How many to keep at most.
    pub max: usize,
    /// Errors found (kept or not).
    pub errors: u64,
    /// Warnings found (kept or not).
    pub warnings: u64,
}

impl Collector {
    /// A collector keeping at most `max` findings.
    pub fn new(max: usize) -> Self {
        Collector {
            max,
            ..Default::default()
        }
    }

    /// Adds a finding.
    pub fn push(&mut self, f: Finding) {
        match f.severity {
            Severity::Error => self.errors += 1,
            Severity::Warning => self.warnings += 1,
        }
        if self.kept.len() < self.max {
            self.kept.push(f);
        }
    }

    /// Counts errors that a per-line limit dropped.
    pub fn dropped(&mut self, n: u64) {
        self.errors += n;
    }

    /// Counts warnings that a per-line limit dropped: they stay warnings.
    pub fn dropped_warnings(&mut self, n: u64) {
        self.warnings += n;
    }

    /// Whether the kept list is full.
    pub fn is_full(&self) -> bool {
        self.kept.len() >= self.max
    }
}

/// Offsets in the manifest line of each table's `count`, each object and
/// payload entry, and `partCount` (0 where the pointer names nothing, as a
/// finding's position falls back to the line's start).
struct ManifestPositions {
    counts: Vec<u64>,
    binaries: [Vec<u64>; 2],
    part_count: u64,
}

impl ManifestPositions {
    /// One walk of the line, in manifest order.
    fn locate(plan: &Plan, line: &[u8]) -> ManifestPositions {
        let mut locator = ndarc_json::Locator::new(line);
        let mut at = |p: &str| locator.locate(p).unwrap_or(0) as u64;
        let m = &plan.manifest;
        let counts = (0..m.tables.len())
            .map(|t| at(&format!("/tables/{t}/count")))
            .collect();
        let objects = (0..m.objects.len())
            .map(|i| at(&format!("/objects/{i}")))
            .collect();
        let payloads = (0..m.payloads.len())
            .map(|i| at(&format!("/payloads/{i}")))
            .collect();
        ManifestPositions {
            counts,
            binaries: [objects, payloads],
            part_count: at("/partCount"),
        }
    }
}

#[derive(Debug, Default)]
struct TableState {
    rows: u64,
    last_key: Option<RowKey>,
    unordered: bool,
    over_reported: bool,
    index_reported: bool,
    /// The table's parts, as runs of consecutive lines, for the duplicate
    /// re-scan: one run per table in a well-formed archive, so memory does
    /// not grow with the number of parts.
    parts: Vec<PartRun>,
}

#[derive(Debug, PartialEq, Eq, PartialOrd, Ord, Clone, Copy)]
enum Phase {
    Rows,
    Binaries,
}

/// An object or payload whose chunks are being read.
struct InProgress {
    next_offset: u64,
    hash: PieceHash,
    whole: Option<Digest32>,
    /// A chunk was unreadable: the digest cannot be judged.
    tainted: bool,
    /// The first chunk's length: the producer cuts every chunk but the last
    /// to one size (`chunk_size`, reported once per binary).
    first_len: Option<u64>,
    size_reported: bool,
}

/// The SHA-256 of a binary's pieces, fed in order in any lengths: whole
/// blocks go to the stream (which can start from a first piece's blocks,
/// hashed where its line was checked), the bytes of a partial block wait.
#[derive(Default)]
struct PieceHash {
    stream: ndarc_sha::Stream,
    partial: Vec<u8>,
}

impl PieceHash {
    /// Whether no byte was fed yet.
    fn is_empty(&self) -> bool {
        self.stream.is_empty() && self.partial.is_empty()
    }

    /// Feeds a piece's `bytes`, whose whole blocks `head` may have hashed
    /// already (see [`Chunk::Piece`]): taken when nothing was fed before,
    /// as it then is the state this would reach.
    fn piece(&mut self, bytes: &[u8], head: Option<ndarc_sha::Stream>) {
        match head {
            Some(head) if self.is_empty() => {
                let done = usize::try_from(head.len()).unwrap_or(usize::MAX);
                self.stream = head;
                self.update(bytes.get(done..).unwrap_or_default());
            }
            _ => self.update(bytes),
        }
    }

    fn update(&mut self, mut bytes: &[u8]) {
        if !self.partial.is_empty() {
            let n = (64 - self.partial.len()).min(bytes.len());
            self.partial.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
            if self.partial.len() < 64 {
                return;
            }
            self.stream.update(&self.partial);
            self.partial.clear();
        }
        let whole = bytes.len() / 64 * 64;
        self.stream.update(&bytes[..whole]);
        self.partial.extend_from_slice(&bytes[whole..]);
    }

    fn finish(self) -> Digest32 {
        self.stream.finish(&self.partial)
    }
}

/// What the closing and the recomputed hashes say, after [`Assembler::finish`].
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// The closing record, if one was read.
    pub closing: Option<Closing>,
    /// Recomputed `contentHash`.
    pub content_hash: String,
    /// Recomputed `archiveHash`.
    pub archive_hash: String,
    /// Part lines seen.
    pub parts: u64,
    /// Tables whose rows were out of key order: their duplicate keys must be
    /// found by re-reading their parts ([`rescan_duplicates`](crate::rescan_duplicates)). Each entry is
    /// a table position, the runs of its part lines and the rows read from
    /// them (seen, not claimed: the re-scan sizes its key vector by it).
    pub rescan: Vec<(usize, Vec<PartRun>, u64)>,
}

/// Consecutive part lines of one table: `count` lines from line `line`,
/// which starts at byte `offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartRun {
    /// Line number of the first part.
    pub line: u64,
    /// Byte offset of the first part.
    pub offset: u64,
    /// Number of part lines.
    pub count: u64,
}

/// The sequential half of verification: feed it the manifest, then every
/// later line's summary in archive order, then call [`finish`](Self::finish).
///
/// Counts and completeness are judged at the end, so an item out of order
/// is reported once (`item_order`) and still counted: it does not also make
/// the rows or chunks that are present look missing.
pub struct Assembler {
    plan: Arc<Plan>,
    /// Where the findings that [`finish`](Self::finish) may make on the
    /// manifest point, located once at the start so that the line itself
    /// (up to 256 MiB) is not kept: see [`ManifestPositions`].
    manifest_at: ManifestPositions,
    manifest_line_no: u64,
    manifest_offset: u64,
    archive: ArchiveHasher,
    content: ContentHasher,
    next_part: u64,
    parts: u64,
    tables: Vec<TableState>,
    /// The table whose rows came last.
    table_cursor: usize,
    phase: Phase,
    /// The last binary a chunk was read for, in archive order
    /// (objects, then payloads).
    last_binary: Option<(BinaryKind, usize)>,
    progress: HashMap<(BinaryKind, usize), InProgress>,
    done: [Vec<bool>; 2],
    closing: Option<(Closing, u64, u64, Anchors)>,
    trailing_reported: bool,
    /// The findings.
    pub findings: Collector,
}

impl Assembler {
    /// Starts with the manifest line (its bytes, without LF, and its offset;
    /// it is line 1 unless [`manifest_line_number`](Self::manifest_line_number)
    /// says otherwise).
    pub fn new(
        plan: Arc<Plan>,
        manifest_line: &[u8],
        manifest_offset: u64,
        findings: Collector,
    ) -> Self {
        let mut archive = ArchiveHasher::new();
        archive.add_line(manifest_line);
        let manifest_at = ManifestPositions::locate(&plan, manifest_line);
        let content = ContentHasher::new(&plan.manifest.header_digest);
        let tables = plan
            .manifest
            .tables
            .iter()
            .map(|_| TableState::default())
            .collect();
        let done = [
            vec![false; plan.manifest.objects.len()],
            vec![false; plan.manifest.payloads.len()],
        ];
        Assembler {
            plan,
            manifest_at,
            manifest_line_no: 1,
            manifest_offset,
            archive,
            content,
            next_part: 0,
            parts: 0,
            tables,
            table_cursor: 0,
            phase: Phase::Rows,
            last_binary: None,
            progress: HashMap::new(),
            done,
            closing: None,
            trailing_reported: false,
            findings,
        }
    }

    /// Uses `digest` as the manifest line's term of `archiveHash`, for a
    /// line whose raw bytes differ from the record's (a CR before its LF).
    pub fn manifest_digest(mut self, digest: &Digest32) -> Self {
        self.archive = ArchiveHasher::new();
        self.archive.add_line_digest(digest);
        self
    }

    /// Sets the manifest's line number (when empty lines precede it).
    pub fn manifest_line_number(mut self, line: u64) -> Self {
        self.manifest_line_no = line;
        self
    }

    fn manifest(&self) -> &Manifest {
        &self.plan.manifest
    }

    /// A finding on the manifest line. They come at the end, in manifest
    /// order, so one `locator` walks the line once for all of them.
    fn at_manifest(&mut self, rel: u64, code: Code, pointer: String, msg: String) {
        self.findings.push(Finding::new(
            code,
            self.manifest_line_no,
            self.manifest_offset + rel,
            pointer,
            msg,
        ));
    }

    fn at_line(
        &mut self,
        pos: (u64, u64),
        anchors: &Anchors,
        code: Code,
        pointer: &str,
        msg: String,
    ) {
        let rel = anchors.of(pointer);
        self.findings.push(Finding::new(
            code,
            pos.0,
            pos.1 + u64::from(rel),
            pointer,
            msg,
        ));
    }

    /// Feeds the summary of the next line.
    pub fn feed(&mut self, s: LineSummary) {
        for f in s.findings {
            self.findings.push(f);
        }
        self.findings.dropped(s.dropped);
        self.findings.dropped_warnings(s.dropped_warnings);
        let pos = (s.line, s.offset);
        let anchors = s.anchors;
        if self.closing.is_some() {
            if !self.trailing_reported {
                self.trailing_reported = true;
                self.at_line(pos, &anchors, Code::TrailingData, "", "a line follows the closing line; the closing line is the last line of an archive".into());
            }
            return;
        }
        let index = match &s.body {
            Body::Closing(c) => {
                self.closing = Some((c.clone(), s.line, s.offset, anchors));
                return;
            }
            Body::Unreadable => None,
            Body::BadPart { index } => *index,
            Body::Rows(r) => r.index,
            Body::Binary(b) => b.index,
        };
        // A part line (or an unreadable line where a part should be).
        self.archive.add_line_digest(&s.digest);
        self.parts += 1;
        let expected = self.next_part;
        match index {
            Some(i) if i == expected => self.next_part = i + 1,
            Some(i) => {
                self.at_line(pos, &anchors, Code::PartIndex, "/index", format!("part index {i} where {expected} was expected; parts are numbered 0, 1, 2 … in order"));
                self.next_part = i.saturating_add(1);
            }
            None => self.next_part += 1,
        }
        match s.body {
            Body::Rows(r) => self.rows(pos, &anchors, *r),
            Body::Binary(b) => self.binary(pos, &anchors, b),
            _ => {}
        }
    }

    fn rows(&mut self, pos: (u64, u64), anchors: &Anchors, r: RowsPart) {
        let name = self.manifest().tables[r.table].name.clone();
        if self.phase != Phase::Rows {
            self.at_line(
                pos,
                anchors,
                Code::ItemOrder,
                "/items/0",
                format!("rows of {name:?} after objects or payloads; all rows come first"),
            );
        } else if r.table < self.table_cursor {
            let later = self.manifest().tables[self.table_cursor].name.clone();
            self.at_line(
                pos,
                anchors,
                Code::ItemOrder,
                "/items/0",
                format!("rows of {name:?} after rows of {later:?}; tables come in manifest order"),
            );
        } else {
            self.table_cursor = r.table;
        }
        let rowid = self.plan.tables[r.table].has_rowid;
        let count = self.manifest().tables[r.table].count;
        let st = &mut self.tables[r.table];
        let expected = st.rows;
        let mut pending: Vec<(Code, &'static str, String)> = Vec::new();
        if let Some(first) = r.first_index {
            if first != expected && !st.index_reported {
                st.index_reported = true;
                pending.push((Code::RowIndex, "/items/0/index", format!("row index {first} of {name:?} where {expected} was expected; indexes run on across parts without gaps")));
            }
        }
        st.rows += r.rows;
        if st.rows > count && !st.over_reported {
            st.over_reported = true;
            pending.push((
                Code::RowCount,
                "/items/0",
                format!("table {name:?} has more row items than its count {count}"),
            ));
        }
        if let (Some(prev), Some(first)) = (&st.last_key, &r.first_key) {
            let mut ordered = !st.unordered;
            if let Some((code, member, msg)) = key_step(prev, first, rowid, &name, &mut ordered) {
                pending.push((
                    code,
                    if member == "rowid" {
                        "/items/0/rowid"
                    } else {
                        "/items/0/row"
                    },
                    msg,
                ));
            }
            st.unordered = !ordered;
        }
        // Keys that fell within the part: reported only if the table was
        // in key order until then (once per table, SPEC.md §5.3).
        let mut descent: Option<Descent> = None;
        if !r.ordered {
            if !st.unordered {
                descent = r.descent;
            }
            st.unordered = true;
        }
        if r.last_key.is_some() {
            st.last_key = r.last_key;
        }
        match st.parts.last_mut() {
            Some(run) if run.line + run.count == pos.0 => run.count += 1,
            _ => st.parts.push(PartRun {
                line: pos.0,
                offset: pos.1,
                count: 1,
            }),
        }
        for (code, p, msg) in pending {
            self.at_line(pos, anchors, code, p, msg);
        }
        if let Some(d) = descent {
            self.findings.push(Finding::new(
                Code::RowKeyOrder,
                pos.0,
                pos.1 + u64::from(d.offset),
                d.pointer,
                d.message,
            ));
        }
        self.content.add_row_digests(&r.row_digests);
    }

    fn entry(&self, kind: BinaryKind, i: usize) -> (String, u64, String) {
        match kind {
            BinaryKind::Object => {
                let o = &self.manifest().objects[i];
                (
                    format!("object {:?}/{:?}", o.bucket, o.key),
                    o.size,
                    o.sha256.clone(),
                )
            }
            BinaryKind::Payload => {
                let p = &self.manifest().payloads[i];
                (format!("payload {:?}", p.name), p.size, p.sha256.clone())
            }
        }
    }

    fn binary(&mut self, pos: (u64, u64), anchors: &Anchors, b: BinaryPart) {
        let (what, size, sha) = self.entry(b.kind, b.entry);
        let key = (b.kind, b.entry);
        let k = b.kind as usize;
        self.phase = Phase::Binaries;
        if self.done[k][b.entry] {
            self.at_line(pos, anchors, Code::ItemOrder, "/items/0", format!("a chunk of {what} after its last chunk; each binary's chunks appear once, in order"));
            return;
        }
        if let Some(last) = self.last_binary {
            if key < last {
                self.at_line(pos, anchors, Code::ItemOrder, "/items/0", format!("{what} is out of manifest order; objects come in manifest order, then payloads"));
            }
        }
        self.last_binary = Some(key);
        let cur = self.progress.entry(key).or_insert_with(|| InProgress {
            next_offset: 0,
            hash: PieceHash::default(),
            whole: None,
            tainted: false,
            first_len: None,
            size_reported: false,
        });
        let expected = cur.next_offset;
        let mut pending = Vec::new();
        if let Some(o) = b.offset {
            if o != expected {
                pending.push((Code::ChunkOffset, "/items/0/offset", format!("chunk offset {o} of {what} where {expected} was expected (the bytes before it)")));
            }
        }
        let last = cur.next_offset.saturating_add(b.len) >= size;
        // An empty or unreadable chunk is already an error of its own.
        if b.len > 0 && !matches!(b.data, Chunk::Invalid) {
            match cur.first_len {
                None => cur.first_len = Some(b.len),
                Some(first) if !cur.size_reported && b.len != first && !(last && b.len < first) => {
                    cur.size_reported = true;
                    pending.push((Code::ChunkSize, "/items/0/data", format!(
                        "a chunk of {what} holds {} bytes where the first holds {first}; the producer cuts every chunk but the last to one size (nextItems in export.mjs)", b.len
                    )));
                }
                Some(_) => {}
            }
        }
        match b.data {
            Chunk::Whole(d) => cur.whole = Some(d),
            Chunk::Piece { bytes, head } => {
                cur.hash.piece(&bytes, head);
                self.plan.pieces.give(bytes);
            }
            Chunk::Invalid => cur.tainted = true,
        }
        cur.next_offset = cur.next_offset.saturating_add(b.len);
        let done = cur.next_offset >= size;
        if done {
            if let Some(c) = self.progress.remove(&key) {
                let end = c.next_offset;
                if end > size {
                    pending.push((
                        Code::SizeMismatch,
                        "/items/0/data",
                        format!("the chunks of {what} hold {end} bytes but its size is {size}"),
                    ));
                } else if !c.tainted {
                    let digest = c.whole.unwrap_or_else(|| c.hash.finish());
                    let got = hex(&digest);
                    if got != sha {
                        pending.push((Code::Sha256Mismatch, "/items/0/data", format!("SHA-256 of the bytes of {what} is {got}, but the manifest says {sha}")));
                    }
                }
            }
            self.done[k][b.entry] = true;
        }
        for (code, p, msg) in pending {
            self.at_line(pos, anchors, code, p, msg);
        }
    }

    /// Ends the pass at `eof` (the line where a closing would be, and the
    /// file's length): cross-checks counts, binaries, `partCount` and both
    /// hashes, and returns what the closing says.
    pub fn finish(self, eof: (u64, u64)) -> (Outcome, Collector) {
        self.finish_with(eof, true)
    }

    /// Ends a verification that stopped early (at the error limit, or on
    /// framing broken beyond recovery): the hashes are computed over what
    /// was fed, but what was never read is not reported as missing.
    pub fn finish_stopped(self, eof: (u64, u64)) -> (Outcome, Collector) {
        self.finish_with(eof, false)
    }

    fn finish_with(mut self, eof: (u64, u64), complete: bool) -> (Outcome, Collector) {
        let content_hash = self.content.clone().finish();
        let archive_hash = self.archive.clone().finish();
        if !complete {
            let outcome = Outcome {
                closing: self.closing.take().map(|c| c.0),
                content_hash,
                archive_hash,
                parts: self.parts,
                rescan: Vec::new(),
            };
            return (outcome, self.findings);
        }
        for t in 0..self.tables.len() {
            let count = self.manifest().tables[t].count;
            let rows = self.tables[t].rows;
            if rows < count {
                let name = self.manifest().tables[t].name.clone();
                self.at_manifest(
                    self.manifest_at.counts[t],
                    Code::RowCount,
                    format!("/tables/{t}/count"),
                    format!("table {name:?} has {rows} row items but its count is {count}"),
                );
            }
        }
        for kind in [BinaryKind::Object, BinaryKind::Payload] {
            let k = kind as usize;
            let list = match kind {
                BinaryKind::Object => "objects",
                BinaryKind::Payload => "payloads",
            };
            for i in 0..self.done[k].len() {
                if self.done[k][i] {
                    continue;
                }
                let (what, size, _) = self.entry(kind, i);
                let msg = match self.progress.get(&(kind, i)) {
                    Some(c) => format!(
                        "{what} stops at byte {} of its size {size}: chunks are missing",
                        c.next_offset
                    ),
                    None => format!(
                        "{what} has no chunks; every listed {} appears after the rows",
                        kind.as_str()
                    ),
                };
                self.at_manifest(
                    self.manifest_at.binaries[k][i],
                    Code::BinaryMissing,
                    format!("/{list}/{i}"),
                    msg,
                );
            }
        }
        let declared = self.manifest().part_count;
        if declared != self.parts {
            let parts = self.parts;
            self.at_manifest(
                self.manifest_at.part_count,
                Code::PartCountMismatch,
                "/partCount".into(),
                format!(
                    "the manifest's partCount is {declared} but the archive has {parts} part lines"
                ),
            );
        }
        let closing = self.closing.take();
        match &closing {
            None => self.findings.push(Finding::new(
                Code::ClosingMissing,
                eof.0,
                eof.1,
                "",
                "the archive ends without a closing line: it is truncated (cut in transfer, a full disk, or an export that stopped early); export or download it again",
            )),
            Some((c, line, offset, anchors)) => {
                let pos = (*line, *offset);
                if let Some(pc) = c.part_count {
                    if pc != self.parts {
                        let msg = format!(
                            "the closing's partCount is {pc} but the archive has {} part lines",
                            self.parts
                        );
                        self.at_line(pos, anchors, Code::PartCountMismatch, "/partCount", msg);
                    }
                }
                if let Some(h) = &c.content_hash {
                    if *h != content_hash {
                        self.at_line(pos, anchors, Code::ContentHashMismatch, "/contentHash", format!("contentHash is {h} but the archive's content hashes to {content_hash} (computed): the rows or the manifest were changed after export (an edit by hand or by a tool), or the producer hashed other content; export again rather than edit an archive"));
                    }
                }
                if let Some(h) = &c.archive_hash {
                    if *h != archive_hash {
                        self.at_line(
                            pos,
                            anchors,
                            Code::ArchiveHashMismatch,
                            "/archiveHash",
                            format!(
                                "archiveHash is {h} but the archive's lines hash to {archive_hash} (computed): a line was changed, added or removed after export (an edit by hand), or the transfer re-encoded the file (line endings, character set) or cut and rejoined it; download or export it again"
                            ),
                        );
                    }
                }
            }
        }
        let rescan = self
            .tables
            .iter_mut()
            .enumerate()
            .filter(|(_, t)| t.unordered && t.parts.iter().map(|r| r.count).sum::<u64>() > 1)
            .map(|(i, t)| (i, std::mem::take(&mut t.parts), t.rows))
            .collect();
        let outcome = Outcome {
            closing: closing.map(|c| c.0),
            content_hash,
            archive_hash,
            parts: self.parts,
            rescan,
        };
        (outcome, self.findings)
    }
}

#[cfg(test)]
mod piece_hash_tests {
    use super::PieceHash;
    use sha2::{Digest, Sha256};

    /// The head of a first piece: its whole blocks, hashed.
    fn head(bytes: &[u8]) -> ndarc_sha::Stream {
        let mut s = ndarc_sha::Stream::new();
        s.update(&bytes[..bytes.len() / 64 * 64]);
        s
    }

    proptest::proptest! {
        /// Pieces of any lengths, the first with or without its head, and
        /// later ones with a head that must be ignored (a second chunk at
        /// offset 0), hash to the SHA-256 of all their bytes in order.
        #[test]
        fn pieces_hash_to_their_concatenation(
            pieces in proptest::collection::vec(proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300), 1..6),
            heads in proptest::collection::vec(proptest::bool::ANY, 6),
        ) {
            let mut h = PieceHash::default();
            let mut all = Vec::new();
            for (p, with_head) in pieces.iter().zip(&heads) {
                h.piece(p, with_head.then(|| head(p)));
                all.extend_from_slice(p);
            }
            let want: [u8; 32] = Sha256::digest(&all).into();
            proptest::prop_assert_eq!(h.finish(), want);
        }
    }
}
