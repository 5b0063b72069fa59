//! The row diff: a streaming merge join over the two sides' rows of a
//! table, falling back to a hash join over (key hash, row digest, line
//! offset) when a side's rows are out of key order.

use std::collections::{HashMap, HashSet};

use ndarc_json::OwnedValue;

use crate::key::digest128;
use crate::model::{CellChange, ColumnScope, RowChange, Side, TableDiff};
use crate::scan::{slice, Span, MISSING};
use crate::side::{self, Event, PartRows, RowRec, SideEnd, SideTable, SideTables};
use crate::sink::Taker;
use crate::source::Input;
use crate::{Error, Matcher};

/// One side's stream of row parts.
pub(crate) struct Stream<'i, 'a> {
    rx: crate::chan::Receiver<Event>,
    cur: Option<PartRows>,
    pos: usize,
    pub(crate) end: Option<SideEnd>,
    side: Side,
    name: String,
    input: &'i Input<'a>,
    /// The side's tables, once its manifest was read.
    tables: Option<SideTables>,
    no_verify: bool,
    max_line: usize,
    /// Digests of the part lines read, by offset, with their tables: a
    /// line read again must be the line first read (kept for the second
    /// archive when its rows go to a sink; see `keep_line_digests`).
    lines: Option<HashMap<u64, (usize, u128)>>,
}

impl<'i, 'a> Stream<'i, 'a> {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        rx: crate::chan::Receiver<Event>,
        side: Side,
        name: &str,
        input: &'i Input<'a>,
        no_verify: bool,
        max_line: usize,
    ) -> Self {
        Stream {
            rx,
            cur: None,
            pos: 0,
            end: None,
            side,
            name: name.to_string(),
            input,
            tables: None,
            no_verify,
            max_line,
            lines: None,
        }
    }

    /// Keeps the digest of each part line read, so that a line read again
    /// by offset is checked to be the same (the sides' readers verified
    /// the line first read; a file changed since must not slip in).
    pub(crate) fn keep_line_digests(&mut self) {
        self.lines = Some(HashMap::new());
    }

    /// Forgets the digests of lines of tables other than `t`: lines are
    /// read again only while their table is diffed.
    fn keep_lines_of(&mut self, t: Option<usize>) {
        if let Some(l) = &mut self.lines {
            l.retain(|_, (table, _)| Some(*table) == t);
        }
    }

    fn hung_up(&self) -> Error {
        Error::Malformed {
            side: self.side,
            name: self.name.clone(),
            line: 0,
            message: "the reader stopped unexpectedly".into(),
        }
    }

    /// The side's tables (and its manifest), the first event: shared with
    /// the reader, not copied.
    pub(crate) fn manifest(&mut self) -> Result<SideTables, Error> {
        match self.rx.recv() {
            Ok(Event::Manifest(m)) => {
                self.tables = Some((*m).clone());
                Ok(*m)
            }
            Ok(Event::Failed(e)) => Err(*e),
            _ => Err(self.hung_up()),
        }
    }

    /// Whether a row of table `t` is current, reading the next part when
    /// the current one is used up.
    fn ready(&mut self, t: Option<usize>) -> Result<bool, Error> {
        let Some(t) = t else { return Ok(false) };
        loop {
            if let Some(p) = &self.cur {
                if self.pos < p.rows.len() {
                    return Ok(p.table == t);
                }
            }
            if self.end.is_some() {
                return Ok(false);
            }
            match self.rx.recv() {
                Ok(Event::Rows(p)) => {
                    if let Some(l) = &mut self.lines {
                        l.insert(p.offset, (p.table, digest128(&[&p.bytes])));
                    }
                    self.cur = Some(p);
                    self.pos = 0;
                }
                Ok(Event::End(e)) => {
                    self.cur = None;
                    self.end = Some(e);
                }
                Ok(Event::Failed(e)) => return Err(*e),
                _ => return Err(self.hung_up()),
            }
        }
    }

    /// The current part (after `ready` returned true).
    fn part(&self) -> Option<&PartRows> {
        self.cur.as_ref()
    }

    /// Reads everything left: only the end may remain.
    pub(crate) fn finish(&mut self) -> Result<SideEnd, Error> {
        loop {
            if let Some(p) = &self.cur {
                if self.pos < p.rows.len() {
                    return Err(Error::Malformed {
                        side: self.side,
                        name: self.name.clone(),
                        line: 0,
                        message: "rows of a table come after rows of a later table (tables out of manifest order)".into(),
                    });
                }
            }
            if let Some(e) = &self.end {
                return Ok(e.clone());
            }
            self.ready(Some(usize::MAX))?;
        }
    }

    /// Skips the rows of table `t`.
    fn skip(&mut self, t: Option<usize>) -> Result<(), Error> {
        while self.ready(t)? {
            if let Some(p) = &self.cur {
                self.pos = p.rows.len();
            }
        }
        Ok(())
    }

    /// Re-reads the part line at `offset` of table `t`.
    fn reread(&self, offset: u64, t: usize) -> Result<PartRows, Error> {
        let bad = |message: String| Error::Malformed {
            side: self.side,
            name: self.name.clone(),
            line: 0,
            message: format!("re-reading the line at byte {offset}: {message}"),
        };
        let bytes = self
            .input
            .line_at(offset, self.max_line)
            .map(|(bytes, _)| bytes)
            .map_err(|e| Error::Io {
                side: self.side,
                name: self.name.clone(),
                source: e,
            })?;
        if let Some((_, d)) = self.lines.as_ref().and_then(|l| l.get(&offset)) {
            if digest128(&[&bytes]) != *d {
                return Err(bad(
                    "the line is not the one first read (the input changed while it was read)"
                        .into(),
                ));
            }
        }
        let table = self
            .tables
            .as_ref()
            .and_then(|ts| ts.get(t))
            .ok_or_else(|| bad("no such table".into()))?;
        side::rescan(bytes, t, table, offset, self.no_verify).map_err(bad)
    }
}

