//! The fast path for row parts.
//!
//! Nearly every line of a row-heavy archive is a canonical part of row items
//! with no fault. [`rows`] proves that about a line in one pass over its
//! bytes, with [`ndarc_json::Scanner`], building no values and decoding no
//! strings, and returns the same [`LineSummary`] the full check would. It
//! *accepts only*: at the first thing that is not the canonical, faultless
//! form (any finding the full check could make, or a shape it does not
//! expect) it returns `None`, and [`crate::part::check_line_full`] reads the
//! line again and says what is wrong. The rules and their findings are
//! therefore defined once, in [`crate::part`]; this module holds only the
//! acceptance side of the row and cell rules, and the tests (and the
//! `fast_path` fuzz target) check that it never accepts a line the full
//! check would not, and that what it accepts gives the identical summary.

use std::cmp::Ordering;

use ndarc_json::{safe_integer, RawStr, Scalar, Scanner};

use crate::catalogue::{self, Affinity};
use crate::hash::{self, Digest32};
use crate::key::{cmp_number_zero, KeyPart, RowKey};
use crate::part::{Anchors, Body, LineSummary, Plan, RowColumn, RowsPart, TablePlan};
use crate::report::LineRef;

/// Where the rows and cells of a row part are in its line, as the fast
/// path read them: for a reader of rows after verification (the diff),
/// which then need not scan the line again.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct RowSpans {
    /// The table (position in the manifest) when the spans describe the
    /// line, i.e. the fast path accepted it; `None` otherwise.
    pub table: Option<usize>,
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
        self.rows.clear();
        self.rowids.clear();
        self.cells.clear();
    }
}

/// A row cell as written.
#[derive(Clone, Copy)]
enum Cell<'a> {
    Scalar(Scalar<'a>),
    /// `{"blob": "…"}`: the base64 text.
    Blob(RawStr<'a>),
}

/// Depth of the deepest value of a row part (line, items, item, row, blob).
const ROW_PART_DEPTH: usize = 5;

/// Buffers reused from line to line on each thread.
#[derive(Default)]
struct Scratch {
    /// Decoded blob cells (checked, then dropped).
    base64: Vec<u8>,
    /// The rows' content messages, padded for SHA-256.
    messages: Vec<u8>,
    /// Blocks of each message.
    blocks: Vec<u32>,
}

/// A line's messages above this size are not kept for the next line, so
/// that one huge line does not pin memory.
const KEEP_SCRATCH: usize = 4 << 20;

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::default();
}

/// The summary of a canonical, faultless row part, or `None` (see the
/// module documentation). `digest` is the line's SHA-256 when the caller
/// has it; otherwise it is computed here together with the rows' digests.
pub(crate) fn rows(
    plan: &Plan,
    at: LineRef<'_>,
    digest: Option<Digest32>,
    mut spans: Option<&mut RowSpans>,
) -> Option<LineSummary> {
    if let Some(sp) = spans.as_deref_mut() {
        sp.clear();
    }
    // Offsets are kept as u32.
    if at.bytes.len() > u32::MAX as usize {
        return None;
    }
    let summary = SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut scratch) => {
            scratch.messages.clear();
            scratch.blocks.clear();
            let summary = scan(plan, at, digest, &mut scratch, spans.as_deref_mut());
            if scratch.messages.capacity() > KEEP_SCRATCH {
                *scratch = Scratch::default();
            }
            summary
        }
        Err(_) => scan(
            plan,
            at,
            digest,
            &mut Scratch::default(),
            spans.as_deref_mut(),
        ),
    });
    match (&summary, spans) {
        (Some(s), Some(sp)) => {
            if let Body::Rows(r) = &s.body {
                sp.table = Some(r.table);
            }
        }
        (None, Some(sp)) => sp.clear(),
        _ => {}
    }
    summary
}

