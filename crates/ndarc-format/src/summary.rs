//! What one line after the manifest holds, reduced to what the rules that
//! span lines need: the [`LineSummary`] that both line checks (the fast
//! path and the full check) produce and the [`crate::Assembler`] consumes.
//! These types sit below both checks, so that neither depends on the other.

use crate::finding::Finding;
use crate::hash::Digest32;
use crate::key::RowKey;

/// What one line after the manifest holds, reduced to what the sequential
/// rules need.
#[derive(Debug, PartialEq)]
pub struct LineSummary {
    /// 1-based line number.
    pub line: u64,
    /// Byte offset of the line in the file.
    pub offset: u64,
    /// SHA-256 of the line's bytes (a term of `archiveHash`).
    pub digest: Digest32,
    /// Offsets in the line of the values that cross-line findings name.
    pub anchors: Anchors,
    /// What the line is.
    pub body: Body,
    /// Findings of the line rules.
    pub findings: Vec<Finding>,
    /// Errors not kept because of the per-line limit.
    pub dropped: u64,
    /// Warnings not kept because of the per-line limit.
    pub dropped_warnings: u64,
}

impl LineSummary {
    /// Bytes the summary holds that grow with its line: the decoded bytes
    /// of a piece of a binary (up to 3/4 of the line). Verification counts
    /// them with the lines in flight, so that memory stays bounded.
    pub fn held_bytes(&self) -> usize {
        match &self.body {
            Body::Binary(BinaryPart {
                data: Chunk::Piece { bytes, .. },
                ..
            }) => bytes.len(),
            _ => 0,
        }
    }
}

/// Offsets, within a line, of the values that the sequential rules may
/// report on (0 when absent), located once by the parallel stage so that
/// every finding's offset matches its pointer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Anchors {
    /// `/index` of a part.
    pub index: u32,
    /// `/items/0`.
    pub item: u32,
    /// `/items/0/index` of a row item.
    pub item_index: u32,
    /// `/items/0/row` of a row item.
    pub item_row: u32,
    /// `/items/0/rowid` of a row item.
    pub item_rowid: u32,
    /// `/items/0/offset` of a chunk.
    pub item_offset: u32,
    /// `/items/0/data` of a chunk.
    pub item_data: u32,
    /// `/partCount` of the closing.
    pub part_count: u32,
    /// `/contentHash` of the closing.
    pub content_hash: u32,
    /// `/archiveHash` of the closing.
    pub archive_hash: u32,
}

impl Anchors {
    pub(crate) fn locate(bytes: &[u8], body: &Body) -> Anchors {
        let mut locator = ndarc_json::Locator::new(bytes);
        let mut at = |p: &str| {
            locator
                .locate(p)
                .and_then(|o| u32::try_from(o).ok())
                .unwrap_or(0)
        };
        match body {
            Body::Closing(_) => Anchors {
                part_count: at("/partCount"),
                content_hash: at("/contentHash"),
                archive_hash: at("/archiveHash"),
                ..Anchors::default()
            },
            Body::Rows(_) => Anchors {
                index: at("/index"),
                item: at("/items/0"),
                item_index: at("/items/0/index"),
                item_row: at("/items/0/row"),
                item_rowid: at("/items/0/rowid"),
                ..Anchors::default()
            },
            Body::Binary(_) => Anchors {
                index: at("/index"),
                item: at("/items/0"),
                item_offset: at("/items/0/offset"),
                item_data: at("/items/0/data"),
                ..Anchors::default()
            },
            Body::BadPart { .. } => Anchors {
                index: at("/index"),
                ..Anchors::default()
            },
            Body::Unreadable => Anchors::default(),
        }
    }

    /// The offset of the value `pointer` names, for the pointers above.
    pub fn of(&self, pointer: &str) -> u32 {
        match pointer {
            "/index" => self.index,
            "/items/0" => self.item,
            "/items/0/index" => self.item_index,
            "/items/0/row" => self.item_row,
            "/items/0/rowid" => self.item_rowid,
            "/items/0/offset" => self.item_offset,
            "/items/0/data" => self.item_data,
            "/partCount" => self.part_count,
            "/contentHash" => self.content_hash,
            "/archiveHash" => self.archive_hash,
            _ => 0,
        }
    }
}

/// The kinds of line after the manifest.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    /// A part with row items of one table.
    Rows(Box<RowsPart>),
    /// A part with one object or payload chunk.
    Binary(BinaryPart),
    /// A part whose items could not be classified (empty, mixed, unknown
    /// names …; already reported).
    BadPart {
        /// The part's `index`, if readable.
        index: Option<u64>,
    },
    /// The closing record.
    Closing(Closing),
    /// Not JSON, or not a record this position allows (already reported).
    Unreadable,
}

