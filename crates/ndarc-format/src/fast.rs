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

use ndarc_json::{RawNumber, RawStr, Scanner};

use crate::cell::{self, CellValue};
use crate::hash::{self, Digest32};
use crate::key::{cmp_cells, key_step, KeyCell, PartKeys, RowKey};
use crate::pack::MAX_PART_ROWS;
use crate::plan::{Plan, RowColumn, TablePlan};
use crate::report::LineRef;

use crate::summary::{Anchors, Body, Descent, LineSummary, RowSpans, RowsPart};

/// A row cell as written, kept flat: an enum of the scanner's token types
/// is moved through memory in pieces whose reloads stall store
/// forwarding, and cost more than reading the cell.
#[derive(Clone, Copy)]
struct Cell<'a> {
    /// A number's text; a string's or a blob's base64 text between the
    /// quotes; empty for the others.
    text: &'a str,
    /// A number's value; 0 for the others.
    value: f64,
    kind: Kind,
}

/// What a [`Cell`] is. A word wide, so that a cell has no padding: moves
/// of a padded struct copy the padding in overlapping pieces, which stall
/// the reload as an enum would.
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(u64)]
enum Kind {
    Null,
    False,
    True,
    /// A number that is a safe integer.
    SafeInteger,
    /// Any other number.
    Number,
    /// A string without escapes.
    Text,
    /// A string with escapes.
    EscapedText,
    /// `{"blob": "…"}` without escapes in the base64 text.
    Blob,
    /// `{"blob": "…"}` with escapes.
    EscapedBlob,
}

