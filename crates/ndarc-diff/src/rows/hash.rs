//! The hash join: the rest of a table once a side's rows are out of key
//! order (or a key was chosen), through indexes of (key hash → row digest,
//! position) on each side (40 bytes a waiting row, see [`Entry`]). Rows
//! found on both sides are compared by digest, and those that differ are
//! resolved late, in line order of the rows that waited (see
//! [`Deferred`]); the rest are added or removed. Results end in archive
//! order, as the merge gives them.

use std::collections::HashSet;

use super::acc::Acc;
use super::held::{Deferred, Pending};
use super::index::{trim, wide, Entry, Index, KeyHash, Lines};
use super::pair::{row_at, row_value, Pair};
use super::stream::Stream;
use crate::model::Side;
use crate::side::PartRows;
use crate::sink::Taker;
use crate::Error;

/// The rest of table `ta` of `a` and `tb` of `b` (see the module's doc),
/// into `acc`, which holds what the merge found before.
pub(super) fn hash_join(
    pair: &Pair<'_>,
    ta: Option<usize>,
    tb: Option<usize>,
    a: &mut Stream<'_, '_>,
    b: &mut Stream<'_, '_>,
    acc: &mut Acc,
    taker: &mut Taker<'_>,
) -> Result<(), Error> {
    let (ka, kb) = (pair.pk_a(), pair.pk_b());
    let mut join = Join::new(pair);
    join.index_merged((ta, tb), a, b, acc)?;
    loop {
        let mut progressed = false;
        if a.ready(ta)? {
            match (a.cur.as_ref(), tb) {
                (Some(pa), Some(_)) => join.probe_before(a, pa, acc)?,
                (Some(pa), None) => {
                    for i in a.pos..pa.rows.len() {
                        acc.remove(pa, i, pa.key(i, ka).text());
                    }
                }
                (None, _) => {}
            }
            a.pos = a.cur.as_ref().map_or(0, |p| p.rows.len());
            trim(&mut join.index_b);
            progressed = true;
        }
        if b.ready(tb)? {
            match (b.cur.as_ref(), ta) {
                (Some(pb), Some(_)) => join.probe_after(b, pb, acc, taker)?,
                (Some(pb), None) => {
                    for j in b.pos..pb.rows.len() {
                        acc.add(pb, j, pb.key(j, kb).text());
                        taker.added(pb, j)?;
                    }
                }
                (None, _) => {}
            }
            b.pos = b.cur.as_ref().map_or(0, |p| p.rows.len());
            trim(&mut join.index_a);
            progressed = true;
        }
        if join.later.full() {
            join.resolve((ta, tb), a, b, acc)?;
        }
        if !progressed {
            break;
        }
    }
    join.resolve((ta, tb), a, b, acc)?;
    join.left((ta, tb), a, b, acc, taker)?;
    acc.added.sort_by_key(|(p, _, _)| *p);
    acc.removed.sort_by_key(|(p, _, _)| *p);
    acc.changed.sort_by_key(|(p, _)| *p);
    Ok(())
}

/// A hash join under way: each side's index of the rows waiting for their
/// match and the lines they are on, the keys seen per side, and the
/// matched rows whose changes are made late.
struct Join<'p, 't> {
    pair: &'p Pair<'t>,
    index_a: Index,
    index_b: Index,
    lines_a: Lines,
    lines_b: Lines,
    /// Keys are checked to be unique on each side: only when chosen (a
    /// table's own key is unique, as verified).
    check: bool,
    seen_a: HashSet<u128>,
    seen_b: HashSet<u128>,
    later: Deferred,
}

impl<'p, 't> Join<'p, 't> {
    fn new(pair: &'p Pair<'t>) -> Self {
        Join {
            pair,
            index_a: Index::new(),
            index_b: Index::new(),
            lines_a: Lines::default(),
            lines_b: Lines::default(),
            check: pair.chosen_key(),
            seen_a: HashSet::new(),
            seen_b: HashSet::new(),
            later: Deferred::new(),
        }
    }

