//! The next version of a database, as a later export would see it.

use ndarc_format::Affinity;
use ndarc_gen::{derive, Rng};

use super::draw::{any_affinity, cell, decl, fresh, key_cell, TABLE_NAMES};
use super::table::table;
use super::{Cell, Column, DbSpec, FuzzOptions, Row, Table, EXCLUDED_NAMES};

/// The next version of a database, as a later export would see it: rows
/// deleted, cells changed, rows added (new keys and rowids), now and then a
/// table dropped, a column added (a new `CREATE TABLE`) or a table added.
/// Excluded and virtual tables are left alone.
pub fn variant(spec: &DbSpec, seed: u64, opts: &FuzzOptions) -> DbSpec {
    let mut r = Rng::new(derive(seed, 0x7661));
    let mut out = spec.clone();
    // The author's own tables (`--schema`) are left alone too: a changed
    // cell could break their CHECK constraints.
    let archived = |t: &Table| {
        t.virtual_using.is_none() && t.sql.is_none() && !EXCLUDED_NAMES.contains(&t.name.as_str())
    };
    let mut long_text = false;
    for t in out.tables.iter_mut().filter(|t| archived(t)) {
        // Deletions.
        let mut i = 0;
        while i < t.rows.len() {
            if r.one_in(5) {
                t.rows.remove(i);
            } else {
                i += 1;
            }
        }
        // Changes outside the key.
        let editable: Vec<usize> = (0..t.columns.len())
            .filter(|&c| t.columns[c].generated.is_none() && !t.pk.contains(&t.columns[c].name))
            .collect();
        for row in &mut t.rows {
            if !editable.is_empty() && r.one_in(3) {
                let c = r.pick(&editable);
                let col = &t.columns[c];
                row.cells[c] = cell(&mut r, Affinity::of(&col.decl), !col.not_null);
            }
        }
        // Additions, with keys and rowids no row has.
        let base = spec
            .tables
            .iter()
            .find(|s| s.name == t.name)
            .map_or(0, |s| s.rows.len());
        let mut used: Vec<i64> = t.rows.iter().filter_map(|x| x.rowid).collect();
        for k in 0..r.below(3) as usize {
            let i = base + k;
            let cells = t
                .columns
                .iter()
                .map(|c| {
                    if c.generated.is_some() {
                        Cell::Null
                    } else if let Some(pos) = t.pk.iter().position(|p| *p == c.name) {
                        key_cell(&mut r, Affinity::of(&c.decl), i, pos + 1 == t.pk.len())
                    } else {
                        cell(&mut r, Affinity::of(&c.decl), !c.not_null)
                    }
                })
                .collect();
            let rowid = loop {
                let id = r.range_i64(10_001, 20_000);
                if !used.contains(&id) {
                    used.push(id);
                    break id;
                }
            };
            t.rows.push(Row {
                rowid: Some(rowid),
                cells,
            });
        }
        // Now and then a new nullable column at the end.
        if r.one_in(6) {
            let taken: Vec<String> = t.columns.iter().map(|c| c.name.clone()).collect();
            let name = fresh(&mut r, &["added", "New", "extra"], &taken, "added");
            let a = any_affinity(&mut r);
            t.columns.push(Column {
                name,
                decl: decl(&mut r, a),
                not_null: false,
                generated: None,
            });
            for row in &mut t.rows {
                let v = cell(&mut r, a, true);
                row.cells.push(v);
            }
        }
    }
    if r.one_in(4) {
        let idx: Vec<usize> = (0..out.tables.len())
            .filter(|&i| archived(&out.tables[i]))
            .collect();
        if !idx.is_empty() {
            out.tables.remove(r.pick(&idx));
        }
    }
    if r.one_in(4) {
        let taken: Vec<String> = out.tables.iter().map(|t| t.name.clone()).collect();
        let name = fresh(&mut r, TABLE_NAMES, &taken, "t");
        let t = table(&mut r, name, &[], opts, &mut long_text);
        out.tables.push(t);
    }
    out
}
