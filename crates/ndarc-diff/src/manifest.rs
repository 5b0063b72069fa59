//! Differences the two manifests alone decide: schema, objects, payloads,
//! exclusions and configuration.

use std::collections::{HashMap, HashSet};

use ndarc_format::manifest::{Column, Manifest, ObjectEntry, PayloadEntry, Table};
use ndarc_json::cmp_utf16;

use crate::model::{
    ColumnChange, Diff, EntryDiff, ExcludedColumnsChange, NameChanges, SqlDiff, TableInfo,
    TableSchemaChange,
};
use crate::Matcher;

/// Names in `after` not in `before` and the reverse, each in its own order.
fn name_changes<'a>(
    before: impl Iterator<Item = &'a String> + Clone,
    after: impl Iterator<Item = &'a String> + Clone,
    keep: impl Fn(&str) -> bool,
) -> NameChanges {
    let b: HashSet<&str> = before.clone().map(String::as_str).collect();
    let a: HashSet<&str> = after.clone().map(String::as_str).collect();
    let mut seen_added = HashSet::new();
    let mut seen_removed = HashSet::new();
    NameChanges {
        added: after
            .filter(|n| !b.contains(n.as_str()) && keep(n) && seen_added.insert(n.as_str()))
            .cloned()
            .collect(),
        removed: before
            .filter(|n| !a.contains(n.as_str()) && keep(n) && seen_removed.insert(n.as_str()))
            .cloned()
            .collect(),
    }
}

fn table_info(t: &Table) -> TableInfo {
    TableInfo {
        name: t.name.clone(),
        sql: t.sql.clone(),
        columns: t.columns.clone(),
        count: t.count,
    }
}

fn key_columns(t: &Table) -> Vec<String> {
    t.primary_key().iter().map(|c| c.name.clone()).collect()
}

/// The `sql` line diff.
pub(crate) fn sql_diff(before: &str, after: &str) -> SqlDiff {
    let diff = similar::TextDiff::from_lines(before, after);
    let lines = diff
        .iter_all_changes()
        .map(|c| {
            let tag = match c.tag() {
                similar::ChangeTag::Equal => ' ',
                similar::ChangeTag::Delete => '-',
                similar::ChangeTag::Insert => '+',
            };
            (tag, c.value().trim_end_matches('\n').to_string())
        })
        .collect();
    SqlDiff {
        before: before.to_string(),
        after: after.to_string(),
        lines,
    }
}

/// Columns renamed between two definitions of a table, `(before, after)`:
/// both tables have as many columns, and at some position a column only
/// `a` has and a column only `b` has (by name) share their type,
/// `notnull`, `pk` and `generated` — what `ALTER TABLE … RENAME COLUMN`
/// leaves. Ignored columns are never paired.
pub(crate) fn renamed_columns<'t>(
    a: &'t Table,
    b: &'t Table,
    m: &Matcher,
) -> Vec<(&'t Column, &'t Column)> {
    if a.columns.len() != b.columns.len() {
        return Vec::new();
    }
    let in_a: HashSet<&str> = a.columns.iter().map(|c| c.name.as_str()).collect();
    let in_b: HashSet<&str> = b.columns.iter().map(|c| c.name.as_str()).collect();
    a.columns
        .iter()
        .zip(&b.columns)
        .filter(|(x, y)| {
            x.name != y.name
                && !in_b.contains(x.name.as_str())
                && !in_a.contains(y.name.as_str())
                && x.decl_type == y.decl_type
                && x.notnull == y.notnull
                && x.pk == y.pk
                && x.generated == y.generated
                && !m.column_ignored(&a.name, &x.name)
                && !m.column_ignored(&a.name, &y.name)
        })
        .collect()
}

