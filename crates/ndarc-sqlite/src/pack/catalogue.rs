//! Reading the schema: which tables are archived, what each says, and the
//! refusals found there (SPEC.md §13.2, §13.3); the SELECT that reads a
//! table's rows in row order.

use ndarc_format::catalogue::{
    has_copy_rowid, is_name, matches_exclusion, projected_columns_len, rowid_alias, ROWID_ALIASES,
    TRANSFER_SQL_LIMIT, TRANSFER_SQL_RESERVE,
};
use ndarc_format::Affinity;
use ndarc_json::{cmp_utf16, write_string};
use rusqlite::types::ValueRef;
use rusqlite::Connection;

use crate::quote;

use super::devdata::dev_rules;
use super::refuse::{refuse, sql_error};
use super::table::DevRule;
pub(super) use super::table::{Column, Table};
use super::{PackOptions, DEFAULT_EXCLUDED_TABLES};
use crate::Error;

pub(super) struct Catalogue {
    pub(super) tables: Vec<Table>,
    pub(super) excluded: Vec<String>,
}

struct SchemaObject {
    pub(super) name: String,
    pub(super) sql: String,
    pub(super) kind: String,
}

/// A table's kind as `PRAGMA table_list` gives it: name, type (`shadow`
/// for a virtual table's own tables) and whether it is WITHOUT ROWID.
type TableKind = (String, String, bool);

pub(super) fn catalogue(conn: &Connection, opts: &PackOptions) -> Result<Catalogue, Error> {
    let objects = schema_objects(conn)?;
    let kinds = table_kinds(conn)?;
    let kind_of = |name: &str| kinds.iter().find(|k| k.0 == name);
    let excluded = excluded_tables(&objects, &kinds, opts);
    let mut entries: Vec<&SchemaObject> = objects
        .iter()
        .filter(|o| o.kind == "table" && !excluded.contains(&o.name))
        .collect();
    entries.sort_by(|a, b| cmp_utf16(&a.name, &b.name));

    let mut tables = Vec::new();
    for entry in entries {
        tables.push(read_table(
            conn,
            entry,
            kind_of(&entry.name),
            &objects,
            &excluded,
        )?);
    }
    check_named(&tables, opts)?;
    let minted = objects
        .iter()
        .any(|o| o.kind == "table" && o.name == "oa_dev_credentials");
    let rules = dev_rules(&tables, minted);
    for (t, rule) in tables.iter_mut().zip(rules) {
        t.dev = rule.unwrap_or_default();
    }
    for t in &mut tables {
        prepare_table(t, opts);
    }
    Ok(Catalogue { tables, excluded })
}

/// The schema's objects with SQL, by name.
fn schema_objects(conn: &Connection) -> Result<Vec<SchemaObject>, Error> {
    let mut objects: Vec<SchemaObject> = Vec::new();
    let mut st = conn
        .prepare(
            "SELECT name, sql, type FROM main.sqlite_schema WHERE sql IS NOT NULL ORDER BY name",
        )
        .map_err(sql_error)?;
    let mut rows = st.query([]).map_err(sql_error)?;
    while let Some(r) = rows.next().map_err(sql_error)? {
        objects.push(SchemaObject {
            name: text(r.get_ref(0).map_err(sql_error)?),
            sql: text(r.get_ref(1).map_err(sql_error)?),
            kind: text(r.get_ref(2).map_err(sql_error)?),
        });
    }
    Ok(objects)
}

/// PRAGMA table_list: `shadow` tables, and which are WITHOUT ROWID.
fn table_kinds(conn: &Connection) -> Result<Vec<TableKind>, Error> {
    let mut kinds: Vec<TableKind> = Vec::new();
    let mut st = conn
        .prepare("SELECT name, type, wr FROM pragma_table_list WHERE schema = 'main'")
        .map_err(sql_error)?;
    let mut rows = st.query([]).map_err(sql_error)?;
    while let Some(r) = rows.next().map_err(sql_error)? {
        let name = text(r.get_ref(0).map_err(sql_error)?);
        let kind = text(r.get_ref(1).map_err(sql_error)?);
        let wr: i64 = r.get(2).map_err(sql_error)?;
        kinds.push((name, kind, wr != 0));
    }
    Ok(kinds)
}