    /// Indexes what the merge called removed or added (taken from `acc`):
    /// it may yet match.
    fn index_merged(
        &mut self,
        (ta, tb): (Option<usize>, Option<usize>),
        a: &Stream<'_, '_>,
        b: &Stream<'_, '_>,
        acc: &mut Acc,
    ) -> Result<(), Error> {
        let pair = self.pair;
        for (side, list, index, lines, t, stream) in [
            (
                Side::Before,
                std::mem::take(&mut acc.removed),
                &mut self.index_a,
                &mut self.lines_a,
                ta,
                a,
            ),
            (
                Side::After,
                std::mem::take(&mut acc.added),
                &mut self.index_b,
                &mut self.lines_b,
                tb,
                b,
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
        Ok(())
    }

    /// Matches the rows left in `pa`, the current part of the first
    /// archive `a`, with the second's waiting rows; those unmatched wait.
    fn probe_before(
        &mut self,
        a: &Stream<'_, '_>,
        pa: &PartRows,
        acc: &mut Acc,
    ) -> Result<(), Error> {
        let pair = self.pair;
        let (ka, na) = (pair.pk_a(), pair.ncols_a());
        let check = self.check;
        for i in a.pos..pa.rows.len() {
            let kh = pa.key(i, ka).digest();
            if check && !self.seen_a.insert(kh) {
                return Err(twice(pair, a, pa.key(i, ka).text()));
            }
            let kh = KeyHash(wide(kh));
            let digest = wide(pair.digest(pa, i, Side::Before));
            let pos = (pa.offset, pa.rows[i].item);
            match self.index_b.remove(&kh) {
                Some(e) if e.digest == digest && !pair.shows_one_side() => {
                    if pair.shape {
                        acc.changed
                            .push((pos, Pair::columns_change(pa.key(i, ka).text())));
                    }
                }
                Some(e) => {
                    let held = self.later.held_a.hold(pa, i, na, ka);
                    self.later.pending.push(Pending {
                        a: pos,
                        waiting: Side::After,
                        line: e.line,
                        item: e.item,
                        held,
                        same: e.digest == digest,
                    });
                }
                None => {
                    let line = self.lines_a.number(pos.0);
                    self.index_a.insert(
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
        Ok(())
    }

    /// Matches the rows left in `pb`, the current part of the second
    /// archive `b`, with the first's waiting rows; those unmatched wait.
    /// Each row goes to the taker as read.
    ///
    /// [`Self::probe_before`] with the sides swapped, written out: a change
    /// is always placed at the first archive's row (here from the line
    /// table, there from the part at hand), only this side feeds the taker,
    /// and the two loops are the hot path of a shuffled diff.
    fn probe_after(
        &mut self,
        b: &Stream<'_, '_>,
        pb: &PartRows,
        acc: &mut Acc,
        taker: &mut Taker<'_>,
    ) -> Result<(), Error> {
        let pair = self.pair;
        let (kb, nb) = (pair.pk_b(), pair.ncols_b());
        let check = self.check;
        for j in b.pos..pb.rows.len() {
            taker.read(pb, j)?;
            let kh = pb.key(j, kb).digest();
            if check && !self.seen_b.insert(kh) {
                return Err(twice(pair, b, pb.key(j, kb).text()));
            }
            let kh = KeyHash(wide(kh));
            let digest = wide(pair.digest(pb, j, Side::After));
            let pos = (pb.offset, pb.rows[j].item);
            match self.index_a.remove(&kh) {
                Some(e) if e.digest == digest && !pair.shows_one_side() => {
                    if pair.shape {
                        let at = (self.lines_a.offset(e.line), e.item);
                        acc.changed
                            .push((at, Pair::columns_change(pb.key(j, kb).text())));
                    }
                }
                Some(e) => {
                    let held = self.later.held_b.hold(pb, j, nb, kb);
                    self.later.pending.push(Pending {
                        a: (self.lines_a.offset(e.line), e.item),
                        waiting: Side::Before,
                        line: e.line,
                        item: e.item,
                        held,
                        same: e.digest == digest,
                    });
                }
                None => {
                    let line = self.lines_b.number(pos.0);
                    self.index_b.insert(
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
        Ok(())
    }

    /// Makes the pending changes (see [`Deferred::resolve`]).
    fn resolve(
        &mut self,
        t: (Option<usize>, Option<usize>),
        a: &Stream<'_, '_>,
        b: &Stream<'_, '_>,
        acc: &mut Acc,
    ) -> Result<(), Error> {
        self.later
            .resolve(self.pair, t, a, b, (&self.lines_a, &self.lines_b), acc)
    }

    /// The rows still waiting, unmatched: removed from the first archive,
    /// added in the second; their keys re-read line by line (contents kept
    /// for all: the first in archive order are known only once sorted).
    fn left(
        self,
        (ta, tb): (Option<usize>, Option<usize>),
        a: &Stream<'_, '_>,
        b: &Stream<'_, '_>,
        acc: &mut Acc,
        taker: &mut Taker<'_>,
    ) -> Result<(), Error> {
        let (ka, kb) = (self.pair.pk_a(), self.pair.pk_b());
        let keep = acc.contents > 0;
        for (index, lines, t, stream, list, pk, side) in [
            (
                self.index_a,
                &self.lines_a,
                ta,
                a,
                &mut acc.removed,
                ka,
                Side::Before,
            ),
            (
                self.index_b,
                &self.lines_b,
                tb,
                b,
                &mut acc.added,
                kb,
                Side::After,
            ),
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
        Ok(())
    }
}

/// A key found twice on one side (only a chosen key can be).
fn twice(pair: &Pair<'_>, s: &Stream<'_, '_>, key: String) -> Error {
    Error::KeyNotUnique {
        side: s.side,
        name: s.name.clone(),
        table: pair.name.clone(),
        key,
    }
}
