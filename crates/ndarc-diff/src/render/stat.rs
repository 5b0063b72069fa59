//! `--stat`: counts per table and per column, in every format.

use std::io::{self, Write};

use ndarc_json::{cmp_utf16, OwnedValue, Value};

use super::{safe, summary, width, RenderOptions};
use crate::model::{Diff, EntryDiff, TableDiff};

/// Changed cells per column of a table, in column name (UTF-16) order
/// (empty with `keys_only`: cells were not kept).
pub(crate) fn column_counts(t: &TableDiff) -> Vec<(String, usize)> {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for c in t.changed.iter().flat_map(|r| &r.cells) {
        match counts.iter_mut().find(|(n, _)| *n == c.column) {
            Some((_, k)) => *k += 1,
            None => counts.push((c.column.clone(), 1)),
        }
    }
    counts.sort_by(|(x, _), (y, _)| cmp_utf16(x, y));
    counts
}

/// Entries added, removed and changed, and their bytes: the sizes of the
/// added entries, of the removed ones, and of the changed ones in the
/// second archive.
fn entry_counts<T>(e: &EntryDiff<T>, size: impl Fn(&T) -> u64) -> [u64; 6] {
    [
        e.added.len() as u64,
        e.removed.len() as u64,
        e.changed.len() as u64,
        e.added.iter().map(&size).sum(),
        e.removed.iter().map(&size).sum(),
        e.changed.iter().map(|(_, a)| size(a)).sum(),
    ]
}

/// The `(name, counts)` lines of `--stat`: per table with row changes
/// (`+added -removed ~changed`, and why rows changed by their columns),
/// per column with changed cells (`table.column`), then schema, objects
/// and payloads (with bytes), configuration and exclusions.
pub(crate) fn stat_lines(d: &Diff) -> Vec<(String, String)> {
    let mut rows: Vec<(String, String)> = Vec::new();
    for t in &d.tables {
        let mut c = format!(
            "+{} -{} ~{}",
            t.added.len(),
            t.removed.len(),
            t.changed.len()
        );
        if t.columns_differ() {
            c.push_str(&format!(" ({})", t.columns_reason()));
        }
        rows.push((t.name.clone(), c));
        for (col, n) in column_counts(t) {
            rows.push((
                format!("{}.{col}", t.name),
                format!("~{n} {}", if n == 1 { "cell" } else { "cells" }),
            ));
        }
    }
    let s = &d.schema;
    if s.has_changes() {
        rows.push((
            "(schema)".into(),
            format!(
                "+{} -{} ~{} tables",
                s.tables_added.len(),
                s.tables_removed.len(),
                s.tables_changed.len()
            ),
        ));
    }
    for (what, e) in [
        ("(objects)", entry_counts(&d.objects, |o| o.size)),
        ("(payloads)", entry_counts(&d.payloads, |p| p.size)),
    ] {
        if e[..3] != [0, 0, 0] {
            rows.push((
                what.into(),
                format!(
                    "+{} -{} ~{} (bytes: +{} -{} ~{})",
                    e[0], e[1], e[2], e[3], e[4], e[5]
                ),
            ));
        }
    }
    if d.configuration_changed || !d.configuration.is_empty() {
        rows.push((
            "(requiredConfiguration)".into(),
            format!(
                "+{} -{}",
                d.configuration.added.len(),
                d.configuration.removed.len()
            ),
        ));
    }
    if !d.excluded_tables.is_empty() {
        rows.push((
            "(excludedTables)".into(),
            format!(
                "+{} -{}",
                d.excluded_tables.added.len(),
                d.excluded_tables.removed.len()
            ),
        ));
    }
    for c in &d.excluded_columns {
        rows.push((
            format!("(excludedColumns of {})", c.table),
            format!("+{} -{}", c.added.len(), c.removed.len()),
        ));
    }
    rows
}

