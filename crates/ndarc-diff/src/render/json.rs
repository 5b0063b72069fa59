//! `--format json`: one JSON document, a superset of `diffArchives`'
//! result.

use ndarc_format::manifest::{Column, Generated, ObjectEntry, PayloadEntry};
use ndarc_json::{Object, OwnedValue, Value};

use crate::model::{
    object_key, payload_key, ArchiveInfo, Diff, EntryDiff, NameChanges, TableDiff, TableInfo,
};

use super::value::{gate, obj, s, strings};

fn num(n: u64) -> OwnedValue {
    Value::Number(n as f64)
}

fn names(c: &NameChanges) -> OwnedValue {
    obj(vec![
        ("added", strings(&c.added)),
        ("removed", strings(&c.removed)),
    ])
}

/// A column as the manifest writes it.
pub(crate) fn column(c: &Column) -> OwnedValue {
    let mut m = vec![
        ("name", s(&c.name)),
        ("type", s(&c.decl_type)),
        ("notnull", num(u64::from(c.notnull))),
        ("pk", num(u64::from(c.pk))),
    ];
    if let Some(g) = c.generated {
        m.push((
            "generated",
            s(match g {
                Generated::Virtual => "virtual",
                Generated::Stored => "stored",
            }),
        ));
    }
    obj(m)
}

fn pairs(p: &[(String, String)]) -> OwnedValue {
    let mut o = Object::new();
    for (k, v) in p {
        o.insert(k.clone(), s(v));
    }
    Value::Object(o)
}

/// An object entry as the manifest writes it.
pub(crate) fn object_entry(o: &ObjectEntry) -> OwnedValue {
    obj(vec![
        ("bucket", s(&o.bucket)),
        ("key", s(&o.key)),
        ("size", num(o.size)),
        ("sha256", s(&o.sha256)),
        ("httpMetadata", pairs(&o.http_metadata)),
        ("customMetadata", pairs(&o.custom_metadata)),
    ])
}

/// A payload entry as the manifest writes it.
pub(crate) fn payload_entry(p: &PayloadEntry) -> OwnedValue {
    obj(vec![
        ("name", s(&p.name)),
        ("size", num(p.size)),
        ("sha256", s(&p.sha256)),
    ])
}

fn keyed<T>(d: &EntryDiff<T>, key: impl Fn(&T) -> String) -> OwnedValue {
    let keys = |l: &[T]| Value::Array(l.iter().map(|e| s(&key(e))).collect());
    obj(vec![
        ("added", keys(&d.added)),
        ("removed", keys(&d.removed)),
        (
            "changed",
            Value::Array(d.changed.iter().map(|(b, _)| s(&key(b))).collect()),
        ),
    ])
}

fn detailed<T>(d: &EntryDiff<T>, entry: impl Fn(&T) -> OwnedValue) -> OwnedValue {
    let list = |l: &[T]| Value::Array(l.iter().map(&entry).collect());
    obj(vec![
        ("added", list(&d.added)),
        ("removed", list(&d.removed)),
        (
            "changed",
            Value::Array(
                d.changed
                    .iter()
                    .map(|(b, a)| obj(vec![("before", entry(b)), ("after", entry(a))]))
                    .collect(),
            ),
        ),
    ])
}