/// The tables left out (the defaults, `--exclude-table`, derived tables
/// and their shadow tables, less `--include-table`), in UTF-16 order.
fn excluded_tables(
    objects: &[SchemaObject],
    kinds: &[TableKind],
    opts: &PackOptions,
) -> Vec<String> {
    let kind_of = |name: &str| kinds.iter().find(|k| k.0 == name);
    let patterns: Vec<&str> = DEFAULT_EXCLUDED_TABLES
        .iter()
        .copied()
        .chain(opts.exclude_tables.iter().map(String::as_str))
        .collect();
    let is_excluded = |o: &SchemaObject| {
        o.kind == "table"
            && !opts.include_tables.contains(&o.name)
            && (patterns.iter().any(|p| matches_exclusion(&o.name, p))
                || opts.derived_tables.iter().any(|p| {
                    o.name == *p
                        || (kind_of(&o.name).is_some_and(|k| k.1 == "shadow")
                            && o.name.starts_with(&format!("{p}_")))
                }))
    };
    let mut excluded: Vec<String> = objects
        .iter()
        .filter(|o| is_excluded(o))
        .map(|o| o.name.clone())
        .collect();
    excluded.sort_by(|a, b| cmp_utf16(a, b));
    excluded
}

/// One archived table as the catalogue describes it, or the first refusal
/// found in it (in catalogue.mjs's order: virtual, columns, names, width,
/// foreign keys, rowid).
fn read_table(
    conn: &Connection,
    entry: &SchemaObject,
    kind: Option<&TableKind>,
    objects: &[SchemaObject],
    excluded: &[String],
) -> Result<Table, Error> {
    let name = &entry.name;
    let virtual_sql = {
        let words: Vec<&str> = entry.sql.split_whitespace().take(3).collect();
        words.len() == 3
            && words[0].eq_ignore_ascii_case("create")
            && words[1].eq_ignore_ascii_case("virtual")
            && words[2].eq_ignore_ascii_case("table")
    };
    let shadow = kind.is_some_and(|k| k.1 == "shadow");
    if virtual_sql || shadow {
        let what = if virtual_sql {
            "is a virtual table"
        } else {
            "is a shadow table of a virtual table"
        };
        return Err(refuse(
            "virtual_table",
            name,
            None,
            None,
            format!("table {name} {what}; exclude it (--exclude-table {name}) to pack the rest"),
        ));
    }
    let columns = columns_of(conn, name)?;
    check_names_and_width(name, &columns)?;
    let dependencies = dependencies_of(conn, name, objects)?;
    if let Some(parent) = dependencies.iter().find(|p| excluded.contains(p)) {
        return Err(refuse(
            "excluded_foreign_key",
            name,
            None,
            None,
            format!("table {name} has a foreign key to {parent}, which is excluded; include {parent} (--include-table {parent}) or exclude {name} too (--exclude-table {name})"),
        ));
    }
    let any_pk = columns.iter().any(|c| c.pk > 0);
    let names = columns.iter().map(|c| c.name.as_str());
    let Ok(alias) = rowid_alias(names.clone(), any_pk) else {
        return Err(refuse(
            "unsupported_rowid",
            name,
            None,
            None,
            format!("table {name} has no primary key and its columns shadow rowid, _rowid_ and oid, so its rowids cannot be read"),
        ));
    };
    if !has_copy_rowid(names) {
        return Err(refuse(
            "unsupported_copy_rowid",
            name,
            None,
            None,
            format!("the columns of table {name} shadow rowid, _rowid_ and oid; the producer's snapshot copy needs one of them"),
        ));
    }
    let without_rowid = kind.is_some_and(|k| k.2);
    Ok(Table {
        name: name.clone(),
        sql: entry.sql.clone(),
        columns,
        dependencies,
        rowid_alias: alias,
        without_rowid,
        cells: Vec::new(),
        sorted: Vec::new(),
        key_cells: Vec::new(),
        labels: Vec::new(),
        name_json: Vec::new(),
        dev: DevRule::default(),
        select: String::new(),
        count: 0,
    })
}

