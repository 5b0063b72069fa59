//! Mutations of SPEC.md §4.3: the manifest's tables (order, SQL, columns,
//! keys, generated columns, dependencies, `rowidAlias`).

use ndarc_format::catalogue::{rowid_alias, ROWID_ALIASES};
use ndarc_format::Code;
use ndarc_json::Value;
use ndarc_sql::quote_ident;

use crate::rng::Rng;

use super::edit::{
    arr, col, flip_case, fresh_col_name, n, obj_mut, pick, s, sorted_utf16, str_at, strings, At,
    Col, Edit, Model, Need, Tab, R, V,
};
use super::fixture::{self as fx, build, case, column, Case, Fixture, Recs, M, NOTES, USERS};
use super::Mutation;

pub(super) const MUTATIONS: &[Mutation] = &[
    mutation!(
        TableOrder,
        "table_order",
        "two neighbouring tables swapped (with their rows)",
        table_order
    ),
    mutation!(
        TableOrder,
        "table_order-case",
        "a second table whose name equals another's ignoring ASCII case (both in name order)",
        table_order_case
    ),
    mutation!(
        InvalidTableSql,
        "invalid_table_sql",
        "a table's sql a view, a virtual table or a temp table",
        invalid_table_sql
    ),
    mutation!(
        EmptyColumns,
        "empty_columns",
        "a new table with no columns",
        empty_columns
    ),
    mutation!(
        DuplicateColumn,
        "duplicate_column",
        "a second column whose name differs only in case",
        duplicate_column
    ),
    mutation!(
        ReservedColumn,
        "reserved_column",
        "a column named rer_portability_…",
        reserved_column
    ),
    mutation!(
        InvalidNotnull,
        "invalid_notnull",
        "notnull neither 0 nor 1",
        invalid_notnull
    ),
    mutation!(
        InvalidPk,
        "invalid_pk",
        "primary-key positions not exactly 1..k",
        invalid_pk
    ),
    mutation!(
        GeneratedPrimaryKey,
        "generated_primary_key",
        "a generated column in the primary key",
        generated_primary_key
    ),
    mutation!(
        InvalidGenerated,
        "invalid_generated",
        "generated neither virtual nor stored",
        invalid_generated
    ),
    mutation!(
        DependencyOrder,
        "dependency_order",
        "dependencies unsorted or repeated",
        dependency_order
    ),
    mutation!(
        ExcludedForeignKey,
        "excluded_foreign_key",
        "a dependency on an excluded table",
        excluded_foreign_key
    ),
    mutation!(
        MissingDependency,
        "missing_dependency",
        "a dependency on a table the archive lacks (a warning)",
        missing_dependency
    ),
    mutation!(
        RowidAliasMismatch,
        "rowid_alias_mismatch",
        "a rowidAlias the columns do not imply",
        rowid_alias_mismatch
    ),
];

/// Moves the rows parts so that rows follow the manifest's table order
/// again, then renumbers.
fn regroup_rows(m: &mut Model) {
    let order: Vec<String> = arr(&m.manifest, "tables")
        .iter()
        .filter_map(|t| str_at(t, "name").map(str::to_string))
        .collect();
    let start = (0..m.parts.len()).find(|&p| m.part_kind(p) == Some("row"));
    let Some(start) = start else {
        return;
    };
    let end = m.rows_end();
    let mut rows: Vec<V> = m.parts.drain(start..end).collect();
    rows.sort_by_key(|p| {
        let t = p
            .get("items")
            .and_then(Value::as_array)
            .and_then(|i| i.first())
            .and_then(|i| str_at(i, "table"))
            .unwrap_or_default();
        order.iter().position(|o| o == t).unwrap_or(usize::MAX)
    });
    for (k, p) in rows.into_iter().enumerate() {
        m.parts.insert(start + k, p);
    }
    m.renumber();
}

fn table_order(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    while m.tabs().len() < 2 {
        m.add_plain_table("ndarc_mutant")?;
    }
    let tabs = m.tabs();
    let k = 1 + rng.below(tabs.len() as u64 - 1) as usize;
    m.tables_mut()?.swap(k - 1, k);
    regroup_rows(m);
    Ok(Edit::new(
        At::Manifest,
        format!(
            "tables {:?} and {:?} swapped (rows follow the manifest's order)",
            tabs[k - 1].name,
            tabs[k].name
        ),
    ))
}