fn table_change(a: &Table, b: &Table, m: &Matcher) -> TableSchemaChange {
    let ignored = |c: &str| m.column_ignored(&a.name, c);
    let by_name: HashMap<&str, &Column> = a.columns.iter().map(|c| (c.name.as_str(), c)).collect();
    let b_names: HashSet<&str> = b.columns.iter().map(|c| c.name.as_str()).collect();
    let mut ch = TableSchemaChange {
        name: a.name.clone(),
        ..TableSchemaChange::default()
    };
    for c in &b.columns {
        if ignored(&c.name) {
            continue;
        }
        match by_name.get(c.name.as_str()) {
            None => ch.columns_added.push(c.clone()),
            Some(old) if *old != c => ch.columns_changed.push(ColumnChange {
                name: c.name.clone(),
                before: (*old).clone(),
                after: c.clone(),
            }),
            Some(_) => {}
        }
    }
    for c in &a.columns {
        if !b_names.contains(c.name.as_str()) && !ignored(&c.name) {
            ch.columns_removed.push(c.clone());
        }
    }
    for (x, y) in renamed_columns(a, b, m) {
        ch.columns_removed.retain(|c| c.name != x.name);
        ch.columns_added.retain(|c| c.name != y.name);
        ch.columns_renamed.push((x.clone(), y.clone()));
    }
    ch.dependencies = name_changes(a.dependencies.iter(), b.dependencies.iter(), |n| {
        !m.table_ignored(n)
    });
    if a.rowid_alias != b.rowid_alias {
        ch.rowid_alias = Some((a.rowid_alias.clone(), b.rowid_alias.clone()));
    }
    ch.key_changed =
        key_columns(a) != key_columns(b) || a.rowid_alias.is_some() != b.rowid_alias.is_some();
    // A `sql` change that only ignored columns explain is ignored with them.
    if a.sql != b.sql && !(ch.is_empty() && m.ignored_columns_differ(a, b)) {
        ch.sql = Some(sql_diff(&a.sql, &b.sql));
    }
    ch
}

/// Fills the manifest-level members of `d`.
/// A manifest's excluded columns by table, for a lookup per table (the
/// first entry of a name, as `Manifest::excluded_columns_of` finds).
fn excluded_by_table(m: &Manifest) -> HashMap<&str, &[String]> {
    let mut map: HashMap<&str, &[String]> = HashMap::new();
    for (t, cols) in &m.excluded_columns {
        map.entry(t.as_str()).or_insert(cols.as_slice());
    }
    map
}

