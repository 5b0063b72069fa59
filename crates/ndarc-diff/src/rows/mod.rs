//! The row diff: a streaming merge join over the two sides' rows of a
//! table, falling back to a hash join over (key hash, row digest, line
//! offset) when a side's rows are out of key order.
//!
//! - [`stream`]: one side's stream of row parts, and re-reading a line;
//! - [`pair`]: how rows of a table pair are compared (digest, change);
//! - [`acc`]: the rows found added, removed and changed;
//! - [`hash`]: the hash join, with its indexes ([`index`]) and the
//!   matched rows whose changes are made late ([`held`]).

mod acc;
mod hash;
mod held;
mod index;
mod pair;
mod stream;

pub(crate) use pair::Pair;
pub(crate) use stream::Stream;

use acc::Acc;
use hash::hash_join;

use crate::model::TableDiff;
use crate::sink::Taker;
use crate::Error;

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
