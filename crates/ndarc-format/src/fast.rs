//! The fast path for row parts.
//!
//! Nearly every line of a row-heavy archive is a canonical part of row items
//! with no fault. [`rows`] proves that about a line in one pass over its
//! bytes, with [`ndarc_json::Scanner`], building no values and decoding no
//! strings, and returns the same [`LineSummary`] the full check would. It
//! *accepts only*: at the first thing that is not the canonical, faultless
//! form (any finding the full check could make, or a shape it does not
//! expect) it returns `None`, and [`crate::part::check_line_full`] reads the
//! line again and says what is wrong. Rows of a primary-key table out of
//! key order are accepted: that is no finding of the line but a warning the
//! assembler gives once per table, from the [`Descent`] both paths record.
//! The rules are defined once: the cell rules in [`crate::cell`], the key
//! order in [`crate::key`], the findings in [`crate::part`]. The tests (and
//! the `fast_path` fuzz target) check that this path never accepts a line
//! the full check would not, and that what it accepts gives the identical
//! summary.
//!
//! The same scanner also reads the keys of a part for the duplicate
//! re-scan of a table out of key order ([`keys`]).

use std::borrow::Cow;
use std::cmp::Ordering;

use ndarc_json::{safe_integer, RawStr, Scalar, Scanner};

use crate::cell::{self, CellValue};
use crate::hash::{self, Digest32};
use crate::key::{cmp_cells, key_step, KeyCell, RowKey};
use crate::pack::MAX_PART_ROWS;
use crate::plan::{Plan, RowColumn, TablePlan};
use crate::report::LineRef;
use crate::rescan::PartKeys;
use crate::summary::{Anchors, Body, Descent, LineSummary, RowSpans, RowsPart};

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
    let summary = with_scratch(|scratch| {
        scan(
            plan,
            at,
            Mode::Check {
                digest,
                spans: spans.as_deref_mut(),
            },
            scratch,
        )
    });
    match (&summary, spans) {
        (Some(s), Some(sp)) => {
            if let Body::Rows(r) = &s.body {
                sp.table = Some(r.table);
                sp.ordered = r.ordered;
            }
        }
        (None, Some(sp)) => sp.clear(),
        _ => {}
    }
    summary
}

/// The keys of a canonical row part of table `table`, for the duplicate
/// re-scan: `None` when the line is not one the fast path reads (the
/// caller then parses it). Key order, indexes and the content digests are
/// not checked or computed here (the first pass did that).
pub(crate) fn keys(plan: &Plan, table: usize, bytes: &[u8], out: &mut PartKeys) -> Option<()> {
    let at = LineRef {
        line: 0,
        offset: 0,
        bytes,
    };
    let first = out.len();
    let summary = with_scratch(|scratch| scan(plan, at, Mode::Keys(out), scratch));
    match summary.map(|s| s.body) {
        Some(Body::Rows(r)) if r.table == table => Some(()),
        _ => {
            out.truncate(first);
            None
        }
    }
}

/// Runs `f` with this thread's scratch buffers.
fn with_scratch<T>(f: impl FnOnce(&mut Scratch) -> T) -> T {
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut scratch) => {
            scratch.messages.clear();
            scratch.blocks.clear();
            let out = f(&mut scratch);
            if scratch.messages.capacity() > KEEP_SCRATCH {
                *scratch = Scratch::default();
            }
            out
        }
        Err(_) => f(&mut Scratch::default()),
    })
}

/// What a scan is for.
enum Mode<'m> {
    /// The line check: the line's SHA-256 if the caller has it, and where
    /// to record spans if asked.
    Check {
        digest: Option<Digest32>,
        spans: Option<&'m mut RowSpans>,
    },
    /// The keys of every row, for the duplicate re-scan.
    Keys(&'m mut PartKeys),
}

