//! The row diff: a streaming merge join over the two sides' rows of a
//! table, falling back to a hash join over (key hash, row digest, line
//! offset) when a side's rows are out of key order.

use std::collections::{HashMap, HashSet};

use ndarc_json::OwnedValue;

use crate::key::digest128;
use crate::model::{CellChange, ColumnScope, RowChange, Side, TableDiff};
use crate::scan::{slice, Span};
use crate::side::{self, Event, PartRows, SideEnd, SideTable, SideTables};
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

/// Part lines re-read on one side, the latest few kept: rows of two
/// exports out of key order often come in a similar order, so the rows
/// that changed cluster in a few lines; each line is then read and scanned
/// once, not once per row.
#[derive(Default)]
struct Rereads {
    /// Most recent last.
    lines: Vec<PartRows>,
}

impl Rereads {
    /// Lines kept at most (and their bytes at most, below).
    const LINES: usize = 8;
    const BYTES: usize = 16 << 20;

    /// The part at `offset` of table `t`: the stream's current part when
    /// it is that one, else a kept line, else read again (and kept).
    fn get<'s>(
        &'s mut self,
        stream: &'s Stream<'_, '_>,
        offset: u64,
        t: usize,
    ) -> Result<&'s PartRows, Error> {
        if let Some(p) = stream.cur.as_ref().filter(|p| p.offset == offset) {
            return Ok(p);
        }
        if let Some(i) = self.lines.iter().position(|p| p.offset == offset) {
            let p = self.lines.remove(i);
            self.lines.push(p);
        } else {
            let p = stream.reread(offset, t)?;
            let mut bytes: usize = self.lines.iter().map(|p| p.bytes.len()).sum();
            bytes += p.bytes.len();
            while !self.lines.is_empty() && (self.lines.len() >= Self::LINES || bytes > Self::BYTES)
            {
                bytes -= self.lines.remove(0).bytes.len();
            }
            self.lines.push(p);
        }
        self.lines.last().ok_or_else(|| stream.hung_up())
    }
}

/// Gives back an index's memory once most of its entries were matched
/// (an index only shrinks when rows are matched): a quarter full, it is
/// made half full, so the shrinking costs a constant per entry.
fn trim(index: &mut HashMap<u128, Entry>) {
    if index.capacity() > 1 << 12 && index.len() < index.capacity() / 4 {
        index.shrink_to(index.len() * 2);
    }
}

#[derive(Clone, Copy)]
struct Entry {
    digest: u128,
    pos: Pos,
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

/// The rest of a table through indexes of (key hash → row digest, position)
/// on each side; rows found on both sides are compared (the other side's
/// line re-read when their digests differ), the rest are added or removed.
/// Results end in archive order, as the merge gives them.
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
    let mut index_a: HashMap<u128, Entry> = HashMap::new();
    let mut index_b: HashMap<u128, Entry> = HashMap::new();
    // What the merge called removed or added may yet match.
    for (side, list, index, t, stream) in [
        (
            Side::Before,
            std::mem::take(&mut acc.removed),
            &mut index_a,
            ta,
            &*a,
        ),
        (
            Side::After,
            std::mem::take(&mut acc.added),
            &mut index_b,
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
                    let digest = pair.digest(p, i, side);
                    index.insert(
                        ndarc_format::key::key_digest(key.as_bytes()),
                        Entry { digest, pos },
                    );
                }
            }
        }
    }
    let (mut again_a, mut again_b) = (Rereads::default(), Rereads::default());
    loop {
        let mut progressed = false;
        if a.ready(ta)? {
            if let (Some(pa), Some(t)) = (a.cur.as_ref(), tb) {
                for i in a.pos..pa.rows.len() {
                    let kh = pa.key(i, ka).digest();
                    if check && !seen_a.insert(kh) {
                        return Err(twice(a, pa.key(i, ka).text()));
                    }
                    let digest = pair.digest(pa, i, Side::Before);
                    let pos = (pa.offset, pa.rows[i].item);
                    match index_b.remove(&kh) {
                        Some(e) if e.digest == digest && !pair.shows_one_side() => {
                            if pair.shape {
                                acc.changed
                                    .push((pos, Pair::columns_change(pa.key(i, ka).text())));
                            }
                        }
                        Some(e) => {
                            let pb = again_b.get(b, e.pos.0, t)?;
                            if let Some(j) = row_at(pb, e.pos.1) {
                                let same = e.digest == digest;
                                acc.changed.push((pos, pair.change(pa, i, pb, j, same)));
                            }
                        }
                        None => {
                            index_a.insert(kh, Entry { digest, pos });
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
            if let (Some(pb), Some(t)) = (b.cur.as_ref(), ta) {
                for j in b.pos..pb.rows.len() {
                    taker.read(pb, j)?;
                    let kh = pb.key(j, kb).digest();
                    if check && !seen_b.insert(kh) {
                        return Err(twice(b, pb.key(j, kb).text()));
                    }
                    let digest = pair.digest(pb, j, Side::After);
                    let pos = (pb.offset, pb.rows[j].item);
                    match index_a.remove(&kh) {
                        Some(e) if e.digest == digest && !pair.shows_one_side() => {
                            if pair.shape {
                                acc.changed
                                    .push((e.pos, Pair::columns_change(pb.key(j, kb).text())));
                            }
                        }
                        Some(e) => {
                            let pa = again_a.get(a, e.pos.0, t)?;
                            if let Some(i) = row_at(pa, e.pos.1) {
                                let same = e.digest == digest;
                                acc.changed.push((e.pos, pair.change(pa, i, pb, j, same)));
                            }
                        }
                        None => {
                            index_b.insert(kh, Entry { digest, pos });
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
        if !progressed {
            break;
        }
    }
    // Keys of what is left, re-read line by line (contents kept for all:
    // the first in archive order are known only once sorted).
    let keep = acc.contents > 0;
    for (index, t, stream, list, pk, side) in [
        (index_a, ta, &*a, &mut acc.removed, ka, Side::Before),
        (index_b, tb, &*b, &mut acc.added, kb, Side::After),
    ] {
        let Some(t) = t else { continue };
        let mut left: Vec<Pos> = index.into_values().map(|e| e.pos).collect();
        left.sort_unstable();
        let mut cached: Option<PartRows> = None;
        for pos in left {
            if cached.as_ref().map(|p| p.offset) != Some(pos.0) {
                cached = Some(stream.reread(pos.0, t)?);
            }
            if let Some(p) = &cached {
                if let Some(i) = row_at(p, pos.1) {
                    list.push((pos, p.key(i, pk).text(), keep.then(|| row_value(p, i))));
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