/// Writes one line per table with row changes (`name | +added -removed
/// ~changed`, with why rows changed by their columns), one per column with
/// changed cells (`table.column | ~N cells`), lines for schema, objects
/// and payloads (with bytes) and configuration when they changed, and the
/// summary line.
pub fn stat(d: &Diff, _opts: &RenderOptions, w: &mut dyn Write) -> io::Result<()> {
    let rows = stat_lines(d);
    let widest = rows
        .iter()
        .map(|(n, _)| width(&safe(n, false)))
        .max()
        .unwrap_or(0);
    for (n, c) in rows {
        let n = safe(&n, false);
        let pad = widest.saturating_sub(width(&n));
        writeln!(w, " {n}{} | {}", " ".repeat(pad), safe(&c, false))?;
    }
    writeln!(w, "{}", summary(d))?;
    if let Some(g) = &d.gate {
        for l in super::human::gate_lines(g) {
            writeln!(w, "{}", safe(&l, false))?;
        }
    }
    Ok(())
}

/// `--stat --format sql`: the [`stat`] lines as SQL comments (`-- `), a
/// script that changes nothing.
pub fn stat_sql(d: &Diff, opts: &RenderOptions, w: &mut dyn Write) -> io::Result<()> {
    let mut buf = Vec::new();
    stat(d, opts, &mut buf)?;
    writeln!(
        w,
        "-- ndarc diff --stat: from {} to {}",
        safe(&d.before.name, false),
        safe(&d.after.name, false)
    )?;
    for line in String::from_utf8_lossy(&buf).lines() {
        writeln!(w, "-- {line}")?;
    }
    Ok(())
}

fn num(n: u64) -> OwnedValue {
    Value::Number(n as f64)
}

fn obj(members: Vec<(&'static str, OwnedValue)>) -> OwnedValue {
    let mut o = ndarc_json::Object::new();
    for (n, v) in members {
        o.insert(n, v);
    }
    Value::Object(o)
}

/// The `stat` member of the JSON document: `tables[{name, added,
/// removed, changed, columnsOnly, columns[{name, changed}]}]`, `rows`
/// (totals), `schema` (`tablesAdded`, `tablesRemoved`, `tablesChanged`),
/// and `objects` and `payloads` (`added`, `removed`, `changed`,
/// `bytesAdded`, `bytesRemoved`, `bytesChanged`: the sizes of the added
/// entries, of the removed ones, and of the changed ones in the second
/// archive).
pub fn stat_value(d: &Diff) -> OwnedValue {
    let tables = d
        .tables
        .iter()
        .map(|t| {
            obj(vec![
                ("name", Value::String(t.name.clone().into())),
                ("added", num(t.added.len() as u64)),
                ("removed", num(t.removed.len() as u64)),
                ("changed", num(t.changed.len() as u64)),
                ("columnsOnly", num(t.columns_only() as u64)),
                (
                    "columns",
                    Value::Array(
                        column_counts(t)
                            .into_iter()
                            .map(|(c, n)| {
                                obj(vec![
                                    ("name", Value::String(c.into())),
                                    ("changed", num(n as u64)),
                                ])
                            })
                            .collect(),
                    ),
                ),
            ])
        })
        .collect();
    let (a, r, c) = d.row_totals();
    let entries = |e: [u64; 6]| {
        obj(vec![
            ("added", num(e[0])),
            ("removed", num(e[1])),
            ("changed", num(e[2])),
            ("bytesAdded", num(e[3])),
            ("bytesRemoved", num(e[4])),
            ("bytesChanged", num(e[5])),
        ])
    };
    obj(vec![
        ("tables", Value::Array(tables)),
        (
            "rows",
            obj(vec![
                ("added", num(a)),
                ("removed", num(r)),
                ("changed", num(c)),
            ]),
        ),
        (
            "schema",
            obj(vec![
                ("tablesAdded", num(d.schema.tables_added.len() as u64)),
                ("tablesRemoved", num(d.schema.tables_removed.len() as u64)),
                ("tablesChanged", num(d.schema.tables_changed.len() as u64)),
            ]),
        ),
        ("objects", entries(entry_counts(&d.objects, |o| o.size))),
        ("payloads", entries(entry_counts(&d.payloads, |p| p.size))),
    ])
}

/// `--stat --format json`: `{equal, product, differences, stat}`.
pub(crate) fn stat_json_value(d: &Diff) -> OwnedValue {
    let mut m = vec![
        ("equal", Value::Bool(d.equal)),
        ("product", Value::String(d.product.clone().into())),
        ("differences", Value::Bool(d.has_differences())),
        ("stat", stat_value(d)),
    ];
    if let Some(g) = &d.gate {
        m.push(("gate", super::value::gate(g)));
    }
    obj(m)
}