/// The columns of table `name` (`PRAGMA table_xinfo`), refusing hidden
/// columns other than generated ones and the reserved prefix.
fn columns_of(conn: &Connection, name: &str) -> Result<Vec<Column>, Error> {
    let mut columns = Vec::new();
    let mut st = conn
        .prepare("SELECT name, type, \"notnull\", pk, hidden FROM pragma_table_xinfo(?1, 'main')")
        .map_err(sql_error)?;
    let mut rows = st.query([name]).map_err(sql_error)?;
    while let Some(r) = rows.next().map_err(sql_error)? {
        let cname = text(r.get_ref(0).map_err(sql_error)?);
        let decl = text(r.get_ref(1).map_err(sql_error)?);
        let notnull: i64 = r.get(2).map_err(sql_error)?;
        let pk: i64 = r.get(3).map_err(sql_error)?;
        let hidden: i64 = r.get(4).map_err(sql_error)?;
        let generated = match hidden {
            0 => None,
            2 => Some("virtual"),
            3 => Some("stored"),
            _ => {
                return Err(refuse(
                    "unsupported_column",
                    name,
                    Some(&cname),
                    None,
                    format!("column {name}.{cname} is hidden (hidden = {hidden}); only ordinary and generated columns can be archived"),
                ))
            }
        };
        if cname.starts_with("rer_portability_") {
            return Err(refuse(
                "unsupported_column",
                name,
                Some(&cname),
                None,
                format!("column {name}.{cname} uses the reserved prefix rer_portability_"),
            ));
        }
        columns.push(Column {
            affinity: Affinity::of(&decl),
            name: cname,
            decl,
            notnull: notnull != 0,
            pk: u32::try_from(pk).unwrap_or(0),
            generated,
        });
    }
    Ok(columns)
}

/// Refuses a table or column name that is not a name, and a column list
/// too wide for the producer's SQL limit.
fn check_names_and_width(name: &str, columns: &[Column]) -> Result<(), Error> {
    if !is_name(name) {
        return Err(refuse(
            "invalid_name",
            name,
            None,
            None,
            format!(
                "table name {name:?} is not a name (1 to 512 UTF-16 units, no control characters)"
            ),
        ));
    }
    if let Some(c) = columns.iter().find(|c| !is_name(&c.name)) {
        return Err(refuse(
            "invalid_name",
            name,
            Some(&c.name),
            None,
            format!("column name {:?} of table {name} is not a name (1 to 512 UTF-16 units, no control characters)", c.name),
        ));
    }
    // Both the base cells and the encoded read must fit the SQL limit.
    let len = projected_columns_len(
        columns
            .iter()
            .map(|c| (c.name.as_str(), c.decl.as_str(), c.generated.is_some())),
    );
    if len + TRANSFER_SQL_RESERVE > TRANSFER_SQL_LIMIT {
        return Err(refuse(
            "transfer_sql_limit",
            name,
            None,
            None,
            format!(
                "table {name} is too wide: its column list takes {len} bytes of SQL, more than {} (the producer's statement limit less {TRANSFER_SQL_RESERVE})",
                TRANSFER_SQL_LIMIT - TRANSFER_SQL_RESERVE
            ),
        ));
    }
    Ok(())
}

/// The tables `name`'s foreign keys name, as the schema spells them, in
/// UTF-16 order.
fn dependencies_of(
    conn: &Connection,
    name: &str,
    objects: &[SchemaObject],
) -> Result<Vec<String>, Error> {
    let mut dependencies: Vec<String> = Vec::new();
    let mut st = conn
        .prepare("SELECT \"table\" FROM pragma_foreign_key_list(?1, 'main')")
        .map_err(sql_error)?;
    let mut rows = st.query([name]).map_err(sql_error)?;
    while let Some(r) = rows.next().map_err(sql_error)? {
        let parent = text(r.get_ref(0).map_err(sql_error)?);
        let parent = objects
            .iter()
            .find(|o| o.kind == "table" && o.name.eq_ignore_ascii_case(&parent))
            .map_or(parent, |o| o.name.clone());
        if !dependencies.contains(&parent) {
            dependencies.push(parent);
        }
    }
    dependencies.sort_by(|a, b| cmp_utf16(a, b));
    Ok(dependencies)
}

/// The tables and columns the options name: secret columns, then included
/// tables, as catalogue.mjs checks them.
fn check_named(tables: &[Table], opts: &PackOptions) -> Result<(), Error> {
    for (table, column) in &opts.secret_columns {
        let Some(t) = tables.iter().find(|t| t.name == *table) else {
            return Err(refuse(
                "secret_table_missing",
                table,
                Some(column),
                None,
                format!(
                    "secret column {table}.{column}: the database has no archived table {table}"
                ),
            ));
        };
        match t.columns.iter().find(|c| c.name == *column) {
            Some(c) if !c.notnull && c.pk == 0 && c.generated.is_none() => {}
            Some(_) => {
                return Err(refuse(
                    "invalid_secret_column",
                    table,
                    Some(column),
                    None,
                    format!("secret column {table}.{column} is NOT NULL, in the primary key or generated, so it cannot be left out"),
                ))
            }
            None => {
                return Err(refuse(
                    "invalid_secret_column",
                    table,
                    Some(column),
                    None,
                    format!("secret column {table}.{column}: table {table} has no column {column}"),
                ))
            }
        }
    }
    for table in &opts.include_tables {
        if !tables.iter().any(|t| t.name == *table) {
            return Err(refuse(
                "policy_table_missing",
                table,
                None,
                None,
                format!("--include-table {table}: the database has no such table"),
            ));
        }
    }
    Ok(())
}