fn table(t: &TableDiff) -> OwnedValue {
    let mut m = vec![
        ("name", s(&t.name)),
        ("added", strings(&t.added)),
        ("removed", strings(&t.removed)),
        (
            "changed",
            Value::Array(t.changed.iter().map(|c| s(&c.key)).collect()),
        ),
        (
            "changedRows",
            Value::Array(
                t.changed
                    .iter()
                    .map(|c| {
                        obj(vec![
                            ("key", s(&c.key)),
                            ("columnsOnly", Value::Bool(c.columns_only)),
                            (
                                "cells",
                                Value::Array(
                                    c.cells
                                        .iter()
                                        .map(|x| {
                                            let mut m = vec![
                                                ("column", s(&x.column)),
                                                ("before", x.before.clone()),
                                                ("after", x.after.clone()),
                                            ];
                                            if let Some(side) = x.only {
                                                m.push(("columnOnlyIn", s(side.as_str())));
                                            }
                                            obj(m)
                                        })
                                        .collect(),
                                ),
                            ),
                        ])
                    })
                    .collect(),
            ),
        ),
    ];
    let contents = |keys: &[String], rows: &[OwnedValue]| {
        Value::Array(
            keys.iter()
                .zip(rows)
                .map(|(k, r)| obj(vec![("key", s(k)), ("row", r.clone())]))
                .collect(),
        )
    };
    m.push(("addedRows", contents(&t.added, &t.added_rows)));
    m.push(("removedRows", contents(&t.removed, &t.removed_rows)));
    let sc = t.scope.clone().unwrap_or_default();
    m.push((
        "columns",
        obj(vec![
            ("added", strings(&sc.only_after)),
            ("removed", strings(&sc.only_before)),
            (
                "renamed",
                Value::Array(
                    sc.renamed
                        .iter()
                        .map(|(b, a)| obj(vec![("before", s(b)), ("after", s(a))]))
                        .collect(),
                ),
            ),
        ]),
    ));
    if let Some(sc) = &t.scope {
        m.push((
            "comparedColumns",
            obj(vec![
                ("onlyBefore", strings(&sc.only_before)),
                ("onlyAfter", strings(&sc.only_after)),
                ("ignored", strings(&sc.ignored)),
            ]),
        ));
    }
    if t.unordered {
        m.push(("unordered", Value::Bool(true)));
    }
    obj(m)
}

fn table_info(t: &TableInfo) -> OwnedValue {
    obj(vec![
        ("name", s(&t.name)),
        ("sql", s(&t.sql)),
        (
            "columns",
            Value::Array(t.columns.iter().map(column).collect()),
        ),
        ("count", num(t.count)),
    ])
}

fn info(i: &ArchiveInfo) -> OwnedValue {
    obj(vec![
        ("name", s(&i.name)),
        ("product", s(&i.product)),
        ("exportedAt", s(&i.exported_at)),
        ("sourceIdentity", s(&i.source_identity)),
        ("schema", s(&i.schema)),
        ("contentHash", s(&i.content_hash)),
        ("archiveHash", s(&i.archive_hash)),
        ("partCount", num(i.part_count)),
        ("rows", num(i.rows)),
        ("warnings", num(i.warnings)),
    ])
}

fn opt_name(n: &Option<String>) -> OwnedValue {
    n.as_ref().map_or(Value::Null, |x| s(x))
}