fn scan(
    plan: &Plan,
    at: LineRef<'_>,
    mut mode: Mode<'_>,
    scratch: &mut Scratch,
) -> Option<LineSummary> {
    if plan.json.max_depth < ROW_PART_DEPTH {
        return None;
    }
    let bytes = at.bytes;
    // Offsets are kept as u32.
    if bytes.len() > u32::MAX as usize {
        return None;
    }
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
        let cell_spans = match &mut mode {
            Mode::Check {
                spans: Some(sp), ..
            } => Some(&mut sp.cells),
            _ => None,
        };
        match table {
            // The table known (from the first item), a row is read against
            // its columns: names are compared, not scanned.
            Some((_, tp)) => read_known_row(
                &mut s,
                &tp.columns,
                &mut cells,
                &mut scratch.base64,
                cell_spans,
            )?,
            None => {
                names.clear();
                read_row(&mut s, &mut names, &mut cells, cell_spans)?;
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
                // Rows the import may refuse by a cell (`dev_data`) are
                // rare: the full check reads them.
                if tp.dev_kind.is_some() && matches!(mode, Mode::Check { .. }) {
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
        if let Mode::Keys(out) = &mut mode {
            // Every row's key, in any order.
            let item = usize::try_from(part.rows).ok()?;
            match rowid {
                Some(id) => {
                    id.safe_integer()?;
                    out.push_key(item, offset_of(rowid_at), |buf| {
                        buf.extend_from_slice(id.text().as_bytes());
                    });
                }
                None => out.push_key(item, offset_of(row_start), |buf| {
                    buf.push(b'[');
                    for (i, &c) in tp.pk.iter().enumerate() {
                        if i > 0 {
                            buf.push(b',');
                        }
                        write_cell(cells[c], buf);
                    }
                    buf.push(b']');
                }),
            }
            part.rows += 1;
        } else {
            // Indexes consecutive and keys rising within the part.
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
                    if let Mode::Check {
                        spans: Some(sp), ..
                    } = &mut mode
                    {
                        sp.rowids.push((id, (rowid_at as u32, rowid_end as u32)));
                    }
                }
                None => {
                    // Compared as cells, without building keys; only the
                    // first and last rows' keys are built, and the two keys
                    // where they first fall.
                    pk.clear();
                    pk.extend(tp.pk.iter().map(|&c| cells[c]));
                    if part.rows > 0 {
                        match cmp_key(&prev_pk, &pk) {
                            Ordering::Less => {}
                            // duplicate_row_key: the full check reports it.
                            Ordering::Equal => return None,
                            // row_key_order, a warning the assembler gives
                            // at most once per table.
                            Ordering::Greater => {
                                if let Some((_, member, message)) = key_step(
                                    &primary_key(&prev_pk),
                                    &primary_key(&pk),
                                    false,
                                    &plan.manifest.tables.get(part.table)?.name,
                                    &mut part.ordered,
                                ) {
                                    part.descent = Some(Descent {
                                        pointer: format!("/items/{}/{member}", part.rows),
                                        offset: offset_of(row_start),
                                        message,
                                    });
                                }
                            }
                        }
                    }
                    std::mem::swap(&mut pk, &mut prev_pk);
                    if part.first_key.is_none() {
                        part.first_key = Some(primary_key(&prev_pk));
                    }
                }
            }
            part.rows += 1;
            // A part over the producer's row limit has a warning
            // (`part_row_count`): the full check gives it.
            if part.rows > MAX_PART_ROWS as u64 {
                return None;
            }
            if let Mode::Check {
                spans: Some(sp), ..
            } = &mut mode
            {
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
        }
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
    let Mode::Check { digest, .. } = mode else {
        return Some(LineSummary {
            line: at.line,
            offset: at.offset,
            digest: [0; 32],
            anchors,
            body: Body::Rows(Box::new(part)),
            findings: Vec::new(),
            dropped: 0,
            dropped_warnings: 0,
        });
    };
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

/// Whether column `c` admits the cell: it has none of the faults of the
/// cell rules ([`cell::faults`], which the full check reports).
fn cell_ok(c: &RowColumn, cell: Cell<'_>, scratch: &mut Vec<u8>) -> bool {
    let value = match cell {
        Cell::Scalar(Scalar::Null) => CellValue::Null,
        Cell::Scalar(Scalar::Bool(_)) => CellValue::Other,
        Cell::Scalar(Scalar::Number(n)) => CellValue::Number {
            safe_integer: n.safe_integer().is_some(),
        },
        Cell::Scalar(Scalar::String(_)) => CellValue::Text,
        // An escaped base64 text is left to the full check.
        Cell::Blob(b64) if b64.has_escapes() => return false,
        Cell::Blob(b64) => CellValue::Blob(b64.raw()),
    };
    cell::faults(c, value, scratch).is_empty()
}

/// Appends a cell's text (canonical, as the line is).
fn write_cell(cell: Cell<'_>, out: &mut Vec<u8>) {
    match cell {
        Cell::Scalar(Scalar::Null) => out.extend_from_slice(b"null"),
        Cell::Scalar(Scalar::Bool(b)) => out.extend_from_slice(if b { b"true" } else { b"false" }),
        Cell::Scalar(Scalar::Number(n)) => out.extend_from_slice(n.text().as_bytes()),
        Cell::Scalar(Scalar::String(t)) => {
            out.push(b'"');
            out.extend_from_slice(t.raw().as_bytes());
            out.push(b'"');
        }
        Cell::Blob(b64) => {
            out.extend_from_slice(br#"{"blob":""#);
            out.extend_from_slice(b64.raw().as_bytes());
            out.extend_from_slice(br#""}"#);
        }
    }
}

/// `RowKey::cmp_sqlite` of two primary keys of accepted cells, through
/// the one comparison ([`cmp_cells`] over [`KeyCell`] views, which borrow
/// numbers and unescaped text).
fn cmp_key(a: &[Cell<'_>], b: &[Cell<'_>]) -> Ordering {
    for (&x, &y) in a.iter().zip(b) {
        let o = cmp_cells(&[key_cell(x)], &[key_cell(y)]);
        if o != Ordering::Equal {
            return o;
        }
    }
    a.len().cmp(&b.len())
}

/// The key value of an accepted cell (as `KeyCell::of` reads its value).
fn key_cell(cell: Cell<'_>) -> KeyCell<'_> {
    match cell {
        Cell::Scalar(Scalar::Null) => KeyCell::Null,
        Cell::Scalar(Scalar::Number(n)) => KeyCell::Number(n.value()),
        Cell::Scalar(Scalar::String(s)) => match s.decode() {
            Cow::Borrowed(t) => KeyCell::Text(Cow::Borrowed(t.as_bytes())),
            Cow::Owned(t) => KeyCell::Text(Cow::Owned(t.into_bytes())),
        },
        Cell::Scalar(Scalar::Bool(b)) => KeyCell::Number(f64::from(u8::from(b))),
        Cell::Blob(b64) => KeyCell::blob(b64.raw()),
    }
}

/// A primary key of accepted cells.
fn primary_key(cells: &[Cell<'_>]) -> RowKey {
    RowKey::Primary(cells.iter().map(|&c| key_cell(c).into_owned()).collect())
}
