//! The rules of `tables`, their columns, `excludedTables` and
//! `excludedColumns` (SPEC.md §4.2–4.4).

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use ndarc_json::{cmp_utf16, Value};

use crate::catalogue;
use crate::code::Code;
use crate::report::{join, LineReport};

use super::lazy::{List, Members};
use super::*;

const TABLE_MEMBERS: [&str; 6] = [
    "columns",
    "count",
    "dependencies",
    "name",
    "rowidAlias",
    "sql",
];
const COLUMN_MEMBERS: [&str; 4] = ["name", "notnull", "pk", "type"];

/// The tables, and the schema identity of their names and SQL as written
/// when every table has both as strings.
pub(super) fn check_tables(
    list: List<'_, '_>,
    r: &mut LineReport<'_>,
) -> (Vec<Table>, Option<String>) {
    let n = list.len();
    let mut tables: Vec<Table> = Vec::with_capacity(n);
    let mut identity = Some(catalogue::SchemaIdentity::new());
    // Position of the first table of each name, ignoring ASCII case.
    let mut by_folded: HashMap<String, usize> = HashMap::with_capacity(n);
    list.for_each(|i, v| {
        match (
            &mut identity,
            v.get("name").and_then(Value::as_str),
            v.get("sql").and_then(Value::as_str),
        ) {
            (Some(id), Some(name), Some(sql)) => id.push(name, sql),
            _ => identity = None,
        }
        let p = format!("/tables/{i}");
        let Some(o) = v.as_object() else {
            r.add(
                Code::MemberType,
                &p,
                format!("a table is an object, not {}", v.type_name()),
            );
            return;
        };
        r.members(o, &p, &TABLE_MEMBERS, &[], "a table");
        let name = r.name(o, &p, "name").unwrap_or_default().to_string();
        // Names equal ignoring ASCII case need not be neighbours in UTF-16
        // order (`USERS` … `orders` … `users`), so every earlier name counts.
        let folded = name.to_ascii_lowercase();
        if let Some(same) = by_folded.get(&folded).map(|&at| &tables[at]) {
            r.add(
                Code::TableOrder,
                &join(&p, "name"),
                format!(
                    "table {name:?} repeats {:?}: SQLite table names are case-insensitive",
                    same.name
                ),
            );
        } else if let Some(prev) = tables.last() {
            if cmp_utf16(&prev.name, &name) != Ordering::Less {
                r.add(
                    Code::TableOrder,
                    &join(&p, "name"),
                    format!(
                        "table {name:?} comes after {:?}; tables are sorted by name",
                        prev.name
                    ),
                );
            }
        }
        let sql = r.str(o, &p, "sql").unwrap_or_default().to_string();
        if o.contains_key("sql") && !is_create_table(&sql) {
            r.add(
                Code::InvalidTableSql,
                &join(&p, "sql"),
                format!("the sql of table {name:?} must be a CREATE TABLE statement (not a virtual table)"),
            );
        }
        let columns = r
            .array(o, &p, "columns")
            .map(|cols| check_columns(cols, &p, &name, r))
            .unwrap_or_default();
        let mut dependencies = Vec::new();
        if let Some(deps) = r.array(o, &p, "dependencies") {
            for (j, d) in deps.iter().enumerate() {
                let dp = format!("{p}/dependencies/{j}");
                match d.as_str() {
                    Some(s) => {
                        r.check_name(s, &dp, "dependency");
                        if let Some(prev) = dependencies.last() {
                            let prev: &String = prev;
                            if cmp_utf16(prev, s) != Ordering::Less {
                                r.add(
                                    Code::DependencyOrder,
                                    &dp,
                                    format!("dependencies of {name:?} must be sorted and unique; {s:?} comes after {prev:?}"),
                                );
                            }
                        }
                        dependencies.push(s.to_string());
                    }
                    None => r.add(
                        Code::MemberType,
                        &dp,
                        "dependencies are table names (strings)",
                    ),
                }
            }
        }
        let count = r.count(o, &p, "count").unwrap_or(0);
        let rowid_alias = match o.get("rowidAlias") {
            None => None,
            Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.to_string()),
            Some(other) => {
                r.add(
                    Code::MemberType,
                    &join(&p, "rowidAlias"),
                    format!("rowidAlias is null or a string, not {}", other.type_name()),
                );
                None
            }
        };
        if o.contains_key("rowidAlias") && !columns.is_empty() {
            let any_pk = columns.iter().any(|c| c.pk > 0);
            let expected = catalogue::rowid_alias(columns.iter().map(|c| c.name.as_str()), any_pk);
            match expected {
                Ok(e) if e == rowid_alias.as_deref() => {}
                Ok(e) => r.add(
                    Code::RowidAliasMismatch,
                    &join(&p, "rowidAlias"),
                    format!(
                        "rowidAlias of {name:?} is {} but its columns imply {}",
                        show_alias(rowid_alias.as_deref()),
                        show_alias(e)
                    ),
                ),
                Err(()) => r.add(
                    Code::RowidAliasMismatch,
                    &join(&p, "rowidAlias"),
                    format!("table {name:?} has no primary key and its columns shadow rowid, _rowid_ and oid, so its rows cannot be addressed"),
                ),
            }
        }
        check_importable(&name, &columns, count, &p, r);
        by_folded.entry(folded).or_insert(tables.len());
        tables.push(Table {
            name,
            sql,
            columns,
            dependencies,
            rowid_alias,
            count,
        });
    });
    (tables, identity.map(catalogue::SchemaIdentity::finish))
}

