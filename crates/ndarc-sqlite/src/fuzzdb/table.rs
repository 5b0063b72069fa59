//! Drawing one table: its columns, keys, foreign keys and rows.

use ndarc_format::Affinity;
use ndarc_gen::Rng;

use super::draw::{any_affinity, cell, decl, fresh, key_cell, swap_ascii_case, COLUMN_NAMES, SAFE};
use super::{quote, Cell, Column, ForeignKey, FuzzOptions, Generated, Row, Table, EXCLUDED_NAMES};

/// Draws one archivable table. The draws are made in a fixed order (keys,
/// shadowing columns, plain columns, generated columns, foreign keys,
/// rows): a seed draws the same table whatever else changes.
pub(super) fn table(
    r: &mut Rng,
    name: String,
    parents: &[(String, bool)],
    opts: &FuzzOptions,
    long_text: &mut bool,
) -> Table {
    let shape = r.below(6);
    // 0: rowid table without key; 1: INTEGER PRIMARY KEY; 2: single-column
    // key of any type; 3: composite key; 4, 5: WITHOUT ROWID.
    let mut columns: Vec<Column> = Vec::new();
    let mut taken: Vec<String> = Vec::new();
    let mut pk: Vec<String> = Vec::new();
    let mut inline_pk = false;
    let without_rowid = shape >= 4;
    let key_cols = match shape {
        0 => 0,
        1 | 2 => 1,
        3 => 2 + r.below(2) as usize,
        _ => 1 + r.below(2) as usize,
    };
    key_columns(r, shape, key_cols, &mut columns, &mut taken, &mut pk);
    if key_cols == 1 && !without_rowid && r.one_in(2) || shape == 1 {
        inline_pk = true;
    }
    // Shadowing columns on rowid tables (never all three).
    if shape == 0 || r.one_in(4) {
        shadow_columns(r, &mut columns, &mut taken);
    }
    for _ in 0..1 + r.below(6) {
        let a = any_affinity(r);
        let name = fresh(r, COLUMN_NAMES, &taken, "c");
        taken.push(name.clone());
        columns.push(Column {
            name,
            decl: decl(r, a),
            not_null: r.one_in(5),
            generated: None,
        });
    }
    if r.one_in(3) {
        generated_columns(r, &mut columns, &mut taken);
    }
    let foreign_keys = foreign_keys(r, parents, &columns, &pk);
    let rows = rows(r, &columns, &pk, opts, long_text);
    Table {
        name,
        columns,
        pk,
        inline_pk,
        without_rowid,
        foreign_keys,
        rows,
        virtual_using: None,
        lower_keywords: r.one_in(4),
        sql: None,
    }
}

/// The `key_cols` key columns of a table of `shape` (see [`table`]).
fn key_columns(
    r: &mut Rng,
    shape: u64,
    key_cols: usize,
    columns: &mut Vec<Column>,
    taken: &mut Vec<String>,
    pk: &mut Vec<String>,
) {
    for k in 0..key_cols {
        let a = if shape == 1 {
            Affinity::Integer
        } else {
            any_affinity(r)
        };
        let name = if k == 0 && r.one_in(2) {
            "id".to_string()
        } else {
            fresh(r, COLUMN_NAMES, taken, "k")
        };
        let decl = if shape == 1 {
            r.pick(&["INTEGER", "integer"]).to_string()
        } else {
            decl(r, a)
        };
        taken.push(name.clone());
        pk.push(name.clone());
        columns.push(Column {
            name,
            decl,
            // Keys of rowid tables may hold NULL in SQLite; a repeated NULL
            // key would make the archive invalid, so keys are NOT NULL
            // (or the rowid alias).
            not_null: shape != 1,
            generated: None,
        });
    }
}

/// Up to two columns named as SQLite's rowid aliases (never all three).
fn shadow_columns(r: &mut Rng, columns: &mut Vec<Column>, taken: &mut Vec<String>) {
    let shadows = ["rowid", "_rowid_", "oid", "ROWID", "Oid"];
    for _ in 0..r.below(3) {
        let s = r.pick(&shadows);
        let shadowed = ["rowid", "_rowid_", "oid"]
            .iter()
            .filter(|a| taken.iter().any(|t| t.eq_ignore_ascii_case(a)))
            .count();
        if shadowed < 2 && !taken.iter().any(|t| t.eq_ignore_ascii_case(s)) {
            taken.push(s.to_string());
            columns.push(Column {
                name: s.to_string(),
                decl: decl(r, Affinity::Integer),
                not_null: false,
                generated: None,
            });
        }
    }
}