/// How rows of a table pair are compared.
pub(crate) struct Pair<'t> {
    /// The table name.
    name: String,
    a: Option<(usize, SideTable<'t>)>,
    b: Option<(usize, SideTable<'t>)>,
    /// Compared columns: positions in A's and B's columns.
    cols: Vec<(usize, usize)>,
    /// Whole rows can be compared byte for byte.
    whole: bool,
    scope: Option<ColumnScope>,
    /// The rows' columns differ: every row in both is changed.
    shape: bool,
    /// Positions in A's columns of the columns only A's rows carry (a
    /// column removed), and in B's of those only B's rows carry (added):
    /// their non-null cells are shown with each changed row.
    only_a: Vec<usize>,
    only_b: Vec<usize>,
    keys_only: bool,
    /// Lines may not be canonical (read without verification): cells whose
    /// bytes differ are compared by canonical text.
    lax: bool,
}

impl<'t> Pair<'t> {
    pub(crate) fn new(
        name: &str,
        a: Option<(usize, SideTable<'t>)>,
        b: Option<(usize, SideTable<'t>)>,
        renames: &[(String, String)],
        m: &Matcher,
        keys_only: bool,
        lax: bool,
    ) -> Self {
        let mut cols = Vec::new();
        let mut scope = ColumnScope::default();
        if let (Some((_, ta)), Some((_, tb))) = (a, b) {
            for (ia, name_a) in ta.columns.iter().map(|c| &c.name).enumerate() {
                let ignored = m.column_ignored(name, name_a);
                if ignored {
                    scope.ignored.push(name_a.clone());
                }
                // A renamed column is compared with its new name, when
                // rows carry it on both sides.
                let renamed = renames
                    .iter()
                    .find(|(x, _)| x == name_a)
                    .and_then(|(_, y)| Some((y, tb.columns.iter().position(|c| &c.name == y)?)));
                match tb.columns.iter().position(|c| &c.name == name_a) {
                    Some(ib) if !ignored => cols.push((ia, ib)),
                    Some(_) => {}
                    None if ignored => {}
                    None => match renamed {
                        Some((y, ib)) => {
                            cols.push((ia, ib));
                            scope.renamed.push((name_a.clone(), y.clone()));
                        }
                        None => scope.only_before.push(name_a.clone()),
                    },
                }
            }
            for name_b in tb.columns.iter().map(|c| &c.name) {
                let renamed = scope.renamed.iter().any(|(_, y)| y == name_b);
                if !renamed && !ta.columns.iter().any(|c| &c.name == name_b) {
                    if m.column_ignored(name, name_b) {
                        scope.ignored.push(name_b.clone());
                    } else {
                        scope.only_after.push(name_b.clone());
                    }
                }
            }
        }
        let position = |t: Option<(usize, SideTable<'t>)>, names: &[String]| -> Vec<usize> {
            t.map_or_else(Vec::new, |(_, t)| {
                names
                    .iter()
                    .filter_map(|n| t.columns.iter().position(|c| &c.name == n))
                    .collect()
            })
        };
        let (only_a, only_b) = (
            position(a, &scope.only_before),
            position(b, &scope.only_after),
        );
        let whole = scope == ColumnScope::default()
            && a.zip(b).is_some_and(|((_, x), (_, y))| {
                x.columns.len() == y.columns.len() && cols.len() == x.columns.len()
            });
        Pair {
            name: name.to_string(),
            a,
            b,
            cols,
            whole,
            shape: scope.differs(),
            only_a,
            only_b,
            scope: (scope != ColumnScope::default()).then_some(scope),
            keys_only,
            lax,
        }
    }

    /// A side's key was chosen (`Options::keys`).
    fn chosen_key(&self) -> bool {
        [self.a, self.b].iter().flatten().any(|(_, t)| t.chosen_key)
    }

    fn pk_a(&self) -> usize {
        self.a.map_or(0, |(_, t)| t.pk.len())
    }

    fn pk_b(&self) -> usize {
        self.b.map_or(0, |(_, t)| t.pk.len())
    }

    fn ncols_a(&self) -> usize {
        self.a.map_or(0, |(_, t)| t.columns.len())
    }

    fn ncols_b(&self) -> usize {
        self.b.map_or(0, |(_, t)| t.columns.len())
    }

    /// Whether row `i` of `pa` and row `j` of `pb` are equal on the
    /// compared columns.
    fn same_row(&self, pa: &PartRows, i: usize, pb: &PartRows, j: usize) -> bool {
        if self.whole {
            if slice(&pa.bytes, pa.rows[i].row) == slice(&pb.bytes, pb.rows[j].row) {
                return true;
            }
            if !self.lax {
                return false;
            }
        }
        let (ca, cb) = (pa.cells(i, self.ncols_a()), pb.cells(j, self.ncols_b()));
        self.cols
            .iter()
            .all(|&(x, y)| self.cell_eq(cell(&pa.bytes, ca, x), cell(&pb.bytes, cb, y)))
    }

    /// Cells are equal: the same bytes or, for lines that may not be
    /// canonical, the same canonical text.
    fn cell_eq(&self, a: &[u8], b: &[u8]) -> bool {
        a == b || (self.lax && side::canonical_cell(a) == side::canonical_cell(b))
    }

    /// The digest of a row's compared cells (both sides agree on it).
    fn digest(&self, p: &PartRows, i: usize, side: Side) -> u128 {
        if self.whole && !self.lax {
            return digest128(&[slice(&p.bytes, p.rows[i].row)]);
        }
        let (n, before) = match side {
            Side::Before => (self.ncols_a(), true),
            Side::After => (self.ncols_b(), false),
        };
        let cells = p.cells(i, n);
        let pieces: Vec<&[u8]> = self
            .cols
            .iter()
            .map(|&(x, y)| cell(&p.bytes, cells, if before { x } else { y }))
            .collect();
        if self.lax {
            let canon: Vec<std::borrow::Cow<'_, [u8]>> =
                pieces.iter().map(|c| side::canonical_cell(c)).collect();
            let refs: Vec<&[u8]> = canon.iter().map(|c| c.as_ref()).collect();
            return digest128(&refs);
        }
        digest128(&pieces)
    }

    /// The change of a matched row: the compared cells that differ (none
    /// when `same`, the row being changed only because the table's columns
    /// differ), then the non-null cells of the columns one side only
    /// carries, all in column name order.
    fn change(&self, pa: &PartRows, i: usize, pb: &PartRows, j: usize, same: bool) -> RowChange {
        let key = pa.key(i, self.pk_a()).text();
        if self.keys_only {
            return RowChange {
                key,
                cells: Vec::new(),
                columns_only: same,
            };
        }
        let (ca, cb) = (pa.cells(i, self.ncols_a()), pb.cells(j, self.ncols_b()));
        // Cells are named as the second archive names the column (a
        // renamed column by its new name).
        let name = |t: Option<(usize, SideTable<'_>)>, at: usize| {
            t.and_then(|(_, t)| t.columns.get(at))
                .map_or_else(String::new, |c| c.name.clone())
        };
        let mut cells: Vec<CellChange> = Vec::new();
        if !same {
            cells.extend(self.cols.iter().filter_map(|&(x, y)| {
                let (va, vb) = (cell(&pa.bytes, ca, x), cell(&pb.bytes, cb, y));
                (!self.cell_eq(va, vb)).then(|| CellChange {
                    column: name(self.b, y),
                    before: value(va),
                    after: value(vb),
                    only: None,
                })
            }));
        }
        // A column of one side only: its value where the row holds one
        // (a null is what adding a column gives every row; an absent cell
        // is not shown either).
        let one_side = |p: &PartRows, cs: &[Span], at: usize| {
            let v = cell(&p.bytes, cs, at);
            (!v.is_empty() && v != b"null").then(|| value(v))
        };
        let before = self.only_a.iter().filter_map(|&x| {
            one_side(pa, ca, x).map(|v| CellChange {
                column: name(self.a, x),
                before: v,
                after: OwnedValue::Null,
                only: Some(Side::Before),
            })
        });
        let after = self.only_b.iter().filter_map(|&y| {
            one_side(pb, cb, y).map(|v| CellChange {
                column: name(self.b, y),
                before: OwnedValue::Null,
                after: v,
                only: Some(Side::After),
            })
        });
        let n = cells.len();
        cells.extend(before.chain(after));
        if cells.len() > n {
            cells.sort_by(|x, y| ndarc_json::cmp_utf16(&x.column, &y.column));
        }
        RowChange {
            key,
            columns_only: same && cells.is_empty(),
            cells,
        }
    }

    /// The change of a matched row whose compared cells are equal while
    /// the table's columns differ, where no cell of a column of one side
    /// only is shown (see `shows_one_side`).
    fn columns_change(key: String) -> RowChange {
        RowChange {
            key,
            cells: Vec::new(),
            columns_only: true,
        }
    }

    /// Whether rows whose compared cells are equal need both sides' rows
    /// for their change (cells of a column of one side only).
    fn shows_one_side(&self) -> bool {
        !self.keys_only && (!self.only_a.is_empty() || !self.only_b.is_empty())
    }
}

/// A row's contents (its `row` object).
fn row_value(p: &PartRows, i: usize) -> OwnedValue {
    p.rows
        .get(i)
        .map_or(OwnedValue::Null, |r| value(slice(&p.bytes, r.row)))
}

/// The position in `p.rows` of item `item`: rows are numbered by item, so
/// this is a lookup, not a search (a search per row would make a hash join
/// quadratic in the rows of a part).
fn row_at(p: &PartRows, item: u32) -> Option<usize> {
    let i = usize::try_from(item).ok()?;
    match p.rows.get(i) {
        Some(r) if r.item == item => Some(i),
        _ => p.rows.iter().position(|r| r.item == item),
    }
}

fn cell<'b>(bytes: &'b [u8], cells: &[Span], at: usize) -> &'b [u8] {
    cells.get(at).map_or(&[][..], |s| slice(bytes, *s))
}

fn value(text: &[u8]) -> OwnedValue {
    if text.is_empty() {
        return OwnedValue::Null;
    }
    ndarc_json::parse(text).map_or_else(
        |_| OwnedValue::String(String::from_utf8_lossy(text).into_owned().into()),
        ndarc_json::Value::into_owned,
    )
}

/// A row's position: line offset and item.
type Pos = (u64, u32);

/// A row added or removed: where, its key, and its contents when kept.
type Keyed = (Pos, String, Option<OwnedValue>);

#[derive(Default)]
struct Acc {
    added: Vec<Keyed>,
    removed: Vec<Keyed>,
    changed: Vec<(Pos, RowChange)>,
    /// Contents kept per kind (added, removed).
    contents: usize,
}

impl Acc {
    /// The contents of row `i` of `p` when `list` keeps more.
    fn content(&self, list: &[Keyed], p: &PartRows, i: usize) -> Option<OwnedValue> {
        (list.len() < self.contents).then(|| row_value(p, i))
    }

    fn add(&mut self, p: &PartRows, i: usize, key: String) {
        let c = self.content(&self.added, p, i);
        self.added.push(((p.offset, p.rows[i].item), key, c));
    }

    fn remove(&mut self, p: &PartRows, i: usize, key: String) {
        let c = self.content(&self.removed, p, i);
        self.removed.push(((p.offset, p.rows[i].item), key, c));
    }
}

/// A key hash or a row digest (128 bits) as two words: aligned to 8
/// bytes, so that an index slot (key hash and [`Entry`]) is 40 bytes,
/// where a `u128` would align it to 16 and pad it to 48.
type Wide = [u64; 2];

fn wide(x: u128) -> Wide {
    [x as u64, (x >> 64) as u64]
}

/// A row key's hash, as an index holds it.
#[derive(Clone, Copy, PartialEq, Eq)]
struct KeyHash(Wide);

impl std::hash::Hash for KeyHash {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        // Already a digest: one word of it is as good an input as two,
        // and half the work for the map's own (keyed) hasher.
        state.write_u64(self.0[0] ^ self.0[1]);
    }
}

