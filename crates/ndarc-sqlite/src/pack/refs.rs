//! A bucket's `objectReferences` (the producer's `buckets: {name: {prefix,
//! objectReferences}}`): the bucket's objects are exactly the distinct
//! non-null values of `TABLE.COLUMN` as archived. The column is checked as
//! `catalogue.mjs` checks it (`reference_column_missing`,
//! `reference_column_excluded`), the rows as `checkReferences` in
//! `export.mjs` does (`object_references`), on pack's first pass: each row
//! of the table is looked up among the bucket's keys (already in memory),
//! and a bit per object says which were referenced. Nothing of the rows is
//! kept.

use ndarc_format::Affinity;
use rusqlite::types::ValueRef;

use super::catalogue::{Catalogue, Table};
use super::objects::Binary;
use super::refuse::refuse;
use super::rows::{place, RowCells};
use super::PackOptions;
use crate::Error;

/// One bucket's `objectReferences`: `TABLE.COLUMN` whose distinct non-null
/// values are the objects of `bucket`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectReferences {
    /// The bucket's binding.
    pub bucket: String,
    /// The table.
    pub table: String,
    /// The key column.
    pub column: String,
}

/// A reference resolved against the catalogue and the objects.
pub(super) struct Rule {
    bucket: String,
    /// Position of the table in the catalogue.
    table: usize,
    /// Position of the column among the table's archived cells.
    cell: usize,
    column: String,
    /// The bucket's keys, sorted by bytes.
    keys: Vec<String>,
    /// Whether each key of `keys` was referenced.
    seen: Vec<bool>,
}

/// Resolves `opts.object_references` (each bucket must be one being packed)
/// against the catalogue, before the buckets are listed (as
/// `catalogue.mjs` refuses before `createExport` lists them):
/// `reference_column_missing` when the table or column does not exist,
/// `reference_column_excluded` when the table is excluded or the column
/// secret (or generated: rows never carry it). [`Rule::keys`] then gives
/// each its bucket's keys.
pub(super) fn resolve(cat: &Catalogue, opts: &PackOptions) -> Result<Vec<Rule>, Error> {
    let mut rules = Vec::new();
    for (n, r) in opts.object_references.iter().enumerate() {
        let (b, t, c) = (&r.bucket, &r.table, &r.column);
        let flag = format!("--object-references {b}={t}.{c}");
        let packed = opts.bucket.as_deref() == Some(b.as_str())
            || opts.buckets.iter().any(|x| x.bucket == *b);
        if !packed {
            return Err(Error::Options(format!(
                "{flag}: no bucket {b} is packed (--bucket-dir {b}=DIR)"
            )));
        }
        if opts.object_references[..n].iter().any(|x| x.bucket == *b) {
            return Err(Error::Options(format!(
                "{flag}: bucket {b} has objectReferences twice"
            )));
        }
        let excluded = |why: String| {
            refuse(
                "reference_column_excluded",
                t,
                Some(c),
                None,
                format!(
                    "{flag}: {why}, so the archive cannot show which objects its rows reference"
                ),
            )
        };
        let Some(ti) = cat.tables.iter().position(|x| x.name == *t) else {
            if cat.excluded.contains(t) {
                return Err(excluded(format!(
                    "table {t} is excluded (include it with --include-table {t})"
                )));
            }
            return Err(refuse(
                "reference_column_missing",
                t,
                Some(c),
                None,
                format!("{flag}: the database has no table {t}"),
            ));
        };
        let table: &Table = &cat.tables[ti];
        let Some(ci) = table.columns.iter().position(|x| x.name == *c) else {
            return Err(refuse(
                "reference_column_missing",
                t,
                Some(c),
                None,
                format!("{flag}: table {t} has no column {c}"),
            ));
        };
        if opts
            .secret_columns
            .iter()
            .any(|(st, sc)| st == t && sc == c)
        {
            return Err(excluded(format!(
                "column {t}.{c} is a secret column (--secret-column)"
            )));
        }
        let Some(cell) = table.cells.iter().position(|&k| k == ci) else {
            return Err(excluded(format!(
                "column {t}.{c} is generated and rows do not carry it"
            )));
        };
        rules.push(Rule {
            bucket: b.clone(),
            table: ti,
            cell,
            column: c.clone(),
            keys: Vec::new(),
            seen: Vec::new(),
        });
    }
    Ok(rules)
}

