//! How the rows of a table pair are compared: the compared columns, the
//! equality and digest of a row's compared cells, and a matched row's
//! change.

use ndarc_json::OwnedValue;

use crate::key::digest128;
use crate::model::{CellChange, ColumnScope, RowChange, Side};
use crate::scan::{slice, Span};
use crate::side::{self, PartRows, SideTable};
use crate::Matcher;

/// How rows of a table pair are compared.
pub(crate) struct Pair<'t> {
    /// The table name.
    pub(super) name: String,
    a: Option<(usize, SideTable<'t>)>,
    b: Option<(usize, SideTable<'t>)>,
    /// Compared columns: positions in A's and B's columns.
    cols: Vec<(usize, usize)>,
    /// Whole rows can be compared byte for byte.
    whole: bool,
    pub(super) scope: Option<ColumnScope>,
    /// The rows' columns differ: every row in both is changed.
    pub(super) shape: bool,
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
    #[inline]
    pub(super) fn chosen_key(&self) -> bool {
        [self.a, self.b].iter().flatten().any(|(_, t)| t.chosen_key)
    }

    #[inline]
    pub(super) fn pk_a(&self) -> usize {
        self.a.map_or(0, |(_, t)| t.pk.len())
    }

    #[inline]
    pub(super) fn pk_b(&self) -> usize {
        self.b.map_or(0, |(_, t)| t.pk.len())
    }

    #[inline]
    pub(super) fn ncols_a(&self) -> usize {
        self.a.map_or(0, |(_, t)| t.columns.len())
    }

    #[inline]
    pub(super) fn ncols_b(&self) -> usize {
        self.b.map_or(0, |(_, t)| t.columns.len())
    }

    /// Whether row `i` of `pa` and row `j` of `pb` are equal on the
    /// compared columns.
    #[inline]
    pub(super) fn same_row(&self, pa: &PartRows, i: usize, pb: &PartRows, j: usize) -> bool {
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
    #[inline]
    fn cell_eq(&self, a: &[u8], b: &[u8]) -> bool {
        a == b || (self.lax && side::canonical_cell(a) == side::canonical_cell(b))
    }

    /// The digest of a row's compared cells (both sides agree on it).
    #[inline]
    pub(super) fn digest(&self, p: &PartRows, i: usize, side: Side) -> u128 {
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
    pub(super) fn change(
        &self,
        pa: &PartRows,
        i: usize,
        pb: &PartRows,
        j: usize,
        same: bool,
    ) -> RowChange {
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
    pub(super) fn columns_change(key: String) -> RowChange {
        RowChange {
            key,
            cells: Vec::new(),
            columns_only: true,
        }
    }

    /// Whether rows whose compared cells are equal need both sides' rows
    /// for their change (cells of a column of one side only).
    #[inline]
    pub(super) fn shows_one_side(&self) -> bool {
        !self.keys_only && (!self.only_a.is_empty() || !self.only_b.is_empty())
    }
}

/// A row's contents (its `row` object).
pub(super) fn row_value(p: &PartRows, i: usize) -> OwnedValue {
    p.rows
        .get(i)
        .map_or(OwnedValue::Null, |r| value(slice(&p.bytes, r.row)))
}

/// The position in `p.rows` of item `item`: rows are numbered by item, so
/// this is a lookup, not a search (a search per row would make a hash join
/// quadratic in the rows of a part).
#[inline]
pub(super) fn row_at(p: &PartRows, item: u32) -> Option<usize> {
    let i = usize::try_from(item).ok()?;
    match p.rows.get(i) {
        Some(r) if r.item == item => Some(i),
        _ => p.rows.iter().position(|r| r.item == item),
    }
}

#[inline]
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