/// A row waiting in an index for its match: the digest of its compared
/// cells, and where it is (its line's number in the side's [`Lines`] and
/// its item): 24 bytes.
#[derive(Clone, Copy)]
struct Entry {
    digest: Wide,
    line: u32,
    item: u32,
}

/// The offsets of the part lines of a side's table that rows in the
/// index are on, numbered in archive order (rows enter in archive order,
/// so a line is numbered when its first row enters): an [`Entry`] holds a
/// 4-byte number instead of an 8-byte offset.
#[derive(Default)]
struct Lines(Vec<u64>);

impl Lines {
    /// The number of the line at `offset` (at or after the last one).
    fn number(&mut self, offset: u64) -> u32 {
        if self.0.last() != Some(&offset) {
            self.0.push(offset);
        }
        u32::try_from(self.0.len() - 1).unwrap_or(u32::MAX)
    }

    /// The offset of line `n`.
    fn offset(&self, n: u32) -> u64 {
        self.0.get(n as usize).copied().unwrap_or(u64::MAX)
    }
}

/// Gives back an index's memory once most of its entries were matched
/// (an index only shrinks when rows are matched): a quarter full, it is
/// made half full, so the shrinking costs a constant per entry.
fn trim(index: &mut HashMap<KeyHash, Entry>) {
    if index.capacity() > 1 << 12 && index.len() < index.capacity() / 4 {
        index.shrink_to(index.len() * 2);
    }
}