/// What the producer's catalogue and its import refuse about a table that
/// the format alone would allow (SPEC.md §4.3, "Importable tables").
fn check_importable(name: &str, columns: &[Column], count: u64, p: &str, r: &mut LineReport<'_>) {
    if let Some(prefix) = catalogue::reserved_table_prefix(name) {
        r.add(
            Code::ReservedTable,
            &join(p, "name"),
            format!("table {name:?} starts with {prefix:?}, a prefix SQLite or D1 reserves: no import can create it"),
        );
    } else if let Some(pattern) = catalogue::default_exclusion(name) {
        r.add(
            Code::DefaultExcludedTable,
            &join(p, "name"),
            format!("table {name:?} matches the producer's default exclusion {pattern:?}: a producer archives it only when told to include it"),
        );
    }
    if name == "oa_dev_credentials" && count > 0 {
        r.add(
            Code::DevData,
            &join(p, "count"),
            format!("table {name:?} holds {count} development credentials: the import refuses development data (refuseDevData)"),
        );
    }
    if columns.is_empty() {
        return;
    }
    if columns.iter().any(|c| c.pk > 0)
        && !catalogue::has_copy_rowid(columns.iter().map(|c| c.name.as_str()))
    {
        r.add(
            Code::UnsupportedCopyRowid,
            &join(p, "columns"),
            format!("table {name:?} has columns named rowid, _rowid_ and oid: the import addresses its copy through one of them (copyRowid), so it cannot be restored"),
        );
    }
    let projected = catalogue::projected_columns_len(
        columns
            .iter()
            .map(|c| (c.name.as_str(), c.decl_type.as_str(), c.generated.is_some())),
    );
    if projected + catalogue::TRANSFER_SQL_RESERVE > catalogue::TRANSFER_SQL_LIMIT {
        r.add(
            Code::TransferSqlLimit,
            &join(p, "columns"),
            format!(
                "the columns of table {name:?} take {projected} bytes in the producer's copy statements; with {} bytes for names and joins that exceeds D1's limit of {} bytes per statement",
                catalogue::TRANSFER_SQL_RESERVE,
                catalogue::TRANSFER_SQL_LIMIT
            ),
        );
    }
}

fn show_alias(a: Option<&str>) -> String {
    a.map_or("null".to_string(), |s| format!("{s:?}"))
}

/// `CREATE TABLE` in any case with any whitespace, and not `CREATE VIRTUAL
/// TABLE` (which the first test already excludes): the lexical rule of a
/// table's `sql` (`invalid_table_sql`). What passes it is then judged by
/// SQLite's parser (`table_sql`, in ndarc-verify's manifest intake).
pub fn is_create_table(sql: &str) -> bool {
    let mut words = sql.split_ascii_whitespace();
    let table = |w: &str| {
        // Compared as bytes: the word may hold multi-byte characters. After
        // `TABLE` comes a byte SQLite does not read as part of an
        // identifier (letters, digits, `_`, `$` and every non-ASCII byte).
        let b = w.as_bytes();
        b.len() >= 5
            && b[..5].eq_ignore_ascii_case(b"TABLE")
            && b.get(5).is_none_or(|&c| {
                !(c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80)
            })
    };
    matches!(words.next(), Some(w) if w.eq_ignore_ascii_case("CREATE"))
        && words.next().is_some_and(table)
}