/// A part of row items.
#[derive(Debug, Clone, PartialEq)]
pub struct RowsPart {
    /// The part's `index`.
    pub index: Option<u64>,
    /// The table's position in the manifest.
    pub table: usize,
    /// Number of row items.
    pub rows: u64,
    /// `index` of the first and last row items.
    pub first_index: Option<u64>,
    /// See `first_index`.
    pub last_index: Option<u64>,
    /// Key of the first and last rows.
    pub first_key: Option<RowKey>,
    /// See `first_key`.
    pub last_key: Option<RowKey>,
    /// Whether keys rose strictly within the part.
    pub ordered: bool,
    /// Where the keys of a primary-key table first fell within the part:
    /// the `row_key_order` warning the assembler gives if the table was in
    /// key order until then (it is reported once per table, which one line
    /// cannot decide).
    pub descent: Option<Descent>,
    /// Content digests of the rows, in order (terms of `contentHash`).
    pub row_digests: Vec<Digest32>,
}

impl RowsPart {
    /// A part of `table` with no rows yet.
    pub fn new(index: Option<u64>, table: usize) -> RowsPart {
        RowsPart {
            index,
            table,
            rows: 0,
            first_index: None,
            last_index: None,
            first_key: None,
            last_key: None,
            ordered: true,
            descent: None,
            row_digests: Vec::new(),
        }
    }
}

/// Which binary list an item belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum BinaryKind {
    /// A bucket object.
    Object,
    /// An extra payload.
    Payload,
}

impl BinaryKind {
    /// `object` or `payload`.
    pub fn as_str(self) -> &'static str {
        match self {
            BinaryKind::Object => "object",
            BinaryKind::Payload => "payload",
        }
    }
}

/// A part holding one chunk of an object or payload.
#[derive(Debug, Clone, PartialEq)]
pub struct BinaryPart {
    /// The part's `index`.
    pub index: Option<u64>,
    /// Object or payload.
    pub kind: BinaryKind,
    /// Position in the manifest's list.
    pub entry: usize,
    /// The chunk's `offset`.
    pub offset: Option<u64>,
    /// Decoded length.
    pub len: u64,
    /// The chunk's bytes, or their digest when the chunk is the whole
    /// object (hashed here, in parallel).
    pub data: Chunk,
}

/// Bytes of one chunk.
#[derive(Debug, Clone, PartialEq)]
pub enum Chunk {
    /// The chunk is the whole binary; this is the SHA-256 of its bytes.
    Whole(Digest32),
    /// Part of a binary: the decoded bytes, hashed in order by the
    /// assembler.
    Piece {
        /// The decoded bytes.
        bytes: Vec<u8>,
        /// For a chunk at offset 0: the SHA-256 computation over the whole
        /// 64-byte blocks of `bytes`, done where the line is checked (in
        /// parallel, beside the line's own hash). The assembler takes it
        /// when the binary's hash has taken no bytes yet, and hashes only
        /// the rest; otherwise it hashes `bytes` as for any piece.
        head: Option<ndarc_sha::Stream>,
    },
    /// The data was not valid base64 (reported).
    Invalid,
}

/// The closing record.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Closing {
    /// `partCount`.
    pub part_count: Option<u64>,
    /// `contentHash`.
    pub content_hash: Option<String>,
    /// `archiveHash`.
    pub archive_hash: Option<String>,
}

/// The first place in a part where a primary key sorts before the previous
/// row's (see [`RowsPart::descent`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Descent {
    /// The row's pointer, `/items/N/row`.
    pub pointer: String,
    /// Offset of that value in the line.
    pub offset: u32,
    /// The warning's message.
    pub message: String,
}

/// Where the rows and cells of a row part are in its line, as the fast
/// path read them: for a reader of rows after verification (the diff),
/// which then need not scan the line again.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct RowSpans {
    /// The table (position in the manifest) when the spans describe the
    /// line, i.e. the fast path accepted it; `None` otherwise.
    pub table: Option<usize>,
    /// Whether the rows' keys rose strictly within the part (the fast path
    /// accepts a primary-key table's rows out of key order, which is a
    /// warning only).
    pub ordered: bool,
    /// Each row object, `start..end` in the line.
    pub rows: Vec<(u32, u32)>,
    /// Each row's rowid and its text, for a table with rowid.
    pub rowids: Vec<(i64, (u32, u32))>,
    /// Each row's cells, one per row column in the plan's column order
    /// (`TablePlan::columns`), row after row.
    pub cells: Vec<(u32, u32)>,
}

impl RowSpans {
    /// Empties the spans (keeping their memory).
    pub fn clear(&mut self) {
        self.table = None;
        self.ordered = false;
        self.rows.clear();
        self.rowids.clear();
        self.cells.clear();
    }
}
