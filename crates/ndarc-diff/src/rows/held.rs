//! Matched rows whose changes are made late: the row read second is held
//! (copied out of its part), the first is re-read from its line, in line
//! order, when enough is held or the table ends.

use super::acc::{Acc, Pos};
use super::index::Lines;
use super::pair::{row_at, Pair};
use super::stream::Stream;
use crate::model::Side;
use crate::scan::{slice, Span, MISSING};
use crate::side::{PartRows, RowRec};
use crate::Error;

/// Rows copied out of their part while it was current, to be compared
/// later with their matches re-read from the other side: the row object
/// (which holds its cells), the rowid and any cell or key outside it,
/// in one buffer, as one [`PartRows`] whose row `n` is the `n`-th held.
pub(super) struct Held {
    part: PartRows,
}

impl Held {
    /// Nothing held.
    pub(super) fn new() -> Held {
        Held {
            part: PartRows {
                table: 0,
                offset: 0,
                bytes: Vec::new(),
                rows: Vec::new(),
                cells: Vec::new(),
                keys: Vec::new(),
                ordered: false,
                digest: None,
            },
        }
    }

    /// Bytes held.
    pub(super) fn bytes(&self) -> usize {
        self.part.bytes.len()
    }

    /// Holds row `i` of `p` (`n` cells, `pk` key cells); its number.
    pub(super) fn hold(&mut self, p: &PartRows, i: usize, n: usize, pk: usize) -> u32 {
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

    /// Forgets the rows held.
    pub(super) fn clear(&mut self) {
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
pub(super) struct Pending {
    /// Where the row of the first archive is, to order the changes.
    pub(super) a: Pos,
    pub(super) waiting: Side,
    pub(super) line: u32,
    pub(super) item: u32,
    pub(super) held: u32,
    /// The rows' digests are equal: the row changes only by a column of
    /// one side (see [`Pair::change`]).
    pub(super) same: bool,
}

/// The matched rows whose changes are yet to be made.
pub(super) struct Deferred {
    pub(super) pending: Vec<Pending>,
    pub(super) held_a: Held,
    pub(super) held_b: Held,
}

impl Deferred {
    /// Bytes of held rows at which the changes are made (in line order of
    /// the rows waiting so far) before more are held.
    const BYTES: usize = 16 << 20;

    /// Nothing pending.
    pub(super) fn new() -> Deferred {
        Deferred {
            pending: Vec::new(),
            held_a: Held::new(),
            held_b: Held::new(),
        }
    }

    /// Enough is held to make the pending changes now.
    pub(super) fn full(&self) -> bool {
        self.held_a.bytes() + self.held_b.bytes() >= Self::BYTES
    }

    /// Makes the pending changes into `acc`, each waiting row's line read
    /// again once, in line order.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn resolve(
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
            digest: None,
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
}