fn check_columns(list: &[Value<'_>], tp: &str, table: &str, r: &mut LineReport<'_>) -> Vec<Column> {
    if list.is_empty() {
        r.add(
            Code::EmptyColumns,
            &join(tp, "columns"),
            format!("table {table:?} has no columns"),
        );
    }
    let mut cols: Vec<Column> = Vec::with_capacity(list.len());
    // Names so far, ignoring ASCII case.
    let mut folded: HashSet<String> = HashSet::with_capacity(list.len());
    for (i, v) in list.iter().enumerate() {
        let p = format!("{tp}/columns/{i}");
        let Some(o) = v.as_object() else {
            r.add(
                Code::MemberType,
                &p,
                format!("a column is an object, not {}", v.type_name()),
            );
            continue;
        };
        r.members(o, &p, &COLUMN_MEMBERS, &["generated"], "a column");
        let name = r.name(o, &p, "name").unwrap_or_default().to_string();
        if !folded.insert(name.to_ascii_lowercase()) {
            r.add(
                Code::DuplicateColumn,
                &join(&p, "name"),
                format!(
                    "table {table:?} has two columns named {name:?} (names are case-insensitive)"
                ),
            );
        }
        if name.starts_with("rer_portability_") {
            r.add(
                Code::ReservedColumn,
                &join(&p, "name"),
                format!("column {name:?} of {table:?} uses the reserved prefix rer_portability_"),
            );
        }
        let decl_type = r.str(o, &p, "type").unwrap_or_default().to_string();
        let notnull = match o.get("notnull") {
            Some(Value::Number(n)) if *n == 0.0 || *n == 1.0 => *n == 1.0,
            Some(v) => {
                r.add(
                    Code::InvalidNotnull,
                    &join(&p, "notnull"),
                    format!(
                        "notnull of {table:?}.{name:?} must be 0 or 1, not {}",
                        show(v)
                    ),
                );
                false
            }
            None => false,
        };
        let pk = match o.get("pk") {
            Some(Value::Number(n)) => {
                match ndarc_json::safe_integer(*n) {
                    Some(k) if (0..=i64::from(u32::MAX)).contains(&k) => k as u32,
                    _ => {
                        r.add(
                        Code::InvalidPk,
                        &join(&p, "pk"),
                        format!("pk of {table:?}.{name:?} must be 0 or a 1-based key position, not {}", show(&Value::Number(*n))),
                    );
                        0
                    }
                }
            }
            Some(v) => {
                r.add(
                    Code::MemberType,
                    &join(&p, "pk"),
                    format!("pk must be a number, not {}", v.type_name()),
                );
                0
            }
            None => 0,
        };
        let generated = match o.get("generated") {
            None => None,
            Some(Value::String(s)) if s == "virtual" => Some(Generated::Virtual),
            Some(Value::String(s)) if s == "stored" => Some(Generated::Stored),
            Some(v) => {
                r.add(
                    Code::InvalidGenerated,
                    &join(&p, "generated"),
                    format!("generated of {table:?}.{name:?} must be \"virtual\" or \"stored\" (or absent), not {}", show(v)),
                );
                None
            }
        };
        if generated.is_some() && pk > 0 {
            r.add(
                Code::GeneratedPrimaryKey,
                &join(&p, "pk"),
                format!("generated column {table:?}.{name:?} cannot be in the primary key"),
            );
        }
        cols.push(Column {
            name,
            decl_type,
            notnull,
            pk,
            generated,
        });
    }
    // Key positions are exactly 1..k.
    let mut positions: Vec<u32> = cols.iter().map(|c| c.pk).filter(|&k| k > 0).collect();
    positions.sort_unstable();
    if positions
        .iter()
        .enumerate()
        .any(|(i, &k)| k as usize != i + 1)
    {
        r.add(
            Code::InvalidPk,
            &join(tp, "columns"),
            format!(
                "primary-key positions of {table:?} are {positions:?}; they must be exactly 1..{}",
                positions.len()
            ),
        );
    }
    cols
}

fn show(v: &Value<'_>) -> String {
    String::from_utf8_lossy(&ndarc_json::to_canonical_vec(v)).into_owned()
}

pub(super) fn check_excluded_tables(
    list: List<'_, '_>,
    tables: &[Table],
    r: &mut LineReport<'_>,
) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let archived = folded_names(tables.iter().map(|t| t.name.as_str()));
    list.for_each(|i, v| {
        let p = format!("/excludedTables/{i}");
        let Some(s) = v.as_str() else {
            r.add(Code::MemberType, &p, "excluded tables are names (strings)");
            return;
        };
        r.check_name(s, &p, "excluded table");
        if let Some(prev) = out.last() {
            if cmp_utf16(prev, s) != Ordering::Less {
                r.add(
                    Code::ExcludedTableOrder,
                    &p,
                    format!("excludedTables must be sorted and unique; {s:?} comes after {prev:?}"),
                );
            }
        }
        if archived.contains(&s.to_ascii_lowercase()) {
            r.add(
                Code::ExcludedTablePresent,
                &p,
                format!("table {s:?} is both excluded and archived"),
            );
        }
        out.push(s.to_string());
    });
    out
}