fn scan(
    plan: &Plan,
    at: LineRef<'_>,
    digest: Option<Digest32>,
    scratch: &mut Scratch,
    mut spans: Option<&mut RowSpans>,
) -> Option<LineSummary> {
    if plan.json.max_depth < ROW_PART_DEPTH {
        return None;
    }
    let bytes = at.bytes;
    let offset_of = |o: usize| u32::try_from(o).unwrap_or(0);
    let mut s = Scanner::new(bytes)?;
    // Members of a part, and of a row item, in canonical (sorted) order.
    s.eat_bytes(br#"{"index":"#)?;
    let mut anchors = Anchors {
        index: offset_of(s.pos()),
        ..Anchors::default()
    };
    let index = count(s.number()?)?;
    s.eat_bytes(br#","items":["#)?;

    let mut table: Option<(usize, &TablePlan)> = None;
    let mut names: Vec<RawStr<'_>> = Vec::new();
    let mut cells: Vec<Cell<'_>> = Vec::new();
    // The previous row's key: its rowid, or its primary-key cells.
    let mut last_rowid: Option<i64> = None;
    let mut prev_pk: Vec<Cell<'_>> = Vec::new();
    let mut pk: Vec<Cell<'_>> = Vec::new();
    // The table is set from the first item.
    let mut part = RowsPart::new(Some(index), 0);
    loop {
        let item_at = s.pos();
        s.eat_bytes(br#"{"index":"#)?;
        let index_at = s.pos();
        let idx = count(s.number()?)?;
        s.eat_bytes(br#","kind":"row","row":"#)?;
        let row_start = s.pos();
        cells.clear();
        match table {
            // The table known (from the first item), a row is read against
            // its columns: names are compared, not scanned.
            Some((_, tp)) => read_known_row(
                &mut s,
                &tp.columns,
                &mut cells,
                &mut scratch.base64,
                spans.as_deref_mut().map(|sp| &mut sp.cells),
            )?,
            None => {
                names.clear();
                read_row(
                    &mut s,
                    &mut names,
                    &mut cells,
                    spans.as_deref_mut().map(|sp| &mut sp.cells),
                )?;
            }
        }
        let row_end = s.pos();
        let (rowid_at, rowid) = if s.eat_bytes(br#","rowid":"#).is_some() {
            (s.pos(), Some(s.raw_number()?))
        } else {
            (0, None)
        };
        let rowid_end = s.pos();
        s.eat_bytes(br#","table":"#)?;
        let tp = match table {
            // Both are canonical string text, so equal text is equal names
            // (and anything else is mixed_part).
            Some((_, tp)) => {
                s.eat_bytes(&tp.name_json)?;
                tp
            }
            None => {
                let name = s.string()?;
                let t = *plan.index.tables.get(name.decode().as_ref())?;
                let tp = plan.tables.get(t)?;
                if !cells_ok(&tp.columns, &names, &cells, &mut scratch.base64) {
                    return None;
                }
                table = Some((t, tp));
                part.table = t;
                anchors.item = offset_of(item_at);
                anchors.item_index = offset_of(index_at);
                anchors.item_row = offset_of(row_start);
                anchors.item_rowid = offset_of(rowid_at);
                tp
            }
        };
        s.eat(b'}')?;
        // rowid present exactly when the table has no primary key.
        if tp.has_rowid != rowid.is_some() {
            return None;
        }
        // Indexes consecutive and keys strictly rising within the part.
        if let Some(prev) = part.last_index {
            if prev.checked_add(1) != Some(idx) {
                return None;
            }
        }
        part.first_index.get_or_insert(idx);
        part.last_index = Some(idx);
        match rowid {
            Some(id) => {
                let id = id.safe_integer()?;
                if last_rowid.is_some_and(|prev| prev >= id) {
                    return None;
                }
                last_rowid = Some(id);
                part.first_key.get_or_insert(RowKey::Rowid(id));
                if let Some(sp) = spans.as_deref_mut() {
                    sp.rowids.push((id, (rowid_at as u32, rowid_end as u32)));
                }
            }
            None => {
                // Compared as cells, without building keys; only the first
                // and last rows' keys are built.
                pk.clear();
                pk.extend(tp.pk.iter().map(|&c| cells[c]));
                if part.rows > 0 && cmp_key(&prev_pk, &pk) != Ordering::Less {
                    return None;
                }
                std::mem::swap(&mut pk, &mut prev_pk);
                if part.first_key.is_none() {
                    part.first_key = Some(primary_key(&prev_pk));
                }
            }
        }
        part.rows += 1;
        if let Some(sp) = spans.as_deref_mut() {
            sp.rows.push((row_start as u32, row_end as u32));
        }
        // The row's content message (see `hash::row_content_digest`):
        // canonical text, so the rowid as written is the rowid as the
        // digest writes it. Hashed below, two streams at a time.
        let row = &bytes[row_start..row_end];
        let n = ndarc_sha::push_message(
            &mut scratch.messages,
            &hash::row_content_pieces(row, rowid.map(|id| id.text().as_bytes()), &tp.name_json),
        );
        scratch.blocks.push(n);
        match s.peek()? {
            b',' => s.eat(b',')?,
            b']' => break,
            _ => return None,
        }
    }
    s.eat_bytes(br#"],"kind":"part"}"#)?;
    if !s.is_at_end() {
        return None;
    }
    part.last_key = match last_rowid {
        Some(id) => Some(RowKey::Rowid(id)),
        None => Some(primary_key(&prev_pk)),
    };
    // The line's digest and the rows' digests, two at a time.
    part.row_digests.reserve(scratch.blocks.len());
    let digest = match digest {
        Some(d) => {
            ndarc_sha::digest_pair(
                b"",
                &scratch.messages,
                &scratch.blocks,
                &mut part.row_digests,
            );
            d
        }
        None => ndarc_sha::digest_pair(
            bytes,
            &scratch.messages,
            &scratch.blocks,
            &mut part.row_digests,
        ),
    };
    Some(LineSummary {
        line: at.line,
        offset: at.offset,
        digest,
        anchors,
        body: Body::Rows(Box::new(part)),
        findings: Vec::new(),
        dropped: 0,
        dropped_warnings: 0,
    })
}

/// A part's or item's `index`: a safe integer ≥ 0.
fn count(n: f64) -> Option<u64> {
    safe_integer(n).and_then(|i| u64::try_from(i).ok())
}

/// The text of a JSON string without its quotes.
fn quoted(json: &[u8]) -> &[u8] {
    json.get(1..json.len().saturating_sub(1))
        .unwrap_or_default()
}

/// Reads a row object whose members are scalars or `{"blob": string}`.
fn read_row<'a>(
    s: &mut Scanner<'a>,
    names: &mut Vec<RawStr<'a>>,
    cells: &mut Vec<Cell<'a>>,
    mut spans: Option<&mut Vec<(u32, u32)>>,
) -> Option<()> {
    s.eat(b'{')?;
    if s.eat(b'}').is_some() {
        return Some(());
    }
    loop {
        names.push(s.string()?);
        s.eat(b':')?;
        let start = s.pos();
        cells.push(read_cell(s)?);
        if let Some(sp) = spans.as_deref_mut() {
            sp.push((start as u32, s.pos() as u32));
        }
        match s.peek()? {
            b',' => s.eat(b',')?,
            b'}' => return s.eat(b'}'),
            _ => return None,
        }
    }
}

/// Reads a row whose members are exactly `columns`, in order, each cell
/// one its column admits.
fn read_known_row<'a>(
    s: &mut Scanner<'a>,
    columns: &[RowColumn],
    cells: &mut Vec<Cell<'a>>,
    scratch: &mut Vec<u8>,
    mut spans: Option<&mut Vec<(u32, u32)>>,
) -> Option<()> {
    s.eat(b'{')?;
    for (i, c) in columns.iter().enumerate() {
        if i > 0 {
            s.eat(b',')?;
        }
        s.eat_bytes(&c.name_json)?;
        s.eat(b':')?;
        let start = s.pos();
        let cell = read_cell(s)?;
        if !cell_ok(c, cell, scratch) {
            return None;
        }
        cells.push(cell);
        if let Some(sp) = spans.as_deref_mut() {
            sp.push((start as u32, s.pos() as u32));
        }
    }
    s.eat(b'}')
}

/// Reads a cell: a scalar or `{"blob": string}`.
#[inline]
fn read_cell<'a>(s: &mut Scanner<'a>) -> Option<Cell<'a>> {
    if s.peek() == Some(b'{') {
        s.eat_bytes(br#"{"blob":"#)?;
        let b64 = s.string()?;
        s.eat(b'}')?;
        Some(Cell::Blob(b64))
    } else {
        s.scalar().map(Cell::Scalar)
    }
}

/// Whether a row's members are exactly `columns`, in order (which, the
/// columns being sorted and distinct, is also canonical member order), and
/// every cell is one its column admits.
fn cells_ok(
    columns: &[RowColumn],
    names: &[RawStr<'_>],
    cells: &[Cell<'_>],
    scratch: &mut Vec<u8>,
) -> bool {
    columns.len() == cells.len()
        && columns.len() == names.len()
        && columns
            .iter()
            .zip(names.iter().zip(cells))
            .all(|(c, (name, cell))| {
                quoted(&c.name_json) == name.raw().as_bytes() && cell_ok(c, *cell, scratch)
            })
}

/// The acceptance side of the cell rules (`row_not_null`, `row_type`,
/// `unsafe_integer`, `invalid_base64`) of `part::check_cells`.
fn cell_ok(c: &RowColumn, cell: Cell<'_>, scratch: &mut Vec<u8>) -> bool {
    match (c.affinity, cell) {
        (_, Cell::Scalar(Scalar::Null)) => !c.notnull,
        (Affinity::Integer, Cell::Scalar(Scalar::Number(n))) => n.safe_integer().is_some(),
        (Affinity::Number, Cell::Scalar(Scalar::Number(_))) => true,
        (Affinity::Text, Cell::Scalar(Scalar::String(_))) => true,
        (Affinity::Blob, Cell::Scalar(Scalar::String(_) | Scalar::Number(_))) => true,
        (Affinity::Blob, Cell::Blob(b64)) => {
            scratch.clear();
            !b64.has_escapes() && catalogue::decode_base64_into(b64.raw(), scratch)
        }
        _ => false,
    }
}

/// A primary key of accepted cells.
fn primary_key(cells: &[Cell<'_>]) -> RowKey {
    RowKey::Primary(cells.iter().map(|&c| key_part(c)).collect())
}

/// `RowKey::cmp_sqlite` of two primary keys of accepted cells, without
/// building them where the text decides (numbers, unescaped text).
fn cmp_key(a: &[Cell<'_>], b: &[Cell<'_>]) -> Ordering {
    for (&x, &y) in a.iter().zip(b) {
        let o = match (x, y) {
            // -0 and 0 are one value to SQLite (`key::cmp_number_zero`).
            (Cell::Scalar(Scalar::Number(x)), Cell::Scalar(Scalar::Number(y))) => {
                x.value().partial_cmp(&y.value()).unwrap_or(Ordering::Equal)
            }
            (Cell::Scalar(Scalar::String(x)), Cell::Scalar(Scalar::String(y)))
                if !x.has_escapes() && !y.has_escapes() =>
            {
                x.raw().as_bytes().cmp(y.raw().as_bytes())
            }
            _ => cmp_number_zero(&key_part(x), &key_part(y)),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    a.len().cmp(&b.len())
}

/// The key part of an accepted cell (as `KeyPart::of` reads its value).
fn key_part(cell: Cell<'_>) -> KeyPart {
    match cell {
        Cell::Scalar(Scalar::Null) => KeyPart::Null,
        Cell::Scalar(Scalar::Number(n)) => KeyPart::Number(n.value()),
        Cell::Scalar(Scalar::String(s)) => KeyPart::Text(s.decode().into_owned()),
        Cell::Scalar(Scalar::Bool(b)) => KeyPart::Number(f64::from(u8::from(b))),
        Cell::Blob(b64) => KeyPart::Blob(
            catalogue::decode_base64(b64.raw()).unwrap_or_else(|| b64.raw().as_bytes().to_vec()),
        ),
    }
}