impl<'a> Cell<'a> {
    const fn of(kind: Kind) -> Cell<'a> {
        Cell {
            text: "",
            value: 0.0,
            kind,
        }
    }

    fn string(kind: Kind, s: RawStr<'a>) -> Cell<'a> {
        let escaped = s.has_escapes();
        let kind = match (kind, escaped) {
            (Kind::Blob, true) => Kind::EscapedBlob,
            (Kind::Blob, false) => Kind::Blob,
            (_, true) => Kind::EscapedText,
            (_, false) => Kind::Text,
        };
        Cell {
            text: s.raw(),
            value: 0.0,
            kind,
        }
    }
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

/// Rows' content messages are hashed a batch of this many bytes at a time,
/// beside as much of the line read so far: a batch is still in the core's
/// L2 cache when it is hashed, and a long line's messages are never held
/// whole (a 16 MiB part's took a fresh 16 MiB buffer per line and job).
/// Each batch ends with its last few messages and the rest of its line
/// hashed outside the vector lanes (`ndarc_sha`), so batches are not
/// smaller: with 64 KiB, verifying narrow and row-heavy rows took 2-6 %
/// longer.
const HASH_BATCH: usize = 256 << 10;

/// Hashes the messages in `scratch` (appending their digests to `out`)
/// beside the next whole blocks of `line` that `line_hash` was not yet fed,
/// as many as the messages have; then empties `scratch`.
fn hash_batch(
    line_hash: &mut (ndarc_sha::Stream, usize),
    line: &[u8],
    scratch: &mut Scratch,
    out: &mut Vec<Digest32>,
) {
    let (stream, done) = line_hash;
    let ready = line.len().saturating_sub(*done) / 64 * 64;
    let n = ready.min(scratch.messages.len());
    let long = line.get(*done..*done + n).unwrap_or_default();
    ndarc_sha::update_with_messages(stream, long, &scratch.messages, &scratch.blocks, out);
    *done += long.len();
    scratch.messages.clear();
    scratch.blocks.clear();
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
    let mut s = Scanner::new(bytes)?;
    // Members of a part, and of a row item, in canonical (sorted) order.
    s.eat_bytes(br#"{"index":"#)?;
    let mut anchors = Anchors {
        index: offset_of(s.pos()),
        ..Anchors::default()
    };
    let index = count(s.raw_number()?)?;
    s.eat_bytes(br#","items":["#)?;

    let mut table: Option<&TablePlan> = None;
    let mut names: Vec<RawStr<'_>> = Vec::new();
    // The cells of the row: every cell of the first row (whose table is
    // not yet known), and after it only the primary-key cells, each with
    // its column's position.
    let mut cells: Vec<(usize, Cell<'_>)> = Vec::new();
    let mut order = KeyOrder::default();
    // The table is set from the first item.
    let mut part = RowsPart::new(Some(index), 0);
    // The line's SHA-256 so far, and how many of its bytes it was fed.
    let mut line_hash = (ndarc_sha::Stream::new(), 0usize);
    loop {
        let item_at = s.pos();
        s.eat_bytes(br#"{"index":"#)?;
        let index_at = s.pos();
        let idx = count(s.raw_number()?)?;
        s.eat_bytes(br#","kind":"row","row":"#)?;
        let row_start = s.pos();
        let cell_spans = match &mut mode {
            Mode::Check {
                spans: Some(sp), ..
            } => Some(&mut sp.cells),
            _ => None,
        };
        read_item_row(&mut s, table, &mut names, &mut cells, scratch, cell_spans)?;
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
            Some(tp) => {
                s.eat_bytes(&tp.name_json)?;
                tp
            }
            None => {
                let check = matches!(mode, Mode::Check { .. });
                let (t, tp) = first_table(&mut s, plan, &names, &cells, scratch, check)?;
                table = Some(tp);
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
        match &mut mode {
            Mode::Keys(out) => {
                // Every row's key, in any order.
                push_key(out, part.rows, tp, rowid, &cells, rowid_at, row_start)?;
                part.rows += 1;
            }
            Mode::Check { digest, spans } => {
                // Indexes consecutive and keys rising within the part.
                step_index(&mut part, idx)?;
                match rowid {
                    Some(id) => {
                        let id = order.step_rowid(&mut part, id)?;
                        if let Some(sp) = spans {
                            sp.rowids.push((id, (rowid_at as u32, rowid_end as u32)));
                        }
                    }
                    None => order.step_pk(plan, &mut part, tp, &cells, row_start)?,
                }
                part.rows += 1;
                // A part over the producer's row limit has a warning
                // (`part_row_count`): the full check gives it.
                if part.rows > MAX_PART_ROWS as u64 {
                    return None;
                }
                if part.rows == 1 {
                    reserve_digests(&mut part.row_digests, bytes.len(), s.pos() - item_at);
                }
                if let Some(sp) = spans {
                    sp.rows.push((row_start as u32, row_end as u32));
                }
                let tail = bytes.get(row_start - br#""row":"#.len()..s.pos())?;
                // The line so far, when its digest is to be computed.
                let line = if digest.is_none() {
                    &bytes[..s.pos()]
                } else {
                    &[]
                };
                queue_row_digest(tail, line, &mut line_hash, scratch, &mut part.row_digests);
            }
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
        return Some(rows_summary(at, [0; 32], anchors, part));
    };
    part.last_key = Some(order.last_key());
    // The last rows' digests, and the line's.
    let line = if digest.is_none() { bytes } else { &[] };
    hash_batch(&mut line_hash, line, scratch, &mut part.row_digests);
    let digest = match digest {
        Some(d) => d,
        None => {
            let (stream, done) = line_hash;
            stream.finish(&bytes[done..])
        }
    };
    Some(rows_summary(at, digest, anchors, part))
}

/// Reads an item's row (where `s` is) into `cells`: against the table's
/// columns once the table is known (from the first item), names compared
/// rather than scanned; the first row's names into `names`.
#[inline]
fn read_item_row<'a>(
    s: &mut Scanner<'a>,
    table: Option<&TablePlan>,
    names: &mut Vec<RawStr<'a>>,
    cells: &mut Vec<(usize, Cell<'a>)>,
    scratch: &mut Scratch,
    cell_spans: Option<&mut Vec<(u32, u32)>>,
) -> Option<()> {
    cells.clear();
    match table {
        Some(tp) => read_known_row(s, &tp.columns, cells, &mut scratch.base64, cell_spans),
        None => {
            names.clear();
            read_row(s, names, cells, cell_spans)
        }
    }
}

/// An offset within a line, as kept (lines of a scan are under 4 GiB).
#[inline]
fn offset_of(o: usize) -> u32 {
    u32::try_from(o).unwrap_or(0)
}

/// The table of the part, from the first item's `"table":` (where `s`
/// is), whose row `names` and `cells` were read without it: the table's
/// plan and position, if the row is one of its rows that the fast path
/// judges (`check`: a line check, which leaves `dev_data` to the full
/// check).
fn first_table<'p>(
    s: &mut Scanner<'_>,
    plan: &'p Plan,
    names: &[RawStr<'_>],
    cells: &[(usize, Cell<'_>)],
    scratch: &mut Scratch,
    check: bool,
) -> Option<(usize, &'p TablePlan)> {
    let name = s.string()?;
    let t = *plan.index.tables.get(name.decode().as_ref())?;
    let tp = plan.tables.get(t)?;
    if !cells_ok(&tp.columns, names, cells, &mut scratch.base64) {
        return None;
    }
    // Rows the import may refuse by a cell (`dev_data`) are rare: the full
    // check reads them.
    if tp.dev_kind.is_some() && check {
        return None;
    }
    Some((t, tp))
}

/// Records the key of the part's row `item` for the duplicate re-scan:
/// its rowid as written, or its primary-key cells as a JSON array.
#[inline]
fn push_key(
    out: &mut PartKeys,
    item: u64,
    tp: &TablePlan,
    rowid: Option<RawNumber<'_>>,
    cells: &[(usize, Cell<'_>)],
    rowid_at: usize,
    row_start: usize,
) -> Option<()> {
    let item = usize::try_from(item).ok()?;
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
                if let Some(cell) = cell_at(cells, c) {
                    write_cell(cell, buf);
                }
            }
            buf.push(b']');
        }),
    }
    Some(())
}

/// An item's `index` after the previous item's: consecutive.
#[inline]
fn step_index(part: &mut RowsPart, idx: u64) -> Option<()> {
    if let Some(prev) = part.last_index {
        if prev.checked_add(1) != Some(idx) {
            return None;
        }
    }
    part.first_index.get_or_insert(idx);
    part.last_index = Some(idx);
    Some(())
}

/// The previous row's key within a part, which the next row's follows:
/// its rowid, or its primary-key cells, compared as cells without building
/// keys (only the first and last rows' keys are built, and the two keys
/// where they first fall).
#[derive(Default)]
struct KeyOrder<'a> {
    last_rowid: Option<i64>,
    prev_pk: Vec<Cell<'a>>,
    /// The row's primary-key cells (a buffer, swapped with `prev_pk`).
    pk: Vec<Cell<'a>>,
}

impl<'a> KeyOrder<'a> {
    /// A row's rowid: a safe integer above the previous row's.
    #[inline]
    fn step_rowid(&mut self, part: &mut RowsPart, id: RawNumber<'_>) -> Option<i64> {
        let id = id.safe_integer()?;
        if self.last_rowid.is_some_and(|prev| prev >= id) {
            return None;
        }
        self.last_rowid = Some(id);
        part.first_key.get_or_insert(RowKey::Rowid(id));
        Some(id)
    }

    /// A row's primary key, from its `cells`: not equal to the previous
    /// row's (a duplicate the full check reports); a key below it is the
    /// part's descent (`row_key_order`, a warning the assembler gives at
    /// most once per table).
    #[inline]
    fn step_pk(
        &mut self,
        plan: &Plan,
        part: &mut RowsPart,
        tp: &TablePlan,
        cells: &[(usize, Cell<'a>)],
        row_start: usize,
    ) -> Option<()> {
        self.pk.clear();
        for &c in &tp.pk {
            self.pk.push(cell_at(cells, c)?);
        }
        if part.rows > 0 {
            match cmp_key(&self.prev_pk, &self.pk) {
                Ordering::Less => {}
                // duplicate_row_key: the full check reports it.
                Ordering::Equal => return None,
                Ordering::Greater => self.descent(plan, part, row_start)?,
            }
        }
        std::mem::swap(&mut self.pk, &mut self.prev_pk);
        if part.first_key.is_none() {
            part.first_key = Some(primary_key(&self.prev_pk));
        }
        Some(())
    }

    /// Records where the keys first fall (`pk` below `prev_pk`).
    #[cold]
    fn descent(&self, plan: &Plan, part: &mut RowsPart, row_start: usize) -> Option<()> {
        if let Some((_, member, message)) = key_step(
            &primary_key(&self.prev_pk),
            &primary_key(&self.pk),
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
        Some(())
    }

    /// The last row's key.
    fn last_key(&self) -> RowKey {
        match self.last_rowid {
            Some(id) => RowKey::Rowid(id),
            None => primary_key(&self.prev_pk),
        }
    }
}

/// Room for a line's row digests, estimated from its first row's length
/// (`row_len`), so that they are not copied at each doubling of their
/// vector: a quarter more rows than that length suggests, because rows
/// vary. With the bare estimate, half the lines of a narrow archive (`gen
/// --shape narrow`) had more rows (up to 1.18 times as many) and copied
/// their digests once. Bounded by the line in memory (an item is over 32
/// bytes, a digest 32, so at most 1.25 times the line).
fn reserve_digests(digests: &mut Vec<Digest32>, line_len: usize, row_len: usize) {
    let rows = line_len / row_len.max(1);
    digests.reserve((rows + rows / 4 + 1).min(MAX_PART_ROWS));
}

/// Queues a row's content message (see `hash::row_content_in_item`):
/// canonical text, so the item's own text from `"row":` to its end
/// (`tail`), the rowid as written being the rowid as the digest writes it.
/// A full batch is hashed, two streams at a time, beside the line so far
/// (`line`; empty when the caller has the line's digest).
#[inline]
fn queue_row_digest(
    tail: &[u8],
    line: &[u8],
    line_hash: &mut (ndarc_sha::Stream, usize),
    scratch: &mut Scratch,
    row_digests: &mut Vec<Digest32>,
) {
    let n = ndarc_sha::push_message(&mut scratch.messages, &hash::row_content_in_item(tail));
    scratch.blocks.push(n);
    if scratch.messages.len() >= HASH_BATCH {
        hash_batch(line_hash, line, scratch, row_digests);
    }
}

/// The summary of a rows part the fast path accepted.
fn rows_summary(
    at: LineRef<'_>,
    digest: Digest32,
    anchors: Anchors,
    part: RowsPart,
) -> LineSummary {
    LineSummary {
        line: at.line,
        offset: at.offset,
        digest,
        anchors,
        body: Body::Rows(Box::new(part)),
        findings: Vec::new(),
        dropped: 0,
        dropped_warnings: 0,
    }
}

/// A part's or item's `index`: a safe integer ≥ 0. Read as the scanner's
/// integer, not through its `f64` value (whose safety test, a `trunc`
/// call, cost as much as reading the index).
fn count(n: ndarc_json::RawNumber<'_>) -> Option<u64> {
    n.safe_integer().and_then(|i| u64::try_from(i).ok())
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
    cells: &mut Vec<(usize, Cell<'a>)>,
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
        cells.push((cells.len(), read_cell(s)?));
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
/// one its column admits; keeps the primary-key cells in `cells`. The
/// other cells are checked and dropped where they are read: stored and
/// moved, a cell costs more than its check.
fn read_known_row<'a>(
    s: &mut Scanner<'a>,
    columns: &[RowColumn],
    cells: &mut Vec<(usize, Cell<'a>)>,
    scratch: &mut Vec<u8>,
    mut spans: Option<&mut Vec<(u32, u32)>>,
) -> Option<()> {
    s.eat(b'{')?;
    for (i, c) in columns.iter().enumerate() {
        if i > 0 {
            s.eat(b',')?;
        }
        s.eat_bytes(&c.member)?;
        let start = s.pos();
        if c.in_key {
            let cell = read_cell(s)?;
            if !cell_ok(c, cell, scratch) {
                return None;
            }
            cells.push((i, cell));
        } else {
            check_cell(s, c, scratch)?;
        }
        if let Some(sp) = spans.as_deref_mut() {
            sp.push((start as u32, s.pos() as u32));
        }
    }
    s.eat(b'}')
}

/// Reads a cell: a scalar or `{"blob": string}`. Always inlined: returned
/// through memory, the cell is stored and reloaded in pieces of other
/// widths, and the stalled store forwarding cost more than reading it.
#[inline(always)]
fn read_cell<'a>(s: &mut Scanner<'a>) -> Option<Cell<'a>> {
    Some(match s.peek()? {
        b'{' => {
            s.eat_bytes(br#"{"blob":"#)?;
            let b64 = s.string()?;
            s.eat(b'}')?;
            Cell::string(Kind::Blob, b64)
        }
        b'"' => Cell::string(Kind::Text, s.string()?),
        b'n' => {
            s.eat_bytes(b"null")?;
            Cell::of(Kind::Null)
        }
        b't' => {
            s.eat_bytes(b"true")?;
            Cell::of(Kind::True)
        }
        b'f' => {
            s.eat_bytes(b"false")?;
            Cell::of(Kind::False)
        }
        _ => {
            let n = s.raw_number()?;
            Cell {
                text: n.text(),
                value: n.value(),
                kind: if n.safe_integer().is_some() {
                    Kind::SafeInteger
                } else {
                    Kind::Number
                },
            }
        }
    })
}

/// Reads a cell that need not be kept, and checks that its column admits
/// it. Each kind of token is judged where it is read, so that no cell
/// value is built, returned or moved (which, for short cells, cost more
/// than reading them).
#[inline(always)]
fn check_cell(s: &mut Scanner<'_>, c: &RowColumn, scratch: &mut Vec<u8>) -> Option<()> {
    let admitted = match s.peek()? {
        b'"' => {
            s.string()?;
            c.admits.text()
        }
        b'n' => {
            s.eat_bytes(b"null")?;
            c.admits.null()
        }
        b'{' => {
            let cell = read_cell(s)?;
            cell_ok(c, cell, scratch)
        }
        b't' | b'f' => {
            s.scalar()?;
            c.admits.boolean()
        }
        _ => {
            let n = s.raw_number()?;
            c.admits.number(&n)
        }
    };
    admitted.then_some(())
}

/// Whether a row's members are exactly `columns`, in order (which, the
/// columns being sorted and distinct, is also canonical member order), and
/// every cell is one its column admits.
fn cells_ok(
    columns: &[RowColumn],
    names: &[RawStr<'_>],
    cells: &[(usize, Cell<'_>)],
    scratch: &mut Vec<u8>,
) -> bool {
    columns.len() == cells.len()
        && columns.len() == names.len()
        && columns
            .iter()
            .zip(names.iter().zip(cells))
            .all(|(c, (name, (_, cell)))| {
                quoted(&c.name_json) == name.raw().as_bytes() && cell_ok(c, *cell, scratch)
            })
}

/// The cell of column `column` among `cells` (the primary-key cells, or
/// every cell of a first row).
fn cell_at<'a>(cells: &[(usize, Cell<'a>)], column: usize) -> Option<Cell<'a>> {
    cells.iter().find(|(i, _)| *i == column).map(|(_, c)| *c)
}

/// Whether column `c` admits the cell: it has none of the faults of the
/// cell rules ([`cell::faults`], which the full check reports).
fn cell_ok(c: &RowColumn, cell: Cell<'_>, scratch: &mut Vec<u8>) -> bool {
    let value = match cell.kind {
        Kind::Null => CellValue::Null,
        Kind::False | Kind::True => CellValue::Other,
        Kind::SafeInteger => CellValue::Number { safe_integer: true },
        Kind::Number => CellValue::Number {
            safe_integer: false,
        },
        Kind::Text | Kind::EscapedText => CellValue::Text,
        // An escaped base64 text is left to the full check.
        Kind::EscapedBlob => return false,
        Kind::Blob => CellValue::Blob(cell.text),
    };
    cell::faults(c.affinity, c.notnull, value, scratch).is_empty()
}

/// Appends a cell's text (canonical, as the line is).
fn write_cell(cell: Cell<'_>, out: &mut Vec<u8>) {
    match cell.kind {
        Kind::Null => out.extend_from_slice(b"null"),
        Kind::False => out.extend_from_slice(b"false"),
        Kind::True => out.extend_from_slice(b"true"),
        Kind::SafeInteger | Kind::Number => out.extend_from_slice(cell.text.as_bytes()),
        Kind::Text | Kind::EscapedText => {
            out.push(b'"');
            out.extend_from_slice(cell.text.as_bytes());
            out.push(b'"');
        }
        Kind::Blob | Kind::EscapedBlob => {
            out.extend_from_slice(br#"{"blob":""#);
            out.extend_from_slice(cell.text.as_bytes());
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
    match cell.kind {
        Kind::Null => KeyCell::Null,
        Kind::SafeInteger | Kind::Number => KeyCell::Number(cell.value),
        Kind::Text => KeyCell::Text(Cow::Borrowed(cell.text.as_bytes())),
        Kind::EscapedText => match RawStr::from_scanned(cell.text, true).decode() {
            Cow::Borrowed(t) => KeyCell::Text(Cow::Borrowed(t.as_bytes())),
            Cow::Owned(t) => KeyCell::Text(Cow::Owned(t.into_bytes())),
        },
        Kind::False => KeyCell::Number(0.0),
        Kind::True => KeyCell::Number(1.0),
        Kind::Blob | Kind::EscapedBlob => KeyCell::blob(cell.text),
    }
}

/// A primary key of accepted cells.
fn primary_key(cells: &[Cell<'_>]) -> RowKey {
    RowKey::Primary(cells.iter().map(|&c| key_cell(c).into_owned()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn room_for_a_quarter_more_rows_than_the_first_row_suggests() {
        for (line_len, row_len, want) in [
            // 100 rows of 157 bytes: room for 125 and one more.
            (15_700, 157, 126),
            (100, 200, 1),
            (0, 0, 1),
            // Never more than a part may hold (1,000 rows: the fast path
            // leaves a part with more to the full check).
            (157_000, 157, MAX_PART_ROWS),
            (1 << 30, 33, MAX_PART_ROWS),
        ] {
            let mut digests = Vec::new();
            reserve_digests(&mut digests, line_len, row_len);
            assert!(
                digests.capacity() >= want,
                "{line_len}/{row_len}: {}",
                digests.capacity()
            );
            assert!(
                digests.capacity() < want + 16,
                "{line_len}/{row_len}: {}",
                digests.capacity()
            );
        }
    }
}