/// Rows copied out of their part while it was current, to be compared
/// later with their matches re-read from the other side: the row object
/// (which holds its cells), the rowid and any cell or key outside it,
/// in one buffer, as one [`PartRows`] whose row `n` is the `n`-th held.
struct Held {
    part: PartRows,
}

impl Held {
    fn new() -> Held {
        Held {
            part: PartRows {
                table: 0,
                offset: 0,
                bytes: Vec::new(),
                rows: Vec::new(),
                cells: Vec::new(),
                keys: Vec::new(),
                ordered: false,
            },
        }
    }

    /// Bytes held.
    fn bytes(&self) -> usize {
        self.part.bytes.len()
    }

    /// Holds row `i` of `p` (`n` cells, `pk` key cells); its number.
    fn hold(&mut self, p: &PartRows, i: usize, n: usize, pk: usize) -> u32 {
        let h = &mut self.part;
        let to32 = |x: usize| u32::try_from(x).unwrap_or(u32::MAX);
        let row = p.rows[i].row;
        let base = h.bytes.len();
        h.bytes.extend_from_slice(slice(&p.bytes, row));
        let copy = |bytes: &mut Vec<u8>, s: Span| -> Span {
            if s == MISSING {
                MISSING
            } else if s.0 >= row.0 && s.1 <= row.1 {
                (
                    to32(base + (s.0 - row.0) as usize),
                    to32(base + (s.1 - row.0) as usize),
                )
            } else {
                let start = bytes.len();
                bytes.extend_from_slice(slice(&p.bytes, s));
                (to32(start), to32(bytes.len()))
            }
        };
        let new_row = copy(&mut h.bytes, row);
        let rowid = p.rows[i].rowid.map(|(id, s)| (id, copy(&mut h.bytes, s)));
        for &c in p.cells(i, n) {
            let c = copy(&mut h.bytes, c);
            h.cells.push(c);
        }
        // As many cells as the table has, whatever the part gave.
        h.cells.resize(h.rows.len() * n + n, MISSING);
        for k in 0..pk {
            let s = p.keys.get(i * pk + k).copied().unwrap_or(MISSING);
            let s = copy(&mut h.bytes, s);
            h.keys.push(s);
        }
        let at = to32(h.rows.len());
        h.rows.push(RowRec {
            row: new_row,
            rowid,
            item: at,
        });
        at
    }