/// The names folded to ASCII lower case, for lookups ignoring ASCII case.
fn folded_names<'n>(names: impl Iterator<Item = &'n str>) -> HashSet<String> {
    names.map(str::to_ascii_lowercase).collect()
}

pub(super) fn check_dependencies(m: &Manifest, r: &mut LineReport<'_>) {
    if m.tables.iter().all(|t| t.dependencies.is_empty()) {
        return;
    }
    let excluded = folded_names(m.excluded_tables.iter().map(String::as_str));
    let archived = folded_names(m.tables.iter().map(|t| t.name.as_str()));
    for (i, t) in m.tables.iter().enumerate() {
        for (j, d) in t.dependencies.iter().enumerate() {
            let p = format!("/tables/{i}/dependencies/{j}");
            let d_folded = d.to_ascii_lowercase();
            if excluded.contains(&d_folded) {
                r.add(
                    Code::ExcludedForeignKey,
                    &p,
                    format!("table {:?} references {d:?}, which is excluded: its rows could not be restored", t.name),
                );
            } else if !archived.contains(&d_folded) {
                r.add(
                    Code::MissingDependency,
                    &p,
                    format!(
                        "table {:?} references {d:?}, which the archive does not hold",
                        t.name
                    ),
                );
            }
        }
    }
}

pub(super) fn check_excluded_columns(
    cols: Members<'_, '_>,
    tables: &[Table],
    r: &mut LineReport<'_>,
) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    // The first table of each name, as a search in manifest order finds.
    let mut by_name: HashMap<&str, &Table> = HashMap::new();
    if !cols.is_empty() {
        for t in tables {
            by_name.entry(t.name.as_str()).or_insert(t);
        }
    }
    cols.for_each(|table, v| {
        let p = join("/excludedColumns", table);
        let t = by_name.get(table).copied();
        if t.is_none() {
            r.add(
                Code::ExcludedColumnUnknown,
                &p,
                format!("excludedColumns names table {table:?}, which the manifest does not list"),
            );
        }
        let Some(list) = v.as_array() else {
            r.add(
                Code::MemberType,
                &p,
                "excluded columns of a table are an array of names",
            );
            return;
        };
        let mut names: Vec<String> = Vec::new();
        let mut listed: HashSet<&str> = HashSet::new();
        // The first column of each name, as a search in order finds.
        let mut columns: HashMap<&str, &Column> = HashMap::new();
        if let Some(t) = t {
            for col in &t.columns {
                columns.entry(col.name.as_str()).or_insert(col);
            }
        }
        for (i, c) in list.iter().enumerate() {
            let cp = format!("{p}/{i}");
            let Some(c) = c.as_str() else {
                r.add(
                    Code::MemberType,
                    &cp,
                    "excluded columns are names (strings)",
                );
                continue;
            };
            if !listed.insert(c) {
                r.add(
                    Code::ExcludedColumnDuplicate,
                    &cp,
                    format!("column {table:?}.{c:?} is excluded twice"),
                );
            }
            if t.is_some() {
                match columns.get(c).copied() {
                    None => r.add(
                        Code::ExcludedColumnUnknown,
                        &cp,
                        format!("excluded column {c:?} does not exist in table {table:?}"),
                    ),
                    Some(col) if col.notnull || col.pk > 0 || col.generated.is_some() => r.add(
                        Code::ExcludedColumnRequired,
                        &cp,
                        format!(
                            "column {table:?}.{c:?} cannot be excluded: it is {}",
                            if col.notnull {
                                "NOT NULL"
                            } else if col.pk > 0 {
                                "in the primary key"
                            } else {
                                "generated"
                            }
                        ),
                    ),
                    Some(_) => {}
                }
            }
            names.push(c.to_string());
        }
        out.push((table.to_string(), names));
    });
    out
}