fn table_order_case(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let flippable: Vec<Tab> = m
        .tabs()
        .into_iter()
        .filter(|t| flip_case(&t.name).is_some())
        .collect();
    let t = m.table_or_new(&flippable, rng, "ndarc_mutant")?;
    let other = flip_case(&t.name).need("no ASCII letter")?;
    let sql = format!("CREATE TABLE {} (x TEXT)", quote_ident(&other));
    m.add_table(&other, vec![col("x", "TEXT", 0, 0)], sql)?;
    Ok(Edit::new(
        At::Manifest,
        format!(
            "a table {other:?} without rows, at its place in name order, and {:?}: names equal ignoring ASCII case",
            t.name
        ),
    ))
}

fn invalid_table_sql(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let t = m.some_table(rng)?;
    let name = ndarc_sql::quote_ident(&t.name);
    let cols = if t.cols.is_empty() {
        "x".to_string()
    } else {
        t.cols
            .iter()
            .map(|c| ndarc_sql::quote_ident(&c.name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (sql, what) = match rng.below(3) {
        0 => (
            format!("CREATE VIRTUAL TABLE {name} USING fts5({cols})"),
            "a virtual table",
        ),
        1 => (format!("CREATE VIEW {name} AS SELECT 1"), "a view"),
        _ => (
            format!("CREATE TEMP TABLE {name} ({cols})"),
            "a CREATE TEMP TABLE statement",
        ),
    };
    m.table_mut(t.idx)?.insert("sql", s(sql));
    Ok(Edit::new(
        At::Manifest,
        format!("the sql of table {:?} is {what}", t.name),
    ))
}

fn empty_columns(m: &mut Model, _rng: &mut Rng) -> R<Edit> {
    let name = m.fresh_table_name("ndarc_no_columns");
    m.add_table(
        &name,
        Vec::new(),
        format!("CREATE TABLE {} ()", quote_ident(&name)),
    )?;
    // No CREATE TABLE has no columns: its sql does not prepare.
    Ok(Edit::new(
        At::Manifest,
        format!("a new table {name:?} without rows and with no columns"),
    )
    .also(&[Code::TableSql]))
}

/// A table with rows (or any table) and a writable column outside the
/// primary key whose name has an ASCII letter; adds a table when none has.
fn duplicate_column(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let tabs = m.tabs();
    let mut choices: Vec<(Tab, Col)> = Vec::new();
    for t in &tabs {
        for c in t.plain_cols() {
            if flip_case(&c.name).is_some() {
                choices.push((t.clone(), c.clone()));
            }
        }
    }
    let (t, c) = m.column_or_new(&choices, rng)?;
    let other = flip_case(&c.name).need("no ASCII letter")?;
    m.columns_mut(t.idx)?
        .push(col(&other, &c.decl_type, i64::from(c.notnull), 0));
    for &at in &t.rows {
        let row = m.row_mut(at)?;
        let v = row.get(&c.name).cloned().unwrap_or(Value::Null);
        row.insert(other.clone(), v);
    }
    Ok(Edit::new(
        At::Manifest,
        format!(
            "table {:?} gets a second column {other:?} beside {:?} (names are case-insensitive); rows carry both",
            t.name, c.name
        ),
    ))
}

fn reserved_column(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let t = m.some_table(rng)?;
    let name = fresh_col_name(&t, "rer_portability_note");
    m.columns_mut(t.idx)?.push(col(&name, "TEXT", 0, 0));
    for &at in &t.rows {
        m.row_mut(at)?.insert(name.clone(), Value::Null);
    }
    Ok(Edit::new(
        At::Manifest,
        format!(
            "table {:?} gets a column {name:?} (reserved prefix); its rows hold null",
            t.name
        ),
    ))
}

fn invalid_notnull(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    // A column no row holds null in, so any reading of the bad value
    // leaves the rows valid.
    let tabs = m.tabs();
    let mut choices = Vec::new();
    for t in &tabs {
        for c in &t.cols {
            let has_null = c.writable()
                && t.rows.iter().any(|&(p, i)| {
                    m.item(p, i)
                        .and_then(|it| it.get("row"))
                        .and_then(|r| r.get(&c.name))
                        .is_none_or(Value::is_null)
                });
            if !has_null {
                choices.push((t.clone(), c.clone()));
            }
        }
    }
    let (t, c) = m.column_or_new(&choices, rng)?;
    let (v, what) = match rng.below(3) {
        0 => (n(2), "2"),
        1 => (n(-1), "-1"),
        _ => (Value::Bool(c.notnull), "a boolean"),
    };
    m.column_mut(t.idx, c.idx)?.insert("notnull", v);
    Ok(Edit::new(
        At::Manifest,
        format!("notnull of column {}.{} is {what}", t.name, c.name),
    ))
}

pub(super) fn pk_table(m: &mut Model, rng: &mut Rng) -> R<Tab> {
    let tabs: Vec<Tab> = m.tabs().into_iter().filter(Tab::has_pk).collect();
    if !tabs.is_empty() {
        return pick(&tabs, rng, "no table");
    }
    let name = m.fresh_table_name("ndarc_keyed");
    let sql = format!(
        "CREATE TABLE {} (id INTEGER PRIMARY KEY, x TEXT)",
        quote_ident(&name)
    );
    let i = m.add_table(
        &name,
        vec![col("id", "INTEGER", 0, 1), col("x", "TEXT", 0, 0)],
        sql,
    )?;
    m.tab(i)
}

fn invalid_pk(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let t = pk_table(m, rng)?;
    let pks = t.pk_cols();
    let k = pks.len() as i64;
    let last = pks.last().need("no key")?;
    let (ci, v, what) = if rng.one_in(2) || t.plain_cols().is_empty() {
        (
            last.idx,
            n(k + 1),
            format!(
                "column {}.{} at key position {} (positions must be 1..{k})",
                t.name,
                last.name,
                k + 1
            ),
        )
    } else {
        let c = pick(&t.plain_cols(), rng, "no column")?.clone();
        (
            c.idx,
            Value::Number(0.5),
            format!("column {}.{} has pk 0.5", t.name, c.name),
        )
    };
    m.column_mut(t.idx, ci)?.insert("pk", v);
    Ok(Edit::new(At::Manifest, what))
}

fn generated_primary_key(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let t = pk_table(m, rng)?;
    let k = t.pk_cols().len() as i64;
    let name = fresh_col_name(&t, "ndarc_slug");
    let mut c = col(&name, "TEXT", 0, k + 1);
    obj_mut(&mut c)
        .need("")?
        .insert("generated", s(pick(&["virtual", "stored"], rng, "")?));
    m.columns_mut(t.idx)?.push(c);
    Ok(Edit::new(
        At::Manifest,
        format!(
            "table {:?} gets a generated column {name:?} at key position {} (rows do not carry it)",
            t.name,
            k + 1
        ),
    ))
}

fn invalid_generated(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let tabs = m.tabs();
    let mut choices = Vec::new();
    for t in &tabs {
        for c in t.plain_cols() {
            choices.push((t.clone(), c.clone()));
        }
    }
    let (t, c) = m.column_or_new(&choices, rng)?;
    let g = pick(&["always", "VIRTUAL", "hidden", ""], rng, "")?;
    m.column_mut(t.idx, c.idx)?.insert("generated", s(g));
    Ok(Edit::new(
        At::Manifest,
        format!(
            "column {}.{} has generated {g:?} (rows still carry it)",
            t.name, c.name
        ),
    ))
}

fn dependency_order(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let t = m.some_table(rng)?;
    let mut deps = t.dependencies.clone();
    let what = match deps.len() {
        0 => {
            deps = vec![t.name.clone(), t.name.clone()];
            "itself twice".to_string()
        }
        1 => {
            deps.push(deps[0].clone());
            format!("{:?} twice", deps[0])
        }
        _ => {
            deps.reverse();
            "its dependencies in reverse order".to_string()
        }
    };
    m.table_mut(t.idx)?.insert("dependencies", strings(&deps));
    Ok(Edit::new(
        At::Manifest,
        format!("table {:?} lists {what}", t.name),
    ))
}

fn add_dependency(m: &mut Model, t: &Tab, dep: &str) -> R<()> {
    let mut deps = t.dependencies.clone();
    if !deps.iter().any(|d| d == dep) {
        deps.push(dep.to_string());
    }
    sorted_utf16(&mut deps);
    m.table_mut(t.idx)?.insert("dependencies", strings(&deps));
    Ok(())
}

fn excluded_foreign_key(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let t = m.some_table(rng)?;
    let mut excluded = m.typed().excluded_tables.clone();
    let name = if excluded.is_empty() {
        let name = m.fresh_table_name("sessions");
        excluded.push(name.clone());
        m.manifest.insert("excludedTables", strings(&excluded));
        name
    } else {
        pick(&excluded, rng, "")?
    };
    let (dep, how) = match flip_case(&name) {
        Some(f) if rng.one_in(2) => (f, " (in another ASCII case)"),
        _ => (name.clone(), ""),
    };
    add_dependency(m, &t, &dep)?;
    Ok(Edit::new(
        At::Manifest,
        format!(
            "table {:?} depends on the excluded table {name:?}{how}",
            t.name
        ),
    ))
}

fn missing_dependency(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let t = m.some_table(rng)?;
    let ghost = m.fresh_table_name("accounts");
    add_dependency(m, &t, &ghost)?;
    Ok(Edit::new(
        At::Manifest,
        format!(
            "table {:?} depends on {ghost:?}, which the archive does not hold (a warning)",
            t.name
        ),
    ))
}

fn rowid_alias_mismatch(m: &mut Model, rng: &mut Rng) -> R<Edit> {
    let tabs: Vec<Tab> = m
        .tabs()
        .into_iter()
        .filter(|t| t.rowid_alias.is_some() && !t.has_pk())
        .collect();
    let t = m.table_or_new(&tabs, rng, "ndarc_rowid")?;
    let right = t.rowid_alias.clone().unwrap_or_default();
    if rng.one_in(2) {
        // A new column shadows the alias: the alias must move on.
        let shadow = flip_case(&right).unwrap_or_else(|| right.clone());
        m.columns_mut(t.idx)?.push(col(&shadow, "TEXT", 0, 0));
        for &at in &t.rows {
            m.row_mut(at)?.insert(shadow.clone(), Value::Null);
        }
        let still = rowid_alias(
            t.cols
                .iter()
                .map(|c| c.name.as_str())
                .chain(std::iter::once(shadow.as_str())),
            false,
        );
        let want = match still {
            Ok(Some(a)) => format!("{a:?}"),
            _ => "none (all three shadowed)".to_string(),
        };
        return Ok(Edit::new(
            At::Manifest,
            format!(
                "table {:?} gets a column {shadow:?} that shadows its rowidAlias {right:?} (the alias should be {want})",
                t.name
            ),
        ));
    }
    let wrong = ROWID_ALIASES
        .iter()
        .find(|a| **a != right)
        .copied()
        .unwrap_or("rowid");
    m.table_mut(t.idx)?.insert("rowidAlias", s(wrong));
    Ok(Edit::new(
        At::Manifest,
        format!(
            "table {:?} says rowidAlias {wrong:?} where its columns imply {right:?}",
            t.name
        ),
    ))
}

// ------------------------------------------------------------- fixtures

/// `c` with a column added to table `t` (0 `notes`, 1 `users`), and, when
/// `cell` is given, that cell added to each of the table's rows.
fn add_column(c: Case, t: usize, col: V, cell: Option<(&'static str, V)>) -> Case {
    c.with(|r| {
        r.set(M, &format!("/tables/{t}/columns/-"), col)?;
        match cell {
            Some((name, v)) => r.each([NOTES, USERS][t], &format!("/row/{name}"), &v),
            None => Ok(()),
        }
    })
}

/// A rowid table `name` with no rows and these columns (`sql` lists them).
fn empty_table(name: &str, sql: &str, columns: Vec<V>) -> V {
    fx::obj([
        ("name", Value::from(name.to_string())),
        ("sql", Value::from(format!("CREATE TABLE {name}({sql})"))),
        ("columns", Value::Array(columns)),
        ("dependencies", Value::Array(Vec::new())),
        ("rowidAlias", Value::from("rowid")),
        ("count", Value::from(0)),
    ])
}

/// The fixtures of `testdata/invalid` for these rules, from the base
/// archive's records (see `framing::fixtures` for its lines).
pub(super) fn fixtures(r: &Recs) -> R<Vec<Fixture>> {
    let c = |name, line, ptr| case(r, name, line, ptr);
    let text = |name| column(name, "TEXT", 0, 0, None);
    let null = |name| Some((name, Value::Null));
    let first = |name: &'static str| {
        move |r: &mut Recs| {
            let t = empty_table(name, "x TEXT", vec![text("x")]);
            match r.at(M, "/tables")? {
                Value::Array(ts) => ts.insert(0, t),
                _ => return Err("no tables".into()),
            }
            Ok(())
        }
    };
    let deps = |name, ptr, deps| c(name, 1, ptr).set(M, "/tables/0/dependencies", deps);
    let rowid_cols = [("rowid", "TEXT"), ("_rowid_", "TEXT"), ("OID", "TEXT")];
    let mut all_shadowed = c(
        "rowid_alias_mismatch-all-shadowed",
        1,
        "/tables/0/rowidAlias",
    )
    .note("rowid, _rowid_ and oid are all column names and there is no primary key");
    for (name, ty) in rowid_cols {
        all_shadowed = add_column(all_shadowed, 0, column(name, ty, 0, 0, None), null(name));
    }
    build(vec![
        c("table_order", 1, "/tables/1/name")
            .note("tables in reverse name order (rows follow the manifest's order)")
            .with(|r| {
                if let Value::Array(ts) = r.at(M, "/tables")? {
                    ts.reverse();
                }
                r.parts.swap(0, 1);
                r.renumber();
                Ok(())
            }),
        c("table_order-case-apart", 1, "/tables/2/name")
            .note("USERS and users equal ignoring ASCII case with notes sorting between them (UTF-16 order puts upper case first)")
            .with(first("USERS")),
        c("table_order-case", 1, "/tables/1/name")
            .note("two tables whose names differ only in ASCII case: NOTES (no rows) and notes")
            .with(first("NOTES")),
        c("invalid_table_sql", 1, "/tables/1/sql")
            .put(r#""CREATE VIRTUAL TABLE users USING fts5(id, name, avatar, score)""#),
        c("invalid_table_sql-view", 1, "/tables/0/sql").put(r#""CREATE VIEW notes AS SELECT 1""#),
        c("invalid_table_sql-temp", 1, "/tables/0/sql")
            .put(r#""CREATE TEMP TABLE notes(body TEXT, user_id INTEGER)""#),
        c("invalid_table_sql-multibyte", 1, "/tables/0/sql")
            .note("a multi-byte character inside the word after CREATE (found by fuzzing: the check once sliced inside it and panicked)")
            .put(r#""CREATE TABL\u00c9E notes(body TEXT, user_id INTEGER)""#),
        c("empty_columns", 1, "/tables/2/columns")
            .note("CREATE TABLE zzz() does not prepare either (table_sql)")
            .also(&["table_sql"])
            .with(|r| r.set(M, "/tables/-", empty_table("zzz", "", Vec::new()))),
        add_column(
            c("duplicate_column", 1, "/tables/0/columns/2/name")
                .note("a second column BODY (names are case-insensitive); rows carry both"),
            0,
            text("BODY"),
            null("BODY"),
        ),
        add_column(
            c("reserved_column", 1, "/tables/0/columns/2/name"),
            0,
            column("rer_portability_rowid", "INTEGER", 0, 0, None),
            null("rer_portability_rowid"),
        ),
        c("invalid_notnull", 1, "/tables/1/columns/2/notnull").put("2"),
        c("invalid_notnull-bool", 1, "/tables/1/columns/2/notnull").put("false"),
        c("invalid_pk", 1, "/tables/1/columns")
            .note("a composite key with positions 1 and 3")
            .set(M, "/tables/1/columns/1/pk", "3"),
        c("invalid_pk-fraction", 1, "/tables/1/columns/1/pk").put("0.5"),
        c("invalid_pk-twice", 1, "/tables/1/columns")
            .note("two columns at key position 1")
            .set(M, "/tables/1/columns/1/pk", "1"),
        add_column(
            c("generated_primary_key", 1, "/tables/1/columns/4/pk")
                .note("a generated column at key position 2 (id stays position 1, so keys stay unique)"),
            1,
            column("slug", "TEXT", 0, 2, Some("stored")),
            None,
        ),
        add_column(
            c("invalid_generated", 1, "/tables/1/columns/4/generated")
                .note("generated is neither virtual nor stored, so the column counts as writable and rows carry it"),
            1,
            column("slug", "TEXT", 0, 0, Some("always")),
            null("slug"),
        ),
        deps("dependency_order", "/tables/0/dependencies/1", r#"["users","notes"]"#)
            .note("notes depends on users and on itself, listed unsorted"),
        deps("dependency_order-duplicate", "/tables/0/dependencies/1", r#"["users","users"]"#),
        deps("excluded_foreign_key", "/tables/0/dependencies/0", r#"["sessions","users"]"#),
        deps("excluded_foreign_key-case", "/tables/0/dependencies/0", r#"["SESSIONS","users"]"#)
            .note("table names compare ignoring ASCII case"),
        deps("missing_dependency", "/tables/0/dependencies/0", r#"["accounts","users"]"#)
            .note("a warning: the archive is still importable"),
        c("rowid_alias_mismatch", 1, "/tables/0/rowidAlias").put(r#""oid""#),
        add_column(
            c("rowid_alias_mismatch-shadowed", 1, "/tables/0/rowidAlias")
                .note("a column named ROWID shadows rowid, so the alias is _rowid_"),
            0,
            text("ROWID"),
            null("ROWID"),
        ),
        all_shadowed,
        c("rowid_alias_mismatch-null", 1, "/tables/0/rowidAlias")
            .note("a table without primary key says rowidAlias null; its rows carry no rowid accordingly, so they have no row key either (every key is the empty primary key)")
            .allow(&["duplicate_row_key"])
            .put("null")
            .with(|r| r.each_del(NOTES, 0, "/rowid")),
    ])
}
