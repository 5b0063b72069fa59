//! Rules that span lines (SPEC.md §5–§7), checked in one sequential pass
//! over [`LineSummary`]s in archive order.

use std::collections::HashMap;
use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::code::{Code, Severity};
use crate::finding::Finding;
use crate::hash::{hex, ArchiveHasher, ContentHasher, Digest32};
use crate::key::RowKey;
use crate::manifest::Manifest;
use crate::part::{
    key_step, row_key_digest, BinaryKind, BinaryPart, Body, Chunk, Closing, LineSummary, Plan,
    RowsPart,
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

    /// Counts findings that a per-line limit dropped (all errors: a line
    /// drops findings only after many).
    pub fn dropped(&mut self, n: u64) {
        self.errors += n;
    }

    /// Whether the kept list is full.
    pub fn is_full(&self) -> bool {
        self.kept.len() >= self.max
    }
}

#[derive(Debug, Default)]
struct TableState {
    rows: u64,
    last_key: Option<RowKey>,
    unordered: bool,
    over_reported: bool,
    index_reported: bool,
    /// (line, offset) of each part of the table, for the duplicate re-scan.
    parts: Vec<(u64, u64)>,
}

#[derive(Debug, PartialEq, Eq, PartialOrd, Ord, Clone, Copy)]
enum Phase {
    Rows,
    Objects,
    Payloads,
}

struct InProgress {
    kind: BinaryKind,
    entry: usize,
    next_offset: u64,
    hasher: Sha256,
    whole: Option<Digest32>,
    line: u64,
    offset: u64,
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
    /// found by re-reading their parts ([`Assembler::rescan_duplicates`]).
    /// Each entry is a table position and the (line, offset) of its parts.
    pub rescan: Vec<(usize, Vec<(u64, u64)>)>,
}

/// The sequential half of verification: feed it the manifest, then every
/// later line's summary in archive order, then call [`finish`](Self::finish).
pub struct Assembler {
    plan: Arc<Plan>,
    manifest_line: Vec<u8>,
    manifest_offset: u64,
    archive: ArchiveHasher,
    content: ContentHasher,
    next_part: u64,
    parts: u64,
    tables: Vec<TableState>,
    table_cursor: usize,
    phase: Phase,
    cursors: [usize; 2],
    current: Option<InProgress>,
    closing: Option<(Closing, u64, u64)>,
    trailing_reported: bool,
    /// The findings.
    pub findings: Collector,
}

impl Assembler {
    /// Starts with the manifest line (its bytes, without LF, and its offset).
    pub fn new(
        plan: Arc<Plan>,
        manifest_line: &[u8],
        manifest_offset: u64,
        findings: Collector,
    ) -> Self {
        let mut archive = ArchiveHasher::new();
        archive.add_line(manifest_line);
        let content = ContentHasher::new(&plan.manifest.header_digest);
        let tables = plan
            .manifest
            .tables
            .iter()
            .map(|_| TableState::default())
            .collect();
        Assembler {
            plan,
            manifest_line: manifest_line.to_vec(),
            manifest_offset,
            archive,
            content,
            next_part: 0,
            parts: 0,
            tables,
            table_cursor: 0,
            phase: Phase::Rows,
            cursors: [0, 0],
            current: None,
            closing: None,
            trailing_reported: false,
            findings,
        }
    }

    fn manifest(&self) -> &Manifest {
        &self.plan.manifest
    }

    fn at_manifest(&mut self, code: Code, pointer: String, msg: String) {
        let rel = ndarc_json::locate(&self.manifest_line, &pointer).unwrap_or(0) as u64;
        self.findings.push(Finding::new(
            code,
            1,
            self.manifest_offset + rel,
            pointer,
            msg,
        ));
    }

    fn at_line(
        &mut self,
        s: (u64, u64),
        rel: u32,
        code: Code,
        pointer: impl Into<String>,
        msg: String,
    ) {
        self.findings
            .push(Finding::new(code, s.0, s.1 + u64::from(rel), pointer, msg));
    }

    /// Feeds the summary of the next line.
    pub fn feed(&mut self, s: LineSummary) {
        for f in s.findings {
            self.findings.push(f);
        }
        self.findings.dropped(s.dropped);
        let pos = (s.line, s.offset);
        if self.closing.is_some() {
            if !self.trailing_reported {
                self.trailing_reported = true;
                self.at_line(pos, 0, Code::TrailingData, "", "a line follows the closing line; the closing line is the last line of an archive".into());
            }
            return;
        }
        let index = match &s.body {
            Body::Closing(c) => {
                self.closing = Some((c.clone(), s.line, s.offset));
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
                self.at_line(pos, s.index_at, Code::PartIndex, "/index", format!("part index {i} where {expected} was expected; parts are numbered 0, 1, 2 … in order"));
                self.next_part = i.saturating_add(1);
            }
            None => self.next_part += 1,
        }
        match s.body {
            Body::Rows(r) => self.rows(pos, s.first_item_at, *r),
            Body::Binary(b) => self.binary(pos, s.first_item_at, b),
            _ => {}
        }
    }

