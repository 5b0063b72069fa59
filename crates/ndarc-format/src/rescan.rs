//! Duplicate keys in a table out of key order (SPEC.md §5.3, §11).
//!
//! In key order, a repeated key is the previous row's, which the line rules
//! and the assembler see. Out of key order it can be anywhere, so after the
//! pass the table's parts are read again: [`part_keys`] gives each row's key
//! text and [`crate::key::key_digest`] in one pass over the line
//! (the fast path's scanner on a canonical line, one parse otherwise), and
//! [`rescan_duplicates`] keeps a set of digests.

use std::collections::{HashMap, HashSet};

use ndarc_json::{Locator, Value};

use crate::assemble::Collector;
use crate::code::Code;
use crate::finding::Finding;
use crate::key::{KeyCell, PartKey, PartKeys, RowKey};
use crate::plan::Plan;

/// The row keys of a part line of table `table`: what the duplicate
/// re-scan of a table out of key order needs. Lines that do not parse give
/// nothing (they were reported on the first pass). One pass over the line.
pub fn part_keys(plan: &Plan, table: usize, bytes: &[u8]) -> PartKeys {
    let Some(tp) = plan.tables.get(table) else {
        return PartKeys::default();
    };
    let mut out = PartKeys::new(tp.has_rowid);
    if crate::fast::keys(plan, table, bytes, &mut out).is_some() {
        return out;
    }
    let Ok(v) = ndarc_json::parse_with(bytes, plan.json) else {
        return out;
    };
    let Some(items) = v.value.get("items").and_then(Value::as_array) else {
        return out;
    };
    let member = if tp.has_rowid { "rowid" } else { "row" };
    // Items in order: the locator walks the line once.
    let mut locator = Locator::new(bytes);
    for (i, item) in items.iter().enumerate() {
        let key = if tp.has_rowid {
            item.get("rowid")
                .and_then(Value::as_safe_integer)
                .map(RowKey::Rowid)
        } else {
            item.get("row").and_then(|row| {
                tp.pk
                    .iter()
                    .map(|&c| {
                        row.get(&tp.columns[c].name)
                            .map(|v| KeyCell::of(v).into_owned())
                    })
                    .collect::<Option<Vec<_>>>()
                    .map(RowKey::Primary)
            })
        };
        if let Some(k) = key {
            let rel = locator
                .locate(&format!("/items/{i}/{member}"))
                .and_then(|o| u32::try_from(o).ok())
                .unwrap_or(0);
            out.push_key(i, rel, |buf| k.write_text(buf));
        }
    }
    out
}

/// Finds duplicate keys in a table whose rows are out of key order, from
/// the keys of its parts re-read in order: `parts` yields, per part, its
/// line, offset and keys. Reports each repeat (not those of neighbours,
/// which the first pass reports). Memory: one entry of 24 bytes (a 16-byte
/// digest and where it was first seen) per distinct key, plus the set's
/// overhead, and 8 bytes per part.
pub fn rescan_duplicates(
    table: &str,
    parts: impl Iterator<Item = (u64, u64, PartKeys)>,
    findings: &mut Collector,
) {
    let mut lines: Vec<u64> = Vec::new();
    let mut seen: HashMap<u128, (u32, u32)> = HashMap::new();
    let mut prev: Option<u128> = None;
    for (line, offset, keys) in parts {
        let part = u32::try_from(lines.len()).unwrap_or(u32::MAX);
        lines.push(line);
        let member = if keys.rowid { "rowid" } else { "row" };
        for k in keys.iter() {
            let d = k.digest;
            if let Some(&(first_part, first_item)) = seen.get(&d) {
                if prev != Some(d) {
                    let first_line = lines.get(first_part as usize).copied().unwrap_or(0);
                    findings.push(duplicate(
                        table,
                        line,
                        offset,
                        member,
                        &k,
                        (first_line, first_item),
                    ));
                }
            } else {
                seen.insert(d, (part, u32::try_from(k.item).unwrap_or(u32::MAX)));
            }
            prev = Some(d);
        }
    }
}

/// The `duplicate_row_key` finding of key `k` of the part on `line` at
/// `offset`, first used on line `first.0` (item `first.1`): the one wording
/// of both re-scans.
fn duplicate(
    table: &str,
    line: u64,
    offset: u64,
    member: &str,
    k: &PartKey,
    first: (u64, impl std::fmt::Display),
) -> Finding {
    let (first_line, first_item) = first;
    Finding::new(
        Code::DuplicateRowKey,
        line,
        offset + u64::from(k.offset),
        format!("/items/{}/{member}", k.item),
        format!(
            "row key {} of table {table:?} was already used on line {first_line} (item {first_item})",
            k.text
        ),
    )
}

/// What receives each part's line number, offset and keys.
pub(crate) type PartSink<'a> = &'a mut dyn FnMut(u64, u64, PartKeys);