/// The diff as a JSON value: `diffArchives`' members (`equal`, `product`,
/// `schemaChanged`, `tables[{name, added, removed, changed}]`, `objects`,
/// `payloads`, `configurationChanged`) plus `changedRows` (cells) per
/// table, `schema`, `objectChanges`, `payloadChanges`, `configuration`,
/// `excludedTables`, `excludedColumns`, `before`, `after`, `verified`,
/// `keysOnly`, `ignored`, `orderOnly`, `differences` and `stat` (counts,
/// see [`stat_value`](super::stat_value)). Each table also has
/// `addedRows` and `removedRows` (`{key, row}`: the contents kept),
/// `columns` (`added`, `removed`, `renamed[{before, after}]`: how the
/// rows' columns differ, which makes every row in both changed) and
/// `columnsOnly` on each changed row.
pub fn value(d: &Diff) -> OwnedValue {
    let schema = obj(vec![
        (
            "tablesAdded",
            Value::Array(d.schema.tables_added.iter().map(table_info).collect()),
        ),
        (
            "tablesRemoved",
            Value::Array(d.schema.tables_removed.iter().map(table_info).collect()),
        ),
        (
            "tablesChanged",
            Value::Array(
                d.schema
                    .tables_changed
                    .iter()
                    .map(|t| {
                        let mut m = vec![
                            ("name", s(&t.name)),
                            (
                                "columnsAdded",
                                Value::Array(t.columns_added.iter().map(column).collect()),
                            ),
                            (
                                "columnsRemoved",
                                Value::Array(t.columns_removed.iter().map(column).collect()),
                            ),
                            (
                                "columnsRenamed",
                                Value::Array(
                                    t.columns_renamed
                                        .iter()
                                        .map(|(b, a)| {
                                            obj(vec![("before", column(b)), ("after", column(a))])
                                        })
                                        .collect(),
                                ),
                            ),
                            (
                                "columnsChanged",
                                Value::Array(
                                    t.columns_changed
                                        .iter()
                                        .map(|c| {
                                            obj(vec![
                                                ("name", s(&c.name)),
                                                ("before", column(&c.before)),
                                                ("after", column(&c.after)),
                                            ])
                                        })
                                        .collect(),
                                ),
                            ),
                            ("dependencies", names(&t.dependencies)),
                            ("keyChanged", Value::Bool(t.key_changed)),
                        ];
                        if let Some((b, a)) = &t.rowid_alias {
                            m.push((
                                "rowidAlias",
                                obj(vec![("before", opt_name(b)), ("after", opt_name(a))]),
                            ));
                        }
                        if let Some(sql) = &t.sql {
                            m.push((
                                "sql",
                                obj(vec![
                                    ("before", s(&sql.before)),
                                    ("after", s(&sql.after)),
                                    (
                                        "diff",
                                        Value::Array(
                                            sql.lines
                                                .iter()
                                                .map(|(tag, l)| s(&format!("{tag}{l}")))
                                                .collect(),
                                        ),
                                    ),
                                ]),
                            ));
                        }
                        obj(m)
                    })
                    .collect(),
            ),
        ),
    ]);
    let mut v = obj(vec![
        ("equal", Value::Bool(d.equal)),
        ("product", s(&d.product)),
        ("schemaChanged", Value::Bool(d.schema_changed)),
        ("tables", Value::Array(d.tables.iter().map(table).collect())),
        ("objects", keyed(&d.objects, object_key)),
        ("payloads", keyed(&d.payloads, payload_key)),
        ("configurationChanged", Value::Bool(d.configuration_changed)),
        ("differences", Value::Bool(d.has_differences())),
        ("stat", super::stat::stat_value(d)),
        ("verified", Value::Bool(d.verified)),
        ("keysOnly", Value::Bool(d.keys_only)),
        ("orderOnly", Value::Bool(d.order_only)),
        ("before", info(&d.before)),
        ("after", info(&d.after)),
        ("schema", schema),
        ("objectChanges", detailed(&d.objects, object_entry)),
        ("payloadChanges", detailed(&d.payloads, payload_entry)),
        ("configuration", names(&d.configuration)),
        ("excludedTables", names(&d.excluded_tables)),
        (
            "excludedColumns",
            Value::Array(
                d.excluded_columns
                    .iter()
                    .map(|c| {
                        obj(vec![
                            ("table", s(&c.table)),
                            ("added", strings(&c.added)),
                            ("removed", strings(&c.removed)),
                        ])
                    })
                    .collect(),
            ),
        ),
        (
            "ignored",
            obj(vec![
                ("tablePatterns", strings(&d.ignored.table_patterns)),
                ("onlyTablePatterns", strings(&d.ignored.only_table_patterns)),
                ("columnPatterns", strings(&d.ignored.column_patterns)),
                ("objectPatterns", strings(&d.ignored.object_patterns)),
                ("payloadPatterns", strings(&d.ignored.payload_patterns)),
                ("tables", strings(&d.ignored.tables)),
                ("columns", strings(&d.ignored.columns)),
                ("objects", strings(&d.ignored.objects)),
                ("payloads", strings(&d.ignored.payloads)),
                ("keys", strings(&d.ignored.keys)),
            ]),
        ),
    ]);
    if let (Some(g), Value::Object(o)) = (&d.gate, &mut v) {
        o.insert("gate", gate(g));
    }
    v
}

/// Writes `v` as indented JSON (two spaces, members in canonical order,
/// strings and numbers exactly as RFC 8785 writes them), so that its
/// canonical form is `v`'s.
pub(crate) fn write_pretty(v: &Value<'_>, out: &mut Vec<u8>) {
    pretty(v, 0, out);
    out.push(b'\n');
}

fn indent(depth: usize, out: &mut Vec<u8>) {
    out.push(b'\n');
    out.resize(out.len() + 2 * depth, b' ');
}

fn pretty(v: &Value<'_>, depth: usize, out: &mut Vec<u8>) {
    match v {
        Value::Array(items) if !items.is_empty() => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                indent(depth + 1, out);
                pretty(item, depth + 1, out);
            }
            indent(depth, out);
            out.push(b']');
        }
        Value::Object(o) if !o.is_empty() => {
            out.push(b'{');
            for (i, (name, item)) in o.sorted().into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                indent(depth + 1, out);
                ndarc_json::write_string(name, out);
                out.extend_from_slice(b": ");
                pretty(item, depth + 1, out);
            }
            indent(depth, out);
            out.push(b'}');
        }
        other => ndarc_json::write_canonical(other, out),
    }
}