    fn clear(&mut self) {
        self.part.bytes.clear();
        self.part.rows.clear();
        self.part.cells.clear();
        self.part.keys.clear();
    }
}

/// A row found on both sides whose compared cells differ, its change made
/// later: the row read first waits in an index (on `waiting`'s side, at
/// `line`, `item`), the other is held (row `held` of that side's [`Held`]).
/// Resolved in line order of the waiting rows, so that each of their lines
/// is read again once, not once for each row in it.
struct Pending {
    /// Where the row of the first archive is, to order the changes.
    a: Pos,
    waiting: Side,
    line: u32,
    item: u32,
    held: u32,
    /// The rows' digests are equal: the row changes only by a column of
    /// one side (see [`Pair::change`]).
    same: bool,
}

/// The matched rows whose changes are yet to be made.
struct Deferred {
    pending: Vec<Pending>,
    held_a: Held,
    held_b: Held,
}

impl Deferred {
    /// Bytes of held rows at which the changes are made (in line order of
    /// the rows waiting so far) before more are held.
    const BYTES: usize = 16 << 20;

    fn full(&self) -> bool {
        self.held_a.bytes() + self.held_b.bytes() >= Self::BYTES
    }

    /// Makes the pending changes into `acc`, each waiting row's line read
    /// again once, in line order.
    #[allow(clippy::too_many_arguments)]
    fn resolve(
        &mut self,
        pair: &Pair<'_>,
        (ta, tb): (Option<usize>, Option<usize>),
        a: &Stream<'_, '_>,
        b: &Stream<'_, '_>,
        (lines_a, lines_b): (&Lines, &Lines),
        acc: &mut Acc,
    ) -> Result<(), Error> {
        let mut pending = std::mem::take(&mut self.pending);
        pending.sort_unstable_by_key(|p| (p.waiting == Side::After, p.line, p.item));
        let mut cached: Option<(Side, PartRows)> = None;
        for p in &pending {
            let (stream, lines, t) = match p.waiting {
                Side::Before => (a, lines_a, ta),
                Side::After => (b, lines_b, tb),
            };
            let Some(t) = t else { continue };
            let offset = lines.offset(p.line);
            if cached
                .as_ref()
                .is_none_or(|(s, c)| *s != p.waiting || c.offset != offset)
            {
                cached = Some((p.waiting, stream.reread(offset, t)?));
            }
            let Some((_, w)) = &cached else { continue };
            let Some(i) = row_at(w, p.item) else { continue };
            let h = p.held as usize;
            let change = match p.waiting {
                Side::Before => pair.change(w, i, &self.held_b.part, h, p.same),
                Side::After => pair.change(&self.held_a.part, h, w, i, p.same),
            };
            acc.changed.push((p.a, change));
        }
        self.held_a.clear();
        self.held_b.clear();
        pending.clear();
        self.pending = pending;
        Ok(())
    }
}