/// [`rescan_duplicates`] in less memory, for a caller that can read the
/// parts twice and knows how many rows the first pass read (`rows`):
/// `each_part(f)` calls `f(line, offset, keys)` for each part,
/// the same parts each time. The first reading keeps 20 bytes per key (its
/// 16-byte digest and its number in the table) in one vector, sorted in
/// place afterwards so that a key's repeats are next to it. Only when a key
/// repeats (an error) are the parts read again, for the positions and
/// texts of the repeats. The same findings as [`rescan_duplicates`], in
/// the same order.
pub fn rescan_duplicates_twice(
    table: &str,
    rows: u64,
    each_part: &mut dyn FnMut(PartSink<'_>),
    findings: &mut Collector,
) {
    // [digest, high word first; number]: sorted, a key's repeats follow it
    // in table order. `rows` is what the first pass read, so reserving it
    // allocates nothing a file merely claims, and spares the vector's
    // doublings (old and new buffers together: up to 40 bytes a key).
    let mut keys: Vec<[u32; 5]> =
        Vec::with_capacity(usize::try_from(rows.min(u64::from(u32::MAX))).unwrap_or(0));
    each_part(&mut |_, _, pk| {
        for k in pk.iter() {
            let Ok(n) = u32::try_from(keys.len()) else {
                return;
            };
            let d = k.digest;
            keys.push([
                (d >> 96) as u32,
                (d >> 64) as u32,
                (d >> 32) as u32,
                d as u32,
                n,
            ]);
        }
    });
    keys.sort_unstable();
    // Each repeat → the key's first use. A repeat right after the same key
    // is a neighbour's, which the first pass reports.
    let mut repeats: HashMap<u32, u32> = HashMap::new();
    for group in keys.chunk_by(|a, b| a[..4] == b[..4]) {
        for w in group.windows(2) {
            if w[1][4] != w[0][4] + 1 {
                repeats.insert(w[1][4], group[0][4]);
            }
        }
    }
    drop(keys);
    if repeats.is_empty() {
        return;
    }
    let firsts: HashSet<u32> = repeats.values().copied().collect();
    let mut first_at: HashMap<u32, (u64, usize)> = HashMap::new();
    let mut n = 0u32;
    each_part(&mut |line, offset, pk| {
        let member = if pk.rowid { "rowid" } else { "row" };
        for k in pk.iter() {
            if firsts.contains(&n) {
                first_at.insert(n, (line, k.item));
            }
            if let Some(first) = repeats.get(&n) {
                let first = first_at.get(first).copied().unwrap_or((0, 0));
                findings.push(duplicate(table, line, offset, member, &k, first));
            }
            n = n.saturating_add(1);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parts of `keys` (key numbers; equal numbers are equal keys), cut
    /// every `per` keys.
    fn parts(keys: &[u32], per: usize) -> Vec<(u64, u64, PartKeys)> {
        keys.chunks(per)
            .enumerate()
            .map(|(i, chunk)| {
                let mut pk = PartKeys::default();
                for (j, k) in chunk.iter().enumerate() {
                    pk.push_key(j, 10 * j as u32, |b| {
                        b.extend_from_slice(format!("[\"key-{k}\"]").as_bytes())
                    });
                }
                (i as u64 + 2, 1000 * i as u64, pk)
            })
            .collect()
    }

    fn both(keys: &[u32], per: usize) -> (Vec<Finding>, Vec<Finding>) {
        let p = parts(keys, per);
        let mut once = Collector::new(usize::MAX);
        rescan_duplicates("t", p.clone().into_iter(), &mut once);
        let mut twice = Collector::new(usize::MAX);
        let mut readings = 0;
        rescan_duplicates_twice(
            "t",
            keys.len() as u64,
            &mut |f| {
                readings += 1;
                for (l, o, pk) in p.clone() {
                    f(l, o, pk)
                }
            },
            &mut twice,
        );
        // Read again only when a key repeats apart from its neighbour.
        assert_eq!(readings, if once.kept.is_empty() { 1 } else { 2 });
        (once.kept, twice.kept)
    }

    #[test]
    fn twice_finds_what_once_finds() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for round in 0..200 {
            let n = 1 + round % 60;
            let distinct = 1 + (round % 7) as u64 * n as u64 / 4;
            let keys: Vec<u32> = (0..n)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    (state % distinct) as u32
                })
                .collect();
            for per in [1, 3, 1000] {
                let (once, twice) = both(&keys, per);
                assert_eq!(once, twice, "{keys:?} in parts of {per}");
            }
        }
        // Neighbours only: nothing here, and no second reading.
        let (once, twice) = both(&[1, 1, 2, 3, 3, 3], 2);
        assert!(once.is_empty() && twice.is_empty());
        let (once, _) = both(&[5, 1, 5, 5, 1], 2);
        assert_eq!(once.len(), 2);
    }
}
