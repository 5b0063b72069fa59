//! The defects a conforming producer refuses, and databases that hold one.

use ndarc_gen::{derive, Rng};

use super::draw::{fresh, swap_ascii_case};
use super::table::excluded_table;
use super::{generate, Cell, Column, ForeignKey, FuzzDb, FuzzOptions, Row, Table, EXCLUDED_NAMES};

/// A defect that makes a conforming producer refuse a database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Text that is not a number in a DATETIME (NUMBER) column.
    DatetimeText,
    /// An INTEGER cell beyond ±(2^53 − 1).
    UnsafeInteger,
    /// A virtual (FTS5) table.
    VirtualTable,
    /// A table whose projected column SQL passes D1's 100,000-byte limit.
    TooWide,
    /// A foreign key to a table the defaults exclude.
    ExcludedForeignKey,
    /// A table without a primary key whose columns shadow `rowid`,
    /// `_rowid_` and `oid`.
    RowidShadowed,
    /// A primary-key table whose columns shadow `rowid`, `_rowid_` and
    /// `oid` (the producer's copies cannot address its rows).
    CopyRowidShadowed,
}

impl Refusal {
    /// Every defect.
    pub const ALL: [Refusal; 7] = [
        Refusal::DatetimeText,
        Refusal::UnsafeInteger,
        Refusal::VirtualTable,
        Refusal::TooWide,
        Refusal::ExcludedForeignKey,
        Refusal::RowidShadowed,
        Refusal::CopyRowidShadowed,
    ];

    /// The code the seed's producer refuses it with (`catalogue.mjs`,
    /// `copies.mjs`).
    pub fn code(self) -> &'static str {
        match self {
            Refusal::DatetimeText => "row_type",
            Refusal::UnsafeInteger => "unsafe_integer",
            Refusal::VirtualTable => "virtual_table",
            Refusal::TooWide => "transfer_sql_limit",
            Refusal::ExcludedForeignKey => "excluded_foreign_key",
            Refusal::RowidShadowed => "unsupported_rowid",
            Refusal::CopyRowidShadowed => "unsupported_copy_rowid",
        }
    }

    /// A snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Refusal::DatetimeText => "datetime_text",
            Refusal::UnsafeInteger => "unsafe_integer",
            Refusal::VirtualTable => "virtual_table",
            Refusal::TooWide => "too_wide",
            Refusal::ExcludedForeignKey => "excluded_foreign_key",
            Refusal::RowidShadowed => "rowid_shadowed",
            Refusal::CopyRowidShadowed => "copy_rowid_shadowed",
        }
    }
}

/// Draws a database as [`generate`] does, then adds `defect`.
pub fn must_refuse(seed: u64, opts: &FuzzOptions, defect: Refusal) -> FuzzDb {
    let mut db = generate(seed, opts);
    let mut r = Rng::new(derive(seed, 0x7265));
    let taken: Vec<String> = db.spec.tables.iter().map(|t| t.name.clone()).collect();
    let name = fresh(&mut r, &["bad", "Refused", "zz_last", "A0"], &taken, "bad");
    let col = |name: &str, decl: &str| Column {
        name: name.to_string(),
        decl: decl.to_string(),
        not_null: false,
        generated: None,
    };
    let mut t = Table {
        name,
        columns: vec![col("id", "INTEGER"), col("v", "TEXT")],
        pk: Vec::new(),
        inline_pk: false,
        without_rowid: false,
        foreign_keys: Vec::new(),
        rows: Vec::new(),
        virtual_using: None,
        lower_keywords: false,
        sql: None,
    };
    let row = |cells: Vec<Cell>| Row {
        rowid: Some(1),
        cells,
    };
    match defect {
        Refusal::DatetimeText => {
            t.columns
                .push(col("at", r.pick(&["DATETIME", "datetime", "DATE"])));
            t.rows.push(row(vec![
                Cell::Int(1),
                Cell::Text("x".into()),
                Cell::Text(r.pick(&["2024-01-02 03:04:05", "yesterday", ""]).into()),
            ]));
        }
        Refusal::UnsafeInteger => {
            let v = r.pick(&[1i64 << 53, -(1 << 53), i64::MAX, i64::MIN]);
            t.rows.push(row(vec![Cell::Int(v), Cell::Text("x".into())]));
        }
        Refusal::VirtualTable => {
            t.columns.clear();
            t.virtual_using = Some("fts5(body)".to_string());
        }
        Refusal::TooWide => {
            // 250 columns of 400-byte names: about 101,250 bytes of
            // projected SQL, past 100,000 − 1024.
            t.columns = (0..250)
                .map(|i| col(&format!("w{i:03}_{}", "x".repeat(395)), "TEXT"))
                .collect();
            t.rows.push(row(vec![Cell::Null; 250]));
        }
        Refusal::ExcludedForeignKey => {
            let ex = match db
                .spec
                .tables
                .iter()
                .find(|t| EXCLUDED_NAMES.contains(&t.name.as_str()))
            {
                Some(x) => x.name.clone(),
                None => {
                    let x = excluded_table(&mut r, &taken);
                    let n = x.name.clone();
                    db.spec.tables.push(x);
                    n
                }
            };
            let written = if r.one_in(2) {
                swap_ascii_case(&ex)
            } else {
                ex
            };
            t.foreign_keys.push(ForeignKey {
                columns: vec!["id".to_string()],
                parent: written,
            });
            t.rows
                .push(row(vec![Cell::Int(1), Cell::Text("child".into())]));
        }
        Refusal::RowidShadowed | Refusal::CopyRowidShadowed => {
            t.columns = vec![
                col("ROWID", "INTEGER"),
                col("_rowid_", "TEXT"),
                col("oid", ""),
                col("v", "TEXT"),
            ];
            if defect == Refusal::CopyRowidShadowed {
                t.pk = vec!["v".to_string()];
                t.columns[3].not_null = true;
                t.without_rowid = r.one_in(2);
            }
            t.rows.push(Row {
                rowid: None,
                cells: vec![
                    Cell::Int(1),
                    Cell::Text("a".into()),
                    Cell::Blob(vec![1]),
                    Cell::Text("k".into()),
                ],
            });
        }
    }
    db.spec.tables.push(t);
    db.refusal = Some(defect);
    db
}