pub(super) fn text(v: ValueRef<'_>) -> String {
    match v {
        ValueRef::Text(b) | ValueRef::Blob(b) => String::from_utf8_lossy(b).into_owned(),
        ValueRef::Integer(i) => i.to_string(),
        ValueRef::Real(f) => f.to_string(),
        ValueRef::Null => String::new(),
    }
}

fn prepare_table(t: &mut Table, opts: &PackOptions) {
    let secrets: Vec<&str> = opts
        .secret_columns
        .iter()
        .filter(|(tn, _)| *tn == t.name)
        .map(|(_, c)| c.as_str())
        .collect();
    t.cells = (0..t.columns.len())
        .filter(|&i| {
            let c = &t.columns[i];
            c.generated.is_none() && !secrets.contains(&c.name.as_str())
        })
        .collect();
    let mut sorted: Vec<usize> = (0..t.cells.len()).collect();
    sorted.sort_by(|&a, &b| cmp_utf16(&t.columns[t.cells[a]].name, &t.columns[t.cells[b]].name));
    t.sorted = sorted;
    let mut keys: Vec<(u32, usize)> = t
        .cells
        .iter()
        .enumerate()
        .filter(|(_, &ci)| t.columns[ci].pk > 0)
        .map(|(k, &ci)| (t.columns[ci].pk, k))
        .collect();
    keys.sort_unstable();
    t.key_cells = keys.into_iter().map(|(_, k)| k).collect();
    t.labels = t
        .cells
        .iter()
        .map(|&i| {
            let mut l = Vec::new();
            write_string(&t.columns[i].name, &mut l);
            l.push(b':');
            l
        })
        .collect();
    t.name_json.clear();
    write_string(&t.name, &mut t.name_json);
    // The rowid read: the table's alias, or for a rowid table with a primary
    // key the first free alias (for messages and ties), or none.
    let copy_alias = ROWID_ALIASES
        .iter()
        .find(|a| !t.columns.iter().any(|c| c.name.eq_ignore_ascii_case(a)));
    let rowid_expr = match (t.rowid_alias, t.without_rowid, copy_alias) {
        (Some(a), _, _) => quote(a),
        (None, false, Some(a)) => quote(a),
        _ => "NULL".to_string(),
    };
    // A column as read: itself, or its dropDevData rewrite.
    let expr = |i: usize| {
        t.dev
            .rewrite
            .iter()
            .find(|(j, _)| *j == i)
            .map_or_else(|| quote(&t.columns[i].name), |(_, e)| format!("({e})"))
    };
    let mut select = format!("SELECT {rowid_expr}");
    for &i in &t.cells {
        select.push(',');
        select.push_str(&expr(i));
    }
    select.push_str(" FROM main.");
    select.push_str(&quote(&t.name));
    if let Some(filter) = &t.dev.filter {
        select.push_str(" WHERE ");
        select.push_str(filter);
    }
    select.push_str(" ORDER BY ");
    let mut keys: Vec<usize> = (0..t.columns.len())
        .filter(|&i| t.columns[i].pk > 0)
        .collect();
    keys.sort_by_key(|&i| t.columns[i].pk);
    if keys.is_empty() {
        select.push_str(&rowid_expr);
    } else {
        // Primary-key order is SQLite's BINARY order of the key values (the
        // producer sorts a snapshot copy, which has no declared collation),
        // ties by rowid.
        let mut terms: Vec<String> = keys
            .iter()
            .map(|&i| format!("{} COLLATE BINARY", expr(i)))
            .collect();
        if rowid_expr != "NULL" {
            terms.push(rowid_expr.clone());
        }
        select.push_str(&terms.join(","));
    }
    t.select = select;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_as_catalogue_mjs() {
        assert!(matches_exclusion("SQLITE_sequence", "sqlite_%"));
        assert!(matches_exclusion("_CF_kv", "_cf_%"));
        assert!(!matches_exclusion("x_cf_kv", "_cf_%"));
        assert!(matches_exclusion("D1_Migrations", "d1_migrations"));
        assert!(!matches_exclusion("d1_migrations2", "d1_migrations"));
        // Only a trailing % is special; `_` is a plain character.
        assert!(!matches_exclusion("oaX", "oa_%"));
        assert!(matches_exclusion("anything", "%"));
    }
}