    fn close_tables_until(&mut self, end: usize) {
        while self.table_cursor < end {
            let t = self.table_cursor;
            let count = self.manifest().tables[t].count;
            let rows = self.tables[t].rows;
            if rows < count {
                let name = self.manifest().tables[t].name.clone();
                self.at_manifest(
                    Code::RowCount,
                    format!("/tables/{t}/count"),
                    format!("table {name:?} has {rows} row items but its count is {count}"),
                );
            }
            self.table_cursor += 1;
        }
    }

    fn rows(&mut self, pos: (u64, u64), first_at: u32, r: RowsPart) {
        let name = self.manifest().tables[r.table].name.clone();
        if self.phase != Phase::Rows {
            self.at_line(
                pos,
                first_at,
                Code::ItemOrder,
                "/items/0",
                format!("rows of {name:?} after objects or payloads; all rows come first"),
            );
        } else if r.table < self.table_cursor {
            let later = self.manifest().tables[self.table_cursor].name.clone();
            self.at_line(
                pos,
                first_at,
                Code::ItemOrder,
                "/items/0",
                format!("rows of {name:?} after rows of {later:?}; tables come in manifest order"),
            );
        } else {
            self.close_tables_until(r.table);
        }
        let rowid = self.plan.tables[r.table].has_rowid;
        let count = self.manifest().tables[r.table].count;
        let st = &mut self.tables[r.table];
        let expected = st.rows;
        let mut pending: Vec<(Code, String, String)> = Vec::new();
        if let Some(first) = r.first_index {
            if first != expected && !st.index_reported {
                st.index_reported = true;
                pending.push((Code::RowIndex, "/items/0/index".into(), format!("row index {first} of {name:?} where {expected} was expected; indexes run on across parts without gaps")));
            }
        }
        st.rows += r.rows;
        if st.rows > count && !st.over_reported {
            st.over_reported = true;
            pending.push((
                Code::RowCount,
                "/items/0".into(),
                format!("table {name:?} has more row items than its count {count}"),
            ));
        }
        if let (Some(prev), Some(first)) = (&st.last_key, &r.first_key) {
            let mut ordered = !st.unordered;
            if let Some((code, member, msg)) = key_step(prev, first, rowid, &name, &mut ordered) {
                pending.push((code, format!("/items/0/{member}"), msg));
            }
            st.unordered = !ordered;
        }
        if !r.ordered {
            st.unordered = true;
        }
        if r.last_key.is_some() {
            st.last_key = r.last_key;
        }
        st.parts.push(pos);
        for (code, p, msg) in pending {
            self.at_line(pos, first_at, code, p, msg);
        }
        for d in &r.row_digests {
            self.content.add_row_digest(d);
        }
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

    fn list_len(&self, kind: BinaryKind) -> usize {
        match kind {
            BinaryKind::Object => self.manifest().objects.len(),
            BinaryKind::Payload => self.manifest().payloads.len(),
        }
    }

    /// Reports every entry of `kind` from the cursor up to `end` as missing
    /// or short, and moves the cursor there.
    fn close_binaries_until(&mut self, kind: BinaryKind, end: usize) {
        let k = kind as usize;
        while self.cursors[k] < end {
            let i = self.cursors[k];
            let (what, size, _) = self.entry(kind, i);
            let list = match kind {
                BinaryKind::Object => "objects",
                BinaryKind::Payload => "payloads",
            };
            let msg = match self.current.take() {
                Some(c) if c.kind == kind && c.entry == i => {
                    format!(
                        "{what} stops at byte {} of its size {size}: chunks are missing",
                        c.next_offset
                    )
                }
                other => {
                    self.current = other;
                    format!(
                        "{what} has no chunks; every listed {} appears after the rows",
                        kind.as_str()
                    )
                }
            };
            self.at_manifest(Code::BinaryMissing, format!("/{list}/{i}"), msg);
            self.cursors[k] += 1;
        }
    }

    fn binary(&mut self, pos: (u64, u64), first_at: u32, b: BinaryPart) {
        let phase = match b.kind {
            BinaryKind::Object => Phase::Objects,
            BinaryKind::Payload => Phase::Payloads,
        };
        let (what, size, sha) = self.entry(b.kind, b.entry);
        if phase < self.phase {
            self.at_line(
                pos,
                first_at,
                Code::ItemOrder,
                "/items/0",
                format!("{what} after the payloads; objects come before payloads"),
            );
            return;
        }
        if self.phase == Phase::Rows {
            self.close_tables_until(self.tables.len());
        }
        if phase == Phase::Payloads && self.phase < Phase::Payloads {
            let n = self.list_len(BinaryKind::Object);
            self.close_binaries_until(BinaryKind::Object, n);
        }
        self.phase = phase;
        let k = b.kind as usize;
        if b.entry < self.cursors[k] {
            self.at_line(
                pos,
                first_at,
                Code::ItemOrder,
                "/items/0",
                format!("{what} is out of manifest order (or repeated after it was complete)"),
            );
            return;
        }
        if b.entry > self.cursors[k] {
            self.close_binaries_until(b.kind, b.entry);
        }
        let cur = self.current.get_or_insert_with(|| InProgress {
            kind: b.kind,
            entry: b.entry,
            next_offset: 0,
            hasher: Sha256::new(),
            whole: None,
            line: pos.0,
            offset: pos.1,
        });
        let expected = cur.next_offset;
        let mut pending = Vec::new();
        match b.offset {
            Some(o) if o != expected => {
                pending.push((Code::ChunkOffset, format!("chunk offset {o} of {what} where {expected} was expected (the bytes before it)")));
                cur.next_offset = o;
            }
            _ => {}
        }
        match b.data {
            Chunk::Whole(d) => cur.whole = Some(d),
            Chunk::Piece(bytes) => cur.hasher.update(&bytes),
            Chunk::Invalid => {}
        }
        cur.next_offset = cur.next_offset.saturating_add(b.len);
        let done = cur.next_offset >= size;
        for (code, msg) in pending {
            self.at_line(pos, first_at, code, "/items/0/offset", msg);
        }
        if done {
            if let Some(c) = self.current.take() {
                let end = c.next_offset;
                if end > size {
                    self.at_line(
                        (c.line, c.offset),
                        0,
                        Code::SizeMismatch,
                        "/items/0/data",
                        format!("the chunks of {what} hold {end} bytes but its size is {size}"),
                    );
                }
                let digest = c.whole.unwrap_or_else(|| c.hasher.finalize().into());
                let got = hex(&digest);
                if got != sha && end == size {
                    self.at_line(
                        pos,
                        first_at,
                        Code::Sha256Mismatch,
                        "/items/0/data",
                        format!(
                            "SHA-256 of the bytes of {what} is {got}, but the manifest says {sha}"
                        ),
                    );
                }
            }
            self.cursors[k] += 1;
        }
    }

    /// Ends the pass: cross-checks counts, binaries, `partCount` and both
    /// hashes, and returns what the closing says.
    pub fn finish(mut self, eof: (u64, u64)) -> (Outcome, Collector) {
        if self.phase == Phase::Rows {
            self.close_tables_until(self.tables.len());
        }
        let n = self.list_len(BinaryKind::Object);
        if self.phase <= Phase::Objects {
            self.close_binaries_until(BinaryKind::Object, n);
        }
        let n = self.list_len(BinaryKind::Payload);
        self.close_binaries_until(BinaryKind::Payload, n);
        let content_hash = self.content.clone().finish();
        let archive_hash = self.archive.clone().finish();
        let declared = self.manifest().part_count;
        if declared != self.parts {
            let parts = self.parts;
            self.at_manifest(
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
                "the archive ends without a closing line: it is truncated",
            )),
            Some((c, line, offset)) => {
                if let Some(pc) = c.part_count {
                    if pc != self.parts {
                        self.findings.push(Finding::new(
                            Code::PartCountMismatch,
                            *line,
                            *offset,
                            "/partCount",
                            format!(
                                "the closing's partCount is {pc} but the archive has {} part lines",
                                self.parts
                            ),
                        ));
                    }
                }
                if let Some(h) = &c.content_hash {
                    if *h != content_hash {
                        self.findings.push(Finding::new(Code::ContentHashMismatch, *line, *offset, "/contentHash", format!("contentHash is {h} but the archive's content hashes to {content_hash}")));
                    }
                }
                if let Some(h) = &c.archive_hash {
                    if *h != archive_hash {
                        self.findings.push(Finding::new(
                            Code::ArchiveHashMismatch,
                            *line,
                            *offset,
                            "/archiveHash",
                            format!(
                                "archiveHash is {h} but the archive's lines hash to {archive_hash}"
                            ),
                        ));
                    }
                }
            }
        }
        let rescan = self
            .tables
            .iter_mut()
            .enumerate()
            .filter(|(_, t)| t.unordered && t.parts.len() > 1)
            .map(|(i, t)| (i, std::mem::take(&mut t.parts)))
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

/// Finds duplicate keys in a table whose rows are out of key order, from
/// the keys of its parts re-read in order: `parts` yields, per part, its
/// line, offset and keys with their item positions. Reports each repeat
/// (not those already found between neighbours, which the line rules
/// report).
pub fn rescan_duplicates(
    table: &str,
    parts: impl Iterator<Item = (u64, u64, Vec<(RowKey, usize, u32)>)>,
    findings: &mut Collector,
) {
    let mut seen: HashMap<u128, (u64, usize)> = HashMap::new();
    let mut prev: Option<u128> = None;
    for (line, offset, keys) in parts {
        for (key, item, rel) in keys {
            let d = row_key_digest(&key);
            if let Some((first_line, first_item)) = seen.get(&d) {
                if prev != Some(d) {
                    findings.push(Finding::new(
                        Code::DuplicateRowKey,
                        line,
                        offset + u64::from(rel),
                        format!("/items/{item}/row"),
                        format!(
                            "row key {} of table {table:?} was already used on line {first_line} (item {first_item})",
                            crate::part::show_key(&key)
                        ),
                    ));
                }
            } else {
                seen.insert(d, (line, item));
            }
            prev = Some(d);
        }
    }
}