/// One or two generated columns, each reading an earlier column with
/// functions that accept any value.
fn generated_columns(r: &mut Rng, columns: &mut Vec<Column>, taken: &mut Vec<String>) {
    for _ in 0..1 + r.below(2) {
        let src = quote(&r.pick_ref(columns).name);
        let expr = r
            .pick(&[
                "typeof({})",
                "length({})",
                "coalesce(hex({}), 'none')",
                "{} IS NULL",
            ])
            .replace("{}", &src);
        let name = fresh(r, &["g", "Gen", "derived"], taken, "g");
        taken.push(name.clone());
        columns.push(Column {
            name,
            decl: r.pick(&["", "TEXT", "INTEGER", "ANY"]).to_string(),
            not_null: false,
            generated: Some(Generated {
                expr,
                stored: r.one_in(2),
            }),
        });
    }
}

/// Now and then a foreign key to an earlier table, sometimes naming it in
/// another ASCII case.
fn foreign_keys(
    r: &mut Rng,
    parents: &[(String, bool)],
    columns: &[Column],
    pk: &[String],
) -> Vec<ForeignKey> {
    let mut foreign_keys = Vec::new();
    if !parents.is_empty() && r.one_in(2) {
        let (parent, _) = r.pick_ref(parents).clone();
        let plain: Vec<&Column> = columns
            .iter()
            .filter(|c| c.generated.is_none() && !pk.contains(&c.name))
            .collect();
        if !plain.is_empty() {
            let col = r.pick_ref(&plain).name.clone();
            let written = if r.one_in(2) {
                swap_ascii_case(&parent)
            } else {
                parent.clone()
            };
            foreign_keys.push(ForeignKey {
                columns: vec![col],
                parent: written,
            });
        }
    }
    foreign_keys
}

/// The rows: unique keys and rowids, now and then one long text (when
/// `long_text` is still owed).
fn rows(
    r: &mut Rng,
    columns: &[Column],
    pk: &[String],
    opts: &FuzzOptions,
    long_text: &mut bool,
) -> Vec<Row> {
    let n = if r.one_in(6) {
        0
    } else {
        r.below(opts.max_rows as u64 + 1) as usize
    };
    let mut rows = Vec::with_capacity(n);
    let mut rowids: Vec<i64> = Vec::new();
    for i in 0..n {
        let mut cells = Vec::with_capacity(columns.len());
        for c in columns {
            if c.generated.is_some() {
                cells.push(Cell::Null);
            } else if let Some(pos) = pk.iter().position(|p| *p == c.name) {
                cells.push(key_cell(r, Affinity::of(&c.decl), i, pos + 1 == pk.len()));
            } else {
                let mut v = cell(r, Affinity::of(&c.decl), !c.not_null);
                if *long_text && Affinity::of(&c.decl) == Affinity::Text {
                    *long_text = false;
                    let unit = r.pick(&["abc ", "é", "😀", "line\n"]);
                    let len = 16_384 + r.below(49_152) as usize;
                    v = Cell::Text(unit.repeat(len / unit.len() + 1));
                }
                cells.push(v);
            }
        }
        let rowid = loop {
            let id = match r.below(6) {
                0 => r.range_i64(-SAFE, SAFE),
                1 => r.pick(&[SAFE, -SAFE, 0, -1, 1]),
                _ => r.range_i64(1, 10_000),
            };
            if !rowids.contains(&id) {
                rowids.push(id);
                break id;
            }
        };
        rows.push(Row {
            rowid: Some(rowid),
            cells,
        });
    }
    rows
}

/// A table the producer's defaults exclude, holding rows it would refuse
/// if it archived them (text in a DATETIME column, an unsafe integer).
pub(super) fn excluded_table(r: &mut Rng, taken: &[String]) -> Table {
    let name = fresh(r, EXCLUDED_NAMES, taken, "oa_t");
    let bad = r.one_in(2);
    Table {
        name,
        columns: vec![
            Column {
                name: "at".to_string(),
                decl: "DATETIME".to_string(),
                not_null: false,
                generated: None,
            },
            Column {
                name: "n".to_string(),
                decl: "INTEGER".to_string(),
                not_null: false,
                generated: None,
            },
        ],
        pk: Vec::new(),
        inline_pk: false,
        without_rowid: false,
        foreign_keys: Vec::new(),
        rows: vec![Row {
            rowid: Some(1),
            cells: if bad {
                vec![
                    Cell::Text("2024-05-06 07:08:09".into()),
                    Cell::Int(i64::MAX),
                ]
            } else {
                vec![Cell::Real(1.5), Cell::Int(3)]
            },
        }],
        virtual_using: None,
        lower_keywords: false,
        sql: None,
    }
}