pub(crate) fn diff_manifests(a: &Manifest, b: &Manifest, m: &Matcher, d: &mut Diff) {
    // Tables.
    let b_tables: HashMap<&str, &Table> = b.tables.iter().map(|t| (t.name.as_str(), t)).collect();
    let a_tables: HashMap<&str, &Table> = a.tables.iter().map(|t| (t.name.as_str(), t)).collect();
    let mut raw_schema_change = false;
    for t in &a.tables {
        if m.table_ignored(&t.name) {
            continue;
        }
        match b_tables.get(t.name.as_str()) {
            None => {
                d.schema.tables_removed.push(table_info(t));
                raw_schema_change = true;
            }
            Some(bt) => {
                let ch = table_change(t, bt, m);
                if ch.sql.is_some() {
                    raw_schema_change = true;
                }
                if !ch.is_empty() {
                    d.schema.tables_changed.push(ch);
                }
            }
        }
    }
    for t in &b.tables {
        if !m.table_ignored(&t.name) && !a_tables.contains_key(t.name.as_str()) {
            d.schema.tables_added.push(table_info(t));
            raw_schema_change = true;
        }
    }
    d.schema_changed = a.schema != b.schema && raw_schema_change;

    // Objects and payloads, by the keys diffArchives uses.
    // Ignored entries are left out first.
    let kept = |l: &[ObjectEntry]| -> Vec<ObjectEntry> {
        l.iter().filter(|o| !m.object_ignored(o)).cloned().collect()
    };
    d.objects = entries(&kept(&a.objects), &kept(&b.objects), |o| {
        (o.bucket.clone(), o.key.clone())
    });
    let kept = |l: &[PayloadEntry]| -> Vec<PayloadEntry> {
        l.iter()
            .filter(|p| !m.payload_ignored(p))
            .cloned()
            .collect()
    };
    d.payloads = entries(&kept(&a.payloads), &kept(&b.payloads), |p| {
        (p.name.clone(), String::new())
    });
    let mut names: Vec<String> = a
        .objects
        .iter()
        .chain(&b.objects)
        .filter(|o| m.object_ignored(o))
        .map(|o| format!("{}/{}", o.bucket, o.key))
        .collect();
    names.sort_by(|x, y| cmp_utf16(x, y));
    names.dedup();
    d.ignored.objects = names;
    let mut names: Vec<String> = a
        .payloads
        .iter()
        .chain(&b.payloads)
        .filter(|p| m.payload_ignored(p))
        .map(|p| p.name.clone())
        .collect();
    names.sort_by(|x, y| cmp_utf16(x, y));
    names.dedup();
    d.ignored.payloads = names;

    // Configuration and exclusions.
    // The canonical JSON of two lists of strings is equal exactly when the
    // lists are: compared as they are, without writing them out.
    d.configuration_changed = a.required_configuration != b.required_configuration;
    d.configuration = name_changes(
        a.required_configuration.iter(),
        b.required_configuration.iter(),
        |_| true,
    );
    d.excluded_tables = name_changes(a.excluded_tables.iter(), b.excluded_tables.iter(), |n| {
        !m.table_ignored(n)
    });
    let mut tables: Vec<&str> = a
        .excluded_columns
        .iter()
        .chain(&b.excluded_columns)
        .map(|(t, _)| t.as_str())
        .filter(|t| !m.table_ignored(t))
        .collect();
    tables.sort_by(|x, y| cmp_utf16(x, y));
    tables.dedup();
    let (ea, eb) = (excluded_by_table(a), excluded_by_table(b));
    for t in tables {
        let c = name_changes(
            ea.get(t).copied().unwrap_or_default().iter(),
            eb.get(t).copied().unwrap_or_default().iter(),
            |c| !m.column_ignored(t, c),
        );
        if !c.is_empty() {
            d.excluded_columns.push(ExcludedColumnsChange {
                table: t.to_string(),
                added: c.added,
                removed: c.removed,
            });
        }
    }

    // What the patterns matched.
    let mut ignored_tables: Vec<String> = a
        .tables
        .iter()
        .chain(&b.tables)
        .map(|t| t.name.clone())
        .chain(a.excluded_tables.iter().chain(&b.excluded_tables).cloned())
        .filter(|n| m.table_ignored(n))
        .collect();
    ignored_tables.sort_by(|x, y| cmp_utf16(x, y));
    ignored_tables.dedup();
    d.ignored.tables = ignored_tables;
    let mut ignored_columns: Vec<String> = a
        .tables
        .iter()
        .chain(&b.tables)
        .filter(|t| !m.table_ignored(&t.name))
        .flat_map(|t| {
            t.columns
                .iter()
                .filter(|c| m.column_ignored(&t.name, &c.name))
                .map(|c| format!("{}.{}", t.name, c.name))
                .collect::<Vec<_>>()
        })
        .collect();
    ignored_columns.sort_by(|x, y| cmp_utf16(x, y));
    ignored_columns.dedup();
    d.ignored.columns = ignored_columns;
}

fn entries<T: Clone + PartialEq>(
    a: &[T],
    b: &[T],
    key: impl Fn(&T) -> (String, String),
) -> EntryDiff<T> {
    let bm: HashMap<(String, String), &T> = b.iter().map(|e| (key(e), e)).collect();
    let am: HashMap<(String, String), &T> = a.iter().map(|e| (key(e), e)).collect();
    let mut d = EntryDiff::default();
    for e in a {
        match bm.get(&key(e)) {
            None => d.removed.push(e.clone()),
            Some(other) if *other != e => d.changed.push((e.clone(), (*other).clone())),
            Some(_) => {}
        }
    }
    for e in b {
        if !am.contains_key(&key(e)) {
            d.added.push(e.clone());
        }
    }
    d
}
