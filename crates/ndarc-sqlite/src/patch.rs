//! SQL patches: the statements that turn the first archive's database into
//! the second's, as `sqldiff` writes them.
//!
//! From a [`Diff`] and the second archive, [`write_patch`] writes, after
//! `PRAGMA foreign_keys = OFF` and inside one transaction:
//!
//! 1. `DROP TABLE` for tables only in the first archive and for tables whose
//!    `sql` changed (SQLite's `ALTER TABLE` cannot reach every change a
//!    `CREATE TABLE` can make, and a table rebuilt from the second archive's
//!    `sql` holds exactly its definition);
//! 2. `DELETE` of removed rows, children before parents;
//! 3. `UPDATE` of the changed cells;
//! 4. `CREATE TABLE` for new and rebuilt tables, parents first;
//! 5. `INSERT` of added rows (all rows of new and rebuilt tables), parents
//!    first, with their rowids.
//!
//! Applied to a database that holds the first archive's content (`unpack`),
//! the result holds the second's. Rows are addressed by primary key, or by
//! rowid through the table's free alias.

use std::collections::{HashMap, HashSet};
use std::io::Write;

use base64::Engine as _;
use ndarc_diff::Diff;
use ndarc_json::Value;

/// Why a patch could not be written.
#[derive(Debug, thiserror::Error)]
pub enum PatchError {
    /// The second archive could not be read as one.
    #[error("the second archive: line {line}: {message}")]
    Archive {
        /// The 1-based line.
        line: u64,
        /// What is wrong.
        message: String,
    },
    /// Writing failed.
    #[error("cannot write the patch: {0}")]
    Io(#[from] std::io::Error),
}

use crate::quote as ident;

/// A cell as an SQL literal: `NULL`, a number, `'text'`, `X'blob'`.
pub fn literal(v: &Value<'_>) -> String {
    match v {
        Value::Null => "NULL".to_string(),
        Value::Bool(b) => if *b { "1" } else { "0" }.to_string(),
        Value::Number(n) => match v.as_safe_integer() {
            Some(i) => i.to_string(),
            None => ndarc_json::to_canonical_string(&Value::Number(*n)),
        },
        Value::String(s) => {
            if s.contains('\0') {
                // An SQL string literal ends at NUL; the bytes keep it.
                format!("CAST(X'{}' AS TEXT)", hex(s.as_bytes()))
            } else {
                format!("'{}'", s.replace('\'', "''"))
            }
        }
        Value::Object(o) => match o.get("blob").and_then(Value::as_str) {
            Some(b64) => match base64::engine::general_purpose::STANDARD.decode(b64) {
                Ok(bytes) => format!("X'{}'", hex(&bytes)),
                Err(_) => "NULL".to_string(),
            },
            None => "NULL".to_string(),
        },
        Value::Array(_) => "NULL".to_string(),
    }
}

fn hex(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len() * 2);
    for x in b {
        s.push_str(&format!("{x:02X}"));
    }
    s
}

/// What the patch needs of one table of the second archive.
#[derive(Debug, Clone)]
struct TableDef {
    sql: String,
    pk: Vec<String>,
    rowid_alias: Option<String>,
    dependencies: Vec<String>,
}

fn table_defs(manifest: &Value<'_>) -> HashMap<String, TableDef> {
    let mut out = HashMap::new();
    let Some(tables) = manifest.get("tables").and_then(Value::as_array) else {
        return out;
    };
    for t in tables {
        let Some(name) = t.get("name").and_then(Value::as_str) else {
            continue;
        };
        let mut pk: Vec<(f64, String)> = t
            .get("columns")
            .and_then(Value::as_array)
            .unwrap_or(&[])
            .iter()
            .filter_map(|c| {
                let p = c.get("pk")?.as_f64()?;
                (p > 0.0).then(|| Some((p, c.get("name")?.as_str()?.to_string())))?
            })
            .collect();
        pk.sort_by(|a, b| a.0.total_cmp(&b.0));
        out.insert(
            name.to_string(),
            TableDef {
                sql: t
                    .get("sql")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                pk: pk.into_iter().map(|(_, n)| n).collect(),
                rowid_alias: t
                    .get("rowidAlias")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                dependencies: t
                    .get("dependencies")
                    .and_then(Value::as_array)
                    .unwrap_or(&[])
                    .iter()
                    .filter_map(|d| d.as_str().map(str::to_string))
                    .collect(),
            },
        );
    }
    out
}