/// Diffs the rows of one table (present on either side or both); `None`
/// ignores the table (its rows are skipped).
#[allow(clippy::too_many_arguments)]
pub(crate) fn diff_table(
    name: &str,
    pair: Option<&Pair<'_>>,
    ta: Option<usize>,
    tb: Option<usize>,
    a: &mut Stream<'_, '_>,
    b: &mut Stream<'_, '_>,
    contents: usize,
    taker: &mut Taker<'_>,
) -> Result<TableDiff, Error> {
    let mut out = TableDiff {
        name: name.to_string(),
        ..TableDiff::default()
    };
    let Some(pair) = pair else {
        a.skip(ta)?;
        b.skip(tb)?;
        return Ok(out);
    };
    b.keep_lines_of(tb);
    out.scope = pair.scope.clone();
    let mut acc = Acc {
        contents,
        ..Acc::default()
    };
    let (ka, kb) = (pair.pk_a(), pair.pk_b());
    // The merge join.
    loop {
        let ha = a.ready(ta)?;
        let hb = b.ready(tb)?;
        // Rows are matched by a chosen key through the index from the
        // start, where every key is checked to be unique.
        let unordered = (ha && a.part().is_some_and(|p| !p.ordered))
            || (hb && b.part().is_some_and(|p| !p.ordered))
            || ((ha || hb) && pair.chosen_key());
        if unordered {
            out.unordered = true;
            // What the merge called added may yet match.
            taker.restart()?;
            hash_join(pair, ta, tb, a, b, &mut acc, taker)?;
            break;
        }
        match (ha, hb, a.cur.as_ref(), b.cur.as_ref()) {
            (true, true, Some(pa), Some(pb)) => {
                let (i, j) = (a.pos, b.pos);
                let (x, y) = (pa.key(i, ka), pb.key(j, kb));
                if x.same(&y) {
                    let pos = (pa.offset, pa.rows[i].item);
                    let same = pair.same_row(pa, i, pb, j);
                    if !same || pair.shape {
                        acc.changed.push((pos, pair.change(pa, i, pb, j, same)));
                    }
                    taker.read(pb, j)?;
                    a.pos += 1;
                    b.pos += 1;
                } else if x.cmp(&y).is_lt() {
                    acc.remove(pa, i, x.text());
                    a.pos += 1;
                } else {
                    acc.add(pb, j, y.text());
                    taker.added(pb, j)?;
                    b.pos += 1;
                }
            }
            (true, _, Some(pa), _) => {
                let i = a.pos;
                acc.remove(pa, i, pa.key(i, ka).text());
                a.pos += 1;
            }
            (_, true, _, Some(pb)) => {
                let j = b.pos;
                acc.add(pb, j, pb.key(j, kb).text());
                taker.added(pb, j)?;
                b.pos += 1;
            }
            _ => break,
        }
    }
    for (list, keys, rows) in [
        (acc.added, &mut out.added, &mut out.added_rows),
        (acc.removed, &mut out.removed, &mut out.removed_rows),
    ] {
        // Contents of the first rows, in the order of the keys: up to the
        // first row without them.
        let mut open = true;
        for (_, k, c) in list {
            keys.push(k);
            match c {
                Some(c) if open && rows.len() < contents => rows.push(c),
                _ => open = false,
            }
        }
    }
    out.changed = acc.changed.into_iter().map(|(_, c)| c).collect();
    Ok(out)
}

