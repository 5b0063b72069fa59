//! The second archive's tables as the patch addresses them: their
//! definitions, dependency order, row keys and `INSERT`s.

use std::collections::{HashMap, HashSet};

use ndarc_format::Manifest;
use ndarc_json::Value;

use super::literal::literal;
use crate::quote as ident;

/// What the patch needs of one table of the second archive.
#[derive(Debug, Clone)]
pub(super) struct TableDef {
    pub(super) sql: String,
    pub(super) pk: Vec<String>,
    pub(super) rowid_alias: Option<String>,
    pub(super) dependencies: Vec<String>,
}

pub(super) fn table_defs(m: &Manifest) -> HashMap<String, TableDef> {
    m.tables
        .iter()
        .map(|t| {
            (
                t.name.clone(),
                TableDef {
                    sql: t.sql.clone(),
                    pk: t.primary_key().iter().map(|c| c.name.clone()).collect(),
                    // The alias is written bare: only SQLite's own names
                    // for the rowid are (a valid archive has no other).
                    rowid_alias: t.rowid_alias.as_ref().map(|a| {
                        if ["rowid", "_rowid_", "oid"]
                            .iter()
                            .any(|x| x.eq_ignore_ascii_case(a))
                        {
                            a.clone()
                        } else {
                            ident(a)
                        }
                    }),
                    dependencies: t.dependencies.clone(),
                },
            )
        })
        .collect()
}

/// Table names, parents before children (cycles broken by name order).
pub(super) fn parents_first(names: &[String], defs: &HashMap<String, TableDef>) -> Vec<String> {
    let mut sorted: Vec<&String> = names.iter().collect();
    sorted.sort_by(|a, b| ndarc_json::cmp_utf16(a, b));
    sorted.dedup();
    let mut out: Vec<String> = Vec::new();
    let mut done: HashSet<String> = HashSet::new();
    fn visit(
        n: &str,
        names: &[&String],
        defs: &HashMap<String, TableDef>,
        done: &mut HashSet<String>,
        stack: &mut Vec<String>,
        out: &mut Vec<String>,
    ) {
        if done.contains(n) || stack.iter().any(|s| s == n) {
            return;
        }
        stack.push(n.to_string());
        if let Some(d) = defs.get(n) {
            for p in &d.dependencies {
                if let Some(real) = names.iter().find(|x| x.eq_ignore_ascii_case(p)) {
                    visit(real, names, defs, done, stack, out);
                }
            }
        }
        stack.pop();
        if done.insert(n.to_string()) {
            out.push(n.to_string());
        }
    }
    let mut stack = Vec::new();
    for n in &sorted {
        visit(n, &sorted, defs, &mut done, &mut stack, &mut out);
    }
    out
}

/// `WHERE` for the row with key text `key` (`[1,"a"]` or a rowid).
pub(super) fn where_key(def: &TableDef, key: &str) -> Option<String> {
    if let Some(alias) = &def.rowid_alias {
        let id: i64 = key.parse().ok()?;
        return Some(format!("{alias} = {id}"));
    }
    let v = ndarc_json::parse(key.as_bytes()).ok()?;
    let vals = v.as_array()?;
    if vals.len() != def.pk.len() {
        return None;
    }
    Some(
        def.pk
            .iter()
            .zip(vals)
            .map(|(c, v)| format!("{} IS {}", ident(c), literal(v)))
            .collect::<Vec<_>>()
            .join(" AND "),
    )
}

/// The key text of a row item, as `diff` keys rows.
pub(super) fn key_of(def: &TableDef, row: &Value<'_>, rowid: Option<&Value<'_>>) -> Option<String> {
    if def.rowid_alias.is_some() {
        return rowid
            .and_then(Value::as_safe_integer)
            .map(|i| i.to_string());
    }
    let vals: Vec<Value<'_>> = def
        .pk
        .iter()
        .map(|c| row.get(c).cloned().unwrap_or(Value::Null))
        .collect();
    Some(ndarc_json::to_canonical_string(&Value::Array(vals)))
}

pub(super) fn insert(
    table: &str,
    def: &TableDef,
    row: &Value<'_>,
    rowid: Option<&Value<'_>>,
) -> String {
    let mut cols = Vec::new();
    let mut vals = Vec::new();
    if let Some(o) = row.as_object() {
        for (name, v) in o.sorted() {
            cols.push(ident(name));
            vals.push(literal(v));
        }
    }
    if let (Some(alias), Some(id)) = (&def.rowid_alias, rowid) {
        cols.push(alias.clone());
        vals.push(literal(id));
    }
    format!(
        "INSERT INTO {}({}) VALUES({});\n",
        ident(table),
        cols.join(","),
        vals.join(",")
    )
}