/// Table names, parents before children (cycles broken by name order).
fn parents_first(names: &[String], defs: &HashMap<String, TableDef>) -> Vec<String> {
    let mut sorted: Vec<&String> = names.iter().collect();
    sorted.sort_by(|a, b| ndarc_json::cmp_utf16(a, b));
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
fn where_key(def: &TableDef, key: &str) -> Option<String> {
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
fn key_of(def: &TableDef, row: &Value<'_>, rowid: Option<&Value<'_>>) -> Option<String> {
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

fn insert(table: &str, def: &TableDef, row: &Value<'_>, rowid: Option<&Value<'_>>) -> String {
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

/// Writes the SQL patch from the first archive to the second: `d` is their
/// diff, `after` the second archive (verified). Ignored tables and columns
/// are left out of the patch as they are out of the diff (whose
/// `--ignore-table`/`--ignore-column` options made `d`): no statement names
/// an ignored table, no `UPDATE` sets an ignored column and a `sql` change
/// that only ignored columns explain rebuilds nothing; a row inserted is
/// inserted whole, ignored columns included, since it had no value before.
pub fn write_patch(d: &Diff, after: &[u8], out: &mut dyn Write) -> Result<(), PatchError> {
    let mut lines = after.split(|&b| b == b'\n').filter(|l| !l.is_empty());
    let bad = |line: u64, message: &str| PatchError::Archive {
        line,
        message: message.to_string(),
    };
    let first = lines.next().ok_or_else(|| bad(1, "empty"))?;
    let manifest = ndarc_json::parse(first).map_err(|e| bad(1, &e.to_string()))?;
    let defs = table_defs(&manifest);

    let rebuilt: Vec<String> = d
        .schema
        .tables_changed
        .iter()
        .filter(|t| t.sql.is_some() || t.rowid_alias.is_some() || t.key_changed)
        .map(|t| t.name.clone())
        .collect();
    let created: Vec<String> = d
        .schema
        .tables_added
        .iter()
        .map(|t| t.name.clone())
        .chain(rebuilt.iter().cloned())
        .collect();
    let dropped: Vec<String> = d
        .schema
        .tables_removed
        .iter()
        .map(|t| t.name.clone())
        .chain(rebuilt.iter().cloned())
        .collect();
    let full: HashSet<&str> = created.iter().map(String::as_str).collect();

    writeln!(
        out,
        "-- ndarc diff --format sql: from {} to {}",
        d.before.name.replace('\n', " "),
        d.after.name.replace('\n', " ")
    )?;
    // Foreign keys are checked by the database the patch is applied to, not
    // row by row while it runs (archives need not satisfy them, and a
    // rebuilt parent is dropped before its rows come back); the pragma
    // has no effect inside a transaction, so it comes first.
    writeln!(out, "PRAGMA foreign_keys = OFF;")?;
    writeln!(out, "BEGIN TRANSACTION;")?;
    // Children before parents when dropping and deleting.
    let all_before: Vec<String> = d.tables.iter().map(|t| t.name.clone()).collect();
    for t in parents_first(&dropped, &defs).iter().rev() {
        writeln!(out, "DROP TABLE IF EXISTS {};", ident(t))?;
    }
    let changed_tables = parents_first(&all_before, &defs);
    for name in changed_tables.iter().rev() {
        if full.contains(name.as_str()) {
            continue;
        }
        let (Some(t), Some(def)) = (d.tables.iter().find(|t| &t.name == name), defs.get(name))
        else {
            continue;
        };
        for key in &t.removed {
            if let Some(w) = where_key(def, key) {
                writeln!(out, "DELETE FROM {} WHERE {w};", ident(name))?;
            }
        }
    }
    for name in &changed_tables {
        if full.contains(name.as_str()) {
            continue;
        }
        let (Some(t), Some(def)) = (d.tables.iter().find(|t| &t.name == name), defs.get(name))
        else {
            continue;
        };
        for ch in &t.changed {
            if ch.cells.is_empty() {
                continue;
            }
            let Some(w) = where_key(def, &ch.key) else {
                continue;
            };
            let set: Vec<String> = ch
                .cells
                .iter()
                .map(|c| format!("{} = {}", ident(&c.column), literal(&c.after)))
                .collect();
            writeln!(
                out,
                "UPDATE {} SET {} WHERE {w};",
                ident(name),
                set.join(", ")
            )?;
        }
    }
    for t in parents_first(&created, &defs) {
        if let Some(def) = defs.get(&t) {
            writeln!(out, "{};", def.sql)?;
        }
    }
    // Added rows: every row of created tables, the added keys elsewhere.
    let mut wanted: HashMap<&str, HashSet<&str>> = HashMap::new();
    for t in &d.tables {
        if !full.contains(t.name.as_str()) && !t.added.is_empty() {
            wanted.insert(
                t.name.as_str(),
                t.added.iter().map(String::as_str).collect(),
            );
        }
    }
    if !full.is_empty() || !wanted.is_empty() {
        // Rows come table by table in manifest order; INSERTs are kept per
        // table and written parents first.
        let mut inserts: HashMap<String, Vec<u8>> = HashMap::new();
        for (i, line) in lines.enumerate() {
            let n = i as u64 + 2;
            let rec = ndarc_json::parse(line).map_err(|e| bad(n, &e.to_string()))?;
            if rec.get("kind").and_then(Value::as_str) != Some("part") {
                continue;
            }
            let items = rec.get("items").and_then(Value::as_array).unwrap_or(&[]);
            for it in items {
                if it.get("kind").and_then(Value::as_str) != Some("row") {
                    break;
                }
                let (Some(table), Some(row)) =
                    (it.get("table").and_then(Value::as_str), it.get("row"))
                else {
                    continue;
                };
                let Some(def) = defs.get(table) else {
                    continue;
                };
                let rowid = it.get("rowid");
                let take = full.contains(table)
                    || wanted.get(table).is_some_and(|keys| {
                        key_of(def, row, rowid).is_some_and(|k| keys.contains(k.as_str()))
                    });
                if take {
                    inserts
                        .entry(table.to_string())
                        .or_default()
                        .extend_from_slice(insert(table, def, row, rowid).as_bytes());
                }
            }
        }
        let names: Vec<String> = inserts.keys().cloned().collect();
        for t in parents_first(&names, &defs) {
            if let Some(sql) = inserts.get(&t) {
                out.write_all(sql)?;
            }
        }
    }
    writeln!(out, "COMMIT;")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(json: &str) -> String {
        literal(&ndarc_json::parse(json.as_bytes()).unwrap())
    }

    #[test]
    fn literals() {
        assert_eq!(lit("null"), "NULL");
        assert_eq!(lit("-9007199254740991"), "-9007199254740991");
        assert_eq!(lit("1e+21"), "1e+21");
        assert_eq!(lit("5e-324"), "5e-324");
        assert_eq!(lit("0.1"), "0.1");
        assert_eq!(lit(r#""it's""#), "'it''s'");
        assert_eq!(lit(r#""a\u0000b""#), "CAST(X'610062' AS TEXT)");
        assert_eq!(lit(r#"{"blob":"AP8="}"#), "X'00FF'");
        assert_eq!(lit(r#"{"blob":""}"#), "X''");
    }

    #[test]
    fn parents_come_first_whatever_the_case() {
        let def = |deps: &[&str]| TableDef {
            sql: String::new(),
            pk: Vec::new(),
            rowid_alias: Some("rowid".into()),
            dependencies: deps.iter().map(|d| d.to_string()).collect(),
        };
        let defs: HashMap<String, TableDef> = [
            ("a".to_string(), def(&["Parent"])),
            ("parent".to_string(), def(&[])),
            ("z".to_string(), def(&["a"])),
        ]
        .into_iter()
        .collect();
        let names = vec!["z".to_string(), "a".to_string(), "parent".to_string()];
        assert_eq!(parents_first(&names, &defs), ["parent", "a", "z"]);
    }

    #[test]
    fn rows_are_addressed_by_key_or_rowid() {
        let rowid = TableDef {
            sql: String::new(),
            pk: Vec::new(),
            rowid_alias: Some("_rowid_".into()),
            dependencies: Vec::new(),
        };
        assert_eq!(where_key(&rowid, "-7").unwrap(), "_rowid_ = -7");
        let pk = TableDef {
            pk: vec!["a".into(), "b\"".into()],
            rowid_alias: None,
            ..rowid
        };
        assert_eq!(
            where_key(&pk, r#"[1,{"blob":"AA=="}]"#).unwrap(),
            r#""a" IS 1 AND "b""" IS X'00'"#
        );
    }
}