/// The rest of a table through indexes of (key hash → row digest,
/// position) on each side (40 bytes a waiting row, see [`Entry`]); rows
/// found on both sides are compared by digest, and those that differ are
/// resolved late, in line order of the rows that waited (see
/// [`Deferred`]); the rest are added or removed. Results end in archive
/// order, as the merge gives them.
fn hash_join(
    pair: &Pair<'_>,
    ta: Option<usize>,
    tb: Option<usize>,
    a: &mut Stream<'_, '_>,
    b: &mut Stream<'_, '_>,
    acc: &mut Acc,
    taker: &mut Taker<'_>,
) -> Result<(), Error> {
    let (ka, kb) = (pair.pk_a(), pair.pk_b());
    let (na, nb) = (pair.ncols_a(), pair.ncols_b());
    // Keys seen per side, when chosen (a table's own key is unique, as
    // verified).
    let check = pair.chosen_key();
    let mut seen_a: HashSet<u128> = HashSet::new();
    let mut seen_b: HashSet<u128> = HashSet::new();
    let twice = |s: &Stream<'_, '_>, key: String| Error::KeyNotUnique {
        side: s.side,
        name: s.name.clone(),
        table: pair.name.clone(),
        key,
    };
    let mut index_a: HashMap<KeyHash, Entry> = HashMap::new();
    let mut index_b: HashMap<KeyHash, Entry> = HashMap::new();
    let (mut lines_a, mut lines_b) = (Lines::default(), Lines::default());
    let mut later = Deferred {
        pending: Vec::new(),
        held_a: Held::new(),
        held_b: Held::new(),
    };
    // What the merge called removed or added may yet match.
    for (side, list, index, lines, t, stream) in [
        (
            Side::Before,
            std::mem::take(&mut acc.removed),
            &mut index_a,
            &mut lines_a,
            ta,
            &*a,
        ),
        (
            Side::After,
            std::mem::take(&mut acc.added),
            &mut index_b,
            &mut lines_b,
            tb,
            &*b,
        ),
    ] {
        let mut cached: Option<PartRows> = None;
        for (pos, key, _) in list {
            let Some(t) = t else { continue };
            if cached.as_ref().map(|p| p.offset) != Some(pos.0) {
                cached = Some(stream.reread(pos.0, t)?);
            }
            if let Some(p) = &cached {
                if let Some(i) = row_at(p, pos.1) {
                    let digest = wide(pair.digest(p, i, side));
                    index.insert(
                        KeyHash(wide(ndarc_format::key::key_digest(key.as_bytes()))),
                        Entry {
                            digest,
                            line: lines.number(pos.0),
                            item: pos.1,
                        },
                    );
                }
            }
        }
    }
    loop {
        let mut progressed = false;
        if a.ready(ta)? {
            if let (Some(pa), Some(_)) = (a.cur.as_ref(), tb) {
                for i in a.pos..pa.rows.len() {
                    let kh = pa.key(i, ka).digest();
                    if check && !seen_a.insert(kh) {
                        return Err(twice(a, pa.key(i, ka).text()));
                    }
                    let kh = KeyHash(wide(kh));
                    let digest = wide(pair.digest(pa, i, Side::Before));
                    let pos = (pa.offset, pa.rows[i].item);
                    match index_b.remove(&kh) {
                        Some(e) if e.digest == digest && !pair.shows_one_side() => {
                            if pair.shape {
                                acc.changed
                                    .push((pos, Pair::columns_change(pa.key(i, ka).text())));
                            }
                        }
                        Some(e) => {
                            let held = later.held_a.hold(pa, i, na, ka);
                            later.pending.push(Pending {
                                a: pos,
                                waiting: Side::After,
                                line: e.line,
                                item: e.item,
                                held,
                                same: e.digest == digest,
                            });
                        }
                        None => {
                            let line = lines_a.number(pos.0);
                            index_a.insert(
                                kh,
                                Entry {
                                    digest,
                                    line,
                                    item: pos.1,
                                },
                            );
                        }
                    }
                }
            } else if let Some(pa) = a.cur.as_ref() {
                for i in a.pos..pa.rows.len() {
                    acc.remove(pa, i, pa.key(i, ka).text());
                }
            }
            a.pos = a.cur.as_ref().map_or(0, |p| p.rows.len());
            trim(&mut index_b);
            progressed = true;
        }
        if b.ready(tb)? {
            if let (Some(pb), Some(_)) = (b.cur.as_ref(), ta) {
                for j in b.pos..pb.rows.len() {
                    taker.read(pb, j)?;
                    let kh = pb.key(j, kb).digest();
                    if check && !seen_b.insert(kh) {
                        return Err(twice(b, pb.key(j, kb).text()));
                    }
                    let kh = KeyHash(wide(kh));
                    let digest = wide(pair.digest(pb, j, Side::After));
                    let pos = (pb.offset, pb.rows[j].item);
                    match index_a.remove(&kh) {
                        Some(e) if e.digest == digest && !pair.shows_one_side() => {
                            if pair.shape {
                                let at = (lines_a.offset(e.line), e.item);
                                acc.changed
                                    .push((at, Pair::columns_change(pb.key(j, kb).text())));
                            }
                        }
                        Some(e) => {
                            let held = later.held_b.hold(pb, j, nb, kb);
                            later.pending.push(Pending {
                                a: (lines_a.offset(e.line), e.item),
                                waiting: Side::Before,
                                line: e.line,
                                item: e.item,
                                held,
                                same: e.digest == digest,
                            });
                        }
                        None => {
                            let line = lines_b.number(pos.0);
                            index_b.insert(
                                kh,
                                Entry {
                                    digest,
                                    line,
                                    item: pos.1,
                                },
                            );
                        }
                    }
                }
            } else if let Some(pb) = b.cur.as_ref() {
                for j in b.pos..pb.rows.len() {
                    acc.add(pb, j, pb.key(j, kb).text());
                    taker.added(pb, j)?;
                }
            }
            b.pos = b.cur.as_ref().map_or(0, |p| p.rows.len());
            trim(&mut index_a);
            progressed = true;
        }
        if later.full() {
            later.resolve(pair, (ta, tb), a, b, (&lines_a, &lines_b), acc)?;
        }
        if !progressed {
            break;
        }
    }
    later.resolve(pair, (ta, tb), a, b, (&lines_a, &lines_b), acc)?;
    // Keys of what is left, re-read line by line (contents kept for all:
    // the first in archive order are known only once sorted).
    let keep = acc.contents > 0;
    for (index, lines, t, stream, list, pk, side) in [
        (
            index_a,
            &lines_a,
            ta,
            &*a,
            &mut acc.removed,
            ka,
            Side::Before,
        ),
        (index_b, &lines_b, tb, &*b, &mut acc.added, kb, Side::After),
    ] {
        let Some(t) = t else { continue };
        let mut left: Vec<(u32, u32)> = index.into_values().map(|e| (e.line, e.item)).collect();
        left.sort_unstable();
        let mut cached: Option<PartRows> = None;
        for (line, item) in left {
            let offset = lines.offset(line);
            if cached.as_ref().map(|p| p.offset) != Some(offset) {
                cached = Some(stream.reread(offset, t)?);
            }
            if let Some(p) = &cached {
                if let Some(i) = row_at(p, item) {
                    list.push((
                        (offset, item),
                        p.key(i, pk).text(),
                        keep.then(|| row_value(p, i)),
                    ));
                    if side == Side::After {
                        // In archive order, as the merge gives them.
                        taker.added_late(p, i)?;
                    }
                }
            }
        }
    }
    acc.added.sort_by_key(|(p, _, _)| *p);
    acc.removed.sort_by_key(|(p, _, _)| *p);
    acc.changed.sort_by_key(|(p, _)| *p);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A test row: its row object, rowid and cells.
    type TestRow = (Span, Option<(i64, Span)>, Vec<Span>);

    /// A part over `line` with `rows`, whose first `pk` cells are the key.
    fn part(line: &str, rows: &[TestRow], pk: usize) -> PartRows {
        let mut cells = Vec::new();
        let mut keys = Vec::new();
        for (_, _, c) in rows {
            cells.extend_from_slice(c);
            keys.extend_from_slice(&c[..pk]);
        }
        PartRows {
            table: 0,
            offset: 100,
            bytes: line.as_bytes().to_vec(),
            rows: rows
                .iter()
                .enumerate()
                .map(|(i, (row, rowid, _))| RowRec {
                    row: *row,
                    rowid: *rowid,
                    item: i as u32,
                })
                .collect(),
            cells,
            keys,
            ordered: true,
        }
    }

    fn span_of(line: &str, text: &str, from: usize) -> Span {
        let at = line[from..].find(text).expect("in the line") + from;
        (at as u32, (at + text.len()) as u32)
    }

    #[test]
    fn held_rows_keep_their_row_cells_keys_and_rowid() {
        // Two items; the second's key cell is given outside its row, as a
        // canonical key appended after the line (lines read without
        // verification), and one of its cells is missing.
        let line = r#"[{"row":{"a":1,"b":"x"},"rowid":5},{"row":{"a":22,"b":"yy"},"rowid":6}]"2""#;
        let r0 = span_of(line, r#"{"a":1,"b":"x"}"#, 0);
        let r1 = span_of(line, r#"{"a":22,"b":"yy"}"#, 0);
        let rows = vec![
            (
                r0,
                Some((5, span_of(line, "5", r0.1 as usize))),
                vec![
                    span_of(line, "1", r0.0 as usize),
                    span_of(line, r#""x""#, 0),
                ],
            ),
            (
                r1,
                Some((6, span_of(line, "6", r1.1 as usize))),
                vec![span_of(line, r#""2""#, r1.1 as usize), MISSING],
            ),
        ];
        let p = part(line, &rows, 1);
        let mut held = Held::new();
        assert_eq!(held.hold(&p, 1, 2, 1), 0);
        assert_eq!(held.hold(&p, 0, 2, 1), 1);
        let h = &held.part;
        let text = |s: Span| String::from_utf8_lossy(slice(&h.bytes, s)).into_owned();
        assert_eq!(text(h.rows[0].row), r#"{"a":22,"b":"yy"}"#);
        assert_eq!(text(h.rows[1].row), r#"{"a":1,"b":"x"}"#);
        assert_eq!(
            h.rows[0].rowid.map(|(id, s)| (id, text(s))),
            Some((6, "6".into()))
        );
        assert_eq!(
            h.rows[1].rowid.map(|(id, s)| (id, text(s))),
            Some((5, "5".into()))
        );
        assert_eq!(h.rows.iter().map(|r| r.item).collect::<Vec<_>>(), [0, 1]);
        let cells: Vec<String> = h.cells.iter().map(|&s| text(s)).collect();
        assert_eq!(cells, [r#""2""#, "", "1", r#""x""#]);
        assert_eq!(h.cells[1], MISSING);
        let keys: Vec<String> = h.keys.iter().map(|&s| text(s)).collect();
        assert_eq!(keys, [r#""2""#, "1"]);
        // The row object is copied once; besides it only what lies outside
        // it: the rowids, and the outside key text (as a cell and as a key).
        assert_eq!(
            held.bytes(),
            r#"{"a":22,"b":"yy"}"#.len() + 1 + 3 + 3 + r#"{"a":1,"b":"x"}"#.len() + 1
        );
        held.clear();
        assert_eq!(
            (held.bytes(), held.part.rows.len(), held.part.cells.len()),
            (0, 0, 0)
        );
    }

    #[test]
    fn lines_are_numbered_in_order_and_give_back_their_offsets() {
        let mut l = Lines::default();
        assert_eq!(l.number(40), 0);
        assert_eq!(l.number(40), 0);
        assert_eq!(l.number(900), 1);
        assert_eq!((l.offset(0), l.offset(1), l.offset(7)), (40, 900, u64::MAX));
        assert_eq!(std::mem::size_of::<(KeyHash, Entry)>(), 40);
    }
}