impl Rule {
    /// Takes the keys of the rule's bucket from the listed `objects`.
    pub(super) fn keys(&mut self, objects: &[Binary]) {
        self.keys = objects
            .iter()
            .filter_map(|o| o.object.as_ref())
            .filter(|(bucket, _)| *bucket == self.bucket)
            .map(|(_, k)| k.clone())
            .collect();
        self.keys.sort_unstable();
        self.seen = vec![false; self.keys.len()];
    }
}

/// Checks one row of table `ti` (its `index` in row order) against the
/// rules on that table: a non-null value that is not a key of the bucket
/// is `object_references`.
pub(super) fn check_row<R: RowCells + ?Sized>(
    rules: &mut [Rule],
    tables: &[Table],
    ti: usize,
    row: &R,
    index: u64,
) -> Result<(), Error> {
    for r in rules.iter_mut().filter(|r| r.table == ti) {
        let t = &tables[ti];
        let v = row.cell(r.cell + 1)?;
        // What the row item holds: a string for text outside an
        // INTEGER-affinity column (which holds numbers).
        let affinity = t.columns[t.cells[r.cell]].affinity;
        let key = match v {
            ValueRef::Null => continue,
            ValueRef::Text(b) if affinity != Affinity::Integer => String::from_utf8_lossy(b),
            _ => return Err(refused(r, t, row, index, "is not text, so it is no object key (the bucket's objects are exactly the column's distinct non-null values)")),
        };
        match r
            .keys
            .binary_search_by(|k| k.as_bytes().cmp(key.as_bytes()))
        {
            Ok(k) => r.seen[k] = true,
            Err(_) => {
                let why = format!("references {key:?}, which is not an object of the bucket (add the file, or correct the row)");
                return Err(refused(r, t, row, index, &why));
            }
        }
    }
    Ok(())
}

/// The `object_references` refusal of the row's cell under rule `r`: the
/// value `why` (its place named first); or the error reading its rowid.
fn refused<R: RowCells + ?Sized>(r: &Rule, t: &Table, row: &R, index: u64, why: &str) -> Error {
    let rowid = match row.cell(0) {
        Ok(ValueRef::Integer(i)) => Some(i),
        Ok(_) => None,
        Err(e) => return e,
    };
    refuse(
        "object_references",
        &t.name,
        Some(&r.column),
        rowid,
        format!(
            "bucket {}: {}.{} {} {why}",
            r.bucket,
            t.name,
            r.column,
            place(rowid, index)
        ),
    )
}

/// Once every row was read: an object of a bucket that no row references
/// is `object_references`.
pub(super) fn finish(rules: &[Rule], tables: &[Table]) -> Result<(), Error> {
    for r in rules {
        let t = &tables[r.table];
        let unreferenced: Vec<&str> = r
            .keys
            .iter()
            .zip(&r.seen)
            .filter(|(_, &s)| !s)
            .map(|(k, _)| k.as_str())
            .collect();
        if let Some(first) = unreferenced.first() {
            let more = match unreferenced.len() {
                1 => String::new(),
                n => format!(" (and {} more)", n - 1),
            };
            return Err(refuse(
                "object_references",
                &t.name,
                Some(&r.column),
                None,
                format!(
                    "bucket {}: object {first:?}{more} is referenced by no row of {}.{} (remove the file, or reference it)",
                    r.bucket, t.name, r.column
                ),
            ));
        }
    }
    Ok(())
}
